// subfs confines every path to its base directory: "..", absolute paths and
// symlinks (absolute or climbing) all resolve inside it.
#include <photon/fs/localfs.h>
#include <photon/fs/subfs.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "fs_test_util.h"

using namespace photon;
using namespace photon::fs;

namespace {

// <scratch>/secret is outside; <scratch>/jail is the subfs root.
class SubFs : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
        ASSERT_FALSE(dir_.path().empty());
        write_host("secret", "outside");
        ASSERT_EQ(0, ::mkdir((dir_ / "jail").c_str(), 0755));
        write_host("jail/secret", "inside");
        fs_.reset(new_localfs_adaptor((dir_ / "jail").c_str(), ioengine_psync));
        ASSERT_TRUE(fs_);
    }
    void TearDown() override {
        fs_.reset();
        photon_test::fini_vcpu();
    }
    void write_host(const char* name, const char* text) {
        FILE* f = fopen((dir_ / name).c_str(), "w");
        ASSERT_TRUE(f);
        fputs(text, f);
        fclose(f);
    }
    // The content of `path` opened through subfs, or "ERR:<errno name>".
    std::string read_via_subfs(const char* path) {
        std::unique_ptr<IFile> f(fs_->open(path, O_RDONLY));
        if (!f) return std::string("ERR:") + strerror(errno);
        char buf[64] = {};
        ssize_t n = f->pread(buf, sizeof(buf) - 1, 0);
        return n < 0 ? "ERR:read" : std::string(buf, n);
    }

    photon_test::scratch_dir dir_;
    std::unique_ptr<IFileSystem> fs_;
};

}  // namespace

TEST_F(SubFs, DotDotStopsAtTheRoot) {
    EXPECT_EQ("inside", read_via_subfs("secret"));
    EXPECT_EQ("inside", read_via_subfs("/secret"));
    EXPECT_EQ("inside", read_via_subfs("../secret"));
    EXPECT_EQ("inside", read_via_subfs("../../../../secret"));
    EXPECT_EQ("inside", read_via_subfs("./a/../../secret"));
}

TEST_F(SubFs, SymlinksResolveInsideTheRoot) {
    ASSERT_EQ(0, ::symlink((dir_ / "secret").c_str(), (dir_ / "jail/abs").c_str()));
    ASSERT_EQ(0, ::symlink("../secret", (dir_ / "jail/up").c_str()));
    ASSERT_EQ(0, ::symlink("../../..", (dir_ / "jail/updir").c_str()));
    ASSERT_EQ(0, ::symlink("/", (dir_ / "jail/root").c_str()));
    // An absolute target is read from the subfs root: <jail><scratch>/secret.
    EXPECT_EQ("ERR:" + std::string(strerror(ENOENT)), read_via_subfs("abs"));
    EXPECT_EQ("inside", read_via_subfs("up"));
    EXPECT_EQ("inside", read_via_subfs("updir/secret"));
    EXPECT_EQ("inside", read_via_subfs("root/secret"));
    EXPECT_EQ("inside", read_via_subfs("root/../updir/./secret"));
}

TEST_F(SubFs, CreatingThroughADanglingLinkStaysInside) {
    ASSERT_EQ(0, ::symlink("../planted", (dir_ / "jail/dangling").c_str()));
    std::unique_ptr<IFile> f(fs_->open("dangling", O_CREAT | O_WRONLY, 0644));
    ASSERT_TRUE(f) << strerror(errno);
    EXPECT_EQ(0, ::access((dir_ / "jail/planted").c_str(), F_OK));
    EXPECT_EQ(-1, ::access((dir_ / "planted").c_str(), F_OK));
}

TEST_F(SubFs, LinkLoopsFailWithEloop) {
    ASSERT_EQ(0, ::symlink("b", (dir_ / "jail/a").c_str()));
    ASSERT_EQ(0, ::symlink("a", (dir_ / "jail/b").c_str()));
    EXPECT_EQ(nullptr, fs_->open("a", O_RDONLY));
    EXPECT_EQ(ELOOP, errno);
}

TEST_F(SubFs, OperationsOnTheLinkItselfDoNotFollowIt) {
    ASSERT_EQ(0, ::symlink("/secret", (dir_ / "jail/l").c_str()));
    struct stat st;
    ASSERT_EQ(0, fs_->lstat("l", &st));
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    ASSERT_EQ(0, fs_->stat("l", &st));
    EXPECT_EQ(6, st.st_size);  // "inside"
    char target[32] = {};
    EXPECT_EQ(7, fs_->readlink("l", target, sizeof(target)));
    ASSERT_EQ(0, fs_->rename("l", "m"));
    ASSERT_EQ(0, fs_->unlink("m"));
    EXPECT_EQ("inside", read_via_subfs("secret"));  // the target survived
    ASSERT_EQ(0, fs_->mkdir("../d", 0755));
    EXPECT_EQ(0, ::access((dir_ / "jail/d").c_str(), F_OK));
}

TEST(SubFsFactory, RejectsAMissingBase) {
    EXPECT_EQ(nullptr, new_localfs_adaptor("/nonexistent/photon/base", ioengine_psync));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(nullptr, new_subfs(nullptr, "/", false));
    EXPECT_EQ(EINVAL, errno);
}
