// photon/common/delegates.h: facades bound to an object's members (overloads,
// operators, conversions, SelfRef chaining, virtual and inherited members),
// DUtils binding and reading single functions, and the calls Photon got wrong.
#include <photon/common/delegates.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

DEFINE_DELEGATE_FUNCTION(MemFoo, foo);
DEFINE_DELEGATE_FUNCTION(MemBar, bar);
DEFINE_DELEGATE_FUNCTION(MemTake, take);
DEFINE_DELEGATE_FUNCTION(MemScale, scale);
DEFINE_DELEGATE_CAST_OP(CastBool, bool);
DEFINE_DELEGATE_CAST_OP(CastLong, long);

namespace {

using namespace photon;
using namespace photon::DFeature;

// Records which member ran, instead of logging.
struct Example {
    int val = 313;
    int calls[8] = {};
    int foo() { return ++calls[0], val; }
    void foo(char) { ++calls[1]; }
    void bar(int) { ++calls[2]; }
    void bar(uint64_t) { ++calls[3]; }
    Example& operator<<(int x) {
        ++calls[4];
        val += x;
        return *this;
    }
    bool operator!() { return ++calls[5], true; }
    operator bool() { return ++calls[6], true; }
    void wow() { ++calls[7]; }
    bool op_bool() { return false; }
};

int g_free_wow = 0;
void* g_free_wow_obj = nullptr;
void free_wow(void* obj) {
    ++g_free_wow;
    g_free_wow_obj = obj;
}

using D = Delegates<Feature<MemFoo, int(), void(char)>, Feature<MemBar, void(uint64_t)>,
                    Feature<LSH, SelfRef(int)>, Feature<CastBool, bool()>, Feature<LNOT, bool()>>;

TEST(Delegates, ForwardsEachFeatureToTheBoundObject) {
    Example e;
    D facade(e);
    facade.bar(1);
    EXPECT_EQ(e.calls[3], 1);  // the uint64_t overload, as the Feature says
    EXPECT_EQ(facade.foo(), 313);
    facade.foo('a');
    EXPECT_EQ(e.calls[1], 1);
    facade << 1 << 2;
    EXPECT_EQ(e.calls[4], 2);
    EXPECT_EQ(e.val, 316);
    EXPECT_TRUE(!facade);
    EXPECT_TRUE(static_cast<bool>(facade));
    EXPECT_EQ(e.calls[5], 1);
    EXPECT_EQ(e.calls[6], 1);
}

TEST(Delegates, DUtilsRebindsSingleSignatures) {
    Example e;
    D facade(e);
    // void() is not among MemFoo's signatures: refused, nothing changes.
    EXPECT_FALSE((DUtils::bind_func<MemFoo, void()>(facade, nullptr, &free_wow)));
    EXPECT_EQ(facade.foo(), 313);

    // The default (first) signature of CastBool is bool().
    EXPECT_TRUE((DUtils::bind_func<CastBool>(facade, &e, &Example::op_bool)));
    EXPECT_FALSE(static_cast<bool>(facade));
    EXPECT_EQ(e.calls[6], 0);

    // A free function taking the object pointer.
    using F = Delegates<Feature<MemFoo, void()>>;
    F f;
    EXPECT_TRUE(DUtils::bind_obj(f, &e));
    EXPECT_TRUE((DUtils::bind_func<MemFoo, void()>(f, nullptr, &free_wow)));
    g_free_wow = 0;
    f.foo();
    EXPECT_EQ(g_free_wow, 1);
    EXPECT_EQ(g_free_wow_obj, &e);
    EXPECT_TRUE((DUtils::bind_func<MemFoo>(f, &e, &Example::wow)));
    f.foo();
    EXPECT_EQ(e.calls[7], 1);
}

TEST(Delegates, DefaultFacadeIsBuiltUpFunctionByFunction) {
    Example e;
    D f2;
    EXPECT_EQ(f2.foo(), 0);  // unbound: Rt{}
    f2.foo('x');             // unbound void: nothing
    EXPECT_FALSE(static_cast<bool>(f2));

    EXPECT_TRUE((DUtils::bind_func<MemFoo, void(char)>(f2, &e, &Example::foo)));
    EXPECT_TRUE((DUtils::bind_func<MemFoo, int()>(f2, &e, &Example::foo)));
    EXPECT_TRUE((DUtils::bind_func<MemBar>(f2, &e, &Example::bar)));
    EXPECT_TRUE((DUtils::bind_func<LSH>(f2, &e, &Example::operator<<)));
    EXPECT_FALSE(DUtils::bind_obj(f2, &e));  // already bound by the calls above

    auto lshd = DUtils::get_func<LSH, SelfRef(int)>(f2);
    auto l2 = DUtils::get_func<LSH>(f2);
    static_assert(std::is_same<decltype(lshd), Delegate<void*, int>>::value, "");
    EXPECT_EQ(lshd._obj, &e);
    EXPECT_EQ(l2._func, lshd._func);
    auto foofirst = DUtils::get_func<MemFoo, int()>(f2);
    auto foosecond = DUtils::get_func<MemFoo, void(char)>(f2);
    EXPECT_EQ(foofirst._obj, &e);
    EXPECT_EQ(foofirst(), 313);
    foosecond('a');
    EXPECT_EQ(e.calls[1], 1);

    f2.foo('a');
    f2.bar(1);
    f2 << 1 << 1;
    EXPECT_EQ(e.calls[1], 2);
    EXPECT_EQ(e.calls[3], 1);
    EXPECT_EQ(e.val, 315);
    EXPECT_FALSE(static_cast<bool>(f2));  // CastBool was never bound here

    Example other;
    EXPECT_TRUE(DUtils::bind_obj_and_func(f2, other));
    EXPECT_EQ(DUtils::get_func<LSH>(f2)._obj, &other);
    EXPECT_TRUE(static_cast<bool>(f2));
    EXPECT_EQ(other.calls[6], 1);
}

// Photon overwrote the object pointer before finding out the signature did
// not exist, and matched SelfRef overloads by argument list alone.
TEST(Delegates, BindingAMissingSignatureChangesNothing) {
    Example e;
    D f;
    EXPECT_FALSE((DUtils::bind_func<MemFoo, void()>(f, &e, &Example::wow)));
    EXPECT_FALSE((DUtils::bind_func<MemFoo, void()>(f, nullptr, &free_wow)));
    EXPECT_EQ(DUtils::get_func<LSH>(f)._obj, nullptr);
    EXPECT_TRUE(DUtils::bind_obj(f, &e));  // still free to bind
}

struct Three {
    int foo() { return 1; }
    int foo(char) { return 2; }
    int foo(int a, int b) { return a * b; }
};

// Photon's lookup stopped at the second overload of a Feature.
TEST(Delegates, TheThirdOverloadCanBeBoundAndRead) {
    Three t;
    Delegates<Feature<MemFoo, int(), int(char), int(int, int)>> f;
    EXPECT_TRUE((DUtils::bind_func<MemFoo, int(int, int)>(f, &t, &Three::foo)));
    EXPECT_EQ(f.foo(6, 7), 42);
    EXPECT_EQ(f.foo(), 0);  // the others stay unbound
    EXPECT_EQ((DUtils::get_func<MemFoo, int(int, int)>(f)(2, 3)), 6);
    EXPECT_FALSE(static_cast<bool>(DUtils::get_func<MemFoo, int(char)>(f)));
}

TEST(Delegates, BindingFunctionsOfAnotherObjectFails) {
    Example a, b;
    D f(a);
    EXPECT_FALSE((DUtils::bind_func<MemFoo, int()>(f, &b, &Example::foo)));
    EXPECT_TRUE((DUtils::bind_func<MemFoo, int()>(f, &a, &Example::foo)));
    Example* none = nullptr;
    EXPECT_FALSE((DUtils::bind_func<MemFoo, int()>(f, none, &Example::foo)));
    EXPECT_EQ(f.foo(), 313);
}

TEST(Delegates, GetFuncOfAnUnboundSignatureIsAnEmptyDelegate) {
    D f;
    auto d = DUtils::get_func<MemBar>(f);
    EXPECT_FALSE(static_cast<bool>(d));
    d(7u);  // calling it is harmless
}

// ---- virtual, inherited and const members ----------------------------------

class Interface {
public:
    virtual ~Interface() = default;
    virtual void foo() = 0;
    virtual int bar(const char*) = 0;
    virtual int foo(char) = 0;
    virtual Interface& operator<<(int) = 0;
};

class Mock : public Interface {
public:
    int cnt[4] = {};
    void foo() override { cnt[0]++; }
    int bar(const char*) override { return ++cnt[1]; }
    int foo(char) override { return ++cnt[2]; }
    Interface& operator<<(int) override {
        cnt[3]++;
        return *this;
    }
};

TEST(Delegates, VirtualMembersReachTheOverrides) {
    using V = Delegates<Feature<MemFoo, void(), int(char)>, Feature<MemBar, int(const char*)>,
                        Feature<LSH, SelfRef(int)>>;
    Mock mock;
    Interface* o = &mock;
    V d(*o);
    d.foo();
    EXPECT_EQ(d.foo('a'), 1);
    EXPECT_EQ(d.bar("Hello"), 1);
    d << 1 << 2;
    EXPECT_EQ(mock.cnt[0], 1);
    EXPECT_EQ(mock.cnt[1], 1);
    EXPECT_EQ(mock.cnt[2], 1);
    EXPECT_EQ(mock.cnt[3], 2);
}

struct Padding {
    virtual ~Padding() = default;
    long pad[2] = {-1, -1};
};

struct Api {
    int tag = 7;
    int foo(double x) { return tag + static_cast<int>(x * 10); }
    Api& operator<<(int x) {
        tag += x;
        return *this;
    }
};

// Api is a non-first base: its members need a `this` other than &impl.
struct Impl : Padding, Api {
    int scale(double x) const { return static_cast<int>(x * 2); }
};

// Photon did not compile a member inherited from a base class, and called a
// member with the signature's argument types, not the member's.
TEST(Delegates, InheritedMembersGetTheirBasesThisAndConvertedArguments) {
    Impl impl;
    Delegates<Feature<MemFoo, int(int)>, Feature<LSH, SelfRef(int)>> d(impl);
    EXPECT_EQ(d.foo(2), 27);  // the int 2 arrives as the double 2.0
    auto next = d << 3;       // Api& comes back and is turned into the Impl again
    EXPECT_EQ(DUtils::get_func<LSH>(next)._obj, &impl);
    next << 5;
    EXPECT_EQ(impl.tag, 15);
}

TEST(Delegates, ConstObjectsBindConstMembers) {
    const Impl impl;
    Delegates<Feature<MemScale, int(double)>> d(impl);
    EXPECT_EQ(d.scale(1.5), 3);
}

// ---- arguments, results and copies -----------------------------------------

struct Sink {
    int got = 0;
    int take(std::unique_ptr<int> p) { return got = *p; }
    void take(std::string&& s, std::string* out) { *out = std::move(s); }
    operator long() { return 42; }
};

// Photon copied each argument on its way through the facade.
TEST(Delegates, MoveOnlyAndRvalueArgumentsAreForwarded) {
    Sink s;
    Delegates<Feature<MemTake, int(std::unique_ptr<int>), void(std::string&&, std::string*)>> d(s);
    EXPECT_EQ(d.take(std::make_unique<int>(9)), 9);
    std::string out, in = "moved along";
    d.take(std::move(in), &out);
    EXPECT_EQ(out, "moved along");
}

// Photon's cast accessor called through the null pointer.
TEST(Delegates, UnboundCastOperatorReturnsTheDefaultValue) {
    Delegates<Feature<CastLong, long()>> unbound;
    EXPECT_EQ(static_cast<long>(unbound), 0);
    Sink s;
    Delegates<Feature<CastLong, long()>> bound(s);
    EXPECT_EQ(static_cast<long>(bound), 42);
}

TEST(Delegates, CopiesShareTheObjectAndBindings) {
    Example e;
    D a(e);
    D b = a;
    D c;
    c = b;
    EXPECT_EQ(c.foo(), 313);
    c << 1;
    EXPECT_EQ(e.val, 314);
    EXPECT_EQ(DUtils::get_func<LSH>(c)._obj, &e);
}

TEST(Delegates, UnboundSelfRefReturnsAFacadeWithoutAnObject) {
    D f;
    D next = f << 1;
    EXPECT_EQ(DUtils::get_func<LSH>(next)._obj, nullptr);
}

// As Photon's stack-allocator facade documents (Photon's Delegates itself did
// not compile here): what the object lacks stays unbound and returns Rt{}.
DEFINE_DELEGATE_FUNCTION(DAlloc, alloc);
DEFINE_DELEGATE_FUNCTION(DTrim, trim);

struct OnlyAlloc {
    char buf[16];
    void* alloc(size_t n) { return n <= sizeof(buf) ? buf : nullptr; }
};

TEST(Delegates, MembersTheObjectLacksAreLeftUnbound) {
    using Facade = Delegates<Feature<DAlloc, void*(size_t)>, Feature<DTrim, size_t(size_t)>>;
    OnlyAlloc a;
    Facade f(a);
    EXPECT_EQ(f.alloc(8), static_cast<void*>(a.buf));
    EXPECT_EQ(f.trim(100), 0u);
    EXPECT_TRUE(static_cast<bool>(DUtils::get_func<DAlloc>(f)));
    EXPECT_FALSE(static_cast<bool>(DUtils::get_func<DTrim>(f)));
}

// ---- predefined operators --------------------------------------------------

struct Num {
    long v = 0;
    bool operator==(long x) { return v == x; }
    bool operator<(long x) { return v < x; }
    long operator+(long x) { return v + x; }
    Num& operator+=(long x) {
        v += x;
        return *this;
    }
    Num& operator++() {
        ++v;
        return *this;
    }
    long operator++(int) { return v++; }
    long operator~() { return ~v; }
    long operator()(long a, long b) { return v * a + b; }
};

TEST(Delegates, PredefinedOperatorsForward) {
    Num n;
    using N = Delegates<Feature<EQ, bool(long)>, Feature<LT, bool(long)>, Feature<ADD, long(long)>,
                        Feature<ADD_ASSIGN, SelfRef(long)>, Feature<INC, SelfRef(), long(int)>,
                        Feature<NOT, long()>, Feature<INVOKE, long(long, long)>>;
    N d(n);
    d += 4;
    EXPECT_TRUE(d == 4);
    EXPECT_TRUE(d < 5);
    EXPECT_EQ(d + 1, 5);
    ++d;
    EXPECT_EQ(d++, 5);
    EXPECT_EQ(n.v, 6);
    EXPECT_EQ(~d, ~6L);
    EXPECT_EQ(d(2, 1), 13);
}

}  // namespace
