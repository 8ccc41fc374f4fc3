// photon/common/PMF.h: get_member_function_address resolves plain, const and
// virtual member functions (through single, multiple and virtual inheritance)
// to a function pointer plus the `this` it expects, which calling f(obj, ...)
// then uses.
#include <photon/common/PMF.h>

#include <gtest/gtest.h>

#include <type_traits>

namespace {

struct Plain {
    int base = 10;
    int add(int x) { return base += x; }
    int peek(int x) const { return base + x; }
};

struct Padding {
    virtual ~Padding() = default;
    long pad[3] = {-1, -1, -1};
    virtual int padding_fn() { return -1; }
};

struct Shape {
    virtual ~Shape() = default;
    int tag = 7;
    virtual int area(int scale) { return scale; }
    virtual int corners() const { return 0; }
    const Shape* self() const { return this; }
    int tag_plus(int x) { return tag + x; }  // non-virtual
};

// Shape is the second base: a Shape* into a Square is not the Square's address.
struct Square : Padding, Shape {
    int side = 3;
    int area(int scale) override { return side * side * scale; }
    int corners() const override { return 4; }
};

struct VBase {
    virtual ~VBase() = default;
    int v = 5;
    virtual int value() { return v; }
};
struct VMid1 : virtual VBase {};
struct VMid2 : virtual VBase {};
struct Diamond : VMid1, VMid2 {
    int value() override { return v * 100; }
};

using AddMap = decltype(get_member_function_address(std::declval<Plain*>(), &Plain::add));
using PeekMap = decltype(get_member_function_address(std::declval<const Plain*>(), &Plain::peek));
static_assert(std::is_same<AddMap, pmf_map<int (*)(Plain*, int), Plain>>::value, "");
static_assert(std::is_same<PeekMap, pmf_map<int (*)(const Plain*, int), const Plain>>::value,
              "const member functions take a const object");

TEST(PMF, NonVirtualMemberFunctionCallsThroughThePlainPointer) {
    Plain p;
    auto m = get_member_function_address(&p, &Plain::add);
    EXPECT_EQ(m.obj, &p);
    EXPECT_EQ(m.f(m.obj, 5), 15);
    EXPECT_EQ(p.base, 15);

    const Plain* cp = &p;
    auto c = get_member_function_address(cp, &Plain::peek);
    EXPECT_EQ(c.f(c.obj, 1), 16);
}

TEST(PMF, VirtualFunctionResolvesToTheFinalOverrider) {
    Square sq;
    Shape* shape = &sq;
    auto m = get_member_function_address(shape, &Shape::area);
    EXPECT_EQ(m.f(m.obj, 2), 18);

    Shape plain;
    auto b = get_member_function_address(&plain, &Shape::area);
    EXPECT_EQ(b.f(b.obj, 2), 2);
    EXPECT_NE(reinterpret_cast<void*>(m.f), reinterpret_cast<void*>(b.f));

    const Shape* cshape = &sq;
    auto c = get_member_function_address(cshape, &Shape::corners);
    EXPECT_EQ(c.f(c.obj), 4);
}

TEST(PMF, VirtualFunctionOfASecondBaseGetsThatBasesThis) {
    Square sq;
    int (Square::*area)(int) = &Shape::area;  // carries the Shape-in-Square offset
    auto m = get_member_function_address(&sq, area);
    EXPECT_EQ(static_cast<void*>(m.obj), static_cast<void*>(static_cast<Shape*>(&sq)));
    EXPECT_EQ(m.f(m.obj, 1), 9);
}

// Photon applied the this-adjustment to virtual functions only, so this call
// ran Shape::tag_plus on the Padding subobject and read a pad word as `tag`.
TEST(PMF, NonVirtualFunctionOfASecondBaseGetsThatBasesThisToo) {
    Square sq;
    int (Square::*tag_plus)(int) = &Shape::tag_plus;
    auto m = get_member_function_address(&sq, tag_plus);
    EXPECT_EQ(static_cast<void*>(m.obj), static_cast<void*>(static_cast<Shape*>(&sq)));
    EXPECT_EQ(m.f(m.obj, 1), 8);

    const Shape* (Square::*self)() const = &Shape::self;
    const Square& csq = sq;
    auto s = get_member_function_address(&csq, self);
    EXPECT_EQ(s.f(s.obj), static_cast<const Shape*>(&sq));
}

TEST(PMF, VirtualFunctionThroughVirtualInheritance) {
    Diamond d;
    auto m = get_member_function_address(&d, &Diamond::value);
    EXPECT_EQ(m.f(m.obj), 500);
    VBase* vb = static_cast<VMid2*>(&d);
    auto n = get_member_function_address(vb, &VBase::value);
    EXPECT_EQ(n.f(n.obj), 500);
}

TEST(PMF, NullObjectDoesNotReadAVtable) {
    Shape* none = nullptr;
    auto v = get_member_function_address(none, &Shape::area);
    EXPECT_EQ(v.f, nullptr);
    EXPECT_EQ(v.obj, nullptr);

    Plain* nop = nullptr;
    auto p = get_member_function_address(nop, &Plain::add);
    EXPECT_NE(p.f, nullptr);  // a non-virtual function needs no object to be found
    EXPECT_EQ(p.obj, nullptr);
}

TEST(PMF, NullMemberPointerGivesANullFunction) {
    Plain p;
    int (Plain::*none)(int) = nullptr;
    auto m = get_member_function_address(&p, none);
    EXPECT_EQ(m.f, nullptr);
    Square sq;
    int (Shape::*vnone)(int) = nullptr;
    EXPECT_EQ(get_member_function_address(static_cast<Shape*>(&sq), vnone).f, nullptr);
}

}  // namespace
