// PhotonLibOS semantics its own programs and tests rely on: each
// test is written the way a Photon program uses the call, and names what
// differed before.
#include <photon/photon.h>
#include <photon/common/alog.h>
#include <photon/fs/filecopy.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/localfs.h>
#include <photon/fs/path.h>
#include <photon/io/signal.h>
#include <photon/thread/thread-key.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "../util/engine_fixture.h"
#include "../util/temp_dir.h"

namespace {

class PhotonSemantics : public photon_test::VcpuTest {};

// Photon programs keep per-key arrays indexed by the key.
TEST_F(PhotonSemantics, ThreadKeysAreTheLowestFreeSlotIndexes) {
    photon::thread_key_t a, b, c;
    ASSERT_EQ(0, photon::thread_key_create(&a, nullptr));
    ASSERT_EQ(0, photon::thread_key_create(&b, nullptr));
    EXPECT_LT(a, photon::THREAD_KEYS_MAX);
    EXPECT_EQ(a + 1, b);
    ASSERT_EQ(0, photon::thread_key_delete(a));
    ASSERT_EQ(0, photon::thread_key_create(&c, nullptr));
    EXPECT_EQ(a, c);  // the freed slot again
    int slot_values[photon::THREAD_KEYS_MAX] = {};
    slot_values[c] = 1;
    ASSERT_EQ(0, photon::thread_setspecific(c, &slot_values[c]));
    EXPECT_EQ(&slot_values[c], photon::thread_getspecific(c));
    EXPECT_EQ(0, photon::thread_key_delete(b));
    EXPECT_EQ(0, photon::thread_key_delete(c));
    EXPECT_EQ(nullptr, photon::thread_getspecific(c));
    EXPECT_EQ(EINVAL, photon::thread_key_delete(c));
}

// The first key of a fresh process is 0.
TEST(PhotonSemanticsFresh, TheFirstThreadKeyIsZero) {
    photon::thread_key_t k = 12345;
    ASSERT_EQ(0, photon::thread_key_create(&k, nullptr));
    EXPECT_EQ(0u, k);
    EXPECT_EQ(0, photon::thread_key_delete(k));
}

// Photon's mutex and awaiter pass a lambda written in the call.
TEST_F(PhotonSemantics, UsleepDeferTakesALambdaWrittenInTheCall) {
    int deferred = 0;
    bool ran_before_wake = false;
    auto sleeper = photon::thread_create11(
        [&] { photon::thread_usleep_defer(10 * 1000 * 1000, [&] { deferred++; }); });
    auto joinable = photon::thread_enable_join(sleeper);
    photon::thread_yield_to(sleeper);  // it runs until it sleeps, then the lambda runs
    ran_before_wake = deferred == 1;
    photon::thread_interrupt(sleeper);
    photon::thread_join(joinable);
    EXPECT_TRUE(ran_before_wake);
    EXPECT_EQ(1, deferred);
    // The pointer form and Photon's {object, member} form still compile.
    struct Gate {
        bool open = false;
        void unlock() { open = true; }
    } gate;
    EXPECT_EQ(0, photon::thread_usleep_defer(1, {&gate, &Gate::unlock}));
    EXPECT_TRUE(gate.open);
    EXPECT_EQ(0, photon::thread_usleep_defer(
                     1, [](void* p) { ++*static_cast<int*>(p); }, &deferred));
    EXPECT_EQ(2, deferred);
}

// An output that keeps every line and its level.
class Lines : public ILogOutput {
public:
    std::vector<std::pair<int, std::string>> lines;
    void write(int level, const char* begin, const char* end) override {
        lines.emplace_back(level, std::string(begin, end));
    }
    int get_log_file_fd() override { return -1; }
    uint64_t set_throttle(uint64_t t = -1ULL) override { return t; }
    uint64_t get_throttle() override { return -1ULL; }
    void destruct() override {}
    int set_level_color(int, unsigned char) override { return 0; }
};

struct Point {
    int x, y;
};
LogBuffer& operator<<(LogBuffer& log, const Point& p) {
    return log << '(' << p.x << ',' << p.y << ')';
}

// Photon's alog test formats into its own small buffers, and its users' operator<<s are
// written against LogBuffer.
TEST(PhotonSemanticsAlog, LogBufferFormatsIntoTheCallersBufferAndWritesAtTheEnd) {
    Lines out;
    {
        char buf[64];
        LogBuffer log(buf, sizeof(buf), &out);
        log << "p=" << Point{1, -2} << ' ' << DEC(7).width(3).padding('0');
        log.printf(' ', HEX(255), ' ', 2.5);
        log.level = ALOG_WARN;
        EXPECT_TRUE(out.lines.empty());  // written when it ends
    }
    ASSERT_EQ(1u, out.lines.size());
    EXPECT_EQ(ALOG_WARN, out.lines[0].first);
    EXPECT_EQ("p=(1,-2) 007 FF 2.5000", out.lines[0].second);
    {
        char small[8];  // at most 6 bytes, as Photon's
        LogBuffer log(small, sizeof(small), &out);
        log << "0123456789" << (void*)0x1234567890ABCDEFull << DEC(5).width(40);
    }
    ASSERT_EQ(2u, out.lines.size());
    EXPECT_EQ("012345", out.lines[1].second);
}

// Failed local file system calls are answers the caller handles: -1 with errno and no
// WARN or ERROR line (mkdir_recursive over existing directories logged each EEXIST).
TEST_F(PhotonSemantics, FailingLocalfsCallsLogNoErrors) {
    photon_test::temp_dir dir;
    ASSERT_TRUE(dir.ok());
    dir.write("d/file", "x");
    Lines out;
    auto saved = log_output;
    auto saved_level = log_output_level;
    log_output = &out;
    log_output_level = ALOG_DEBUG;
    auto fs = photon::fs::new_localfs_adaptor();
    ASSERT_NE(nullptr, fs);
    const std::string d = dir / "d", file = dir / "d/file", missing = dir / "none";
    EXPECT_EQ(0, photon::fs::mkdir_recursive(dir / "d/e/f", fs));  // d exists
    EXPECT_EQ(0, photon::fs::mkdir_recursive(dir / "d/e/f", fs));  // all exist
    std::vector<std::pair<int, int>> results;                      // (result, errno)
    auto keep = [&](long r) { results.emplace_back((int)r, errno); };
    keep(fs->mkdir(d.c_str(), 0755));
    keep(fs->rmdir(d.c_str()));
    keep(fs->unlink(missing.c_str()));
    keep(fs->rename(missing.c_str(), (dir / "other").c_str()));
    keep(fs->chmod(missing.c_str(), 0644));
    struct stat st;
    keep(fs->stat(missing.c_str(), &st));
    keep(fs->lstat(missing.c_str(), &st));
    keep(fs->access(missing.c_str(), F_OK));
    char buf[64];
    keep(fs->readlink(file.c_str(), buf, sizeof(buf)));
    keep(fs->truncate(missing.c_str(), 0));
    keep(fs->opendir(missing.c_str()) ? 0 : -1);
    keep(fs->open(missing.c_str(), O_RDONLY) ? 0 : -1);
    keep(photon::fs::open_localfile_adaptor(missing.c_str(), O_RDONLY) ? 0 : -1);
    keep(photon::fs::mkdir_recursive(std::string(PATH_MAX + 1, 'a'), fs));
    const std::vector<std::pair<int, int>> expected = {
        {-1, EEXIST}, {-1, ENOTEMPTY}, {-1, ENOENT}, {-1, ENOENT},      {-1, ENOENT},
        {-1, ENOENT}, {-1, ENOENT},    {-1, ENOENT}, {-1, EINVAL},      {-1, ENOENT},
        {-1, ENOENT}, {-1, ENOENT},    {-1, ENOENT}, {-1, ENAMETOOLONG}};
    delete fs;
    log_output = saved;
    log_output_level = saved_level;
    EXPECT_EQ(expected, results);
    for (auto& l : out.lines) {
        // The slow-turn detector's reports come from its own thread, about time, not from
        // these calls (a turn of 17 ms under qemu-user in CI's aarch64 phase).
        if (l.second.find("slow turn:") != std::string::npos) continue;
        EXPECT_LT(l.first, ALOG_WARN) << l.second;
    }
}

// Photon's filecopy stops at the short read; an O_DIRECT input refuses the read after it
// (EINVAL at the unaligned end), which failed the copy.
TEST(PhotonSemanticsFs, FilecopyFromAnODirectInputOfUnalignedSizeCompletes) {
#if !PHOTON_HAVE_LIBAIO
    GTEST_SKIP() << "photon was built without libaio";
#endif
    if (photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_LIBAIO) < 0)
        GTEST_SKIP() << "no libaio here";
    DEFER(photon::fini());
    photon_test::temp_dir dir;
    ASSERT_TRUE(dir.ok());
    struct statfs sfs;
    if (::statfs(dir.path().c_str(), &sfs) == 0 && sfs.f_type == TMPFS_MAGIC)
        GTEST_SKIP() << "O_DIRECT needs a real file system; set TMPDIR";
    for (size_t size : {1000ul, 2 * 65536ul + 1234, 4096ul, 65536ul + 512}) {
        std::string data(size, '\0');
        for (size_t i = 0; i < size; i++) data[i] = char('a' + i * 7 % 26);
        dir.write("in", data);
        std::unique_ptr<photon::fs::IFile> in(photon::fs::open_localfile_adaptor(
            (dir / "in").c_str(), O_RDONLY, 0644, photon::fs::ioengine_libaio));
        if (!in && errno == EINVAL) GTEST_SKIP() << "this file system refuses O_DIRECT";
        ASSERT_TRUE(in);
        std::unique_ptr<photon::fs::IFile> out(
            photon::fs::open_localfile_adaptor((dir / "out").c_str(), O_RDWR | O_CREAT | O_TRUNC));
        ASSERT_TRUE(out);
        errno = 0;
        EXPECT_EQ((ssize_t)size, photon::fs::filecopy(in.get(), out.get(), 65536))
            << size << ' ' << errno;
        std::string got(size + 1, '\0');
        EXPECT_EQ((ssize_t)size, out->pread(&got[0], got.size(), 0));
        got.resize(size);
        EXPECT_TRUE(got == data) << size;
    }
}

// A photon process with sync_signal on, on each event engine.
class PhotonSemanticsSignal : public ::testing::TestWithParam<uint64_t> {
protected:
    void SetUp() override {
        if (photon::init(GetParam() | photon::INIT_EVENT_SIGNAL, photon::INIT_IO_NONE) < 0) {
            if (GetParam() == photon::INIT_EVENT_IOURING) GTEST_SKIP() << "no io_uring here";
            FAIL() << "photon::init failed: " << strerror(errno);
        }
    }
    void TearDown() override { photon_test::fini_vcpu(); }
};

volatile sig_atomic_t g_sigterm_seen = 0;

// Photon re-creates its signalfd in a forked child: a handler set there runs.
TEST_P(PhotonSemanticsSignal, SyncSignalRunsItsHandlerInAForkedChild) {
    bool parent_seen = false;
    static bool* parent_flag;
    parent_flag = &parent_seen;
    ASSERT_NE(SIG_ERR, photon::sync_signal(SIGUSR1, [](int) { *parent_flag = true; }));
    // The signal coroutine has run and waits on its signalfd when the process forks.
    kill(getpid(), SIGUSR1);
    for (int i = 0; i < 1000 && !parent_seen; i++) photon::thread_usleep(10 * 1000);
    ASSERT_TRUE(parent_seen);
    parent_seen = false;
    photon::thread_usleep(1000);
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The child: at most 10 s, then it reports failure on its own.
        if (photon::sync_signal(SIGTERM, [](int) { g_sigterm_seen = 1; }) == SIG_ERR) _exit(2);
        kill(getpid(), SIGTERM);
        for (int i = 0; i < 1000 && !g_sigterm_seen; i++) photon::thread_usleep(10 * 1000);
        _exit(g_sigterm_seen ? 0 : 3);
    }
    int status = -1;
    for (int i = 0; i < 3000; i++) {  // at most 30 s
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        photon::thread_usleep(10 * 1000);
    }
    if (!WIFEXITED(status) && !WIFSIGNALED(status)) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    EXPECT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(0, WEXITSTATUS(status));  // 3: the handler never ran, 2: sync_signal failed
    // The parent's own handling still works.
    kill(getpid(), SIGUSR1);
    for (int i = 0; i < 1000 && !parent_seen; i++) photon::thread_usleep(10 * 1000);
    EXPECT_TRUE(parent_seen);
}

INSTANTIATE_TEST_SUITE_P(Engines, PhotonSemanticsSignal, PHOTON_TEST_EVENT_ENGINES,
                         photon_test::engine_name);

}  // namespace
