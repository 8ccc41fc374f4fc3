// The FUSE adaptor's node-id <-> path table, without a mount.
#include <sys/stat.h>

#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "../../fs/fuse_inode_table.h"

using photon::fs::fuse_inode_table;

namespace {

std::string path(fuse_inode_table& t, uint64_t ino, const char* name = nullptr) {
    std::string p;
    int r = t.path_of(ino, name, p);
    return r == 0 ? p : "error " + std::to_string(r);
}

constexpr uint64_t kRoot = fuse_inode_table::root_id;

}  // namespace

TEST(FuseInodeTable, RootIsSlashAndNamesAppend) {
    fuse_inode_table t;
    EXPECT_EQ("/", path(t, kRoot));
    EXPECT_EQ("/a", path(t, kRoot, "a"));
    EXPECT_EQ(1u, t.size());
}

TEST(FuseInodeTable, LookupsOfOneNameShareANodeAndPathsNest) {
    fuse_inode_table t;
    uint64_t d = t.remember(kRoot, "dir", S_IFDIR | 0755);
    ASSERT_GT(d, kRoot);
    EXPECT_EQ(d, t.remember(kRoot, "dir", S_IFDIR | 0700));
    uint64_t f = t.remember(d, "file", S_IFREG);
    EXPECT_NE(d, f);
    EXPECT_EQ("/dir/file", path(t, f));
    EXPECT_EQ("/dir/file/x", path(t, f, "x"));
    EXPECT_EQ(3u, t.size());
}

TEST(FuseInodeTable, UnknownIdsAreStale) {
    fuse_inode_table t;
    EXPECT_EQ("error " + std::to_string(-ESTALE), path(t, 12345));
    EXPECT_EQ(0u, t.remember(12345, "x", S_IFREG));
}

TEST(FuseInodeTable, ForgetFreesOnlyAfterEveryLookupAndChild) {
    fuse_inode_table t;
    uint64_t d = t.remember(kRoot, "d", S_IFDIR);
    t.remember(kRoot, "d", S_IFDIR);  // two lookups
    uint64_t f = t.remember(d, "f", S_IFREG);
    t.forget(d, 2);  // the child still needs d's path
    EXPECT_EQ("/d/f", path(t, f));
    EXPECT_EQ(3u, t.size());
    t.forget(f, 1);  // frees f, then d
    EXPECT_EQ(1u, t.size());
    EXPECT_NE("/d", path(t, d));
    t.forget(kRoot, 100);  // the root stays
    EXPECT_EQ("/", path(t, kRoot));
}

TEST(FuseInodeTable, ForgetMoreThanLookedUpDoesNotUnderflow) {
    fuse_inode_table t;
    uint64_t f = t.remember(kRoot, "f", S_IFREG);
    t.forget(f, 5);
    EXPECT_EQ(1u, t.size());
    t.forget(f, 1);  // already gone: ignored
    EXPECT_EQ(1u, t.size());
}

TEST(FuseInodeTable, RenameMovesTheNodeAndItsChildren) {
    fuse_inode_table t;
    uint64_t a = t.remember(kRoot, "a", S_IFDIR);
    uint64_t b = t.remember(kRoot, "b", S_IFDIR);
    uint64_t f = t.remember(a, "f", S_IFREG);
    t.renamed(kRoot, "a", b, "a2");
    EXPECT_EQ("/b/a2", path(t, a));
    EXPECT_EQ("/b/a2/f", path(t, f));
    EXPECT_EQ(a, t.remember(b, "a2", S_IFDIR));     // the new name finds it
    EXPECT_NE(a, t.remember(kRoot, "a", S_IFDIR));  // the old one is free
}

TEST(FuseInodeTable, RenameOverANameDetachesTheReplacedNode) {
    fuse_inode_table t;
    uint64_t x = t.remember(kRoot, "x", S_IFREG);
    uint64_t y = t.remember(kRoot, "y", S_IFREG);
    t.renamed(kRoot, "x", kRoot, "y");
    EXPECT_EQ("/y", path(t, x));
    EXPECT_EQ("error " + std::to_string(-ESTALE), path(t, y));  // kept for its id only
    t.forget(y, 1);
    EXPECT_EQ(2u, t.size());
}

TEST(FuseInodeTable, RenameOfANameNeverLookedUpStillDetachesTheTarget) {
    fuse_inode_table t;
    uint64_t y = t.remember(kRoot, "y", S_IFREG);
    t.renamed(kRoot, "never-seen", kRoot, "y");
    std::string p;
    EXPECT_EQ(-ESTALE, t.path_of(y, nullptr, p));
}

TEST(FuseInodeTable, RemovedDetachesAndALaterLookupGetsANewId) {
    fuse_inode_table t;
    uint64_t f = t.remember(kRoot, "f", S_IFREG);
    t.removed(kRoot, "f");
    std::string p;
    EXPECT_EQ(-ESTALE, t.path_of(f, nullptr, p));
    uint64_t g = t.remember(kRoot, "f", S_IFREG);
    EXPECT_NE(f, g);
    EXPECT_EQ("/f", path(t, g));
    t.removed(kRoot, "nothing");  // no such name: no effect
    EXPECT_EQ(3u, t.size());
}

TEST(FuseInodeTable, ChildrenOfADetachedDirectoryHaveNoPath) {
    fuse_inode_table t;
    uint64_t d = t.remember(kRoot, "d", S_IFDIR);
    uint64_t f = t.remember(d, "f", S_IFREG);
    t.removed(kRoot, "d");
    std::string p;
    EXPECT_EQ(-ESTALE, t.path_of(f, nullptr, p));
    EXPECT_EQ(-ESTALE, t.path_of(d, "g", p));
}

TEST(FuseInodeTable, ANameWhoseTypeChangedGetsANewNode) {
    fuse_inode_table t;
    uint64_t f = t.remember(kRoot, "n", S_IFREG);
    uint64_t d = t.remember(kRoot, "n", S_IFDIR);  // replaced beside the mount
    EXPECT_NE(f, d);
    std::string p;
    EXPECT_EQ(-ESTALE, t.path_of(f, nullptr, p));
    EXPECT_EQ("/n", path(t, d));
}

TEST(FuseInodeTable, DeepTreesBuildFullPaths) {
    fuse_inode_table t;
    uint64_t ino = kRoot;
    std::string expect;
    for (int i = 0; i < 300; i++) {
        std::string name = "d" + std::to_string(i);
        ino = t.remember(ino, name.c_str(), S_IFDIR);
        expect += "/" + name;
    }
    EXPECT_EQ(expect, path(t, ino));
}
