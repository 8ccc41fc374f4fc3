// Master event engines: wait_for_fd semantics on epoll and io_uring alike.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <photon/io/fd-events.h>
#include <photon/thread/thread.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/fds.h"

using namespace photon;
using namespace photon_test;

namespace {

class FdEvents : public EngineTest {};

TEST_P(FdEvents, WaitReturnsWhenDataArrives) {
    pipe_fds p;
    int result = -2;
    auto t = spawn([&] { result = wait_for_fd_readable(p.r, kLongUs); });
    ASSERT_TRUE(until_sleeping(t.th));
    thread_usleep(1000);
    EXPECT_EQ(-2, result);
    p.put();
    t.join();
    EXPECT_EQ(0, result);
}

TEST_P(FdEvents, ReadableFdReturnsAtOnceLevelTriggered) {
    pipe_fds p;
    p.put();
    EXPECT_EQ(0, wait_for_fd_readable(p.r, kLongUs));
    // Not consumed: still readable, whatever edges came before.
    EXPECT_EQ(0, wait_for_fd_readable(p.r, kLongUs));
    EXPECT_EQ(0, wait_for_fd_writable(p.w, kLongUs));
}

TEST_P(FdEvents, WaitTimesOutWithEtimedout) {
    pipe_fds p;
    auto t0 = Clock::now();
    EXPECT_EQ(-1, wait_for_fd_readable(p.r, 20 * 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 19 * 1000u);
}

TEST_P(FdEvents, ExpiredTimeoutPollsOnce) {
    pipe_fds p;
    EXPECT_EQ(-1, wait_for_fd_readable(p.r, 0));
    EXPECT_EQ(ETIMEDOUT, errno);
    p.put();
    EXPECT_EQ(0, wait_for_fd_readable(p.r, 0));
}

TEST_P(FdEvents, BadArgumentsFailWithEinval) {
    EXPECT_EQ(-1, wait_for_fd(-1, EVENT_READ, 1000));
    EXPECT_EQ(EINVAL, errno);
    pipe_fds p;
    EXPECT_EQ(-1, wait_for_fd(p.r, 0, 1000));
    EXPECT_EQ(EINVAL, errno);
}

TEST_P(FdEvents, InterruptedWaitFailsWithInterruptersErrno) {
    pipe_fds p;
    int result = 0, err = 0;
    auto t = spawn([&] {
        result = wait_for_fd_readable(p.r, kLongUs);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    thread_interrupt(t.th, ECANCELED);
    t.join();
    EXPECT_EQ(-1, result);
    EXPECT_EQ(ECANCELED, err);
}

// The fd is ready already, so the engine completes the wait in the same
// round as the interrupt: the interrupt must still win (nothing was consumed).
TEST_P(FdEvents, InterruptRacingReadinessStillInterrupts) {
    pipe_fds p;
    int result = 0, err = 0;
    auto t = spawn([&] {
        result = wait_for_fd_writable(p.w, kLongUs);
        err = errno;
    });
    thread_yield();  // t submits its wait and parks; the engine has not run yet
    thread_interrupt(t.th, ECANCELED);
    t.join();
    EXPECT_EQ(-1, result);
    EXPECT_EQ(ECANCELED, err);
}

// One deadline over two waits, the first ended by an event after the vCPU
// idled in the engine: the second must get what is left of the deadline, so
// photon::now must be fresh when the woken coroutine runs (it was as stale
// as the idle period, and the deadline overshot by it).
TEST_P(FdEvents, ADeadlineSpanningAnIdleWaitDoesNotOvershoot) {
    pipe_fds p;
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        char c = 'x';
        (void)!write(p.w, &c, 1);
    });
    auto t0 = std::chrono::steady_clock::now();
    Timeout deadline(600 * 1000);
    EXPECT_EQ(0, wait_for_fd_readable(p.r, deadline.timeout()));  // idles ~300 ms
    uint64_t left = deadline.timeout();
    // A bound on what is left, not on wall time: a loaded machine only makes
    // it smaller. A stale clock leaves about 600 ms.
    EXPECT_LT(left, 450 * 1000u) << "photon::now was stale after the idle wait";
    char c;
    EXPECT_EQ(1, read(p.r, &c, 1));
    EXPECT_EQ(-1, wait_for_fd_readable(p.r, left));  // nothing more comes
    EXPECT_EQ(ETIMEDOUT, errno);
    // The second wait ends at the deadline, not before. No upper bound on wall
    // time (a loaded machine adds to it): the stale clock that made the wait
    // overshoot shows in `left` above.
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    EXPECT_GE(ms, 598) << "the deadline of 600 ms ended early";
    writer.join();
}

TEST_P(FdEvents, InterruptFromPlainThreadWakesIdleEngine) {
    pipe_fds p;
    thread* self = CURRENT;
    std::thread other([&] {
        // Only a sleeping coroutine is woken by an interrupt (a running one keeps it for its
        // next yield): on a loaded machine the vCPU may take more than a few ms to get there.
        for (int i = 0; i < 5000 && thread_stat(self) != SLEEPING; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        thread_interrupt(self, EINTR);
    });
    // The vCPU has nothing else to run: it blocks in the engine until the
    // interrupt's notification.
    EXPECT_EQ(-1, wait_for_fd_readable(p.r, kLongUs));
    EXPECT_EQ(EINTR, errno);
    other.join();
}

// A waiter that left by timeout or interrupt must leave nothing behind: the
// event that comes later must not touch its (gone) stack frame.
TEST_P(FdEvents, EventAfterTimeoutOrInterruptTouchesNoStaleWaiter) {
    pipe_fds p;
    EXPECT_EQ(-1, wait_for_fd_readable(p.r, 1000));
    auto t = spawn([&] { wait_for_fd_readable(p.r, kLongUs); });
    ASSERT_TRUE(until_sleeping(t.th));
    thread_interrupt(t.th, EINTR);
    t.join();
    p.put();
    run_others();
    thread_usleep(1000);  // the engine sees and fires the event now
    char c;
    EXPECT_EQ(1, read(p.r, &c, 1));
    EXPECT_EQ(-1, wait_for_fd_readable(p.r, 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
}

TEST_P(FdEvents, WritableWaitWakesWhenPeerDrains) {
    int sv[2];
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv));
    DEFER(close(sv[0]));
    DEFER(close(sv[1]));
    char buf[4096] = {};
    size_t sent = 0;
    while (true) {
        ssize_t n = send(sv[0], buf, sizeof(buf), 0);
        if (n < 0) break;
        sent += n;
    }
    ASSERT_EQ(EAGAIN, errno);
    int result = -2;
    auto t = spawn([&] { result = wait_for_fd_writable(sv[0], kLongUs); });
    ASSERT_TRUE(until_sleeping(t.th));
    EXPECT_EQ(-2, result);
    size_t got = 0;
    while (got < sent) {
        ssize_t n = recv(sv[1], buf, sizeof(buf), 0);
        if (n <= 0) break;
        got += n;
    }
    EXPECT_EQ(sent, got);
    t.join();
    EXPECT_EQ(0, result);
}

TEST_P(FdEvents, HangupWakesReader) {
    pipe_fds p;
    int result = -2;
    auto t = spawn([&] { result = wait_for_fd_readable(p.r, kLongUs); });
    ASSERT_TRUE(until_sleeping(t.th));
    close(p.w);
    p.w = -1;
    t.join();
    EXPECT_EQ(0, result);
    char c;
    EXPECT_EQ(0, read(p.r, &c, 1));  // EOF
}

// Two coroutines bounce a byte through two pipes, each waiting edge-triggered
// right after EAGAIN, as the socket layer does: no wakeup may be lost.
TEST_P(FdEvents, EdgeTriggeredPingPongLosesNoWakeup) {
    pipe_fds a, b;
    constexpr int kRounds = 2000;
    auto pump = [](int in, int out, int rounds, bool first) {
        char c = 'x';
        if (first && write(out, &c, 1) != 1) return -1;
        for (int i = 0; i < rounds; i++) {
            while (read(in, &c, 1) != 1) {
                if (errno != EAGAIN) return -1;
                if (wait_for_fd(in, EVENT_READ | EDGE_TRIGGERED, kLongUs) < 0) return -1;
            }
            if (i + 1 < rounds || !first)
                if (write(out, &c, 1) != 1) return -1;
        }
        return 0;
    };
    int r1 = -2, r2 = -2;
    auto t1 = spawn([&] { r1 = pump(a.r, b.w, kRounds, true); });
    auto t2 = spawn([&] { r2 = pump(b.r, a.w, kRounds, false); });
    t1.join();
    t2.join();
    EXPECT_EQ(0, r1);
    EXPECT_EQ(0, r2);
}

TEST_P(FdEvents, ForgetFdWakesWaitersWithEbadf) {
    pipe_fds p;
    int result = 0, err = 0;
    auto t = spawn([&] {
        result = wait_for_fd(p.r, EVENT_READ | EDGE_TRIGGERED, kLongUs);
        err = errno;
    });
    ASSERT_TRUE(until_sleeping(t.th));
    get_vcpu()->master_event_engine->forget_fd(p.r);
    t.join();
    EXPECT_EQ(-1, result);
    EXPECT_EQ(EBADF, err);
}

// An fd waited on, closed, and its number given to a new pipe: the new pipe's
// waits work, level- and edge-triggered (after forget_fd), and the old
// registration leaves nothing stale.
TEST_P(FdEvents, ClosedFdNumberReusedStartsClean) {
    int old_r;
    {
        pipe_fds p;
        old_r = p.r;
        EXPECT_EQ(-1, wait_for_fd(p.r, EVENT_READ | EDGE_TRIGGERED, 1000));
        get_vcpu()->master_event_engine->forget_fd(p.r);
    }
    for (bool edge : {false, true}) {
        pipe_fds q;
        ASSERT_EQ(old_r, q.r) << "the lowest free fd number is reused";
        int result = -2;
        auto t = spawn(
            [&] { result = wait_for_fd(q.r, EVENT_READ | (edge ? EDGE_TRIGGERED : 0), kLongUs); });
        ASSERT_TRUE(until_sleeping(t.th));
        q.put();
        t.join();
        EXPECT_EQ(0, result) << (edge ? "edge" : "level");
        get_vcpu()->master_event_engine->forget_fd(q.r);
    }
}

// The same without forget_fd (a user's plain close): the epoll engine's
// registration of the old file went with it, silently. An edge-triggered wait
// on the new file must still see its data (within the engine's re-check
// period, not hang), and the old file's hang-up must not make the new one look
// ready forever.
TEST_P(FdEvents, AnFdClosedWithoutForgetFdAndReusedStillWorksEdgeTriggered) {
    for (bool hang_up : {false, true}) {
        int old_r;
        {
            pipe_fds p;
            old_r = p.r;
            EXPECT_EQ(-1, wait_for_fd(p.r, EVENT_READ | EDGE_TRIGGERED, 1000));  // registered
            if (hang_up) {
                close(p.w);
                p.w = -1;
                EXPECT_EQ(0, wait_for_fd(p.r, EVENT_READ | EDGE_TRIGGERED, kLongUs));
            }
        }  // closed, no forget_fd
        pipe_fds q;
        ASSERT_EQ(old_r, q.r) << "the lowest free fd number is reused";
        if (hang_up) {
            EXPECT_EQ(-1, wait_for_fd(q.r, EVENT_READ | EDGE_TRIGGERED, 50 * 1000))
                << "the old file's hang-up is not the new one's";
            EXPECT_EQ(ETIMEDOUT, errno);
        }
        int result = -2;
        auto t = spawn([&] { result = wait_for_fd(q.r, EVENT_READ | EDGE_TRIGGERED, kLongUs); });
        ASSERT_TRUE(until_sleeping(t.th));
        q.put();
        t.join();
        EXPECT_EQ(0, result) << "the data is seen before the 10 s deadline";
        get_vcpu()->master_event_engine->forget_fd(q.r);
    }
}

// One eventfd each (a pipe would take two fds: 20k passes many hard limits).
TEST_P(FdEvents, TenThousandCoroutinesEachOnItsOwnFd) {
    constexpr int kN = 10000;
    struct rlimit rl;
    ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
    if (rl.rlim_cur < kN + 100) {
        rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, kN + 100);
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
        if (rl.rlim_cur < kN + 100) GTEST_SKIP() << "RLIMIT_NOFILE too low: " << rl.rlim_cur;
    }
    std::vector<int> fds(kN);
    for (auto& fd : fds) ASSERT_GE(fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), 0);
    DEFER(for (int fd : fds) close(fd));
    int woken = 0, failed = 0;
    std::vector<task> tasks;
    tasks.reserve(kN);
    for (int fd : fds) {
        tasks.push_back(spawn([&, fd] {
            uint64_t v;
            while (read(fd, &v, sizeof(v)) < 0) {
                if (errno != EAGAIN || wait_for_fd(fd, EVENT_READ | EDGE_TRIGGERED, kLongUs) < 0) {
                    failed++;
                    return;
                }
            }
            woken++;
        }));
    }
    ASSERT_TRUE(until_sleeping(tasks.back().th));
    uint64_t one = 1;
    for (int fd : fds) ASSERT_EQ(8, write(fd, &one, sizeof(one)));
    for (auto& t : tasks) t.join();
    EXPECT_EQ(kN, woken);
    EXPECT_EQ(0, failed);
}

// Coroutines that only yield must not starve one waiting for an fd: the
// scheduler polls the engine while it is busy.
TEST_P(FdEvents, BusyCoroutinesDoNotStarveFdWaiters) {
    pipe_fds p;
    bool woken = false, stop = false, busy_saw_stop = false;
    auto busy = spawn([&] {
        auto t0 = Clock::now();
        while (!stop && us_since(t0) < kLongUs) thread_yield();
        busy_saw_stop = stop;
    });
    auto waiter = spawn([&] {
        woken = wait_for_fd_readable(p.r, kLongUs) == 0;
        stop = true;
    });
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        char c = 'x';
        (void)!write(p.w, &c, 1);
    });
    busy.join();
    waiter.join();
    writer.join();
    EXPECT_TRUE(woken);
    // The vCPU never idled: the waiter was woken while the other coroutine
    // still yielded, by the scheduler's periodic engine poll.
    EXPECT_TRUE(busy_saw_stop);
}

// Four plain threads signal a semaphore that coroutines of this vCPU wait
// on, while the vCPU blocks in its engine between units: every unit arrives
// (no lost cancel_wait), and the waiters all finish.
TEST_P(FdEvents, CrossThreadWakeupsUnderStressLoseNothing) {
    constexpr int kThreads = 4, kPerThread = 5000, kWaiters = 8;
    photon::semaphore sem(0);
    int taken = 0;
    std::vector<task> waiters;
    for (int w = 0; w < kWaiters; w++) {
        waiters.push_back(spawn([&] {
            for (int i = 0; i < kThreads * kPerThread / kWaiters; i++) {
                if (sem.wait(1, kLongUs) < 0) return;
                taken++;
            }
        }));
    }
    std::vector<std::thread> signalers;
    for (int t = 0; t < kThreads; t++) {
        signalers.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; i++) {
                sem.signal(1);
                if (i % 64 == t) std::this_thread::yield();  // let the vCPU go idle now and then
            }
        });
    }
    for (auto& w : waiters) w.join();
    for (auto& s : signalers) s.join();
    EXPECT_EQ(kThreads * kPerThread, taken);
}

// EVENT_ERROR means urgent data (or an error / hang-up) on every engine.
TEST_P(FdEvents, ErrorWaitWakesOnUrgentData) {
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(lfd, 0);
    DEFER(close(lfd));
    struct sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    ASSERT_EQ(0, bind(lfd, (sockaddr*)&a, sizeof(a)));
    ASSERT_EQ(0, listen(lfd, 1));
    ASSERT_EQ(0, ::getsockname(lfd, (sockaddr*)&a, &len));
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(c, 0);
    DEFER(close(c));
    ASSERT_EQ(0, connect(c, (sockaddr*)&a, sizeof(a)));
    int s = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    ASSERT_GE(s, 0);
    DEFER(close(s));
    EXPECT_EQ(-1, wait_for_fd_error(s, 0));
    EXPECT_EQ(ETIMEDOUT, errno);
    int result = -2;
    auto t = spawn([&] { result = wait_for_fd_error(s, kLongUs); });
    ASSERT_TRUE(until_sleeping(t.th));
    ASSERT_EQ(1, send(c, "!", 1, MSG_OOB));
    t.join();
    EXPECT_EQ(0, result);
}

// Only this vCPU's engine can wake a coroutine parked in it: it is pinned.
TEST_P(FdEvents, ParkedCoroutineCannotMigrate) {
    std::atomic<vcpu_base*> other{nullptr};
    std::atomic<bool> done{false};
    std::thread peer([&] {
        if (photon::init(INIT_EVENT_NONE, INIT_IO_NONE) < 0) return;
        other = get_vcpu();
        while (!done) thread_usleep(1000);
        photon::fini();
    });
    while (!other) std::this_thread::yield();
    pipe_fds p;
    int result = -2;
    auto t = spawn([&] { result = wait_for_fd_readable(p.r, kLongUs); });
    ASSERT_TRUE(until_sleeping(t.th));
    EXPECT_EQ(-1, thread_migrate(t.th, other));
    EXPECT_EQ(EBUSY, errno);
    p.put();
    t.join();
    EXPECT_EQ(0, result);
    done = true;
    peer.join();
}

TEST_P(FdEvents, SleepersWakeOnTimeUnderTheEngine) {
    auto t0 = Clock::now();
    EXPECT_EQ(0, thread_usleep(5000));
    EXPECT_GE(us_since(t0), 4900u);
    t0 = Clock::now();
    EXPECT_EQ(0, thread_usleep(300));  // below the millisecond epoll_wait takes
    EXPECT_GE(us_since(t0), 290u);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(FdEvents);

TEST(FdEventsInit, UnavailableKindFailsInitCleanly) {
    EXPECT_EQ(-1, photon::init(INIT_EVENT_SELECT, INIT_IO_NONE));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(nullptr, CURRENT);
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    EXPECT_EQ(INIT_EVENT_EPOLL, master_event_engine_kind());
    EXPECT_EQ(0, photon::fini());
}

TEST(FdEventsInit, DefaultPrefersIouringThenEpoll) {
    ASSERT_EQ(0, photon::init());
    uint64_t kind = master_event_engine_kind();
    EXPECT_TRUE(kind == INIT_EVENT_IOURING || kind == INIT_EVENT_EPOLL);
    MasterEventEngine* probe = new_iouring_master_engine();
    EXPECT_EQ(probe ? INIT_EVENT_IOURING : INIT_EVENT_EPOLL, kind);
    delete probe;
    // Service coroutines (signals) do not count: wait_all returns.
    EXPECT_EQ(0, wait_all());
    EXPECT_EQ(0, photon::fini());
}

TEST(FdEventsInit, WithoutEngineWaitsFailWithEnosys) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_NONE, INIT_IO_NONE));
    EXPECT_EQ(-1, wait_for_fd_readable(0, 1000));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(0, photon::fini());
}

// The rest of Photon's fd-events.h: engine kinds this platform lacks, the
// epoll_ng and untyped io_uring factories, and _fd_events_init.

TEST(FdEventsApi, KindsThisPlatformLacksAreEnosys) {
    errno = 0;
    EXPECT_EQ(nullptr, new_kqueue_master_engine());
    EXPECT_EQ(ENOSYS, errno);
    errno = 0;
    EXPECT_EQ(nullptr, new_kqueue_cascading_engine());
    EXPECT_EQ(ENOSYS, errno);
    errno = 0;
    EXPECT_EQ(nullptr, new_iocp_master_engine());
    EXPECT_EQ(ENOSYS, errno);
    errno = 0;
    EXPECT_EQ(nullptr, new_iocp_cascading_engine());
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(nullptr, new_select_master_engine());
    EXPECT_EQ(nullptr, new_select_cascading_engine());
}

// Waits on a cascading engine for a pipe to become readable.
void expect_cascading_engine_works(CascadingEventEngine* ce) {
    ASSERT_NE(nullptr, ce);
    pipe_fds p;
    int tag = 0;
    ASSERT_EQ(0, ce->add_interest({p.r, EVENT_READ, &tag}));
    void* data[4] = {};
    EXPECT_EQ(0, ce->wait_for_events(data, 4, 1000));  // nothing yet: times out
    p.put();
    ASSERT_EQ(1, ce->wait_for_events(data, 4, kLongUs));
    EXPECT_EQ(&tag, data[0]);
    EXPECT_EQ(0, ce->rm_interest({p.r, EVENT_READ, &tag}));
    delete ce;
}

TEST(FdEventsApi, EpollNgIsTheEpollEngine) {
    MasterEventEngine* m = new_epoll_ng_master_engine();
    ASSERT_NE(nullptr, m);
    EXPECT_EQ(INIT_EVENT_EPOLL, m->engine_kind());
    delete m;
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    expect_cascading_engine_works(new_epoll_ng_cascading_engine());
    EXPECT_EQ(0, photon::fini());
}

TEST(FdEventsApi, UntypedIouringFactoryMakesWhatIsMasterAsks) {
    MasterEventEngine* probe = new_iouring_master_engine();
    if (!probe) GTEST_SKIP() << "io_uring unavailable here: " << strerror(errno);
    delete probe;
    iouring_args args;
    auto m = (MasterEventEngine*)new_iouring_event_engine(args);
    ASSERT_NE(nullptr, m);
    EXPECT_EQ(INIT_EVENT_IOURING, m->engine_kind());
    delete m;
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    args.is_master = false;
    expect_cascading_engine_works((CascadingEventEngine*)new_iouring_event_engine(args));
    EXPECT_EQ(0, photon::fini());
}

// Counts deletions, to see what _fd_events_init does with an engine it
// cannot install.
struct CountedEngine : MasterEventEngine {
    static int deleted;
    ~CountedEngine() override { ++deleted; }
    int wait_for_fd(int, uint32_t, Timeout) override { return errno = ENOSYS, -1; }
    ssize_t wait_and_fire_events(uint64_t) override { return 0; }
    int cancel_wait() override { return 0; }
};
int CountedEngine::deleted = 0;

TEST(FdEventsApi, FdEventsInitWithACtorInstallsOrFreesTheEngine) {
    EXPECT_EQ(-1, _fd_events_init([] { return new CountedEngine; }));  // not a vCPU
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(1, CountedEngine::deleted);
    ASSERT_EQ(0, photon::init(INIT_EVENT_NONE, INIT_IO_NONE));
    EXPECT_EQ(-1, _fd_events_init([]() -> MasterEventEngine* { return nullptr; }));
    ASSERT_EQ(0, _fd_events_init(&new_epoll_master_engine));
    EXPECT_EQ(INIT_EVENT_EPOLL, master_event_engine_kind());
    EXPECT_EQ(-1, _fd_events_init([] { return new CountedEngine; }));
    EXPECT_EQ(EALREADY, errno);
    EXPECT_EQ(2, CountedEngine::deleted);
    pipe_fds p;
    p.put();
    EXPECT_EQ(0, wait_for_fd_readable(p.r, kLongUs));  // the installed one serves
    EXPECT_EQ(0, photon::fini());
}

TEST(FdEventsApi, PhotonStyleVcpuThenEngineThenFini) {
    ASSERT_GE(vcpu_init(), 0);
    ASSERT_EQ(0, fd_events_init(new_master_event_engine(INIT_EVENT_EPOLL)));
    pipe_fds p;
    p.put();
    EXPECT_EQ(0, get_vcpu()->master_event_engine->wait_for_fd_readable(p.r, kLongUs));
    EXPECT_EQ(0, fd_events_fini());
    EXPECT_EQ(nullptr, get_vcpu()->master_event_engine);
    EXPECT_GE(vcpu_fini(), 0);
}

}  // namespace
