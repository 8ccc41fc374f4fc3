// Coroutine creation without stack memory fails soft (nullptr + ENOMEM, no
// crash) and logs one line per cause, not one per attempt: under an injected
// ENOMEM, and under a real RLIMIT_AS in a forked child.
#include <photon/common/alog.h>
#include <photon/common/fault_injection.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

using namespace photon;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// Counts the lines logged at ERROR or above that contain a word.
class CountingOutput final : public ILogOutput {
public:
    std::mutex mu;
    std::vector<std::string> errors;
    void write(int level, const char* begin, const char* end) override {
        if (level < ALOG_ERROR) return;
        std::lock_guard<std::mutex> lock(mu);
        errors.emplace_back(begin, end);
    }
    size_t count(const char* word) {
        std::lock_guard<std::mutex> lock(mu);
        size_t n = 0;
        for (auto& l : errors) n += l.find(word) != std::string::npos;
        return n;
    }
    int get_log_file_fd() override { return -1; }
    uint64_t set_throttle(uint64_t t) override { return t; }
    uint64_t get_throttle() override { return -1ULL; }
    void destruct() override {}
};

class StackFault : public ::testing::Test {
protected:
    void SetUp() override {
        saved_ = default_logger;
        default_logger = {&out_, ALOG_INFO};
        ASSERT_EQ(0, photon::init(INIT_EVENT_NONE, INIT_IO_NONE));
    }
    void TearDown() override {
        fault::disable();
        photon::fini();
        default_logger = saved_;
    }
    CountingOutput out_;
    ALogLogger saved_;
};

TEST_F(StackFault, InjectedEnomemFailsSoftWithOneLogLine) {
    ASSERT_EQ(0, fault::configure("seed=1,p=1,kinds=enomem"));
    for (int i = 0; i < 1000; i++) {
        errno = 0;
        thread* th = thread_create11([] {});
        ASSERT_EQ(nullptr, th);
        ASSERT_EQ(ENOMEM, errno);
    }
    EXPECT_EQ(1u, out_.count("injected ENOMEM")) << "one line per cause, not per attempt";
    fault::disable();
    int ran = 0;
    thread_create11([&] { ran++; });
    thread_yield();
    EXPECT_EQ(1, ran);
}

// Some creations fail, the others run to their end; nothing else breaks.
TEST_F(StackFault, PartialInjectionOnlyFailsCreations) {
    ASSERT_EQ(0, fault::configure("seed=9,p=0.3,kinds=enomem"));
    int ran = 0, failed = 0;
    std::vector<join_handle*> joins;
    for (int i = 0; i < 2000; i++) {
        thread* th = thread_create11([&] {
            thread_yield();
            ran++;
        });
        if (!th) {
            ASSERT_EQ(ENOMEM, errno);
            failed++;
            continue;
        }
        joins.push_back(thread_enable_join(th));
    }
    for (auto j : joins) thread_join(j);
    EXPECT_EQ(2000, ran + failed);
    EXPECT_EQ((int)joins.size(), ran);
    EXPECT_GT(failed, 400);
    EXPECT_LT(failed, 800);
    EXPECT_LE(out_.count("injected ENOMEM"), 1u);
}

// A real address-space limit: the stack slabs cannot be mapped. In a forked
// child, whose limit does not touch the test runner.
TEST(StackRlimit, AddressSpaceLimitFailsSoftWithOneLogLine) {
    if (kAsan) GTEST_SKIP() << "ASan's shadow memory does not fit under an RLIMIT_AS";
#ifdef PHOTON_TEST_EMULATED
    GTEST_SKIP() << "under a user-mode emulator RLIMIT_AS bounds the emulator's own mappings";
#endif
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        CountingOutput out;
        default_logger = {&out, ALOG_INFO};
        if (photon::init(INIT_EVENT_NONE, INIT_IO_NONE) < 0) _exit(10);
        // Room for a few dozen 8 MiB stacks above what the process maps now.
        struct rlimit rl;
        FILE* f = fopen("/proc/self/statm", "r");
        unsigned long pages = 0;
        if (!f || fscanf(f, "%lu", &pages) != 1) _exit(11);
        fclose(f);
        rl.rlim_cur = rl.rlim_max = pages * (unsigned long)sysconf(_SC_PAGESIZE) + (256ul << 20);
        if (setrlimit(RLIMIT_AS, &rl) < 0) _exit(12);
        bool stop = false;
        int created = 0, failures = 0;
        for (int i = 0; i < 2000; i++) {
            errno = 0;
            thread* th = thread_create11(8ul << 20, [&] {
                while (!stop) thread_usleep(1000);
            });
            if (th) {
                created++;
                continue;
            }
            if (errno != ENOMEM) _exit(13);
            failures++;
        }
        stop = true;
        photon::fini();  // waits for the sleepers
        if (created == 0) _exit(14);
        if (failures < 1000) _exit(15);
        size_t lines = out.count("stack slab");
        fprintf(stderr, "created %d, failed %d, ERROR lines about slabs: %zu\n", created, failures,
                lines);
        if (lines < 1 || lines > 2) _exit(16);
        _exit(0);
    }
    int status = 0;
    for (int i = 0; i < 600 && waitpid(pid, &status, WNOHANG) == 0; i++) usleep(100 * 1000);
    if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        FAIL() << "the child hung";
    }
    ASSERT_TRUE(WIFEXITED(status)) << "the child crashed: signal " << WTERMSIG(status);
    EXPECT_EQ(0, WEXITSTATUS(status));
}

}  // namespace
