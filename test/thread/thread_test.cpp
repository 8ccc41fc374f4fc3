// Coroutine life cycle and scheduling on one vCPU (photon/thread/thread.h and
// thread11.h): creation and run order, thread_create11's argument passing,
// join and exit, sleeping, interrupts, shutdown, yield_to, init/fini.
// Stacks and cross-vCPU behaviour are in thread_stack_test.cpp and
// thread_vcpu_test.cpp.
#include <photon/photon.h>
#include <photon/thread/detail/idle-wait.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../../thread/sleep_queue.h"
#include "test_util.h"

namespace {

using namespace photon_test;

class Thread : public VcpuTest {};

constexpr uint64_t kSmallStack = 64 * 1024;

void* return_arg(void* arg) { return arg; }
void* count_up(void* arg) {
    ++*static_cast<int*>(arg);
    return nullptr;
}
photon::join_handle* handle(photon::thread* th) {
    return reinterpret_cast<photon::join_handle*>(th);
}

TEST_F(Thread, NewCoroutineRunsOnlyWhenItsCreatorYieldsOrSleeps) {
    std::vector<int> order;
    photon::thread* th = photon::thread_create11([&] { order.push_back(1); });
    ASSERT_NE(nullptr, th);
    EXPECT_EQ(photon::READY, photon::thread_stat(th));
    order.push_back(0);
    EXPECT_EQ(0, photon::thread_yield());
    order.push_back(2);
    EXPECT_EQ((std::vector<int>{0, 1, 2}), order);

    ASSERT_NE(nullptr, photon::thread_create11([&] { order.push_back(3); }));
    EXPECT_EQ(3u, order.size());
    EXPECT_EQ(0, photon::thread_usleep(1000));
    EXPECT_EQ((std::vector<int>{0, 1, 2, 3}), order);
}

struct Slot {
    int in;
    int* out;
};

// The engines submit a file request at once only if the vCPU will not idle
// right after its caller parks (io/iouring_ring.h): this is how they know.
TEST_F(Thread, HasOtherReadySeesTheRunQueueAndNotTheSleepers) {
    using photon::vcpu_has_other_ready;
    EXPECT_FALSE(vcpu_has_other_ready());
    photon::thread* sleeper = photon::thread_create11([] { photon::thread_usleep(-1); });
    auto sleeper_jh = photon::thread_enable_join(sleeper);
    EXPECT_TRUE(vcpu_has_other_ready());
    photon::thread_yield();  // it parks
    EXPECT_FALSE(vcpu_has_other_ready());
    auto ready = photon::thread_enable_join(photon::thread_create11([] {}));
    EXPECT_TRUE(vcpu_has_other_ready());
    photon::thread_join(ready);
    EXPECT_FALSE(vcpu_has_other_ready());
    photon::thread_interrupt(sleeper, EINTR);
    EXPECT_TRUE(vcpu_has_other_ready());
    photon::thread_join(sleeper_jh);
    EXPECT_FALSE(vcpu_has_other_ready());
}

TEST(ThreadNoVcpu, HasOtherReadyIsFalseOutsideAVcpu) {
    EXPECT_FALSE(photon::vcpu_has_other_ready());
}

TEST_F(Thread, ReservedSpaceIsSharedBetweenTheCreatorAndTheCoroutine) {
    auto entry = [](void*) -> void* {
        auto s = photon::thread_reserved_space<Slot>(photon::CURRENT);
        *s->out = s->in * 2;
        return nullptr;
    };
    int out = 0;
    photon::thread* th = photon::thread_create(entry, nullptr, kSmallStack, sizeof(Slot));
    ASSERT_NE(nullptr, th);
    Slot* s = photon::thread_reserved_space<Slot>(th);
    ASSERT_NE(nullptr, s);
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(s) % alignof(Slot));
    EXPECT_EQ(nullptr, photon::thread_reserved_space(th, sizeof(Slot) + 1));
    *s = Slot{21, &out};
    photon::wait_all();
    EXPECT_EQ(42, out);
}

TEST_F(Thread, CreateFailsWithEinvalForANullEntryOrTooMuchReservedSpace) {
    errno = 0;
    EXPECT_EQ(nullptr, photon::thread_create(photon::thread_entry(nullptr), nullptr));
    EXPECT_EQ(EINVAL, errno);
    errno = 0;
    EXPECT_EQ(nullptr, photon::thread_create(&noop, nullptr, kSmallStack, kSmallStack / 2 + 1));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}

void store_sum(int a, int b, int* out) { *out = a + b; }

TEST_F(Thread, Create11RunsAPlainFunctionPointerWithItsArguments) {
    int out = 0;
    ASSERT_NE(nullptr, photon::thread_create11(&store_sum, 40, 2, &out));
    photon::wait_all();
    EXPECT_EQ(42, out);
}

TEST_F(Thread, Create11RunsALambdaWithItsOwnCopyOfTheCaptures) {
    std::string s = "abc";
    std::string seen;
    ASSERT_NE(nullptr, photon::thread_create11([s, &seen] { seen = s; }));
    s = "changed before the coroutine ran";
    photon::wait_all();
    EXPECT_EQ("abc", seen);
}

struct Accumulator {
    int sum = 0;
    void add(int a, int b) { sum += a + b; }
};

TEST_F(Thread, Create11CallsAMemberFunctionOnAnObjectPointer) {
    Accumulator acc;
    ASSERT_NE(nullptr, photon::thread_create11(&Accumulator::add, &acc, 3, 4));
    ASSERT_NE(nullptr, photon::thread_create11(&Accumulator::add, &acc, 10, 20));
    photon::wait_all();
    EXPECT_EQ(37, acc.sum);
}

// Move-only; counts live instances so that the test sees it destroyed.
struct MoveOnly {
    static int alive;
    std::unique_ptr<int> p;
    explicit MoveOnly(int v) : p(new int(v)) { alive++; }
    MoveOnly(MoveOnly&& r) : p(std::move(r.p)) { alive++; }
    MoveOnly(const MoveOnly&) = delete;
    ~MoveOnly() { alive--; }
};
int MoveOnly::alive = 0;

TEST_F(Thread, Create11MovesAMoveOnlyArgumentInAndDestroysItAfterTheRun) {
    int seen = 0;
    {
        MoveOnly m(7);
        ASSERT_NE(nullptr,
                  photon::thread_create11([&seen](MoveOnly x) { seen = *x.p; }, std::move(m)));
        EXPECT_EQ(nullptr, m.p);
    }
    EXPECT_EQ(1, MoveOnly::alive);  // the coroutine's copy
    photon::wait_all();
    EXPECT_EQ(7, seen);
    EXPECT_EQ(0, MoveOnly::alive);
}

TEST_F(Thread, Create11PassesAReferenceThroughStdRef) {
    int counter = 0;
    auto bump = [](int& c, int by) { c += by; };
    ASSERT_NE(nullptr, photon::thread_create11(bump, std::ref(counter), 5));
    ASSERT_NE(nullptr, photon::thread_create11(bump, std::ref(counter), 6));
    photon::wait_all();
    EXPECT_EQ(11, counter);
}

TEST_F(Thread, Create11UsesTheGivenStackSize) {
    constexpr uint64_t kStack = 128 * 1024;
    photon::stack_stat st{};
    int ret = -1;
    ASSERT_NE(nullptr, photon::thread_create11(
                           kStack, [&] { ret = photon::thread_stack_stat(photon::CURRENT, &st); }));
    photon::wait_all();
    EXPECT_EQ(0, ret);
    EXPECT_LE(st.size, kStack);
    EXPECT_GE(st.size, kStack - 4096);
}

TEST_F(Thread, JoinReturnsTheEntryResult) {
    int x = 0, y = 0;
    auto th = photon::thread_create(&return_arg, &x, kSmallStack, 0, photon::THREAD_JOINABLE);
    ASSERT_NE(nullptr, th);
    EXPECT_EQ(&x, photon::thread_join(handle(th)));

    th = photon::thread_create11([&] { photon::thread_usleep(1000); });
    ASSERT_NE(nullptr, th);
    photon::join_handle* jh = photon::thread_enable_join(th);
    ASSERT_NE(nullptr, jh);
    EXPECT_EQ(nullptr, photon::thread_join(jh));

    th = photon::thread_create(&return_arg, &y);
    jh = photon::thread_enable_join(th);
    EXPECT_EQ(&y, photon::thread_join(jh));
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}

TEST_F(Thread, ThreadExitEndsTheCoroutineWithItsRetval) {
    static int reached;
    reached = 0;
    auto entry = [](void*) -> void* {
        reached = 1;
        photon::thread_exit(reinterpret_cast<void*>(0x1234));
    };
    auto th = photon::thread_create(entry, nullptr, kSmallStack, 0, photon::THREAD_JOINABLE);
    EXPECT_EQ(reinterpret_cast<void*>(0x1234), photon::thread_join(handle(th)));
    EXPECT_EQ(1, reached);
}

TEST_F(Thread, ThreadsCreateJoinRunsAllAndReturnsHowManyRan) {
    int ran = 0;
    EXPECT_EQ(50u, photon::threads_create_join(50, &count_up, &ran, kSmallStack));
    EXPECT_EQ(50, ran);
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}

TEST_F(Thread, HundredThousandCoroutinesAreCreatedAndJoined) {
    constexpr uint64_t N = 100000;
    int ran = 0;
    std::vector<photon::join_handle*> hs;
    hs.reserve(N);
    for (uint64_t i = 0; i < N; i++) {
        auto th = photon::thread_create(&count_up, &ran, photon::DEFAULT_STACK_SIZE, 0,
                                        photon::THREAD_JOINABLE);
        ASSERT_NE(nullptr, th) << "at " << i;
        hs.push_back(handle(th));
    }
    EXPECT_EQ(N + 1, photon::get_info(photon::INFO_THREAD_NUM));
    for (auto h : hs) photon::thread_join(h);
    EXPECT_EQ((int)N, ran);
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
    EXPECT_EQ(N, photon::threads_create_join(N, &count_up, &ran));
    EXPECT_EQ(2 * (int)N, ran);
}

TEST_F(Thread, HundredThousandConcurrentSleepersAreAllWoken) {
    constexpr int N = 100000;  // even ones are interrupted, odd ones time out
    int interrupted = 0, timed_out = 0;
    std::vector<photon::thread*> ths;
    ths.reserve(N);
    for (int i = 0; i < N; i++) {
        uint64_t t = (i % 2) ? 50 * 1000 : kLongUs;
        auto th = photon::thread_create11(kSmallStack, [&, t] {
            int r = photon::thread_usleep(t);
            if (r == -1 && errno == ECANCELED) interrupted++;
            if (r == 0) timed_out++;
        });
        ASSERT_NE(nullptr, th);
        ths.push_back(th);
    }
    photon::thread_yield();  // each runs once and goes to sleep; odd ones may be awake again
    EXPECT_GE(photon::get_info(photon::INFO_SLEEPING_THREAD_NUM), (uint64_t)N / 2);
    for (int i = 0; i < N; i += 2) EXPECT_EQ(0, photon::thread_interrupt(ths[i], ECANCELED));
    EXPECT_EQ(0, photon::wait_all());
    EXPECT_EQ(N / 2, interrupted);
    EXPECT_EQ(N / 2, timed_out);
}

TEST_F(Thread, SleepersWakeInDeadlineOrder) {
    constexpr int N = 64;
    std::vector<int> rank(N);
    std::iota(rank.begin(), rank.end(), 0);
    std::shuffle(rank.begin(), rank.end(), std::mt19937(42));
    // Absolute deadlines from one base, so that creation order cannot matter.
    const uint64_t base = photon::__update_now() + 100 * 1000;
    std::vector<int> woke;
    for (int r : rank) {
        photon::thread_create11(kSmallStack, [&woke, base, r] {
            photon::Timeout t;
            t.expiration(base + (uint64_t)r * 300);
            EXPECT_EQ(0, photon::thread_usleep(t));
            woke.push_back(r);
        });
    }
    photon::wait_all();
    std::vector<int> sorted(N);
    std::iota(sorted.begin(), sorted.end(), 0);
    EXPECT_EQ(sorted, woke);
}

// The sleep queue keeps in-order arrivals in a list and the others in a heap
// (an array, or linked coroutines when the array cannot grow); removals from
// each (interrupts) must leave the order of the rest intact.
void sleepers_wake_in_order_around_interrupts() {
    constexpr int N = 300;
    std::mt19937 rng(7);
    std::vector<int> rank(N);
    std::iota(rank.begin(), rank.end(), 0);
    // Runs of ascending ranks (the list) interleaved with shuffled ones (a heap).
    for (int i = 0; i + 10 <= N; i += 20)
        std::shuffle(rank.begin() + i, rank.begin() + i + 10, rng);
    const uint64_t base = photon::__update_now() + 100 * 1000;
    std::vector<int> woke;
    std::vector<photon::thread*> ths(N);
    for (int r : rank) {
        ths[r] = photon::thread_create11(kSmallStack, [&woke, base, r] {
            photon::Timeout t;
            t.expiration(base + (uint64_t)r * 200);
            if (photon::thread_usleep(t) == 0) woke.push_back(r);
        });
    }
    photon::thread_yield();  // all asleep
    std::vector<int> expected;
    for (int r = 0; r < N; r++) {
        if (r % 7 == 3 || r % 11 == 5)
            EXPECT_EQ(0, photon::thread_interrupt(ths[r], EINTR));
        else
            expected.push_back(r);
    }
    photon::wait_all();
    EXPECT_EQ(expected, woke);
}

TEST_F(Thread, SleepersArrivingInAndOutOfOrderWakeInDeadlineOrderAroundInterrupts) {
    sleepers_wake_in_order_around_interrupts();
}

TEST_F(Thread, SleepersBeyondAHeapThatCannotGrowStillWakeInDeadlineOrder) {
    uint32_t old = photon::sleep_queue::limit_heap_for_test(16);
    sleepers_wake_in_order_around_interrupts();
    photon::sleep_queue::limit_heap_for_test(0);  // all out-of-order ones linked
    sleepers_wake_in_order_around_interrupts();
    photon::sleep_queue::limit_heap_for_test(old);
}

TEST_F(Thread, UsleepZeroAndAnExpiredTimeoutJustYield) {
    int ran = 0;
    photon::thread_create(&count_up, &ran, kSmallStack);
    EXPECT_EQ(0, photon::thread_usleep(0));
    EXPECT_EQ(1, ran);
    photon::thread_create(&count_up, &ran, kSmallStack);
    EXPECT_EQ(0, photon::thread_usleep(photon::Timeout(0)));
    EXPECT_EQ(2, ran);
}

TEST_F(Thread, UsleepReturnsZeroAfterTheFullTime) {
    for (uint64_t d : {1000, 5000, 20000}) {
        auto t0 = Clock::now();
        EXPECT_EQ(0, photon::thread_usleep(d));
        EXPECT_GE(us_since(t0), d);
    }
}

TEST_F(Thread, InterruptedSleepReturnsMinusOneWithTheGivenErrno) {
    int ret[2] = {0, 0}, err[2] = {0, 0};
    photon::thread* th[2];
    for (int i = 0; i < 2; i++) {
        th[i] = photon::thread_create11([&, i] {
            ret[i] = photon::thread_usleep(kLongUs);
            err[i] = errno;
        });
    }
    photon::thread_yield();
    ASSERT_EQ(photon::SLEEPING, photon::thread_stat(th[0]));
    auto t0 = Clock::now();
    EXPECT_EQ(0, photon::thread_interrupt(th[0], ECANCELED));
    EXPECT_EQ(0, photon::thread_interrupt(th[1]));
    photon::wait_all();
    EXPECT_LT(us_since(t0), kLongUs / 2);
    EXPECT_EQ(-1, ret[0]);
    EXPECT_EQ(ECANCELED, err[0]);
    EXPECT_EQ(-1, ret[1]);
    EXPECT_EQ(EINTR, err[1]);
}

TEST_F(Thread, ResumedSleepReturnsZero) {
    int ret = -1;
    auto th = photon::thread_create11([&] { ret = photon::thread_usleep(kLongUs); });
    photon::thread_yield();
    auto t0 = Clock::now();
    EXPECT_EQ(0, photon::thread_resume(th));
    photon::wait_all();
    EXPECT_EQ(0, ret);
    EXPECT_LT(us_since(t0), kLongUs / 2);
}

TEST_F(Thread, InterruptOfAReadyCoroutineIsItsThreadYieldResult) {
    int first = -1, second = -1, err = -1;
    auto th = photon::thread_create11([&] {
        errno = 0;
        first = photon::thread_yield();  // the creator interrupts us meanwhile
        err = errno;
        second = photon::thread_yield();
    });
    photon::thread_yield();
    ASSERT_EQ(photon::READY, photon::thread_stat(th));
    EXPECT_EQ(0, photon::thread_interrupt(th, EBUSY));
    photon::wait_all();
    EXPECT_EQ(EBUSY, first);
    EXPECT_EQ(0, err);  // errno untouched
    EXPECT_EQ(0, second);
}

TEST_F(Thread, InterruptOfTheRunningCoroutineDoesNotAffectIt) {
    EXPECT_EQ(photon::RUNNING, photon::thread_stat(photon::CURRENT));
    EXPECT_EQ(0, photon::thread_interrupt(photon::CURRENT, EBUSY));
    EXPECT_EQ(0, photon::thread_yield());
}

TEST_F(Thread, InterruptOfAnEndedJoinableCoroutineFailsWithEsrch) {
    auto th = photon::thread_create(&noop, nullptr, kSmallStack, 0, photon::THREAD_JOINABLE);
    photon::thread_yield();
    ASSERT_EQ(photon::DONE, photon::thread_stat(th));
    errno = 0;
    EXPECT_EQ(-1, photon::thread_interrupt(th, EINTR));
    EXPECT_EQ(ESRCH, errno);
    errno = 0;
    EXPECT_EQ(-1, photon::thread_interrupt(nullptr));
    EXPECT_EQ(EINVAL, errno);
    photon::thread_join(handle(th));
}

TEST_F(Thread, EnableJoinOfAnEndedCoroutineFailsButItsHandleStillJoins) {
    int x = 0;
    auto th = photon::thread_create(&return_arg, &x, kSmallStack, 0, photon::THREAD_JOINABLE);
    photon::thread_yield();
    ASSERT_EQ(photon::DONE, photon::thread_stat(th));
    errno = 0;
    EXPECT_EQ(nullptr, photon::thread_enable_join(th));
    EXPECT_EQ(ESRCH, errno);
    EXPECT_EQ(&x, photon::thread_join(handle(th)));
}

TEST_F(Thread, JoinOfANonJoinableCoroutineFailsWithEnosys) {
    auto th = photon::thread_create(&noop, nullptr, kSmallStack);
    errno = 0;
    EXPECT_EQ(nullptr, photon::thread_join(handle(th)));
    EXPECT_EQ(ENOSYS, errno);
    photon::wait_all();
}

TEST_F(Thread, ShutdownMakesSleepsFailWithEpermWithinTenMilliseconds) {
    int r1 = 0, e1 = 0, r2 = 0, e2 = 0;
    uint64_t second_sleep_us = UINT64_MAX;
    auto th = photon::thread_create11([&] {
        r1 = photon::thread_usleep(kLongUs);
        e1 = errno;
        auto t0 = Clock::now();
        r2 = photon::thread_usleep(kLongUs);
        e2 = errno;
        second_sleep_us = us_since(t0);
    });
    photon::thread_yield();
    EXPECT_EQ(0, photon::thread_shutdown(th));
    photon::wait_all();
    EXPECT_EQ(-1, r1);
    EXPECT_EQ(EPERM, e1);
    EXPECT_EQ(-1, r2);
    EXPECT_EQ(EPERM, e2);
    EXPECT_LT(second_sleep_us, 1000u * 1000);
}

TEST_F(Thread, UsleepDeferRunsTheDeferOnceBeforeAnyOtherCoroutine) {
    struct Ctx {
        bool other_ran = false;
        int calls = 0;
        bool other_ran_at_defer = true;
    } c;
    photon::thread_create11([&] { c.other_ran = true; });
    auto defer = [](void* p) {
        auto c = static_cast<Ctx*>(p);
        c->calls++;
        c->other_ran_at_defer = c->other_ran;
    };
    EXPECT_EQ(0, photon::thread_usleep_defer(1000, defer, &c));
    EXPECT_EQ(1, c.calls);
    EXPECT_FALSE(c.other_ran_at_defer);
    EXPECT_TRUE(c.other_ran);
}

TEST_F(Thread, YieldToAReadyCoroutineRunsItNext) {
    std::vector<int> order;
    photon::thread* th[3];
    for (int i = 0; i < 3; i++) th[i] = photon::thread_create11([&, i] { order.push_back(i); });
    EXPECT_EQ(0, photon::thread_yield_to(th[2]));
    ASSERT_FALSE(order.empty());
    EXPECT_EQ(2, order[0]);
    photon::wait_all();
    EXPECT_EQ(3u, order.size());
}

TEST_F(Thread, YieldToANonReadyCoroutineFailsWithEinval) {
    auto sleeper = photon::thread_create11([] { photon::thread_usleep(kLongUs); });
    photon::thread_yield();
    ASSERT_EQ(photon::SLEEPING, photon::thread_stat(sleeper));
    errno = 0;
    EXPECT_EQ(-1, photon::thread_yield_to(sleeper));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, photon::thread_yield_to(photon::CURRENT));
    EXPECT_EQ(0, photon::thread_yield_to(nullptr));
    photon::thread_interrupt(sleeper);
}

TEST_F(Thread, CallsFromAPlainOsThreadFailWithEnosys) {
    photon::thread* th = reinterpret_cast<photon::thread*>(1);
    int create_errno = 0, usleep_ret = 0, usleep_errno = 0, info_errno = 0;
    uint64_t info = 0;
    std::thread os([&] {
        errno = 0;
        th = photon::thread_create(&noop, nullptr);
        create_errno = errno;
        errno = 0;
        usleep_ret = photon::thread_usleep(1000);
        usleep_errno = errno;
        errno = 0;
        info = photon::get_info(photon::INFO_THREAD_NUM);
        info_errno = errno;
    });
    os.join();
    EXPECT_EQ(nullptr, th);
    EXPECT_EQ(ENOSYS, create_errno);
    EXPECT_EQ(-1, usleep_ret);
    EXPECT_EQ(ENOSYS, usleep_errno);
    EXPECT_EQ((uint64_t)-1, info);
    EXPECT_EQ(ENOSYS, info_errno);
}

TEST(PhotonInit, SecondInitFailsWithEalreadyAndFiniWithoutInitFails) {
    errno = 0;
    EXPECT_EQ(-1, photon::fini());
    EXPECT_EQ(ENOSYS, errno);
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    errno = 0;
    EXPECT_EQ(-1, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    EXPECT_EQ(EALREADY, errno);
    EXPECT_EQ(0, photon::fini());
    EXPECT_EQ(nullptr, photon::CURRENT);
    EXPECT_EQ(-1, photon::fini());
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));  // again
    EXPECT_EQ(0, photon::fini());
}

TEST_F(Thread, VcpuFiniFromANonMainCoroutineFailsWithEperm) {
    int ret = 0, err = 0;
    photon::thread_create11([&] {
        errno = 0;
        ret = photon::vcpu_fini();
        err = errno;
    });
    photon::wait_all();
    EXPECT_EQ(-1, ret);
    EXPECT_EQ(EPERM, err);  // as thread.h documents
}

TEST_F(Thread, GetInfoCountsCoroutinesByState) {
    std::vector<photon::thread*> sleepers;
    for (int i = 0; i < 3; i++)
        sleepers.push_back(photon::thread_create11([] { photon::thread_usleep(kLongUs); }));
    photon::thread_yield();
    for (int i = 0; i < 2; i++) photon::thread_create(&noop, nullptr, kSmallStack);
    EXPECT_EQ(6u, photon::get_info(photon::INFO_THREAD_NUM));
    EXPECT_EQ(3u, photon::get_info(photon::INFO_RUNNABLE_THREAD_NUM));  // the caller too
    EXPECT_EQ(3u, photon::get_info(photon::INFO_SLEEPING_THREAD_NUM));
    EXPECT_EQ(0u, photon::get_info(photon::INFO_STANDBY_THREAD_NUM));
    EXPECT_EQ(1u, photon::get_vcpu_num());
    errno = 0;
    EXPECT_EQ((uint64_t)-1, photon::get_info(77));
    EXPECT_EQ(EINVAL, errno);
    for (auto th : sleepers) photon::thread_interrupt(th);
    photon::wait_all();
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}

TEST_F(Thread, WaitAllReturnsOnlyAfterEveryCoroutineEnded) {
    int ended = 0;
    for (int i = 0; i < 10; i++) {
        photon::thread_create11(kSmallStack, [&, i] {
            photon::thread_usleep(1000 * (i + 1));
            ended++;
        });
    }
    EXPECT_EQ(0, photon::wait_all());
    EXPECT_EQ(10, ended);
    EXPECT_EQ(1u, photon::get_info(photon::INFO_THREAD_NUM));
}

TEST_F(Thread, FiniWaitsForEveryCoroutineToEnd) {
    bool ended = false;
    photon::thread_create11([&] {
        photon::thread_usleep(20 * 1000);
        ended = true;
    });
    EXPECT_EQ(0, photon::fini());
    EXPECT_TRUE(ended);
}

TEST(PhotonFini, RunsTheHooksLastRegisteredFirstThenWaitsForCoroutines) {
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    std::vector<int> order;
    photon::thread_create11([&] {
        photon::thread_usleep(5000);
        order.push_back(0);
    });
    auto first = [&] { order.push_back(1); };
    auto second = [&] { order.push_back(2); };
    photon::fini_hook(first);
    photon::fini_hook(second);
    EXPECT_EQ(0, photon::fini());
    EXPECT_EQ((std::vector<int>{2, 1, 0}), order);
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    EXPECT_EQ(0, photon::fini());  // the hooks ran once
    EXPECT_EQ(3u, order.size());
}

}  // namespace
