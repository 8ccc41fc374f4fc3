// The FUSE adaptor's memory budget (-o memory_budget=SIZE): requests in
// progress and their replies hold no more than the budget (the lane stops
// reading /dev/fuse until some finish: the readers wait, nothing fails),
// a request that can never fit is answered ENOMEM while the mount goes on,
// and a bad size is refused.
#include <thread>

#include "fuse_test_util.h"

namespace {

using namespace photon_test;

// Eight readers of a direct_io file, each read 128 KiB, and the file system
// slow: without a budget up to eight reads are in progress at once. A
// request holds its buffer and its reply (a page and 128 KiB), so 400 KiB of
// budget admit three at a time, and every byte still arrives.
TEST_F(FuseMount, ReadsInProgressStayWithinTheBudgetAndAllComplete) {
    write_pattern(src("shared"), 4 << 20, 5);
    auto hooked = new hooked_fs(fs_);
    fs_ = hooked;
    std::atomic<int> now{0}, peak{0};
    hooked->on_pread = [&] {
        int n = ++now;
        for (int p = peak.load(); n > p && !peak.compare_exchange_weak(p, n);) {
        }
        photon::thread_usleep(2000);
        --now;
        return 0;
    };
    MOUNT({"-o", "direct_io,max_read=131072,memory_budget=400K"});
    std::string out;
    ASSERT_EQ(0, run_script(dir_.path(),
                            "for i in 1 2 3 4 5 6 7 8; do dd if=" + mnt("shared") +
                                " bs=128k status=none | sha256sum > " + dir_.path() +
                                "/sum$i & done; wait; cat " + dir_.path() + "/sum*; sha256sum < " +
                                src("shared"),
                            &out));
    std::istringstream lines(out);
    std::vector<std::string> sums;
    for (std::string l; std::getline(lines, l);) sums.push_back(l);
    ASSERT_EQ(9u, sums.size());
    for (int i = 0; i < 8; i++) EXPECT_EQ(sums[8], sums[i]) << "reader " << i;
    EXPECT_GE(peak.load(), 2) << "reads did run concurrently";
    EXPECT_LE(peak.load(), 3) << "more reads in progress than 400 KiB of budget hold";
}

// 64 KiB of budget: a 128 KiB read can never fit and fails with ENOMEM; a
// 4 KiB one, and the mount, go on working.
TEST_F(FuseMount, ARequestThatCanNeverFitFailsWithEnomemAndTheMountGoesOn) {
    write_pattern(src("f"), 256 << 10, 9);
    MOUNT({"-o", "direct_io,max_read=131072,memory_budget=64K"});
    int fd = ::open(mnt("f").c_str(), O_RDONLY);
    ASSERT_GE(fd, 0) << strerror(errno);
    std::vector<char> buf(128 << 10);
    errno = 0;
    EXPECT_EQ(-1, ::pread(fd, buf.data(), buf.size(), 0));
    EXPECT_EQ(ENOMEM, errno);
    ASSERT_EQ(4096, ::pread(fd, buf.data(), 4096, 4096));
    std::string want = read_all(src("f")).substr(4096, 4096);
    EXPECT_EQ(want, std::string(buf.data(), 4096));
    ::close(fd);
    struct stat st;
    EXPECT_EQ(0, ::stat(mnt("f").c_str(), &st));
    EXPECT_EQ(256 << 10, st.st_size);
}

TEST(FuseBudgetArguments, ABadSizeIsRefusedWithEinval) {
    auto why = fuse_unavailable();
    if (!why.empty()) GTEST_SKIP() << "FUSE unavailable: " << why;
    scratch_dir dir;
    std::string mnt = dir / "mnt";
    ASSERT_EQ(0, ::mkdir(mnt.c_str(), 0755));
    auto fs = fs::new_localfs_adaptor(dir.path().c_str(), fs::ioengine_psync);
    ASSERT_NE(nullptr, fs);
    DEFER(delete fs);
    for (const char* bad : {"memory_budget=lots", "memory_budget=0", "memory_budget=-5M"}) {
        std::vector<std::string> args = {"x", mnt, "-f", "-o", bad};
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(&a[0]);
        argv.push_back(nullptr);
        errno = 0;
        EXPECT_EQ(-1, fs::fuser_go(fs, (int)args.size(), argv.data())) << bad;
        EXPECT_EQ(EINVAL, errno) << bad;
        EXPECT_FALSE(is_mounted(mnt)) << bad;
    }
}

}  // namespace
