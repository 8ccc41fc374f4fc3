// Code written the way overlaybd (PhotonLibOS's largest program) writes it: `using namespace
// photon::fs` and DIR in a file that does not include <dirent.h> (the photon headers must not
// bring it), fiemap on local and aligned files, an aligned adaptor that does not own its file,
// xattrs and ioctls through the adaptor, and PhotonLibOS 0.6 names (::Timeout,
// Timeout::expire(), timer.h bringing alog.h). The function above the other includes sees only
// what timer.h brings.
#include <photon/thread/timer.h>

namespace {
int log_through_timer_h() {
    LOG_DEBUG("timer.h brings alog.h, as PhotonLibOS's does");
    return 0;
}
}  // namespace

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/fs/aligned-file.h>
#include <photon/fs/fiemap.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/forwardfs.h>
#include <photon/fs/localfs.h>
#include <photon/photon.h>

using namespace photon::fs;

namespace {

// overlaybd's erofs and cache code name DIR with photon::fs in scope.
struct ListingDir : public DIR {
    int closedir() override { return 0; }
    dirent* get() override { return nullptr; }
    int next() override { return 0; }
    void rewinddir() override {}
    void seekdir(long long) override {}
    long long telldir() override { return 0; }
};

// A fiemap() result that says the file system below cannot map extents (tmpfs, overlayfs).
bool no_fiemap(int r) { return r < 0 && (errno == EOPNOTSUPP || errno == ENOTTY); }

class OverlaybdStyle : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE));
        // The working directory (the build tree) is on a disk file system, unlike /tmp often.
        path_ = "overlaybd_style_" + std::to_string(getpid()) + ".dat";
        fs_ = new_localfs_adaptor(nullptr, ioengine_psync);
        ASSERT_NE(nullptr, fs_);
    }
    void TearDown() override {
        delete fs_;
        ::unlink(path_.c_str());
        photon::fini();
    }
    // A file of `blocks` 4 KiB blocks of data, written and synced so the extents exist.
    IFile* make_file(int blocks) {
        IFile* f = fs_->open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (!f) return nullptr;
        std::vector<char> buf(4096, 'x');
        for (int i = 0; i < blocks; i++) f->pwrite(buf.data(), buf.size(), (off_t)i * 4096);
        f->fsync();
        return f;
    }

    std::string path_;
    IFileSystem* fs_ = nullptr;
};

TEST_F(OverlaybdStyle, DirIsPhotonsUnderUsingNamespace) {
    ListingDir d;
    DIR* p = &d;  // photon::fs::DIR: not ambiguous with <dirent.h>'s ::DIR
    EXPECT_EQ(nullptr, p->readdir());
    DIR* listed = fs_->opendir(".");
    ASSERT_NE(nullptr, listed);
    EXPECT_NE(nullptr, listed->get());
    delete listed;
    EXPECT_EQ(0, log_through_timer_h());
}

TEST_F(OverlaybdStyle, LocalFileFiemapMapsTheData) {
    IFile* f = make_file(4);
    ASSERT_NE(nullptr, f);
    DEFER(delete f);
    fiemap_t<16> fm(0, FIEMAP_MAX_OFFSET);
    int r = f->fiemap(&fm);
    if (no_fiemap(r)) GTEST_SKIP() << "the build tree's file system has no FIEMAP";
    ASSERT_EQ(0, r) << strerror(errno);
    ASSERT_GE(fm.fm_mapped_extents, 1u);
    uint64_t mapped = 0;
    for (uint32_t i = 0; i < fm.fm_mapped_extents; i++) mapped += fm.fm_extents[i].fe_length;
    EXPECT_EQ(4u * 4096, mapped);
    EXPECT_TRUE(fm.fm_extents[fm.fm_mapped_extents - 1].fe_flags & FIEMAP_EXTENT_LAST);
}

TEST_F(OverlaybdStyle, AlignedAdaptorForwardsFiemap) {
    IFile* f = make_file(2);
    ASSERT_NE(nullptr, f);
    DEFER(delete f);
    IFile* a = new_aligned_file_adaptor(f, 4096, true, false);
    ASSERT_NE(nullptr, a);
    DEFER(delete a);
    fiemap_t<16> direct(0, FIEMAP_MAX_OFFSET), through(0, FIEMAP_MAX_OFFSET);
    int r = f->fiemap(&direct);
    if (no_fiemap(r)) GTEST_SKIP() << "the build tree's file system has no FIEMAP";
    ASSERT_EQ(0, r);
    ASSERT_EQ(0, a->fiemap(&through)) << strerror(errno);
    ASSERT_EQ(direct.fm_mapped_extents, through.fm_mapped_extents);
    for (uint32_t i = 0; i < direct.fm_mapped_extents; i++)
        EXPECT_EQ(direct.fm_extents[i].fe_length, through.fm_extents[i].fe_length);
}

// A file whose ioctl answers, to see the adaptor pass the call and its arguments down.
struct IoctlFile : public ForwardFile_Ownership {
    explicit IoctlFile(IFile* f) : ForwardFile_Ownership(f, false) {}
    int vioctl(int request, va_list args) override { return request + va_arg(args, int); }
};

TEST_F(OverlaybdStyle, AlignedAdaptorForwardsIoctl) {
    IFile* f = make_file(1);
    ASSERT_NE(nullptr, f);
    DEFER(delete f);
    IoctlFile probe(f);
    IFile* a = new_aligned_file_adaptor(&probe, 4096, true, false);
    ASSERT_NE(nullptr, a);
    DEFER(delete a);
    EXPECT_EQ(0x1234 + 7, a->ioctl(0x1234, 7));
}

TEST_F(OverlaybdStyle, AlignedAdaptorWithoutOwnershipLeavesTheFileOpen) {
    IFile* f = make_file(1);
    ASSERT_NE(nullptr, f);
    IFile* a = new_aligned_file_adaptor(f, 4096, true, false);
    ASSERT_NE(nullptr, a);
    EXPECT_EQ(0, a->close());
    delete a;
    char c = 0;
    EXPECT_EQ(1, f->pread(&c, 1, 100)) << "the owner's file was closed by the adaptor";
    EXPECT_EQ('x', c);
    delete f;
}

TEST_F(OverlaybdStyle, AlignedAdaptorForwardsXattrs) {
    IFile* f = make_file(1);
    ASSERT_NE(nullptr, f);
    DEFER(delete f);
    IFile* a = new_aligned_file_adaptor(f, 4096, true, false);
    ASSERT_NE(nullptr, a);
    DEFER(delete a);
    auto x = dynamic_cast<IFileXAttr*>(a);
    ASSERT_NE(nullptr, x) << "the adaptor hides the file's xattrs";
    if (x->fsetxattr("user.photon", "v1", 2, 0) < 0) {
        ASSERT_TRUE(errno == ENOTSUP || errno == EPERM) << strerror(errno);
        GTEST_SKIP() << "the build tree's file system has no user xattrs";
    }
    char v[8] = {};
    EXPECT_EQ(2, x->fgetxattr("user.photon", v, sizeof(v)));
    EXPECT_STREQ("v1", v);
    EXPECT_EQ(2, ::getxattr(path_.c_str(), "user.photon", v, sizeof(v)));
    EXPECT_EQ(0, x->fremovexattr("user.photon"));
}

TEST_F(OverlaybdStyle, AlignedFsAdaptorForwardsFiemap) {
    auto afs = new_aligned_fs_adaptor(fs_, 4096, true, false);
    ASSERT_NE(nullptr, afs);
    DEFER(delete afs);
    delete make_file(3);
    IFile* f = afs->open(path_.c_str(), O_RDONLY);
    ASSERT_NE(nullptr, f);
    DEFER(delete f);
    fiemap_t<16> fm(0, FIEMAP_MAX_OFFSET);
    int r = f->fiemap(&fm);
    if (no_fiemap(r)) GTEST_SKIP() << "the build tree's file system has no FIEMAP";
    ASSERT_EQ(0, r);
    EXPECT_GE(fm.fm_mapped_extents, 1u);
    struct stat st;
    EXPECT_EQ(0, afs->stat(path_.c_str(), &st));
    EXPECT_EQ(3 * 4096, st.st_size);
}

// overlaybd's registry code: `Timeout tmo(timeout); ... if (tmo.expire() < photon::now)`.
TEST_F(OverlaybdStyle, Photon06TimeoutNames) {
    Timeout tmo(1000 * 1000);
    EXPECT_EQ(tmo.expiration(), tmo.expire());
    EXPECT_FALSE(tmo.expire() < photon::now);
    tmo.expire(1);
    EXPECT_EQ(1u, tmo.expiration());
    EXPECT_TRUE(tmo.expired());
    ::Timeout g = tmo;
    photon::Timeout p = g;  // the same type under both names
    EXPECT_EQ(p.expiration(), g.expiration());
    std::string s = "utility.h brings <string>";
    EXPECT_FALSE(s.empty());
}

}  // namespace
