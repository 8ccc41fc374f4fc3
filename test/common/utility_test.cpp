#include <photon/common/utility.h>
#include <photon/common/alog.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace {

TEST(Defer, RunsAtScopeExitInReverseOrder) {
    std::string trace;
    {
        DEFER(trace += 'a');
        DEFER(trace += 'b');
        trace += '-';
    }
    EXPECT_EQ(trace, "-ba");
}

TEST(Defer, CapturesByReferenceAndRunsOnEarlyReturn) {
    int x = 0;
    auto f = [&](bool early) {
        DEFER(x += 10);
        if (early) return 1;
        x += 1;
        return 2;
    };
    EXPECT_EQ(f(true), 1);
    EXPECT_EQ(x, 10);
    EXPECT_EQ(f(false), 2);
    EXPECT_EQ(x, 21);
}

TEST(With, ScopesTheVariableAndWithReleaseRunsTheRelease) {
    int released = 0;
    WITH(int n = 5) { EXPECT_EQ(n, 5); }
    WITH_Release(int* p = &released, ++*p) { EXPECT_EQ(released, 0); }
    EXPECT_EQ(released, 1);
}

TEST(SatAdd, ClampsAtUint64Max) {
    EXPECT_EQ(photon::sat_add(1, 2), 3u);
    EXPECT_EQ(photon::sat_add(UINT64_MAX - 1, 1), UINT64_MAX);
    EXPECT_EQ(photon::sat_add(UINT64_MAX, UINT64_MAX), UINT64_MAX);
}

TEST(SatSub, ClampsAtZero) {
    EXPECT_EQ(photon::sat_sub(5, 3), 2u);
    EXPECT_EQ(photon::sat_sub(3, 5), 0u);
    EXPECT_EQ(photon::sat_sub(0, UINT64_MAX), 0u);
}

TEST(Align, RoundsToPowerOfTwoBoundaries) {
    EXPECT_EQ(align_up(0u, 4096u), 0u);
    EXPECT_EQ(align_up(1u, 4096u), 4096u);
    EXPECT_EQ(align_up(uint64_t(4096), 4096), 4096u);
    EXPECT_EQ(align_down(uint64_t(8191), 4096), 4096u);
    EXPECT_EQ(align_down(7, 8), 0u);
    // As in Photon, the result is uint64_t whatever the argument type: no 32-bit wrap.
    EXPECT_EQ(align_up(uint32_t(0xFFFFFFFF), 4096), 0x100000000ull);
    static_assert(std::is_same<decltype(align_up(1, 2)), uint64_t>::value, "uint64_t");
    static_assert(align_up(13, 8) == 16, "constexpr");
}

TEST(Xrange, IteratesHalfOpenRangesWithSteps) {
    std::vector<int> v;
    for (auto i : xrange(4)) v.push_back(i);
    EXPECT_EQ(v, (std::vector<int>{0, 1, 2, 3}));
    v.clear();
    for (auto i : xrange(2, 9, 3)) v.push_back(i);
    EXPECT_EQ(v, (std::vector<int>{2, 5, 8}));
    v.clear();
    for (auto i : xrange(5, 0, -2)) v.push_back(i);
    EXPECT_EQ(v, (std::vector<int>{5, 3, 1}));
    v.clear();
    for (auto i : xrange(0)) v.push_back(i);
    EXPECT_TRUE(v.empty());
    uint64_t sum = 0;
    for (auto i : xrange(uint64_t(1), uint64_t(4))) sum += i;
    EXPECT_EQ(sum, 6u);
}

TEST(SafeDelete, DeletesAndNullsThePointer) {
    int* p = new int(3);
    safe_delete(p);
    EXPECT_EQ(p, nullptr);
    safe_delete(p);  // deleting nullptr is fine
}

TEST(Len, CountsArrayElements) {
    int a[7];
    static_assert(LEN(a) == 7, "LEN");
    EXPECT_EQ(LEN("abc"), 4u);
}

struct Widget {
    static int alive;
    int a, b;
    Widget(int a_, int b_) : a(a_), b(b_) { ++alive; }
    ~Widget() { --alive; }
    int init(int fail) { return fail; }
};
int Widget::alive = 0;

TEST(NewObj, InitSuccessReturnsTheObjectAndFailureDeletesIt) {
    Widget* w = NewObj<Widget>(1, 2)->init(0);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->a + w->b, 3);
    EXPECT_EQ(Widget::alive, 1);
    delete w;
    EXPECT_EQ(NewObj<Widget>(1, 2)->init(-1), nullptr);
    EXPECT_EQ(Widget::alive, 0);
}

TEST(NewObj, AnObjectNeverInitialisedIsNotLeaked) {
    {
        NewObj<Widget> pending(3, 4);
        EXPECT_EQ(Widget::alive, 1);
    }
    EXPECT_EQ(Widget::alive, 0);
    NewObj<Widget> once(5, 6);
    Widget* w = once->init(0);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(once->init(0), nullptr);  // one init per NewObj: the object is the caller's
    EXPECT_EQ(errno, ENOMEM);
    delete w;
}

struct Tracked {
    bool* deleted;
    ~Tracked() { *deleted = true; }
};

TEST(OwnedPtr, KeepsThePointerAndDeletesOnlyWhatItOwns) {
    bool deleted = false;
    Tracked* t = new Tracked{&deleted};
    {
        OwnedPtr<Tracked> borrowed(t, false);
        EXPECT_EQ((Tracked*)borrowed, t);
        EXPECT_EQ(borrowed->deleted, &deleted);
    }
    EXPECT_FALSE(deleted);
    {
        OwnedPtr<Tracked> owner(t, true);
        EXPECT_EQ((Tracked*)owner, t);  // Photon's kept 0 or 1 here
        OwnedPtr<Tracked> moved(std::move(owner));
        EXPECT_EQ((Tracked*)owner, nullptr);
        EXPECT_EQ((Tracked*)moved, t);
    }
    EXPECT_TRUE(deleted);
}

TEST(PtrArray, IteratesAPlainArray) {
    int a[] = {1, 2, 3, 4};
    int sum = 0;
    for (int x : ptr_array(a, 3)) sum += x;
    EXPECT_EQ(sum, 6);
    auto v = ptr_array(a, 4);
    EXPECT_EQ(v.front(), 1);
    EXPECT_EQ(v.back(), 4);
}

TEST(ForLoop, RunsTheBodyNTimesCountingDown) {
    std::vector<int> seen;
    FOR_LOOP(3) seen.push_back(i);
    EXPECT_EQ(seen, (std::vector<int>{3, 2, 1}));
    FOR_LOOP(0) seen.push_back(-1);
    EXPECT_EQ(seen.size(), 3u);
}

TEST(AlignedMem, GivesAnAlignedStackBuffer) {
    ALIGNED_MEM(buf, 100, 64);
    EXPECT_EQ((uintptr_t)buf % 64, 0u);
    memset(buf, 1, 100);  // the whole size is usable
    ALIGNED_MEM4K(page, 10);
    EXPECT_EQ((uintptr_t)page % 4096, 0u);
    char c;
    EXPECT_EQ((uintptr_t)align_ptr(&c, 16) % 16, 0u);
    EXPECT_GE(align_ptr(&c, 16), &c);
}

int plain_function() { return 1; }

TEST(Traits, IsFunctionPointerAndMisc) {
    static_assert(is_function_pointer<void (*)()>::value, "function pointer");
    EXPECT_EQ(plain_function(), 1);
    static_assert(is_function_pointer<decltype(&plain_function)>::value, "address of function");
    static_assert(!is_function_pointer<int*>::value, "object pointer");
    static_assert(!is_function_pointer<void()>::value, "function type");
    static_assert(likely(true) && !unlikely(false), "constexpr");
    int unused_a = 1, unused_b = 2;
    __unused__(unused_a, unused_b);
    volatile int runtime = 1;
    EXPECT_TRUE(likely(runtime == 1));
    EXPECT_FALSE(unlikely(runtime == 2));
}

TEST(Xrange, IteratorsCompareByPosition) {
    auto r = xrange(0, 4);
    EXPECT_EQ(r._begin, 0);
    EXPECT_EQ(r._end, 4);
    EXPECT_EQ(r._step, 1);
    auto it = r.begin();
    EXPECT_FALSE(it == r.end());
    for (int k = 0; k < 4; ++k) ++it;
    EXPECT_TRUE(it == r.end());
}

TEST(VersionCompare, ComparesComponentsNumerically) {
    int r = 99;
    ASSERT_EQ(version_compare("5.15", "5.15", r), 0);
    EXPECT_EQ(r, 0);
    ASSERT_EQ(version_compare("5.4", "5.15", r), 0);
    EXPECT_LT(r, 0);
    ASSERT_EQ(version_compare("6.1", "5.15.3", r), 0);
    EXPECT_GT(r, 0);
    ASSERT_EQ(version_compare("5.15.1", "5.15", r), 0);
    EXPECT_GT(r, 0);
    ASSERT_EQ(version_compare("5.015", "5.15", r), 0);  // leading zeros do not count
    EXPECT_EQ(r, 0);
    ASSERT_EQ(version_compare("100000000000000000000.1", "99999999999999999999.9", r), 0);
    EXPECT_GT(r, 0);
}

TEST(VersionCompare, MalformedVersionsFailWithEinvalAndLeaveResult) {
    int r = 99;
    for (const char* bad : {"", "5..1", "5.x", "5.15.", ".5", "5.15-rc1"}) {
        errno = 0;
        EXPECT_EQ(version_compare(bad, "5.15", r), -1) << bad;
        EXPECT_EQ(errno, EINVAL) << bad;
        EXPECT_EQ(version_compare("5.15", bad, r), -1) << bad;
    }
    EXPECT_EQ(version_compare("5.1", "5.1.x", r), -1);  // checked past the shorter one too
    EXPECT_EQ(r, 99);
}

TEST(VersionCompare, RunningKernelIsNewerThanLinux2) {
    int r = -99;
    ASSERT_EQ(kernel_version_compare("2.6", r), 0);
    EXPECT_GT(r, 0);
    ASSERT_EQ(kernel_version_compare("9999.0", r), 0);
    EXPECT_LT(r, 0);
    ALogLogger saved = default_logger;
    default_logger.log_output = log_output_null;
    EXPECT_EQ(kernel_version_compare("not.a.version", r), -1);
    EXPECT_EQ(errno, EINVAL);
    default_logger = saved;
}

class Lines final : public ILogOutput {
public:
    std::vector<std::string> lines;
    void write(int, const char* b, const char* e) override { lines.emplace_back(b, e); }
    int get_log_file_fd() override { return -1; }
    uint64_t set_throttle(uint64_t t) override { return t; }
    uint64_t get_throttle() override { return -1ULL; }
    void destruct() override {}
};

TEST(PrintStacktrace, LogsOneDebugLinePerFrame) {
    Lines out;
    ALogLogger saved = default_logger;
    default_logger = {&out, ALOG_DEBUG};
    print_stacktrace();
    default_logger = saved;
    ASSERT_GE(out.lines.size(), 2u);
    EXPECT_LE(out.lines.size(), 16u);
    for (auto& l : out.lines) EXPECT_NE(l.find("|DEBUG|"), std::string::npos) << l;
}

}  // namespace
