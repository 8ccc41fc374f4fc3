// path.h: Path's components and names, level_valid, mkdir_recursive and
// Walker on a real directory tree, and Tree::Node.
#include <photon/fs/path.h>

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <photon/common/enumerable.h>
#include <photon/fs/localfs.h>

#include "fs_test_util.h"

using namespace photon;
using namespace photon::fs;

namespace {

std::vector<std::string> parts(Path p) {
    std::vector<std::string> v;
    for (auto x : p) v.emplace_back(x);
    return v;
}

}  // namespace

TEST(Path, SplitsIntoComponents) {
    using V = std::vector<std::string>;
    EXPECT_EQ((V{"asdf", "jkl", "bmp", "qwer", "x.jpg"}), parts("/asdf/jkl/bmp/qwer/x.jpg"));
    EXPECT_EQ((V{"kqw", "wek", "kjas", "nn"}), parts("/kqw/wek///kjas/nn"));
    EXPECT_EQ((V{"asdf"}), parts("asdf"));
    EXPECT_EQ(V{}, parts("/"));
    EXPECT_EQ(V{}, parts(""));
    EXPECT_EQ(V{}, parts((const char*)nullptr));
    EXPECT_EQ((V{"qwer", "jkl"}), parts("/qwer/jkl/"));
    EXPECT_EQ((V{"asdf", "jkl", "bmp", "qwer"}),
              parts(Path("/asdf/jkl/bmp/qwer/x.jpg").directory()));
    EXPECT_EQ(V{}, parts(Path("/asdf").directory()));
    EXPECT_EQ(V{}, parts(Path("asdf").directory()));
}

TEST(Path, IteratorsCompareByPosition) {
    Path p("a/a/b");
    auto first = p.begin(), second = p.begin();
    ++second;
    EXPECT_EQ("a", *first);
    EXPECT_EQ("a", *second);
    EXPECT_NE(first, second);  // Photon: equal, both "a"
    EXPECT_EQ("/b", second.following_part());
    ++second, ++second;
    EXPECT_EQ(p.end(), second);
}

TEST(Path, BaseAndDirectoryNames) {
    const char* cases[][3] = {
        {"/asdf/jkl/bmp/qwer/x.jpg", "/asdf/jkl/bmp/qwer/", "x.jpg"},
        {"/x.jpg", "/", "x.jpg"},
        {"x.jpg", "", "x.jpg"},
        {"/kqw/wek///kjas/nn", "/kqw/wek///kjas/", "nn"},
        {"/kqw/wek///kjas/nn/", "/kqw/wek///kjas/", "nn"},
        {"/kqw/wek///kjas/nn///", "/kqw/wek///kjas/", "nn"},
        {"/", "/", ""},  // Photon: a size from a null pointer
        {"", "", ""},
    };
    for (auto& c : cases) {
        Path p(c[0]);
        EXPECT_EQ(c[1], p.dirname()) << c[0];
        EXPECT_EQ(c[2], p.basename()) << c[0];
    }
    EXPECT_TRUE(Path("/a/").ends_with_slash());
    EXPECT_FALSE(Path("/a").ends_with_slash());
    EXPECT_FALSE(Path("").ends_with_slash());
}

TEST(Path, DotDotMustNotClimbAboveTheStart) {
    EXPECT_TRUE(path_level_valid("/asdf/jkl/bmp/qwer/x.jpg"));
    EXPECT_FALSE(path_level_valid("/x.jpg/../../x.jpg"));
    EXPECT_FALSE(path_level_valid("asdf/../../x.jpg"));
    EXPECT_FALSE(path_level_valid("../asdf"));
    // Photon counted only names starting with '.': these were invalid.
    EXPECT_TRUE(path_level_valid("/a/b/../c"));
    EXPECT_TRUE(path_level_valid("a/./b/../../c"));
    EXPECT_TRUE(path_level_valid(".hidden/.."));
    EXPECT_FALSE(path_level_valid("a/./../.."));
}

TEST(Path, IsDots) {
    EXPECT_EQ(1, is_dots("."));
    EXPECT_EQ(2, is_dots(".."));
    EXPECT_EQ(0, is_dots("..."));
    EXPECT_EQ(0, is_dots(".a"));
    EXPECT_EQ(0, is_dots(""));
}

namespace {

class PathFs : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE));
        ASSERT_FALSE(dir_.path().empty());
        fs_.reset(new_localfs_adaptor(dir_.path().c_str(), ioengine_psync));
        ASSERT_TRUE(fs_);
    }
    void TearDown() override {
        fs_.reset();
        photon_test::fini_vcpu();
    }
    bool is_dir(const std::string& p) {
        struct stat st;
        return ::stat((dir_ / p).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    void touch(const std::string& p) {
        ASSERT_EQ(0, system(("touch '" + (dir_ / p) + "'").c_str()));
    }
    std::set<std::string> walk(const char* start) {
        std::set<std::string> seen;
        for (auto f : enumerable(Walker(fs_.get(), start))) seen.emplace(f);
        return seen;
    }

    photon_test::scratch_dir dir_;
    std::unique_ptr<IFileSystem> fs_;
};

}  // namespace

TEST_F(PathFs, MkdirRecursiveMakesTheDirectoriesBeforeEachSlash) {
    ASSERT_EQ(0, mkdir_recursive("a/b/c", fs_.get()));
    EXPECT_TRUE(is_dir("a/b"));
    EXPECT_FALSE(is_dir("a/b/c"));  // the last name is a file's
    ASSERT_EQ(0, mkdir_recursive("/x//y/z/", fs_.get()));
    EXPECT_TRUE(is_dir("x/y/z"));
    EXPECT_EQ(0, mkdir_recursive("a/b/c/", fs_.get()));  // existing ones are fine
    EXPECT_TRUE(is_dir("a/b/c"));
    EXPECT_EQ(0, mkdir_recursive("", fs_.get()));
}

TEST_F(PathFs, MkdirRecursiveKeepsRelativePathsRelative) {
    std::unique_ptr<IFileSystem> host(new_localfs_adaptor());
    char cwd[4096];
    ASSERT_TRUE(getcwd(cwd, sizeof(cwd)));
    ASSERT_EQ(0, chdir(dir_.path().c_str()));
    int r = mkdir_recursive("rel/sub/", host.get());
    ASSERT_EQ(0, chdir(cwd));
    ASSERT_EQ(0, r);
    EXPECT_TRUE(is_dir("rel/sub"));  // Photon made /rel/sub at the host's root
}

TEST_F(PathFs, MkdirRecursiveRefusesAFileInTheWay) {
    touch("f");
    EXPECT_EQ(-1, mkdir_recursive("f/g/", fs_.get()));
    EXPECT_EQ(ENOTDIR, errno);
    EXPECT_EQ(-1, mkdir_recursive("a/", nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, mkdir_recursive(std::string(PATH_MAX + 10, 'a'), fs_.get()));
    EXPECT_EQ(ENAMETOOLONG, errno);
}

TEST_F(PathFs, WalkerYieldsEveryFileOfTheTree) {
    EXPECT_TRUE(walk("").empty());
    touch("top");
    ASSERT_EQ(0, mkdir_recursive("d1/d2/d3/d4/", fs_.get()));
    ASSERT_EQ(0, mkdir_recursive("empty/", fs_.get()));
    touch("d1/d2/d3/d4/deep");
    touch("d1/mid");
    ASSERT_EQ(0, symlink("d1", (dir_ / "link").c_str()));  // not followed
    std::set<std::string> want = {"/top", "/d1/d2/d3/d4/deep", "/d1/mid", "/link"};
    EXPECT_EQ(want, walk(""));
    EXPECT_EQ(want, walk("/"));
    EXPECT_EQ((std::set<std::string>{"d1/d2/d3/d4/deep", "d1/mid"}), walk("d1"));
    EXPECT_EQ((std::set<std::string>{"d1/d2/d3/d4/deep", "d1/mid"}), walk("d1/"));
    Walker w(fs_.get(), "/missing");
    EXPECT_FALSE(w.valid());
    EXPECT_EQ(-1, w.next());
    EXPECT_FALSE(Walker(nullptr, "/").valid());
}

TEST_F(PathFs, WalkerPathsAreNulTerminated) {
    touch("only");
    Walker w(fs_.get(), "/");
    ASSERT_TRUE(w.valid());
    EXPECT_STREQ("/only", w.path().data());
    EXPECT_EQ(-1, w.next());
    EXPECT_FALSE(w.valid());
}

TEST(Tree, FilesAndDirectoriesOfANode) {
    Tree::Node node;
    uint64_t v = 2314;
    for (auto x : {"asdf", "jkl", "qwer", "zxcv"}) ASSERT_EQ(0, node.creat(x, (void*)v++));
    EXPECT_EQ(0, node.creat("1234", (void*)1234));
    EXPECT_EQ(-1, node.creat("1234", (void*)2345));
    EXPECT_EQ(EEXIST, errno);
    EXPECT_EQ(5u, node.size());
    for (auto x : {">asdf", ">jkl"}) ASSERT_EQ(0, node.mkdir(x));
    EXPECT_EQ(7u, node.size());
    void* got;
    ASSERT_EQ(0, node.read("jkl", &got));
    EXPECT_EQ((void*)2315, got);
    ASSERT_EQ(0, node.write("jkl", (void*)7));
    ASSERT_EQ(0, node.read("jkl", &got));
    EXPECT_EQ((void*)7, got);
    EXPECT_TRUE(node.is_file("jkl"));
    ASSERT_EQ(0, node.unlink("jkl"));
    EXPECT_FALSE(node.is_file("jkl"));
    EXPECT_EQ(-1, node.unlink(">asdf"));
    EXPECT_EQ(EISDIR, errno);
    EXPECT_TRUE(node.is_dir(">asdf"));
    EXPECT_EQ(0, node.rmdir(">asdf"));
    EXPECT_FALSE(node.is_dir(">asdf"));
    EXPECT_EQ(-1, node.rmdir("asdf"));
    EXPECT_EQ(ENOTDIR, errno);
    EXPECT_EQ(2, node.stat("/"));
}

TEST(Tree, PathsCreateIntermediateDirectoriesOnlyWhenAsked) {
    Tree::Node root;
    EXPECT_EQ(-1, root.creat("/a/b/c", (void*)1));
    EXPECT_EQ(ENOENT, errno);
    ASSERT_EQ(0, root.creat("/a/b/c", (void*)1, true));
    EXPECT_TRUE(root.is_dir("a"));
    EXPECT_TRUE(root.is_dir("/a/b/"));
    EXPECT_TRUE(root.is_file("a/b/c"));
    EXPECT_EQ(-1, root.creat("a/b/c/d", (void*)2, true));  // c is a file
    EXPECT_EQ(ENOTDIR, errno);
    EXPECT_EQ(-1, root.rmdir("a/b"));
    EXPECT_EQ(ENOTEMPTY, errno);
    ASSERT_EQ(0, root.mkdir("x/y/z", true));
    Tree::Node* y = root.chdir("x/y");
    ASSERT_TRUE(y);
    EXPECT_TRUE(y->is_dir("z"));
    EXPECT_EQ(nullptr, root.chdir("a/b/c"));
    EXPECT_EQ(ENOTDIR, errno);
    EXPECT_EQ(-1, root.creat("a/../b", (void*)3));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, root.creat("a/", (void*)3));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, root.mkdir("/"));
    EXPECT_EQ(EEXIST, errno);
    EXPECT_EQ(-1, root.stat(""));
    EXPECT_EQ(EINVAL, errno);
}

// Photon tagged directories with bit 63 of the pointer: such a user value
// was taken for a directory and freed as one.
TEST(Tree, UserValuesWithTheHighBitStayValues) {
    Tree::Node root;
    void* high = (void*)(Tree::Value::MASK | 0x1234);
    ASSERT_EQ(0, root.creat("v", high));
    EXPECT_TRUE(root.is_file("v"));
    void* got = nullptr;
    ASSERT_EQ(0, root.read("v", &got));
    EXPECT_EQ(high, got);
}  // destroying root must not free `high`
