// The FUSE adaptor's other ways in and its ends, with real mounts:
// path-based operations (run_fuse) and a user's low-level ones
// (run_fuse_ll), bad arguments, and the server process ending (signals,
// exit while serving, a killed server). Skipped without FUSE, as
// fuse_adaptor_test.cpp.
#include "fuse_test_util.h"

using namespace photon;
using namespace photon_test;

// ---- path-based operations (run_fuse) and user low-level ones (run_fuse_ll) ----------

TEST_F(FuseMount, XmpOperationsServeThroughRunFuse) {
    write_pattern(src("big"), 3 << 20, 5);
    ASSERT_EQ(0, ::mkdir(src("d").c_str(), 0755));
    fs::set_fuse_fs(fs_);
    MOUNT({}, [](int c, char** v) { return fs::run_fuse(c, v, fs::get_fuse_xmp_oper(), nullptr); });
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(), "cd " + mnt_ + R"(
cp big d/copy
cmp big d/copy
mv d/copy d/moved
touch -d '2002-02-02' d/moved
stat -c %s d/moved
ls -l d
chmod 600 d/moved
ln -s moved d/sym
readlink d/sym
rm d/moved d/sym
rmdir d
)",
                            &out));
    EXPECT_NE(std::string::npos, out.find("3145728\n")) << out;
    EXPECT_NE(std::string::npos, out.find("3145728 Feb  2  2002 moved"))
        << out;  // real sizes in ls -l
    EXPECT_NE(0, ::access(src("d").c_str(), F_OK));
    fs::set_fuse_fs(nullptr);
}

// libfuse's path layer locks paths with pthread locks; an unlink that waited
// for a getattr yielding in the file system blocked the vCPU for good.
TEST_F(FuseMount, RunFuseUnlinkWhileAPathCallYieldsDoesNotDeadlock) {
    std::ofstream(src("victim")) << "v";
    auto hooked = new hooked_fs(fs_);
    fs_ = hooked;
    std::atomic<bool> armed{false}, in_lstat{false};
    hooked->on_lstat = [&](const char* p) {
        if (!armed || strcmp(p, "/victim") != 0) return;
        in_lstat = true;
        thread_usleep(300 * 1000);  // yields, holding libfuse's read lock on the path
    };
    fs::set_fuse_fs(fs_);
    MOUNT({"-o", "entry_timeout=60,attr_timeout=0"},
          [](int c, char** v) { return fs::run_fuse(c, v, fs::get_fuse_xmp_oper(), nullptr); });
    struct stat st;
    ASSERT_EQ(0, ::stat(mnt("victim").c_str(), &st));  // looked up; the name stays cached
    armed = true;
    std::thread getattr([&] { ::stat(mnt("victim").c_str(), &st); });
    ASSERT_TRUE(photon_test::wait_for_off_vcpu([&] { return in_lstat.load(); }, 10000));
    std::atomic<int> unlinked{1};
    std::thread remover([&] { unlinked = ::unlink(mnt("victim").c_str()); });
    bool finished = photon_test::wait_for_off_vcpu([&] { return unlinked.load() != 1; }, 10000);
    EXPECT_TRUE(finished) << "unlink hangs: the vCPU is deadlocked";
    if (!finished) {  // the server cannot recover: fail its requests, leave it
        abort_connection(mnt_);
        getattr.join(), remover.join();
        umount2(mnt_.c_str(), MNT_DETACH);
        server_.detach();
        leak_fs_ = true;
        return;
    }
    getattr.join(), remover.join();
    EXPECT_EQ(0, unlinked.load());
    EXPECT_NE(0, ::access(src("victim").c_str(), F_OK));
    fs::set_fuse_fs(nullptr);
}

namespace {
// A read-only file system of one file, /hello, in libfuse's low-level API.
const char kHello[] = "hello from the low-level API\n";

void hello_stat(fuse_ino_t ino, struct stat* st) {
    memset(st, 0, sizeof(*st));
    st->st_ino = ino;
    st->st_mode = ino == 1 ? (S_IFDIR | 0755) : (S_IFREG | 0444);
    st->st_nlink = ino == 1 ? 2 : 1;
    st->st_size = ino == 1 ? 0 : sizeof(kHello) - 1;
}
void hello_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
    if (parent != 1 || strcmp(name, "hello") != 0) return (void)fuse_reply_err(req, ENOENT);
    struct fuse_entry_param e;
    memset(&e, 0, sizeof(e));
    e.ino = 2;
    hello_stat(2, &e.attr);
    fuse_reply_entry(req, &e);
}
void hello_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info*) {
    if (ino > 2) return (void)fuse_reply_err(req, ENOENT);
    struct stat st;
    hello_stat(ino, &st);
    fuse_reply_attr(req, &st, 1.0);
}
void hello_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info*) {
    char buf[512];
    size_t used = 0;
    const char* names[] = {".", "..", "hello"};
    for (off_t i = off; i < 3; i++) {
        struct stat st;
        hello_stat(i == 2 ? 2 : 1, &st);
        size_t n = fuse_add_direntry(req, buf + used, std::min(size, sizeof(buf)) - used, names[i],
                                     &st, i + 1);
        if (used + n > std::min(size, sizeof(buf))) break;
        used += n;
    }
    fuse_reply_buf(req, buf, used);
}
void hello_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, struct fuse_file_info*) {
    thread_usleep(1000);  // handlers run in coroutines: they may sleep
    size_t len = sizeof(kHello) - 1;
    if ((size_t)off >= len) return (void)fuse_reply_buf(req, nullptr, 0);
    fuse_reply_buf(req, kHello + off, std::min(size, len - off));
}
}  // namespace

TEST_F(FuseMount, RunFuseLlServesAUsersLowLevelOperations) {
    struct fuse_lowlevel_ops ops;
    memset(&ops, 0, sizeof(ops));
    ops.lookup = hello_lookup;
    ops.getattr = hello_getattr;
    ops.readdir = hello_readdir;
    ops.read = hello_read;
    MOUNT({}, [&](int c, char** v) { return fs::run_fuse_ll(c, v, &ops, nullptr); });
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(), "ls " + mnt_ + "; cat " + mnt("hello"), &out));
    EXPECT_EQ("hello\n" + std::string(kHello), out);
}

// ---- arguments -------------------------------------------------------------------------

TEST(FuseArguments, BadOnesFailWithEinvalAndMountNothing) {
    auto fs = fs::new_localfs_adaptor();
    scratch_dir dir;
    std::string mnt = dir.path();
    auto go = [&](std::vector<std::string> args) {
        std::vector<char*> v;
        for (auto& a : args) v.push_back(&a[0]);
        v.push_back(nullptr);
        errno = 0;
        return fs::fuser_go(fs, (int)args.size(), v.data());
    };
    errno = 0;
    EXPECT_EQ(-1, fs::fuser_go(nullptr, 0, nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, go({"x", "-f"}));  // no mount point
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, go({"x", "/no/such/dir", "-f"}));
    EXPECT_EQ(-1, go({"x", mnt, "-f", "-o", "threads=0"}));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, go({"x", mnt, "-f", "-o", "max_inflight=0"}));
    EXPECT_EQ(-1, go({"x", mnt, "-f", "-o", "no_such_option"}));
    EXPECT_EQ(0, go({"x", "-h"}));
    EXPECT_EQ(0, go({"x", "-V"}));
    errno = 0;
    EXPECT_EQ(-1, fs::run_fuse(0, nullptr, nullptr, nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, fs::run_fuse_ll(0, nullptr, nullptr, nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_FALSE(is_mounted(mnt));
    delete fs;
}

TEST(FuseArguments, ExportfsFormRefusesAThreadThatIsAVcpu) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
    auto fs = fs::new_localfs_adaptor();
    char a0[] = "x";
    char* argv[] = {a0, nullptr};
    errno = 0;
    EXPECT_EQ(-1, fs::fuser_go_exportfs(fs, 1, argv));
    EXPECT_EQ(EALREADY, errno);
    delete fs;
    photon::fini();
}

TEST_F(FuseMount, ForkingIntoTheBackgroundIsRefusedOnceAVcpuExists) {
    std::atomic<int> rc{0}, err{0};
    std::thread t([&] {
        photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE);
        std::string a0 = "x", m = mnt_;
        char* argv[] = {&a0[0], &m[0], nullptr};  // no -f
        rc = fs::fuser_go(fs_, 2, argv);
        err = errno;
        photon::fini();
    });
    t.join();
    EXPECT_EQ(-1, rc.load());
    EXPECT_EQ(EINVAL, err.load());
    EXPECT_FALSE(is_mounted(mnt_));
}

// ---- the server process ending ------------------------------------------------------------

namespace {
// Forks a child that serves src on mnt with fuser_go (extra args appended);
// `serve` replaces fuser_go in the child. Returns its pid once it serves,
// or -1.
pid_t fork_server(const std::string& src, const std::string& mnt, std::vector<std::string> extra,
                  std::function<int(fs::IFileSystem*, int, char**)> serve = nullptr) {
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        auto fs = fs::new_localfs_adaptor(src.c_str());
        std::vector<std::string> args = {"fuse-child", mnt, "-f"};
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<char*> v;
        for (auto& a : args) v.push_back(&a[0]);
        v.push_back(nullptr);
        int r = serve ? serve(fs, (int)args.size(), v.data())
                      : fs::fuser_go(fs, (int)args.size(), v.data());
        _exit(r == 0 ? 0 : 3);
    }
    // Mounted and answering: with auto_unmount, fusermount3 mounts before
    // handing the server its fd, and a server killed before it took the fd
    // would leave fusermount3 nothing to watch.
    struct stat st;
    if (pid < 0 || !photon_test::wait_for_off_vcpu([&] { return is_mounted(mnt); }, 10000) ||
        ::stat(mnt.c_str(), &st) < 0)
        return -1;
    return pid;
}

// The child's exit status (as waitpid), or -1 if it did not end in 10 s.
int wait_child(pid_t pid) {
    int st = 0;
    bool ended =
        photon_test::wait_for_off_vcpu([&] { return waitpid(pid, &st, WNOHANG) == pid; }, 10000);
    if (ended) return st;
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}
}  // namespace

TEST_F(FuseMount, SigtermAndSigintUnmountAndEndWithZero) {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
        SCOPED_TRACE(strsignal(sig));
        pid_t pid = fork_server(src_, mnt_, {});
        ASSERT_GT(pid, 0);
        std::ofstream(src("f")) << "x";
        EXPECT_EQ("x", read_all(mnt("f")));
        kill(pid, sig);
        int st = wait_child(pid);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
        EXPECT_FALSE(is_mounted(mnt_));
        if (is_mounted(mnt_)) umount2(mnt_.c_str(), MNT_DETACH);
    }
}

TEST_F(FuseMount, ExitWhileServingDetachesTheMount) {
    int go[2];
    ASSERT_EQ(0, pipe(go));
    auto serve_then_exit = [go](fs::IFileSystem* fs, int c, char** v) {
        std::thread([=] { fs::fuser_go(fs, c, v); }).detach();
        char b;
        ssize_t n = ::read(go[0], &b, 1);  // until the parent saw the mount served
        (void)n;
        exit(0);  // the at-exit hook detaches the mount
        return 0;
    };
    pid_t pid = fork_server(src_, mnt_, {}, serve_then_exit);
    ASSERT_EQ(1, ::write(go[1], "x", 1));
    close(go[0]), close(go[1]);
    ASSERT_GT(pid, 0);
    int st = wait_child(pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
    EXPECT_TRUE(photon_test::wait_for_off_vcpu([&] { return !is_mounted(mnt_); }, 5000));
    if (is_mounted(mnt_)) umount2(mnt_.c_str(), MNT_DETACH);
}

// What a crash leaves, and the two ways out the header documents.
TEST_F(FuseMount, AKilledServerLeavesADeadMountThatFusermountClears) {
    pid_t pid = fork_server(src_, mnt_, {});
    ASSERT_GT(pid, 0);
    kill(pid, SIGKILL);
    wait_child(pid);
    errno = 0;  // (opening asks the server; stat could answer from the cache)
    EXPECT_EQ(-1, ::open(mnt_.c_str(), O_RDONLY | O_DIRECTORY));
    EXPECT_TRUE(errno == ENOTCONN || errno == ECONNABORTED) << strerror(errno);
    EXPECT_TRUE(is_mounted(mnt_));
    std::string out;
    EXPECT_EQ(0, run_script(dir_.path(), "fusermount3 -u " + mnt_, &out));
    EXPECT_FALSE(is_mounted(mnt_));
    if (is_mounted(mnt_)) umount2(mnt_.c_str(), MNT_DETACH);
}

TEST_F(FuseMount, AutoUnmountClearsTheMountOfAKilledServer) {
    pid_t pid = fork_server(src_, mnt_, {"-o", "auto_unmount"});
    ASSERT_GT(pid, 0);
    kill(pid, SIGKILL);
    wait_child(pid);
    EXPECT_TRUE(photon_test::wait_for_off_vcpu([&] { return !is_mounted(mnt_); }, 10000));
    if (is_mounted(mnt_)) umount2(mnt_.c_str(), MNT_DETACH);
}
