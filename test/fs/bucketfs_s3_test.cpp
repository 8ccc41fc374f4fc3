// bucketfs over the object storage client against versitygw's S3 server
// (test/net/oss_s3_server.h; skipped without `versitygw`): the IFileSystem calls
// directly, then the bucket mounted through FUSE: a tree copied in with
// `cp -r`, copied out again through bucketfs and through fs/cache's
// full-file cache over it, each copy checked with sha256sum.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <photon/ecosystem/oss.h>
#include <photon/fs/bucketfs.h>
#include <photon/fs/cache/cache.h>
#include <photon/fs/localfs.h>
#include <photon/photon.h>

#include "../net/oss_s3_server.h"
#include "fuse_test_util.h"

using namespace photon;
using photon_test::s3_server;

namespace {

s3_server* server() {
    static std::unique_ptr<s3_server> s;
    if (!s) s.reset(new s3_server);
    return s.get();
}

std::string run(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return "popen failed";
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    int rc = pclose(p);
    if (rc != 0) out += "\n(exit " + std::to_string(rc) + ")";
    return out;
}

class BucketFsS3 : public photon_test::FuseMount {
protected:
    bool inited_ = false;
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE));
        inited_ = true;
        if (!photon_test::have_tool("versitygw"))
            GTEST_SKIP() << "versitygw not installed: tools/install-deps.sh builds it";
        ASSERT_TRUE(server()->ok()) << "versitygw did not start:\n" << server()->log();
        FuseMount::SetUp();
    }
    void TearDown() override {
        FuseMount::TearDown();
        if (inited_ && photon::CURRENT) photon::fini();
    }
    fs::IFileSystem* new_fs(const char* prefix_unused = nullptr) {
        return fs::new_bucket_fs(server()->new_client(), true, 5 << 20);
    }
};

}  // namespace

TEST(BucketFsDirect, CallsMapToObjects) {
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE));
    DEFER(photon::fini());
    if (!photon_test::have_tool("versitygw"))
        GTEST_SKIP() << "versitygw not installed (tools/install-deps.sh)";
    ASSERT_TRUE(server()->ok()) << server()->log();
    std::unique_ptr<fs::IFileSystem> bfs(fs::new_bucket_fs(server()->new_client(), true, 5 << 20));
    ASSERT_TRUE(bfs);
    ASSERT_EQ(0, bfs->mkdir("/direct", 0755));
    EXPECT_EQ(-1, bfs->mkdir("/direct", 0755));
    EXPECT_EQ(EEXIST, errno);

    // 12 MiB written in 1 MiB calls: three 5 MiB-or-less parts.
    std::string data(12 << 20, 0);
    for (size_t i = 0; i < data.size(); i++) data[i] = (char)(i * 131 + i / 4096);
    std::unique_ptr<fs::IFile> f(bfs->open("/direct/big", O_WRONLY | O_CREAT | O_TRUNC, 0644));
    ASSERT_TRUE(f);
    for (size_t off = 0; off < data.size(); off += 1 << 20)
        ASSERT_EQ(1 << 20, f->pwrite(data.data() + off, 1 << 20, off));
    EXPECT_EQ(-1, f->pwrite("x", 1, 5));  // out of order
    EXPECT_EQ(ENOTSUP, errno);
    struct stat st;
    EXPECT_EQ(-1, bfs->stat("/direct/big", &st));  // nothing until close
    ASSERT_EQ(0, f->close());
    f.reset();
    ASSERT_EQ(0, bfs->stat("/direct/big", &st));
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ((off_t)data.size(), st.st_size);
    ASSERT_EQ(0, bfs->stat("/direct", &st));
    EXPECT_TRUE(S_ISDIR(st.st_mode));

    std::unique_ptr<fs::IFile> r(bfs->open("/direct/big", O_RDONLY));
    ASSERT_TRUE(r);
    std::string back(data.size(), 0);
    EXPECT_EQ((ssize_t)data.size(), r->pread(&back[0], back.size() + 100, 0));
    EXPECT_TRUE(back == data);
    char tail[10];
    EXPECT_EQ(0, r->pread(tail, sizeof(tail), data.size()));
    r.reset();

    std::unique_ptr<fs::IFile> small(bfs->creat("/direct/sub/small", 0644));
    ASSERT_TRUE(small);
    ASSERT_EQ(5, small->write("hello", 5));
    small.reset();  // closes: a single PUT
    EXPECT_EQ(nullptr, bfs->open("/direct/sub/small", O_RDWR));
    EXPECT_EQ(ENOTSUP, errno);
    EXPECT_EQ(nullptr, bfs->open("/direct/missing", O_RDONLY));
    EXPECT_EQ(ENOENT, errno);

    std::vector<std::string> names;
    auto dir = bfs->opendir("/direct");
    ASSERT_TRUE(dir);
    for (struct dirent* e; (e = dir->readdir());) names.push_back(e->d_name);
    delete dir;
    EXPECT_EQ((std::vector<std::string>{"big", "sub"}), names);

    ASSERT_EQ(0, bfs->rename("/direct/sub/small", "/direct/small2"));
    EXPECT_EQ(-1, bfs->stat("/direct/sub/small", &st));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, bfs->rmdir("/direct"));
    EXPECT_EQ(ENOTEMPTY, errno);
    EXPECT_EQ(0, bfs->unlink("/direct/big"));
    EXPECT_EQ(0, bfs->unlink("/direct/small2"));
    int rm = bfs->rmdir("/direct");
    int rm_errno = errno;
    std::string left;
    if (auto d = bfs->opendir("/direct")) {
        for (struct dirent* e; (e = d->readdir());) left += std::string(e->d_name) + " ";
        delete d;
    }
    EXPECT_EQ(0, rm) << strerror(rm_errno) << "; left: " << left;
    EXPECT_EQ(-1, bfs->stat("/direct", &st));
}

TEST_F(BucketFsS3, CpRecursiveInAndOutKeepsEveryByte) {
    // A tree: nested directories, empty and small files, a 21 MiB file.
    std::string tree = dir_ / "tree";
    std::string out =
        run("mkdir -p " + tree + "/a/b/c " + tree + "/empty_dir && cd " + tree +
            " && : > a/empty && echo hi > a/b/hi.txt && "
            "head -c 22020096 /dev/urandom > a/b/c/big.bin && "
            "for i in $(seq 1 40); do head -c $((i * 1000)) /dev/urandom > f$i; done");
    ASSERT_EQ("", out);
    auto sums = [](const std::string& d) {
        return run("cd " + d + " && find . -type f -exec sha256sum {} + | sort -k2");
    };
    std::string want = sums(tree);
    ASSERT_NE(std::string::npos, want.find("big.bin"));

    auto serve_bucket = [this](int c, char** v) {
        std::unique_ptr<fs::IFileSystem> bfs(new_fs());
        return fs::fuser_go(bfs.get(), c, v);
    };
    MOUNT({}, serve_bucket);
    EXPECT_EQ("", run("cp -r " + tree + " " + mnt("tree") + " 2>&1"));
    // An object is made when its file is released, which FUSE sends after
    // close(2) has returned: the unmount waits for the last ones.
    unmount();
    MOUNT({}, serve_bucket);
    EXPECT_EQ(want, sums(mnt("tree")));
    EXPECT_EQ("", run("cp -r " + mnt("tree") + " " + (dir_ / "back") + " 2>&1"));
    unmount();
    EXPECT_EQ(want, sums(dir_ / "back"));

    // Read through the full-file cache over bucketfs, twice (cold, warm).
    std::string cache = dir_ / "cache";
    ASSERT_EQ(0, ::mkdir(cache.c_str(), 0755));
    MOUNT({}, [this, cache](int c, char** v) {
        // The cache's eviction timer lives on the vCPU that made it: serve on
        // a vCPU of our own and delete the cache there.
        if (photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE) < 0) return -1;
        auto src = new_fs();
        auto media = fs::new_localfs_adaptor(cache.c_str(), fs::ioengine_psync);
        std::unique_ptr<fs::IFileSystem> cached(
            fs::new_full_file_cached_fs(src, media, 1 << 20, 1, 1000000, 0, nullptr, 0));
        int r = cached ? fs::fuser_go(cached.get(), c, v) : -1;
        cached.reset();
        delete src;
        photon::fini();
        return r;
    });
    EXPECT_EQ("", run("cp -r " + mnt("tree") + " " + (dir_ / "cold") + " 2>&1"));
    EXPECT_EQ("", run("cp -r " + mnt("tree") + " " + (dir_ / "warm") + " 2>&1"));
    unmount();
    EXPECT_EQ(want, sums(dir_ / "cold"));
    EXPECT_EQ(want, sums(dir_ / "warm"));
}
