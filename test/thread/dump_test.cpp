// thread_dump (photon/thread/dump.h): every coroutine of every vCPU, with its state, what it
// waits on, its entry and a backtrace walked from its saved context; a vCPU that does not
// yield is named, not waited for; JSON; from a plain OS thread; on a signal. Built with
// -rdynamic and frame pointers (test/CMakeLists.txt), so that this file's functions have names
// in the backtraces.
#include <photon/thread/dump.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <photon/io/fd-events.h>
#include <photon/thread/mutex.h>

#include "test_util.h"

using namespace photon;

// Named coroutine bodies (external linkage: in the dynamic symbol table).
__attribute__((noinline)) int dump_test_sleep_deep(uint64_t us) {
    int r = thread_usleep(us);
    asm volatile("" ::: "memory");  // no tail call: this frame stays on the stack
    return r + 1;
}

// Called through a volatile pointer: no constant-argument clone (a local symbol) of it.
int (*volatile sleep_deep)(uint64_t) = &dump_test_sleep_deep;

__attribute__((noinline)) void* dump_test_sleeper(void*) {
    sleep_deep(photon_test::kLongUs);
    asm volatile("" ::: "memory");
    return nullptr;
}

__attribute__((noinline)) void* dump_test_locker(void* m) {
    static_cast<photon::mutex*>(m)->lock();
    static_cast<photon::mutex*>(m)->unlock();
    asm volatile("" ::: "memory");
    return nullptr;
}

__attribute__((noinline)) void* dump_test_reader(void* fd) {
    wait_for_fd_readable((int)(intptr_t)fd, photon_test::kLongUs);
    asm volatile("" ::: "memory");
    return nullptr;
}

namespace {

size_t count(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) n++;
    return n;
}

// The dump's line for the coroutine th.
std::string line_of(const std::string& dump, const void* th) {
    char id[32];
    snprintf(id, sizeof(id), "  %p ", th);
    size_t at = dump.find(id);
    if (at == std::string::npos) return "";
    return dump.substr(at, dump.find('\n', at) - at);
}

// The coroutine's line and its backtrace lines.
std::string block_of(const std::string& dump, const void* th) {
    std::string line = line_of(dump, th);
    if (line.empty()) return "";
    size_t at = dump.find(line) + line.size() + 1, end = at;
    while (end < dump.size() && dump.compare(end, 6, "      ") == 0) end = dump.find('\n', end) + 1;
    return line + "\n" + dump.substr(at, end - at);
}

// A joinable coroutine, parked once this returns.
struct Parked {
    thread* th;
    join_handle* jh;
};
Parked parked(thread_entry entry, void* arg) {
    thread* th = thread_create(entry, arg);
    join_handle* jh = thread_enable_join(th);
    EXPECT_TRUE(photon_test::until_sleeping(th));
    return {th, jh};
}

void end_all(std::initializer_list<Parked> ps) {
    for (auto& p : ps) thread_interrupt(p.th);
    for (auto& p : ps) thread_join(p.jh);
}

// The value of the first "key": in the JSON text, or -1.
long long json_number(const std::string& s, const std::string& key) {
    size_t at = s.find("\"" + key + "\":");
    return at == std::string::npos ? -1 : atoll(s.c_str() + at + key.size() + 3);
}

class ThreadDump : public photon_test::EngineTest {};

TEST_P(ThreadDump, SleepersShowTheirStateDeadlineEntryAndBacktrace) {
    Parked a = parked(&dump_test_sleeper, nullptr);
    Parked b = parked(&dump_test_sleeper, nullptr);
    std::string s;
    ASSERT_EQ(0, thread_dump(&s)) << errno;
    EXPECT_NE(std::string::npos, s.find("photon coroutine dump: 1 vCPU(s), 3 coroutine(s)")) << s;
    for (auto th : {a.th, b.th}) {
        std::string block = block_of(s, th);
        EXPECT_NE(std::string::npos, block.find(" sleeping ")) << block;
        EXPECT_NE(std::string::npos, block.find(", deadline in ")) << block;
        EXPECT_NE(std::string::npos, block.find("entry dump_test_sleeper(void*)")) << block;
        // Walked from the saved context, through the library, to the entry.
        EXPECT_NE(std::string::npos, block.find("dump_test_sleep_deep(unsigned long)+0x")) << block;
        EXPECT_NE(std::string::npos, block.find("dump_test_sleeper(void*)+0x")) << block;
        EXPECT_NE(std::string::npos, block.find("photon::thread_usleep")) << block;
    }
    // The dumping coroutine (the main one, asleep while its vCPU copies) is listed too.
    std::string self = line_of(s, CURRENT);
    EXPECT_NE(std::string::npos, self.find("entry (the vCPU's own thread)")) << s;
    end_all({a, b});
}

TEST_P(ThreadDump, NamesTheWaitQueueAndTheFdAWaiterWaitsOn) {
    photon::mutex m;
    m.lock();
    Parked locker = parked(&dump_test_locker, &m);
    int sv[2];
    ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv));
    Parked reader = parked(&dump_test_reader, (void*)(intptr_t)sv[0]);
    std::string s;
    ASSERT_EQ(0, thread_dump(&s)) << errno;
    std::string l = line_of(s, locker.th);
    EXPECT_NE(std::string::npos, l.find(", on wait queue 0x")) << s;
    EXPECT_NE(std::string::npos, l.find("entry dump_test_locker(void*)")) << l;
    EXPECT_NE(std::string::npos, block_of(s, locker.th).find("photon::mutex::lock")) << s;
    l = line_of(s, reader.th);
    EXPECT_NE(std::string::npos, l.find(", on fd " + std::to_string(sv[0]) + " (read)")) << s;
    m.unlock();
    ASSERT_EQ(1, write(sv[1], "x", 1));
    EXPECT_EQ(0, (int)(intptr_t)thread_join(locker.jh)) << errno;
    EXPECT_EQ(0, (int)(intptr_t)thread_join(reader.jh)) << errno;
    s.clear();
    ASSERT_EQ(0, thread_dump(&s));  // both gone
    EXPECT_EQ("", line_of(s, reader.th)) << s;
    EXPECT_EQ("", line_of(s, locker.th));
    close(sv[0]);
    close(sv[1]);
}

TEST_P(ThreadDump, JsonListsTheSameCoroutines) {
    Parked a = parked(&dump_test_sleeper, nullptr);
    ThreadDumpOptions o;
    o.json = true;
    std::string s;
    ASSERT_EQ(0, thread_dump(&s, o)) << errno;
    EXPECT_EQ(0u, s.find("{\"vcpus\":1,\"coroutines\":2,")) << s;
    EXPECT_EQ(2u, count(s, "\"id\":\"0x"));
    EXPECT_EQ(count(s, "{"), count(s, "}"));
    EXPECT_EQ(count(s, "["), count(s, "]"));
    EXPECT_NE(std::string::npos, s.find("\"entry\":\"dump_test_sleeper(void*)\"")) << s;
    EXPECT_NE(std::string::npos, s.find("\"symbol\":\"dump_test_sleep_deep(unsigned long)+0x"));
    long long left = json_number(s, "deadline_in_us");
    EXPECT_GT(left, 5 * 1000 * 1000) << s;  // of a 10 s sleep, just begun
    EXPECT_LE(left, 10 * 1000 * 1000) << s;
    o.max_frames = 0;  // no backtraces
    s.clear();
    ASSERT_EQ(0, thread_dump(&s, o));
    EXPECT_EQ(2u, count(s, "\"backtrace\":[]")) << s;
    end_all({a});
}

PHOTON_INSTANTIATE_ENGINE_TESTS(ThreadDump);

// A second vCPU on an OS thread of its own, with n sleepers, until stop.
struct OtherVcpu {
    std::atomic<bool> ready{false}, stop{false};
    std::atomic<uint64_t> spin_us{0};  // a coroutine then runs this long without yielding
    std::atomic<bool> spinning{false};
    std::thread th;

    explicit OtherVcpu(int n) {
        th = std::thread([this, n] {
            if (photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE) != 0) return;
            std::vector<thread*> sleepers;
            for (int i = 0; i < n; i++)
                sleepers.push_back(thread_create(&dump_test_sleeper, nullptr));
            thread_yield();
            ready = true;
            while (!stop) {
                if (uint64_t us = spin_us.exchange(0)) {
                    spinning = true;
                    auto t0 = std::chrono::steady_clock::now();
                    while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(us)) {
                    }
                    spinning = false;
                }
                thread_usleep(1000);
            }
            for (auto t : sleepers) thread_interrupt(t);  // fini waits for them
            photon::fini();
        });
        EXPECT_TRUE(photon_test::wait_for([this] { return ready.load(); }));
    }
    ~OtherVcpu() {
        stop = true;
        th.join();
    }
};

TEST(ThreadDumpVcpus, EveryVcpuAndAPlainOsThreadToo) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    {
        OtherVcpu other(2);
        std::string s;
        ASSERT_EQ(0, thread_dump(&s)) << errno;
        EXPECT_NE(std::string::npos, s.find("2 vCPU(s), 4 coroutine(s)")) << s;
        EXPECT_EQ(2u, count(s, "entry dump_test_sleeper(void*)")) << s;
        // From an OS thread that is no vCPU, while this one keeps scheduling.
        std::string t;
        std::atomic<int> r{-2};
        std::thread plain([&] { r = thread_dump(&t); });
        // This vCPU must keep scheduling to answer the dump: a coroutine sleep.
        EXPECT_TRUE(photon_test::wait_for([&] { return r != -2; }));
        plain.join();
        EXPECT_EQ(0, r.load());
        EXPECT_NE(std::string::npos, t.find("2 vCPU(s), 4 coroutine(s)")) << t;
        other.stop = true;
    }
    photon::fini();
}

TEST(ThreadDumpVcpus, AVcpuThatDoesNotYieldIsNamedNotWaitedFor) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    {
        OtherVcpu other(1);
        auto spin = [&](uint64_t ms) {
            other.spin_us = ms * 1000;
            return photon_test::wait_for([&] { return other.spinning.load(); });
        };
        ASSERT_TRUE(spin(2000));
        ThreadDumpOptions o;
        o.timeout_us = 200 * 1000;
        std::string s;
        ASSERT_EQ(0, thread_dump(&s, o)) << errno;
        EXPECT_TRUE(other.spinning) << "the dump waited for the vCPU that does not yield";
        EXPECT_NE(std::string::npos, s.find("did not answer in time")) << s;
        EXPECT_NE(std::string::npos, s.find("(the vCPU's own thread)")) << s;  // ours is there
        // Until it yields, the part it was given is still there: later dumps say so at once.
        s.clear();
        ASSERT_EQ(0, thread_dump(&s)) << errno;
        if (other.spinning) {
            EXPECT_NE(std::string::npos, s.find("still busy with an earlier dump")) << s;
        }
        // Once it yields again, dumps see it (and it dropped the part given up).
        ASSERT_TRUE(photon_test::wait_for([&] { return !other.spinning; }));
        s.clear();
        ASSERT_EQ(0, thread_dump(&s)) << errno;
        EXPECT_NE(std::string::npos, s.find("2 vCPU(s), 3 coroutine(s)")) << s;
        // A dump that waits for a spinning vCPU makes others fail at once with EBUSY.
        ASSERT_TRUE(spin(1500));
        std::atomic<int> r{-2};
        std::string u;
        std::thread waiting([&] {
            ThreadDumpOptions patient;
            patient.timeout_us = 10 * 1000 * 1000;
            r = thread_dump(&u, patient);
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it waits by now
        std::string v;
        EXPECT_EQ(-1, thread_dump(&v));
        EXPECT_EQ(EBUSY, errno);
        ASSERT_TRUE(photon_test::wait_for([&] { return r != -2; }));
        waiting.join();
        EXPECT_EQ(0, r.load());
        EXPECT_NE(std::string::npos, u.find("2 vCPU(s), 3 coroutine(s)")) << u;
        other.stop = true;
    }
    photon::fini();
}

TEST(ThreadDumpSignal, ASignalWritesADump) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    EXPECT_EQ(-1, thread_dump_on_signal(SIGKILL, 2));
    EXPECT_EQ(EINVAL, errno);
    int p[2];
    ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
    ASSERT_EQ(0, thread_dump_on_signal(SIGUSR2, p[1])) << errno;
    EXPECT_EQ(-1, thread_dump_on_signal(SIGUSR2, p[1]));
    EXPECT_EQ(EALREADY, errno);
    Parked a = parked(&dump_test_sleeper, nullptr);
    ASSERT_EQ(0, kill(getpid(), SIGUSR2));
    std::string got;
    char buf[4096];
    auto t0 = std::chrono::steady_clock::now();
    while (got.find("entry dump_test_sleeper") == std::string::npos &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
        if (wait_for_fd_readable(p[0], 100 * 1000) < 0) continue;
        ssize_t n = read(p[0], buf, sizeof(buf));
        if (n > 0) got.append(buf, n);
    }
    EXPECT_NE(std::string::npos, got.find("photon coroutine dump: 1 vCPU(s), 2 coroutine(s)"))
        << got;
    EXPECT_NE(std::string::npos, got.find("entry dump_test_sleeper(void*)")) << got;
    end_all({a});
    photon::fini();
}

TEST(ThreadDumpArgs, NullOutIsEinval) {
    EXPECT_EQ(-1, thread_dump(nullptr));
    EXPECT_EQ(EINVAL, errno);
}

}  // namespace
