// The FUSE adaptor with real mounts: a scratch directory served through
// fuser_go, used by ordinary programs (ls, stat, cat, cp, sha256sum, dd, mv,
// ...). Needs /dev/fuse and the right to mount (root, or fusermount3);
// skipped otherwise. Every test unmounts in its teardown, and each start
// detaches mounts that a crashed run left under the scratch root.
// run_fuse, run_fuse_ll, arguments and the server's end: fuse_run_test.cpp.
#include "fuse_test_util.h"

using namespace photon;
using namespace photon_test;

// ---- real programs over fuser_go ------------------------------------------------------

TEST_F(FuseMount, LsStatAndCatSeeTheSourceTree) {
    write_pattern(src("data"), 12345, 1);
    ASSERT_EQ(0, ::mkdir(src("dir").c_str(), 0750));
    ASSERT_EQ(0, ::symlink("data", src("link").c_str()));
    { std::ofstream(src("dir/hello.txt")) << "hello, fuse\n"; }
    MOUNT();
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(), "ls -la " + mnt_ + " " + mnt("dir"), &out));
    for (const char* name : {"data", "dir", "link -> data", "hello.txt", ".."})
        EXPECT_NE(std::string::npos, out.find(name)) << name << " missing from\n" << out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "stat -c '%s %F %a' " + mnt("data") + " " + mnt("dir") +
                                "; stat -c %N " + mnt("link"),
                            &out));
    mode_t mask = umask(022);
    umask(mask);
    char data_mode[8];
    snprintf(data_mode, sizeof(data_mode), "%o", 0666 & ~mask);
    EXPECT_EQ("12345 regular file " + std::string(data_mode) + "\n4096 directory 750\n'" +
                  mnt("link") + "' -> 'data'\n",
              out);
    ASSERT_EQ(0, run_script(dir_.path(), "cat " + mnt("dir/hello.txt"), &out));
    EXPECT_EQ("hello, fuse\n", out);
    EXPECT_EQ(read_all(src("data")), read_all(mnt("data")));
    // Inode numbers are the source's.
    struct stat a, b;
    ASSERT_EQ(0, ::stat(src("data").c_str(), &a));
    ASSERT_EQ(0, ::stat(mnt("data").c_str(), &b));
    EXPECT_EQ(a.st_ino, b.st_ino);
    EXPECT_EQ(a.st_mtim.tv_sec, b.st_mtim.tv_sec);
}

TEST_F(FuseMount, CopiesA100MiBFileIntact) {
    write_pattern(src("big"), 100 << 20, 2);
    MOUNT();
    std::string out;
    ASSERT_EQ(
        0, run_script(dir_.path(),
                      "cp " + mnt("big") + " " + mnt("copy") + "\n" + "sha256sum < " + src("big") +
                          "\n" + "sha256sum < " + mnt("copy") + "\n" + "sha256sum < " + src("copy"),
                      &out));
    std::istringstream lines(out);
    std::string h1, h2, h3;
    std::getline(lines, h1), std::getline(lines, h2), std::getline(lines, h3);
    EXPECT_EQ(64 + 3u, h1.size());
    EXPECT_EQ(h1, h2);
    EXPECT_EQ(h1, h3);
}

TEST_F(FuseMount, MkdirRenameRemoveTruncateChmodAndSymlinkReachTheSource) {
    std::ofstream(src("f")) << "0123456789";
    MOUNT();
    ASSERT_EQ(0, run_script(dir_.path(), "cd " + mnt_ + R"SH(
mkdir -p a/b
echo moved > a/b/x
mv a/b/x a/y
mv a c
rm -f c/y
rmdir c/b
truncate -s 4 f
truncate -s 8192 f
chmod 640 f
ln -s f sym
ln f hard
touch -d '2001-02-03 04:05:06' f
test "$(readlink sym)" = f
test "$(stat -c %h f)" = 2
test ! -e a
)SH"));
    struct stat st;
    ASSERT_EQ(0, ::stat(src("f").c_str(), &st));
    EXPECT_EQ(8192, st.st_size);
    EXPECT_EQ(0640u, st.st_mode & 07777);
    EXPECT_EQ(2u, st.st_nlink);
    struct tm tm = {};
    strptime("2001-02-03 04:05:06", "%Y-%m-%d %H:%M:%S", &tm);
    EXPECT_EQ(mktime(&tm), st.st_mtim.tv_sec);
    EXPECT_EQ("0123", read_all(src("f")).substr(0, 4));
    EXPECT_EQ(std::string(8188, '\0'), read_all(src("f")).substr(4));
    char target[16] = {};
    ASSERT_EQ(1, ::readlink(src("sym").c_str(), target, sizeof(target)));
    EXPECT_STREQ("f", target);
    EXPECT_EQ(0, ::access(src("c").c_str(), F_OK));
    EXPECT_NE(0, ::access(src("c/y").c_str(), F_OK));
    EXPECT_NE(0, ::access(src("c/b").c_str(), F_OK));
    EXPECT_NE(0, ::access(src("a").c_str(), F_OK));
}

// The caller's umask applies (the kernel's job), ours does not; and the
// process umask stays what it was.
TEST_F(FuseMount, CreatedFilesGetTheModesAskedForAndOurUmaskStays) {
    mode_t mask = umask(077);
    MOUNT();
    ASSERT_EQ(0, run_script(dir_.path(), "cd " + mnt_ +
                                             "; umask 0; touch f; mkdir d; mkfifo p; "
                                             "umask 027; touch g"));
    struct stat st;
    ASSERT_EQ(0, ::stat(src("f").c_str(), &st));
    EXPECT_EQ(0666u, st.st_mode & 07777);
    ASSERT_EQ(0, ::stat(src("d").c_str(), &st));
    EXPECT_EQ(0777u, st.st_mode & 07777);
    ASSERT_EQ(0, ::stat(src("p").c_str(), &st));
    EXPECT_EQ(0666u, st.st_mode & 07777);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    ASSERT_EQ(0, ::stat(src("g").c_str(), &st));
    EXPECT_EQ(0640u, st.st_mode & 07777);
    EXPECT_EQ(077u, umask(mask));
}

TEST_F(FuseMount, ErrorsComeBackAsTheSourceGivesThem) {
    ASSERT_EQ(0, ::mkdir(src("full").c_str(), 0755));
    std::ofstream(src("full/x")) << "x";
    std::ofstream(src("y")) << "y";
    MOUNT();
    errno = 0;
    EXPECT_EQ(-1, ::rmdir(mnt("full").c_str()));
    EXPECT_EQ(ENOTEMPTY, errno);
    EXPECT_EQ(-1, ::open(mnt("none").c_str(), O_RDONLY));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, ::mkdir(mnt("y").c_str(), 0755));
    EXPECT_EQ(EEXIST, errno);
    EXPECT_EQ(-1, ::unlink(mnt("full").c_str()));
    EXPECT_EQ(EISDIR, errno);
    // renameat2(RENAME_NOREPLACE) onto a file refuses; RENAME_EXCHANGE is not offered.
    EXPECT_EQ(-1, renameat2(AT_FDCWD, mnt("full/x").c_str(), AT_FDCWD, mnt("y").c_str(),
                            RENAME_NOREPLACE));
    EXPECT_EQ(EEXIST, errno);
    EXPECT_EQ("y", read_all(src("y")));
    EXPECT_EQ(-1, renameat2(AT_FDCWD, mnt("full/x").c_str(), AT_FDCWD, mnt("y").c_str(),
                            RENAME_EXCHANGE));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0, renameat2(AT_FDCWD, mnt("full/x").c_str(), AT_FDCWD, mnt("z").c_str(),
                           RENAME_NOREPLACE));
    EXPECT_EQ("x", read_all(src("z")));
}

// A hostile client: opens through the mount until the process (the server
// shares it) has no descriptor left. Each open costs the server one for the
// source file too, so some opens fail in the server, which must answer
// EMFILE, lose none of the files already open, and give every descriptor
// back once the kernel releases them.
TEST_F(FuseMount, RunningOutOfDescriptorsFailsOpensWithEmfileAndRecovers) {
#if defined(PHOTON_ASAN) || defined(PHOTON_TSAN)
    // Their runtimes need descriptors too: UBSan's vptr check reads memory
    // through a pipe and, refused one, reports a false error and aborts the
    // process while its own mount still serves it.
    GTEST_SKIP() << "sanitizer runtimes need descriptors of their own";
#endif
    std::ofstream(src("f")) << "hello";
    MOUNT();
    const int base = photon_test::count_open_fds();
    struct rlimit old;
    ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
    struct rlimit low = old;
    low.rlim_cur = (rlim_t)base + 64;
    ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
    std::vector<int> fds;
    int err = 0;
    for (int i = 0; i < 1000; i++) {
        int fd = ::open(mnt("f").c_str(), O_RDONLY);
        if (fd < 0) {
            err = errno;
            break;
        }
        fds.push_back(fd);
    }
    EXPECT_EQ(EMFILE, err);
    EXPECT_GE(fds.size(), 16u);
    char buf[8];
    for (int fd : fds) {
        ASSERT_EQ(5, ::pread(fd, buf, sizeof(buf), 0));
        EXPECT_EQ(0, memcmp(buf, "hello", 5));
    }
    for (int fd : fds) ::close(fd);
    ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
    // close(2) does not wait for FUSE_RELEASE; the server closes its copies after.
    EXPECT_TRUE(photon_test::wait_for_off_vcpu(
        [&] { return photon_test::count_open_fds() <= base; }, 10000))
        << photon_test::count_open_fds() << " fds open, " << base << " before";
    EXPECT_EQ("hello", read_all(mnt("f")));
}

// With attr_timeout=0 every fstat reaches the server, which has no path for
// the node any more: it answers through the open handle.
TEST_F(FuseMount, AnUnlinkedOpenFileStaysUsable) {
    MOUNT({"-o", "attr_timeout=0"});
    int fd = ::open(mnt("tmp").c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(0, ::unlink(mnt("tmp").c_str()));
    EXPECT_EQ(5, ::pwrite(fd, "hello", 5, 0));
    EXPECT_EQ(0, ::ftruncate(fd, 3)) << strerror(errno);
    struct stat st;
    ASSERT_EQ(0, ::fstat(fd, &st)) << strerror(errno);
    EXPECT_EQ(3, st.st_size);
    EXPECT_EQ(0, ::fchmod(fd, 0640)) << strerror(errno);
    EXPECT_EQ(0, ::futimens(fd, nullptr)) << strerror(errno);  // "now"
    ASSERT_EQ(0, ::fstat(fd, &st));
    EXPECT_EQ(0640u, st.st_mode & 07777);
    struct timespec explicit_times[2] = {{1, 0}, {1, 0}};
    EXPECT_EQ(-1, ::futimens(fd, explicit_times));  // IFile cannot set them
    EXPECT_EQ(ENOENT, errno);
    char buf[8] = {};
    EXPECT_EQ(3, ::pread(fd, buf, sizeof(buf), 0));
    EXPECT_STREQ("hel", buf);
    ::close(fd);
    EXPECT_NE(0, ::access(src("tmp").c_str(), F_OK));
}

TEST_F(FuseMount, ListsALargeDirectoryAcrossManyReplies) {
    const int n = 1500;
    for (int i = 0; i < n; i++) std::ofstream(src("file-with-a-long-name-" + std::to_string(i)));
    MOUNT();
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "ls " + mnt_ + " | wc -l; ls -l " + mnt_ +
                                " | grep -c file-with; ls -f " + mnt_ + " | wc -l",
                            &out));
    EXPECT_EQ(std::to_string(n) + "\n" + std::to_string(n) + "\n" + std::to_string(n + 2) + "\n",
              out);
}

// subfs (localfs with a root) has no IFileSystemXAttr: the kernel learns
// ENOSYS once and answers EOPNOTSUPP itself.
TEST_F(FuseMount, ExtendedAttributesOfAFileSystemWithoutThemAreNotSupported) {
    std::ofstream(src("f")) << "x";
    MOUNT();
    char buf[8];
    for (int i = 0; i < 2; i++) {
        EXPECT_EQ(-1, ::setxattr(mnt("f").c_str(), "user.k", "v", 1, 0));
        EXPECT_EQ(EOPNOTSUPP, errno);
        EXPECT_EQ(-1, ::getxattr(mnt("f").c_str(), "user.k", buf, sizeof(buf)));
        EXPECT_EQ(EOPNOTSUPP, errno);
    }
}

TEST_F(FuseMount, ExtendedAttributesGoThrough) {
    std::ofstream(src("f")) << "x";
    if (::setxattr(src("f").c_str(), "user.probe", "1", 1, 0) < 0)
        GTEST_SKIP() << "the scratch file system has no user xattrs";
    fs_ = new xattr_fs(fs_, src_);
    MOUNT();
    ASSERT_EQ(0, ::setxattr(mnt("f").c_str(), "user.k", "value", 5, 0)) << strerror(errno);
    char buf[64] = {};
    EXPECT_EQ(5, ::getxattr(src("f").c_str(), "user.k", buf, sizeof(buf)));
    EXPECT_STREQ("value", buf);
    EXPECT_EQ(5, ::getxattr(mnt("f").c_str(), "user.k", nullptr, 0));  // the size
    EXPECT_EQ(-1, ::getxattr(mnt("f").c_str(), "user.k", buf, 2));
    EXPECT_EQ(ERANGE, errno);
    EXPECT_EQ(-1, ::getxattr(mnt("f").c_str(), "user.none", buf, sizeof(buf)));
    EXPECT_EQ(ENODATA, errno);
    ssize_t n = ::listxattr(mnt("f").c_str(), buf, sizeof(buf));
    EXPECT_NE(std::string::npos, std::string(buf, n > 0 ? n : 0).find("user.k"));
    EXPECT_EQ(0, ::removexattr(mnt("f").c_str(), "user.k"));
    EXPECT_EQ(-1, ::getxattr(src("f").c_str(), "user.k", buf, sizeof(buf)));
}

TEST_F(FuseMount, DdWithODirectMovesAlignedBlocksIntact) {
    MOUNT();
    std::string out;
    int r = run_script(
        dir_.path(),
        "dd if=/dev/urandom of=" + mnt("direct") + " bs=1M count=8 oflag=direct status=none", &out);
    if (r != 0 && out.find("Invalid argument") != std::string::npos)
        GTEST_SKIP() << "the kernel refuses O_DIRECT here: " << out;
    ASSERT_EQ(0, r);
    ASSERT_EQ(0, run_script(dir_.path(),
                            "dd if=" + mnt("direct") +
                                " bs=1M iflag=direct status=none | "
                                "sha256sum; sha256sum < " +
                                src("direct"),
                            &out));
    auto nl = out.find('\n');
    EXPECT_EQ(out.substr(0, nl), out.substr(nl + 1, nl));
    struct stat st;
    ASSERT_EQ(0, ::stat(src("direct").c_str(), &st));
    EXPECT_EQ(8 << 20, st.st_size);
}

// -o splice_write: reads of local files go file -> pipe -> /dev/fuse.
TEST_F(FuseMount, SplicedReadsDeliverTheSameBytes) {
    write_pattern(src("f"), (8 << 20) + 12345, 6);
    MOUNT({"-o", "splice_write,splice_move"});
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "sha256sum < " + mnt("f") + "; dd if=" + mnt("f") +
                                " bs=64k iflag=direct status=none | sha256sum; "
                                "sha256sum < " +
                                src("f"),
                            &out));
    std::istringstream lines(out);
    std::string a, b, c;
    std::getline(lines, a), std::getline(lines, b), std::getline(lines, c);
    EXPECT_EQ(c.substr(0, 64), a.substr(0, 64));
    EXPECT_EQ(c.substr(0, 64), b.substr(0, 64));
    int fd = ::open(mnt("f").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    std::string want = read_all(src("f")).substr(777777, 100000), got(100000, '\0');
    EXPECT_EQ(100000, ::pread(fd, &got[0], got.size(), 777777));
    EXPECT_EQ(want, got);
    EXPECT_EQ(12345, ::pread(fd, &got[0], got.size(), 8 << 20));  // short at the end
    ::close(fd);
}

// With the writeback cache the kernel reads around partial writes and does
// O_APPEND itself: write-only and append opens still work.
TEST_F(FuseMount, WritebackCacheKeepsWriteOnlyAndAppendOpensWorking) {
    MOUNT({"-o", "writeback_cache"});
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "cd " + mnt_ +
                                "; echo one > f; echo two >> f; "
                                "printf X | dd of=f bs=1 seek=1 conv=notrunc "
                                "status=none; cat f",
                            &out));
    EXPECT_EQ("oXe\ntwo\n", out);
    unmount();
    EXPECT_EQ("oXe\ntwo\n", read_all(src("f")));
}

TEST_F(FuseMount, EightConcurrentReadersSeeTheSameBytes) {
    write_pattern(src("shared"), 24 << 20, 3);
    MOUNT({"-o", "direct_io,max_read=131072"});  // every read reaches the server
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "for i in 1 2 3 4 5 6 7 8; do sha256sum < " + mnt("shared") + " > " +
                                dir_.path() + "/sum$i & done; wait; cat " + dir_.path() +
                                "/sum*; sha256sum < " + src("shared"),
                            &out));
    std::istringstream lines(out);
    std::vector<std::string> sums;
    for (std::string l; std::getline(lines, l);) sums.push_back(l);
    ASSERT_EQ(9u, sums.size());
    for (int i = 0; i < 8; i++) EXPECT_EQ(sums[8], sums[i]) << "reader " << i;
}

// Four reads wait inside the file system until all four are there: possible
// only if requests run concurrently; and no OS thread is made for them.
TEST_F(FuseMount, RequestsRunConcurrentlyWithoutAThreadEach) {
    for (int i = 0; i < 4; i++) std::ofstream(src("f" + std::to_string(i))) << "data" << i;
    auto hooked = new hooked_fs(fs_);
    fs_ = hooked;
    std::atomic<int> arrived{0}, threads_at_peak{0};
    size_t threads_before = 0;
    hooked->on_pread = [&] {
        if (++arrived == 4) threads_at_peak = (int)thread_count();
        for (int i = 0; i < 1000 && arrived < 4; i++) thread_usleep(10 * 1000);
        return 0;
    };
    MOUNT({"-o", "direct_io"});
    threads_before = thread_count();  // the test's and the server's
    std::vector<std::thread> readers;
    std::string got[4];
    for (int i = 0; i < 4; i++)
        readers.emplace_back([&, i] { got[i] = read_all(mnt("f" + std::to_string(i))); });
    for (auto& t : readers) t.join();
    EXPECT_GE(arrived.load(), 4);
    for (int i = 0; i < 4; i++) EXPECT_EQ("data" + std::to_string(i), got[i]);
    EXPECT_EQ(threads_before + 4, (size_t)threads_at_peak.load())
        << "the four readers are the only new threads";
}

// A signal to a program blocked in a read makes the kernel send
// FUSE_INTERRUPT: the request's coroutine is woken and its read fails.
TEST_F(FuseMount, ASignalInterruptsARequestBlockedInTheFileSystem) {
    std::ofstream(src("slow")) << "slow";
    auto hooked = new hooked_fs(fs_);
    fs_ = hooked;
    std::atomic<bool> in_pread{false};
    std::atomic<int> sleep_errno{0};
    hooked->on_pread = [&] {
        in_pread = true;
        int r = thread_usleep(20 * 1000 * 1000);  // 20 s unless woken
        sleep_errno = r < 0 ? errno : 0;
        return r;
    };
    MOUNT({"-o", "direct_io"});
    struct sigaction sa = {}, old;
    sa.sa_handler = [](int) {};
    sigaction(SIGUSR1, &sa, &old);  // no SA_RESTART: read(2) returns EINTR
    std::atomic<ssize_t> got{1};
    std::atomic<int> got_errno{0};
    auto start = std::chrono::steady_clock::now();
    std::thread reader([&] {
        int fd = ::open(mnt("slow").c_str(), O_RDONLY);
        char buf[16];
        got = ::read(fd, buf, sizeof(buf));
        got_errno = errno;
        ::close(fd);
    });
    ASSERT_TRUE(photon_test::wait_for_off_vcpu([&] { return in_pread.load(); }, 10000));
    pthread_kill(reader.native_handle(), SIGUSR1);
    reader.join();
    sigaction(SIGUSR1, &old, nullptr);
    EXPECT_EQ(-1, got.load());
    EXPECT_EQ(EINTR, got_errno.load());
    EXPECT_EQ(EINTR, sleep_errno.load());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
}

TEST_F(FuseMount, ServesOnTheCallersVcpuWithEitherEventEngine) {
    std::ofstream(src("f")) << "engine";
    for (uint64_t engine : {INIT_EVENT_EPOLL, INIT_EVENT_IOURING}) {
        SCOPED_TRACE(engine == INIT_EVENT_EPOLL ? "epoll" : "io_uring");
        std::atomic<bool> no_engine{false};
        auto run = [&](int c, char** v) {
            if (photon::init(engine, INIT_IO_NONE) < 0) return no_engine = true, -1;
            int r = fs::fuser_go(fs_, c, v);
            photon::fini();
            return r;
        };
        if (mount({}, run) != "") {
            if (no_engine) continue;  // io_uring refused by this kernel
            FAIL() << "did not mount";
        }
        EXPECT_EQ("engine", read_all(mnt("f")));
        unmount();
        EXPECT_EQ(0, rc_.load());
    }
}

TEST_F(FuseMount, SeveralVcpusServeOneMount) {
    write_pattern(src("f"), 4 << 20, 4);
    MOUNT({"-o", "threads=3,direct_io"});
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "for i in 1 2 3 4; do cat " + mnt("f") +
                                " > /dev/null & done; wait; cmp " + mnt("f") + " " + src("f"),
                            &out));
    unmount();
    EXPECT_EQ(0, rc_.load());
}

TEST_F(FuseMount, AnExternalUnmountEndsFuserGoWithZero) {
    MOUNT();
    ASSERT_EQ(0, umount2(mnt_.c_str(), 0));
    ASSERT_TRUE(photon_test::wait_for_off_vcpu([&] { return done_.load(); }, 10000));
    EXPECT_EQ(0, rc_.load());
}
