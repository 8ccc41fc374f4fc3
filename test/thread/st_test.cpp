// photon/thread/st.h, the State Threads emulation: coroutines, sleeps, keys,
// conds, mutexes and time (thread/st.cpp), and the netfd calls over
// socketpairs, pipes and loopback sockets with timeouts (io/st_netfd.cpp),
// under each event system. Several tests are named after what Photon's
// emulation got wrong.
#include <photon/thread/st.h>

#include <photon/photon.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "../util/wait.h"

namespace {

using Clock = std::chrono::steady_clock;

uint64_t us_since(Clock::time_point t0) {
    return (uint64_t)std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0)
        .count();
}

constexpr st_utime_t kLong = 10 * 1000 * 1000;  // "never" for a test that works
constexpr st_utime_t kShort = 20 * 1000;

// Yields until `th` sleeps (bounded); true if it does.
bool until_sleeping(st_thread_t th) {
    return photon_test::until_sleeping(static_cast<photon::thread*>(th));
}

// A joinable ST coroutine running f(), a captureless lambda taking a T*.
template <typename T>
st_thread_t spawn(void* (*f)(void*), T* arg) {
    return st_thread_create(f, arg, 1, 256 * 1024);
}

void* join(st_thread_t th) {
    void* ret = reinterpret_cast<void*>(-1);
    EXPECT_EQ(0, st_thread_join(th, &ret));
    return ret;
}

class St : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(0, st_init()); }
    void TearDown() override {
        if (photon::CURRENT) photon::fini();
    }
};

// ---- coroutines ----------------------------------------------------------------

TEST_F(St, InitIsIdempotentAndTheEventSystemIsCheckedAndNamed) {
    EXPECT_EQ(0, st_init());
    EXPECT_STREQ("epoll", st_get_eventsys_name());
    errno = 0;
    EXPECT_EQ(-1, st_set_eventsys(ST_EVENTSYS_IOURING + 1));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, st_set_eventsys(-1));
    EXPECT_EQ(ST_EVENTSYS_DEFAULT, st_get_eventsys());
    EXPECT_GT(st_getfdlimit(), 0);
}

TEST_F(St, CreatedCoroutinesRunAndJoinWithTheirResult) {
    struct arg_t {
        st_thread_t self = nullptr;
        int ran = 0;
    } a;
    st_thread_t th = spawn(
        [](void* p) -> void* {
            auto a = static_cast<arg_t*>(p);
            a->self = st_thread_self();
            a->ran++;
            st_usleep(0);
            return (void*)42;
        },
        &a);
    ASSERT_NE(nullptr, th);
    EXPECT_EQ((void*)42, join(th));
    EXPECT_EQ(1, a.ran);
    EXPECT_EQ(th, a.self);
    EXPECT_EQ(0, st_thread_join(spawn([](void*) -> void* { return nullptr; }, &a), nullptr));
}

TEST_F(St, ThreadExitEndsTheCoroutineWithItsValue) {
    int dummy;
    st_thread_t th = spawn(
        [](void*) -> void* {
            st_thread_exit((void*)7);
            return nullptr;
        },
        &dummy);
    EXPECT_EQ((void*)7, join(th));
}

// Photon's st_thread_join cast anything to a join handle and returned 0.
TEST_F(St, JoinRefusesWhatItCannotJoin) {
    errno = 0;
    EXPECT_EQ(-1, st_thread_join(nullptr, nullptr));
    EXPECT_EQ(EINVAL, errno);
    int ran = 0;
    st_thread_t detached = st_thread_create(
        [](void* p) -> void* {
            ++*static_cast<int*>(p);
            return nullptr;
        },
        &ran, 0, 0);
    ASSERT_NE(nullptr, detached);
    EXPECT_EQ(-1, st_thread_join(detached, nullptr)) << "not joinable";
    EXPECT_EQ(EINVAL, errno);
    st_usleep(0);
    EXPECT_EQ(1, ran);

    int self_join_errno = 0;
    st_thread_t th = spawn(
        [](void* p) -> void* {
            if (st_thread_join(st_thread_self(), nullptr) < 0) *static_cast<int*>(p) = errno;
            return nullptr;
        },
        &self_join_errno);
    join(th);
    EXPECT_EQ(EDEADLK, self_join_errno);
    EXPECT_EQ(-1, st_thread_join(th, nullptr)) << "joined already";
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(St, CreateRejectsBadArguments) {
    errno = 0;
    EXPECT_EQ(nullptr, st_thread_create(nullptr, nullptr, 1, 0));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, st_thread_create([](void*) -> void* { return nullptr; }, nullptr, 1, -4096));
    EXPECT_EQ(EINVAL, errno);
}

void* sleep_forever(void* err) {
    if (st_sleep(-1) < 0) *static_cast<int*>(err) = errno;
    return nullptr;
}

void* usleep_forever(void* err) {
    if (st_usleep(ST_UTIME_NO_TIMEOUT) < 0) *static_cast<int*>(err) = errno;
    return nullptr;
}

TEST_F(St, SleepsLastAtLeastTheirTimeAndInterruptsEndThemWithEintr) {
    auto t0 = Clock::now();
    EXPECT_EQ(0, st_usleep(kShort));
    EXPECT_GE(us_since(t0), kShort - 1000);
    EXPECT_EQ(0, st_sleep(0));
    for (bool whole_seconds : {false, true}) {
        int err = 0;
        st_thread_t th =
            st_thread_create(whole_seconds ? sleep_forever : usleep_forever, &err, 1, 0);
        ASSERT_TRUE(until_sleeping(th));
        st_thread_interrupt(th);
        join(th);
        EXPECT_EQ(EINTR, err) << "whole seconds " << whole_seconds;
    }
}

TEST_F(St, KeysGiveEachCoroutineItsValueAndRunDestructorsAtItsEnd) {
    static int destroyed;
    destroyed = 0;
    int key = -1;
    ASSERT_EQ(0, st_key_create(&key, [](void* v) { destroyed += *static_cast<int*>(v); }));
    EXPECT_GE(key, 0);
    EXPECT_EQ(1024, st_key_getlimit());
    int mine = 1, its = 10;
    ASSERT_EQ(0, st_thread_setspecific(key, &mine));
    struct arg_t {
        int key;
        int* value;
        void* seen_before;
    } a{key, &its, &mine};
    st_thread_t th = spawn(
        [](void* p) -> void* {
            auto a = static_cast<arg_t*>(p);
            a->seen_before = st_thread_getspecific(a->key);
            st_thread_setspecific(a->key, a->value);
            return nullptr;
        },
        &a);
    join(th);
    EXPECT_EQ(nullptr, a.seen_before) << "a new coroutine starts without a value";
    EXPECT_EQ(10, destroyed);
    EXPECT_EQ(&mine, st_thread_getspecific(key));
    errno = 0;
    EXPECT_EQ(-1, st_thread_setspecific(key + 1000, &mine));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, st_thread_setspecific(-1, &mine));
    EXPECT_EQ(nullptr, st_thread_getspecific(-1));
    EXPECT_EQ(-1, st_key_create(nullptr, nullptr));
    st_thread_setspecific(key, nullptr);
}

struct cond_arg {
    st_cond_t cv;
    int woken = 0;
    int result = 1;
    int err = 0;
};

void* cond_waiter(void* p) {
    auto a = static_cast<cond_arg*>(p);
    a->result = st_cond_timedwait(a->cv, kLong);
    a->err = errno;
    a->woken++;
    return nullptr;
}

TEST_F(St, CondSignalWakesOneBroadcastTheRestAndTimedWaitsTimeOut) {
    st_cond_t cv = st_cond_new();
    ASSERT_NE(nullptr, cv);
    cond_arg a{cv};
    std::vector<st_thread_t> ths;
    for (int i = 0; i < 3; i++) ths.push_back(spawn(cond_waiter, &a));
    for (auto th : ths) ASSERT_TRUE(until_sleeping(th));
    errno = 0;
    EXPECT_EQ(-1, st_cond_destroy(cv)) << "coroutines wait on it";
    EXPECT_EQ(EBUSY, errno);
    EXPECT_EQ(0, st_cond_signal(cv));
    for (int i = 0; i < 20; i++) st_usleep(0);
    EXPECT_EQ(1, a.woken);
    EXPECT_EQ(0, st_cond_broadcast(cv));
    for (auto th : ths) join(th);
    EXPECT_EQ(3, a.woken);
    EXPECT_EQ(0, a.result);

    auto t0 = Clock::now();
    EXPECT_EQ(-1, st_cond_timedwait(cv, kShort));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), kShort - 1000);

    cond_arg b{cv};
    st_thread_t th = spawn(cond_waiter, &b);
    ASSERT_TRUE(until_sleeping(th));
    st_thread_interrupt(th);
    join(th);
    EXPECT_EQ(-1, b.result);
    EXPECT_EQ(EINTR, b.err);
    EXPECT_EQ(0, st_cond_destroy(cv));
    EXPECT_EQ(-1, st_cond_signal(nullptr));
    EXPECT_EQ(-1, st_cond_destroy(nullptr));
}

struct mutex_arg {
    st_mutex_t m;
    int counter = 0;
    int inside = 0;
    int overlaps = 0;
    int trylock = 0, trylock_errno = 0, unlock_errno = 0;
};

TEST_F(St, MutexExcludesAndReportsMisuse) {
    mutex_arg a{st_mutex_new()};
    ASSERT_NE(nullptr, a.m);
    std::vector<st_thread_t> ths;
    for (int i = 0; i < 3; i++)
        ths.push_back(spawn(
            [](void* p) -> void* {
                auto a = static_cast<mutex_arg*>(p);
                for (int r = 0; r < 100; r++) {
                    if (st_mutex_lock(a->m) != 0) return (void*)1;
                    if (a->inside++) a->overlaps++;
                    int v = a->counter;
                    st_usleep(0);
                    a->counter = v + 1;
                    a->inside--;
                    st_mutex_unlock(a->m);
                }
                return nullptr;
            },
            &a));
    for (auto th : ths) EXPECT_EQ(nullptr, join(th));
    EXPECT_EQ(300, a.counter);
    EXPECT_EQ(0, a.overlaps);

    ASSERT_EQ(0, st_mutex_lock(a.m));
    errno = 0;
    EXPECT_EQ(-1, st_mutex_lock(a.m));
    EXPECT_EQ(EDEADLK, errno);
    EXPECT_EQ(-1, st_mutex_destroy(a.m));
    EXPECT_EQ(EBUSY, errno);
    st_thread_t th = spawn(
        [](void* p) -> void* {
            auto a = static_cast<mutex_arg*>(p);
            a->trylock = st_mutex_trylock(a->m);
            a->trylock_errno = errno;
            if (st_mutex_unlock(a->m) < 0) a->unlock_errno = errno;
            return nullptr;
        },
        &a);
    join(th);
    EXPECT_EQ(-1, a.trylock);
    EXPECT_EQ(EBUSY, a.trylock_errno);
    EXPECT_EQ(EPERM, a.unlock_errno) << "Photon's unlocked it for the non-owner";
    EXPECT_EQ(0, st_mutex_unlock(a.m));
    EXPECT_EQ(0, st_mutex_trylock(a.m));
    EXPECT_EQ(0, st_mutex_unlock(a.m));
    EXPECT_EQ(0, st_mutex_destroy(a.m));
    EXPECT_EQ(-1, st_mutex_lock(nullptr));
}

st_utime_t fixed_clock() { return 12345; }

// Photon's st_time counted seconds since boot.
TEST_F(St, TimeIsWallClockAndUtimeFollowsTheClockFunction) {
    EXPECT_LE(std::labs((long)(st_time() - ::time(nullptr))), 1L);
    st_utime_t a = st_utime();
    st_usleep(2000);
    EXPECT_GE(st_utime() - a, 1000u);
    EXPECT_EQ(0, st_set_utime_function(fixed_clock));
    EXPECT_EQ(12345u, st_utime());
    EXPECT_EQ(0, st_set_utime_function(nullptr));
    EXPECT_NE(12345u, st_utime());
    EXPECT_EQ(0, st_timecache_set(1));
    EXPECT_EQ(1, st_timecache_set(0));
    EXPECT_EQ(0, st_randomize_stacks(1));
    EXPECT_EQ(1, st_randomize_stacks(0));
}

// ---- netfd, under each event system -------------------------------------------------

class StIo : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        ASSERT_EQ(0, st_set_eventsys(GetParam()));
        if (st_init() != 0) {
            st_set_eventsys(ST_EVENTSYS_DEFAULT);
            if (GetParam() == ST_EVENTSYS_IOURING) GTEST_SKIP() << "io_uring unavailable";
            FAIL() << "st_init: " << strerror(errno);
        }
        EXPECT_STREQ(GetParam() == ST_EVENTSYS_IOURING ? "io_uring" : "epoll",
                     st_get_eventsys_name());
        ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv_));
        a_ = st_netfd_open_socket(sv_[0]);
        b_ = st_netfd_open_socket(sv_[1]);
        ASSERT_TRUE(a_ && b_);
    }
    void TearDown() override {
        if (a_) st_netfd_close(a_);
        if (b_) st_netfd_close(b_);
        if (photon::CURRENT) photon::fini();
        st_set_eventsys(ST_EVENTSYS_DEFAULT);
    }
    int sv_[2] = {-1, -1};
    st_netfd_t a_ = nullptr, b_ = nullptr;
};

struct io_arg {
    st_netfd_t fd;
    std::string data;
    int chunks = 1;
};

// Writes data in `chunks` pieces with a short sleep between them.
void* chunked_writer(void* p) {
    auto a = static_cast<io_arg*>(p);
    size_t step = a->data.size() / a->chunks;
    for (size_t off = 0; off < a->data.size(); off += step) {
        size_t n = std::min(step, a->data.size() - off);
        if (st_write(a->fd, a->data.data() + off, n, kLong) != (ssize_t)n) return (void*)1;
        st_usleep(1000);
    }
    return nullptr;
}

TEST_P(StIo, ReadWaitsForDataAndTimesOutWithEtimedout) {
    char buf[16];
    auto t0 = Clock::now();
    EXPECT_EQ(-1, st_read(a_, buf, sizeof(buf), kShort));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), kShort - 1000);
    EXPECT_EQ(-1, st_read(a_, buf, sizeof(buf), ST_UTIME_NO_WAIT));
    EXPECT_EQ(ETIMEDOUT, errno);
    io_arg w{b_, "hello"};
    st_thread_t th = spawn(chunked_writer, &w);
    EXPECT_EQ(5, st_read(a_, buf, sizeof(buf), kLong));
    EXPECT_EQ(0, memcmp(buf, "hello", 5));
    EXPECT_EQ(nullptr, join(th));
}

TEST_P(StIo, ReadFullyGathersChunksAndStopsShortAtEof) {
    io_arg w{b_, std::string(3000, 'x'), 3};
    st_thread_t th = spawn(chunked_writer, &w);
    std::string buf(3000, '\0');
    EXPECT_EQ(3000, st_read_fully(a_, &buf[0], buf.size(), kLong));
    EXPECT_EQ(w.data, buf);
    EXPECT_EQ(nullptr, join(th));
    ASSERT_EQ(4, st_write(b_, "tail", 4, kLong));
    ASSERT_EQ(0, shutdown(sv_[1], SHUT_WR));
    EXPECT_EQ(4, st_read_fully(a_, &buf[0], buf.size(), kLong)) << "EOF ends it short";
    EXPECT_EQ(0, st_read(a_, &buf[0], 1, kLong));
}

// Photon's *_resid returned a byte count, and left *resid alone on failure.
TEST_P(StIo, ResidCallsReturnZeroOrMinusOneAndAlwaysUpdateTheResidue) {
    ASSERT_EQ(6, st_write(b_, "abcdef", 6, kLong));
    char buf[10];
    size_t resid = sizeof(buf);
    EXPECT_EQ(-1, st_read_resid(a_, buf, &resid, kShort));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(4u, resid) << "six of ten bytes came";
    EXPECT_EQ(0, memcmp(buf, "abcdef", 6));
    resid = 4;
    EXPECT_EQ(0, st_write_resid(b_, "ghij", &resid, kLong));
    EXPECT_EQ(0u, resid);
    resid = 4;
    EXPECT_EQ(0, st_read_resid(a_, buf + 6, &resid, kLong));
    EXPECT_EQ(0u, resid);
    EXPECT_EQ(0, memcmp(buf, "abcdefghij", 10));
    EXPECT_EQ(-1, st_read_resid(a_, buf, nullptr, kLong));
    EXPECT_EQ(EINVAL, errno);
}

struct drain_arg {
    st_netfd_t fd;
    size_t want;
    size_t got = 0;
};

// Photon's st_write wrote once: past the socket buffer, a part was lost.
TEST_P(StIo, WriteWritesEverythingPastTheSocketBuffer) {
    const size_t kSize = 8 << 20;
    std::string big(kSize, 'z');
    drain_arg d{a_, kSize};
    st_thread_t th = spawn(
        [](void* p) -> void* {
            auto d = static_cast<drain_arg*>(p);
            std::vector<char> buf(1 << 16);
            while (d->got < d->want) {
                ssize_t r = st_read(d->fd, buf.data(), buf.size(), kLong);
                if (r <= 0) break;
                d->got += (size_t)r;
            }
            return nullptr;
        },
        &d);
    EXPECT_EQ((ssize_t)kSize, st_write(b_, big.data(), big.size(), kLong));
    join(th);
    EXPECT_EQ(kSize, d.got);
}

TEST_P(StIo, VectoredCallsMoveWholeVectorsAndAdvanceTheResidue) {
    char x[] = "ab", y[] = "cde", z[] = "f";
    struct iovec out[] = {{x, 2}, {nullptr, 0}, {y, 3}, {z, 1}};
    EXPECT_EQ(6, st_writev(b_, out, 4, kLong));
    EXPECT_EQ(2u, out[0].iov_len) << "the caller's const vector is untouched";
    char p[4] = {}, q[4] = {};
    struct iovec in[] = {{p, 4}, {q, 4}};
    struct iovec* v = in;
    int n = 2;
    EXPECT_EQ(-1, st_readv_resid(a_, &v, &n, kShort)) << "8 wanted, 6 sent";
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(1, n);
    EXPECT_EQ(&in[1], v);
    EXPECT_EQ(2u, v->iov_len);
    EXPECT_EQ(0, memcmp(p, "abcd", 4));
    EXPECT_EQ(0, memcmp(q, "ef", 2));
    char g[] = "gh";
    struct iovec more[] = {{g, 2}};
    struct iovec* mv = more;
    int mn = 1;
    EXPECT_EQ(0, st_writev_resid(b_, &mv, &mn, kLong));
    EXPECT_EQ(0, mn);
    EXPECT_EQ(0, st_readv_resid(a_, &v, &n, kLong));
    EXPECT_EQ(0, n);
    EXPECT_EQ(0, memcmp(q, "efgh", 4));
    char r[8];
    struct iovec once[] = {{r, 8}};
    ASSERT_EQ(2, st_write(b_, "ij", 2, kLong));
    EXPECT_EQ(2, st_readv(a_, once, 1, kLong));
    EXPECT_EQ(-1, st_readv_resid(a_, nullptr, &n, kLong));
    EXPECT_EQ(EINVAL, errno);
}

// Photon's st_poll set revents to the requested events of whichever fds the
// engine reported, and its netfd poll could return early spuriously.
TEST_P(StIo, PollsReportRealReadiness) {
    auto t0 = Clock::now();
    EXPECT_EQ(-1, st_netfd_poll(a_, POLLIN, kShort));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), kShort - 1000);
    EXPECT_EQ(0, st_netfd_poll(a_, POLLOUT, kLong));
    EXPECT_EQ(-1, st_netfd_poll(a_, 0, kLong));
    EXPECT_EQ(EINVAL, errno);

    int p1[2], p2[2];
    ASSERT_EQ(0, pipe(p1));
    ASSERT_EQ(0, pipe(p2));
    struct pollfd pds[3] = {{p1[0], POLLIN, 0}, {-1, POLLIN, 0}, {p2[0], POLLIN, 0}};
    t0 = Clock::now();
    EXPECT_EQ(0, st_poll(pds, 3, kShort));
    EXPECT_GE(us_since(t0), kShort - 1000);
    ASSERT_EQ(1, write(p2[1], "x", 1));
    EXPECT_EQ(1, st_poll(pds, 3, kLong));
    EXPECT_EQ(0, pds[0].revents);
    EXPECT_EQ(0, pds[1].revents);
    EXPECT_EQ(POLLIN, pds[2].revents);

    // Parks until a coroutine writes.
    struct pollfd one[1] = {{p1[0], POLLIN, 0}};
    int wfd = p1[1];
    st_thread_t th = spawn(
        [](void* p) -> void* {
            st_usleep(2000);
            return (void*)(intptr_t)write(*static_cast<int*>(p), "y", 1);
        },
        &wfd);
    EXPECT_EQ(1, st_poll(one, 1, kLong));
    EXPECT_EQ(POLLIN, one[0].revents);
    EXPECT_EQ((void*)1, join(th));
    EXPECT_EQ(2, st_poll(pds, 3, kLong)) << "both pipes readable now";
    EXPECT_EQ(0, st_poll(pds, 0, kLong));
    EXPECT_EQ(-1, st_poll(nullptr, 2, kLong));
    for (int fd : {p1[0], p1[1], p2[0], p2[1]}) close(fd);
}

static int g_destroyed;

// Photon's st_netfd_close leaked the object and its st_netfd_free closed the
// fd; State Threads does the opposite.
TEST_P(StIo, CloseFreesTheObjectAndFreeKeepsTheFdOpen) {
    g_destroyed = 0;
    int fds[2];
    ASSERT_EQ(0, pipe(fds));
    st_netfd_t r = st_netfd_open(fds[0]);
    ASSERT_NE(nullptr, r);
    EXPECT_TRUE(fcntl(fds[0], F_GETFL) & O_NONBLOCK) << "Photon's left it blocking";
    EXPECT_EQ(fds[0], st_netfd_fileno(r));
    static int tag = 5;
    st_netfd_setspecific(r, &tag, [](void* v) { g_destroyed += *static_cast<int*>(v); });
    EXPECT_EQ(&tag, st_netfd_getspecific(r));
    st_netfd_free(r);
    EXPECT_EQ(5, g_destroyed);
    EXPECT_NE(-1, fcntl(fds[0], F_GETFD)) << "free keeps the fd";

    st_netfd_t w = st_netfd_open(fds[1]);
    ASSERT_NE(nullptr, w);
    st_netfd_setspecific(w, &tag, [](void* v) { g_destroyed += *static_cast<int*>(v); });
    EXPECT_EQ(0, st_netfd_close(w));
    EXPECT_EQ(10, g_destroyed);
    EXPECT_EQ(-1, fcntl(fds[1], F_GETFD));
    EXPECT_EQ(EBADF, errno);
    close(fds[0]);

    errno = 0;
    EXPECT_EQ(nullptr, st_netfd_open(-1));
    EXPECT_EQ(EBADF, errno);
    EXPECT_EQ(-1, st_netfd_close(nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, st_netfd_serialize_accept(a_));
}

TEST_P(StIo, AnInterruptEndsAParkedReadWithEintr) {
    struct arg_t {
        st_netfd_t fd;
        int err = 0;
    } a{a_};
    st_thread_t th = spawn(
        [](void* p) -> void* {
            auto a = static_cast<arg_t*>(p);
            char c;
            if (st_read(a->fd, &c, 1, kLong) < 0) a->err = errno;
            return nullptr;
        },
        &a);
    ASSERT_TRUE(until_sleeping(th));
    st_thread_interrupt(th);
    join(th);
    EXPECT_EQ(EINTR, a.err);
}

struct server_arg {
    st_netfd_t listener;
    std::string got;
    int accept_errno = 0;
};

TEST_P(StIo, AcceptAndConnectOnLoopbackWithTimeouts) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(lfd, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(0, bind(lfd, (sockaddr*)&sa, sizeof(sa)));
    ASSERT_EQ(0, listen(lfd, 8));
    socklen_t sl = sizeof(sa);
    ASSERT_EQ(0, getsockname(lfd, (sockaddr*)&sa, &sl));
    server_arg s;
    s.listener = st_netfd_open_socket(lfd);
    ASSERT_NE(nullptr, s.listener);

    auto t0 = Clock::now();
    EXPECT_EQ(nullptr, st_accept(s.listener, nullptr, nullptr, kShort));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), kShort - 1000);

    st_thread_t th = spawn(
        [](void* p) -> void* {
            auto s = static_cast<server_arg*>(p);
            sockaddr_in peer{};
            int len = sizeof(peer);
            st_netfd_t c = st_accept(s->listener, (sockaddr*)&peer, &len, kLong);
            if (!c) {
                s->accept_errno = errno;
                return nullptr;
            }
            char buf[8];
            ssize_t n = st_read_fully(c, buf, 4, kLong);
            if (n > 0) s->got.assign(buf, (size_t)n);
            st_write(c, "pong", 4, kLong);
            st_netfd_close(c);
            return nullptr;
        },
        &s);
    st_netfd_t c = st_netfd_open_socket(socket(AF_INET, SOCK_STREAM, 0));
    ASSERT_NE(nullptr, c);
    ASSERT_EQ(0, st_connect(c, (sockaddr*)&sa, sizeof(sa), kLong));
    EXPECT_EQ(4, st_write(c, "ping", 4, kLong));
    char buf[8];
    EXPECT_EQ(4, st_read_fully(c, buf, sizeof(buf), kLong));
    EXPECT_EQ(0, memcmp(buf, "pong", 4));
    join(th);
    EXPECT_EQ(0, s.accept_errno);
    EXPECT_EQ("ping", s.got);
    st_netfd_close(c);
    st_netfd_close(s.listener);

    // Nobody listens on the port any more.
    st_netfd_t refused = st_netfd_open_socket(socket(AF_INET, SOCK_STREAM, 0));
    ASSERT_NE(nullptr, refused);
    EXPECT_EQ(-1, st_connect(refused, (sockaddr*)&sa, sizeof(sa), kLong));
    EXPECT_EQ(ECONNREFUSED, errno);
    st_netfd_close(refused);
}

TEST_P(StIo, DatagramsAndMessages) {
    int u1 = socket(AF_INET, SOCK_DGRAM, 0), u2 = socket(AF_INET, SOCK_DGRAM, 0);
    ASSERT_GE(u1, 0);
    ASSERT_GE(u2, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(0, bind(u1, (sockaddr*)&sa, sizeof(sa)));
    socklen_t sl = sizeof(sa);
    ASSERT_EQ(0, getsockname(u1, (sockaddr*)&sa, &sl));
    st_netfd_t rx = st_netfd_open_socket(u1), tx = st_netfd_open_socket(u2);
    ASSERT_TRUE(rx && tx);
    char buf[16];
    sockaddr_in from{};
    int fromlen = sizeof(from);
    EXPECT_EQ(-1, st_recvfrom(rx, buf, sizeof(buf), (sockaddr*)&from, &fromlen, kShort));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(5, st_sendto(tx, "hello", 5, (sockaddr*)&sa, sizeof(sa), kLong));
    EXPECT_EQ(5, st_recvfrom(rx, buf, sizeof(buf), (sockaddr*)&from, &fromlen, kLong));
    EXPECT_EQ((int)sizeof(sockaddr_in), fromlen);
    EXPECT_EQ(htonl(INADDR_LOOPBACK), from.sin_addr.s_addr);
    EXPECT_EQ(-1, st_sendto(tx, "x", -1, (sockaddr*)&sa, sizeof(sa), kLong));
    EXPECT_EQ(EINVAL, errno);

    char m1[] = "mes", m2[] = "sage";
    struct iovec parts[] = {{m1, 3}, {m2, 4}};
    struct msghdr out {};
    out.msg_iov = parts;
    out.msg_iovlen = 2;
    EXPECT_EQ(7, st_sendmsg(b_, &out, 0, kLong));
    char got[16] = {};
    struct iovec whole = {got, sizeof(got)};
    struct msghdr in {};
    in.msg_iov = &whole;
    in.msg_iovlen = 1;
    EXPECT_EQ(7, st_recvmsg(a_, &in, 0, kLong));
    EXPECT_STREQ("message", got);
    EXPECT_EQ(-1, st_recvmsg(a_, &in, 0, kShort));
    EXPECT_EQ(ETIMEDOUT, errno);
    st_netfd_close(rx);
    st_netfd_close(tx);
}

TEST_P(StIo, OpenAddsNonBlockingAndReportsFailures) {
    st_netfd_t f = st_open("/dev/null", O_RDONLY, 0);
    ASSERT_NE(nullptr, f);
    EXPECT_TRUE(fcntl(st_netfd_fileno(f), F_GETFL) & O_NONBLOCK);
    char c;
    EXPECT_EQ(0, st_read(f, &c, 1, kLong));
    EXPECT_EQ(0, st_netfd_close(f));
    errno = 0;
    EXPECT_EQ(nullptr, st_open("/nonexistent/st_test", O_RDONLY, 0));
    EXPECT_EQ(ENOENT, errno);
}

INSTANTIATE_TEST_SUITE_P(EventSystems, StIo,
                         ::testing::Values(ST_EVENTSYS_DEFAULT, ST_EVENTSYS_IOURING),
                         [](const ::testing::TestParamInfo<int>& i) {
                             return std::string(i.param == ST_EVENTSYS_IOURING ? "io_uring"
                                                                               : "epoll");
                         });

}  // namespace
