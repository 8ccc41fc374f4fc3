#include <photon/common/callback.h>

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

namespace {

int add_to_counter(void* counter, int x) { return *static_cast<int*>(counter) += x; }
int twice(int x) { return 2 * x; }
void no_args_no_result() {}

struct Counter {
    int value = 0;
    int add(int x) { return value += x; }
    int peek(int x) const { return value + x; }
};

int add_through_pointer(Counter* c, int x) { return c->add(x); }

struct Shape {
    virtual ~Shape() = default;
    virtual int area(int scale) { return scale; }
    int sides(int) { return 0; }
};

struct Padding {
    virtual ~Padding() = default;
    long pad = 0;
    virtual int unrelated(int) { return -1; }
};

// Shape is the second base, so Shape* and Square* differ: exercises this-adjustment.
struct Square : Padding, Shape {
    int side = 3;
    int area(int scale) override { return side * side * scale; }
    virtual int perimeter(int scale) const { return 4 * side * scale; }
};

using IntDelegate = Delegate<int, int>;

int run_temp(TempDelegate<int, int> d, int x) { return d(x); }

TEST(Delegate, BindsObjectAndFunctionInEitherOrder) {
    int counter = 1;
    Delegate<int, int> a(&counter, &add_to_counter);
    Delegate<int, int> b(&add_to_counter, static_cast<void*>(&counter));
    EXPECT_EQ(a(2), 3);
    EXPECT_EQ(b(4), 7);
    EXPECT_EQ(counter, 7);
}

TEST(Delegate, BindsAPlainFunction) {
    Delegate<int, int> d(&twice);
    EXPECT_EQ(d(21), 42);
    Delegate<void> v(no_args_no_result);
    EXPECT_TRUE(bool(v));
    v();
}

TEST(Delegate, BindsAFunctionTakingTheObjectPointer) {
    Counter c;
    Delegate<int, int> d(&c, &add_through_pointer);
    EXPECT_EQ(d(5), 5);
    EXPECT_EQ(c.value, 5);
}

TEST(Delegate, BindsNonVirtualAndConstMemberFunctions) {
    Counter c;
    Delegate<int, int> add(&c, &Counter::add);
    add(10);
    const Counter* cc = &c;
    Delegate<int, int> peek(cc, &Counter::peek);
    EXPECT_EQ(peek(1), 11);
    EXPECT_EQ(c.value, 10);
}

TEST(Delegate, VirtualMemberFunctionCallsTheOverride) {
    Square sq;
    Shape* shape = &sq;
    Delegate<int, int> via_base(shape, &Shape::area);
    Delegate<int, int> via_derived(&sq, &Shape::area);
    EXPECT_EQ(via_base(2), 18);
    EXPECT_EQ(via_derived(2), 18);

    Shape plain;
    EXPECT_EQ(IntDelegate(&plain, &Shape::area)(5), 5);
}

TEST(Delegate, ConstVirtualMemberFunctionOfDerivedClass) {
    const Square sq;
    Delegate<int, int> d(&sq, &Square::perimeter);
    EXPECT_EQ(d(1), 12);
}

TEST(Delegate, MemberPointerConvertedToDerivedAdjustsThis) {
    Square sq;
    int (Square::*virt)(int) = &Shape::area;  // stored with the Shape-in-Square offset
    int (Square::*nonvirt)(int) = &Shape::sides;
    EXPECT_EQ(IntDelegate(&sq, virt)(1), 9);
    Delegate<int, int> d(&sq, nonvirt);
    EXPECT_EQ(d._obj, static_cast<void*>(static_cast<Shape*>(&sq)));
    EXPECT_EQ(d(1), 0);
}

TEST(Delegate, BindsAFunctorByReference) {
    int calls = 0;
    auto lambda = [&calls](int x) { return ++calls * x; };
    Delegate<int, int> d(lambda);
    EXPECT_EQ(d(10), 10);
    EXPECT_EQ(d(10), 20);

    std::function<int(int)> fn = [](int x) { return x - 1; };
    d.bind(fn);
    EXPECT_EQ(d(10), 9);
}

TEST(Delegate, PassesMoveOnlyArguments) {
    auto sink = [](std::unique_ptr<int> p) { return *p; };
    Delegate<int, std::unique_ptr<int>> d(sink);
    EXPECT_EQ(d(std::make_unique<int>(7)), 7);
}

TEST(Delegate, UnboundFireReturnsDefaultValue) {
    Delegate<int, int> d;
    EXPECT_FALSE(bool(d));
    EXPECT_EQ(d.fire(3), 0);
    Delegate<std::string> s;
    EXPECT_EQ(s(), "");
    Delegate<void, int> v(static_cast<void (*)(int)>(nullptr));
    EXPECT_FALSE(bool(v));
    v(1);
}

TEST(Delegate, FireOnceUnbindsBeforeCalling) {
    int counter = 0;
    Delegate<int, int> d(&counter, &add_to_counter);
    EXPECT_EQ(d.fire_once(5), 5);
    EXPECT_FALSE(bool(d));
    EXPECT_EQ(d.fire_once(5), 0);
    EXPECT_EQ(counter, 5);
}

TEST(Delegate, ClearUnbinds) {
    Delegate<int, int> d(&twice);
    d.clear();
    EXPECT_FALSE(bool(d));
    EXPECT_EQ(d(1), 0);
}

TEST(Delegate, EqualityComparesObjectAndFunction) {
    Counter a, b;
    Delegate<int, int> a1(&a, &Counter::add), a2(&a, &Counter::add), b1(&b, &Counter::add);
    EXPECT_TRUE(a1 == a2);
    EXPECT_TRUE(a1 != b1);
    EXPECT_TRUE(IntDelegate(&twice) == IntDelegate(twice));
    EXPECT_TRUE(IntDelegate(&twice) != IntDelegate());
}

TEST(Delegate, BindReplacesTheTarget) {
    Counter c;
    Delegate<int, int> d;
    d.bind(&c, &Counter::add);
    d(4);
    d.bind(&twice);
    EXPECT_EQ(d(4), 8);
    EXPECT_EQ(c.value, 4);
}

TEST(TempDelegate, AcceptsATemporaryLambdaForTheDurationOfTheCall) {
    int base = 100;
    EXPECT_EQ(run_temp([&](int x) { return base + x; }, 1), 101);
    auto named = [](int x) { return -x; };
    EXPECT_EQ(run_temp(named, 5), -5);
    EXPECT_EQ(run_temp(Delegate<int, int>(&twice), 5), 10);
}

TEST(Callback, IsADelegateReturningInt) {
    static_assert(std::is_same<Callback<int>, Delegate<int, int>>::value, "Callback alias");
    static_assert(sizeof(Callback<int>) == 2 * sizeof(void*), "two pointers wide");
    Callback<int> cb(&twice);
    EXPECT_EQ(cb(3), 6);
}

TEST(Delegate, ConvertsToBoolImplicitlyAsInPhoton) {
    Delegate<int, int> bound(&twice), unbound;
    bool b = bound;  // Photon's operator bool is not explicit
    EXPECT_TRUE(b);
    auto is_set = [](bool x) { return x; };
    EXPECT_FALSE(is_set(unbound));
}

TEST(Delegate, NamesItsMemberFunctionTypesAsPhotonDoes) {
    static_assert(std::is_same<IntDelegate::UMFunc<Counter>, int (Counter::*)(int)>::value, "UM");
    static_assert(std::is_same<IntDelegate::UCMFunc<Counter>, int (Counter::*)(int) const>::value,
                  "UCM");
    static_assert(std::is_same<IntDelegate::UFunc<Counter>, int (*)(Counter*, int)>::value, "UF");
    Counter c;
    IntDelegate::UMFunc<Counter> mf = &Counter::add;
    IntDelegate d(&c, mf);
    EXPECT_EQ(d(2), 2);
}

template <typename U, ENABLE_IF_NOT_CB(U)>
constexpr bool not_a_delegate() {
    return true;
}
template <typename U, ENABLE_IF(IS_BASE_OF(Delegate_Base, U))>
constexpr bool not_a_delegate() {
    return false;
}

TEST(Delegate, EnableIfNotCbTellsFunctorsFromDelegates) {
    static_assert(not_a_delegate<Counter>(), "a plain class");
    static_assert(!not_a_delegate<IntDelegate>(), "a Delegate");
    static_assert(!not_a_delegate<TempDelegate<int, int>>(), "derived from Delegate");
}

// Counts live instances; returns DELETE_CLOSURE on its `last` call.
struct OneShot {
    static int alive;
    int calls = 0, last;
    explicit OneShot(int n) : last(n) { ++alive; }
    ~OneShot() { --alive; }
    int64_t operator()(int x) { return ++calls == last ? photon::DELETE_CLOSURE : x * 10; }
};
int OneShot::alive = 0;

TEST(Closure, DeletesItsFunctorWhenACallReturnsDeleteClosure) {
    photon::Closure<int> c(new OneShot(2));
    EXPECT_EQ(OneShot::alive, 1);
    EXPECT_EQ(c(4), 40);
    EXPECT_EQ(OneShot::alive, 1);
    EXPECT_EQ(c(4), photon::DELETE_CLOSURE);
    EXPECT_EQ(OneShot::alive, 0);
}

TEST(Closure, BoundOtherwiseItIsAPlainDelegate) {
    OneShot on_stack(1);
    photon::Closure<int> c;
    EXPECT_FALSE(bool(c));
    c.bind(&on_stack, &OneShot::operator());  // the base bind: nothing is deleted
    EXPECT_EQ(c(1), photon::DELETE_CLOSURE);
    EXPECT_EQ(OneShot::alive, 1);

    int runs = 0;
    auto task = new auto([&runs]() -> int64_t {
        ++runs;
        return photon::DELETE_CLOSURE;
    });
    photon::Closure0 c0;
    c0.bind(task);
    EXPECT_EQ(c0(), photon::DELETE_CLOSURE);
    EXPECT_EQ(runs, 1);
}

TEST(Pmf, CallbackHeaderProvidesGetMemberFunctionAddress) {
    Square sq;
    Shape* shape = &sq;
    auto pmf = get_member_function_address(shape, &Shape::area);
    EXPECT_EQ(pmf.f(pmf.obj, 2), 18);  // the override, called with the adjusted this
}

}  // namespace
