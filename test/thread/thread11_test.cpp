// thread_create11 (photon/thread/thread11.h): how arguments reach the new
// coroutine for function pointers (Photon's parameter-type rule, minus its
// dangling references), member function pointers and other callables; the
// is_functor / is_callable traits.
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "test_util.h"

namespace {

using namespace photon_test;

class Thread11 : public VcpuTest {};

void add_to(int& counter, int n) { counter += n; }

TEST_F(Thread11, ANonConstReferenceParameterRefersToTheCallersObject) {
    int counter = 1;
    photon::thread_create11(&add_to, counter, 41);  // compiles as with Photon: no std::ref
    photon::thread_create11(add_to, std::ref(counter), 100);
    photon::wait_all();
    EXPECT_EQ(142, counter);
}

std::string g_seen;
void see(const std::string& s) { g_seen = s; }

TEST_F(Thread11, AConstReferenceParameterGivenATemporaryGetsItsOwnCopy) {
    g_seen.clear();
    photon::thread_create11(&see, std::string(100, 'x'));  // Photon: a dangling reference
    photon::wait_all();
    EXPECT_EQ(std::string(100, 'x'), g_seen);
}

TEST_F(Thread11, AConstReferenceParameterGivenAnLvalueOfItsTypeRefersToIt) {
    g_seen.clear();
    std::string s = "before";
    photon::thread_create11(&see, s);
    s = "after";  // the coroutine has not run yet
    photon::wait_all();
    EXPECT_EQ("after", g_seen);
    photon::thread_create11(&see, std::cref(s));
    s = "again";
    photon::wait_all();
    EXPECT_EQ("again", g_seen);
}

TEST_F(Thread11, ArgumentsOfAnotherTypeAreConvertedWhenTheCoroutineIsCreated) {
    g_seen.clear();
    char buf[16];
    strcpy(buf, "created");
    photon::thread_create11(&see, buf);  // a const std::string& from a char array
    strcpy(buf, "changed");
    photon::wait_all();
    EXPECT_EQ("created", g_seen);
}

std::unique_ptr<int> g_taken;
void take(std::unique_ptr<int>&& p) { g_taken = std::move(p); }
void take_value(std::unique_ptr<int> p) { g_taken = std::move(p); }

TEST_F(Thread11, RvalueReferenceAndMoveOnlyParametersAreMovedIn) {
    photon::thread_create11(&take, std::make_unique<int>(7));
    photon::wait_all();
    ASSERT_TRUE(g_taken);
    EXPECT_EQ(7, *g_taken);
    auto p = std::make_unique<int>(8);
    photon::thread_create11(&take_value, std::move(p));
    photon::wait_all();
    ASSERT_TRUE(g_taken);
    EXPECT_EQ(8, *g_taken);
}

struct Base {
    int total = 0;
    virtual ~Base() = default;
    virtual void add(int& out, int n) { out += n; }
    void tally(const std::string& s) const { g_seen = s + std::to_string(total); }
};
struct Derived : Base {
    void add(int& out, int n) override { out += 2 * n; }
};

TEST_F(Thread11, MemberFunctionsRunOnTheObjectWithParametersKeptAsForFunctions) {
    Derived d;
    Base* b = &d;
    int out = 0;
    photon::thread_create11(&Base::add, b, out, 5);  // virtual: Derived::add
    d.total = 3;
    photon::thread_create11(&Base::tally, &d, std::string("t="));
    photon::thread_create11(64 * 1024, &Base::add, &d, out, 1);
    photon::wait_all();
    EXPECT_EQ(12, out);
    EXPECT_EQ("t=3", g_seen);
}

TEST_F(Thread11, OtherCallablesGetDecayedCopiesMovedIntoTheCall) {
    int runs = 0;
    std::string s = "copy";
    photon::thread_create11(
        [&runs](std::string v, std::unique_ptr<int> p) {
            EXPECT_EQ("copy", v);
            EXPECT_EQ(9, *p);
            runs++;
        },
        s, std::make_unique<int>(9));
    s = "changed";
    photon::thread_create11([&runs](int& r) { r++, runs++; }, std::ref(runs));
    photon::wait_all();
    EXPECT_EQ(3, runs);
}

TEST_F(Thread11, ALargeCallableGoesToTheHeapAndStillRuns) {
    std::array<char, 100 * 1024> big{};
    big[0] = 'a';
    big[big.size() - 1] = 'z';
    std::string got;
    photon::thread_create11([big, &got] { got = std::string{big[0], big[big.size() - 1]}; });
    photon::wait_all();
    EXPECT_EQ("az", got);
}

struct Counted {
    static int alive;
    Counted() { alive++; }
    Counted(const Counted&) { alive++; }
    ~Counted() { alive--; }
};
int Counted::alive = 0;

TEST(Thread11OffVcpu, FailsWithEnosysAndDestroysWhatItKept) {
    int x = 0;
    errno = 0;
    EXPECT_EQ(nullptr, photon::thread_create11(&add_to, x, 1));
    EXPECT_EQ(ENOSYS, errno);
    {
        Counted c;
        std::array<char, 100 * 1024> big{};
        errno = 0;
        EXPECT_EQ(nullptr, photon::thread_create11([c, big] { (void)big; }));
        EXPECT_EQ(ENOSYS, errno);
        EXPECT_EQ(1, Counted::alive) << "the heap copy was destroyed";
    }
    EXPECT_EQ(0, Counted::alive);
}

TEST(Thread11Traits, IsFunctorHoldsForCallableClassObjectsOnly) {
    auto lambda = [](int) {};
    static_assert(photon::is_functor<decltype(lambda), int>::value, "");
    static_assert(!photon::is_functor<decltype(lambda), std::string>::value, "");
    static_assert(!photon::is_functor<void (*)(int), int>::value, "not a class");
    static_assert(photon::is_callable<decltype(lambda), int>::value, "");
    static_assert(photon::is_callable<void (*)(int), int>::value, "");
    SUCCEED();
}

}  // namespace
