// fiemap.h: the struct is the kernel's, so a real FS_IOC_FIEMAP fills it, and
// IFile::fiemap() takes it.
#include <photon/fs/fiemap.h>

#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include <photon/fs/forwardfs.h>

#include "fs_test_util.h"
#include "mem_file.h"

namespace pf = photon::fs;

// Field for field, the kernel's layout.
static_assert(sizeof(pf::fiemap_extent) == sizeof(::fiemap_extent), "extent size");
static_assert(offsetof(pf::fiemap_extent, fe_logical) == offsetof(::fiemap_extent, fe_logical), "");
static_assert(offsetof(pf::fiemap_extent, fe_physical) == offsetof(::fiemap_extent, fe_physical),
              "");
static_assert(offsetof(pf::fiemap_extent, fe_length) == offsetof(::fiemap_extent, fe_length), "");
static_assert(offsetof(pf::fiemap_extent, fe_flags) == offsetof(::fiemap_extent, fe_flags), "");
static_assert(sizeof(pf::fiemap) == sizeof(::fiemap), "header size");
static_assert(offsetof(pf::fiemap, fm_start) == offsetof(::fiemap, fm_start), "");
static_assert(offsetof(pf::fiemap, fm_length) == offsetof(::fiemap, fm_length), "");
static_assert(offsetof(pf::fiemap, fm_flags) == offsetof(::fiemap, fm_flags), "");
static_assert(offsetof(pf::fiemap, fm_mapped_extents) == offsetof(::fiemap, fm_mapped_extents), "");
static_assert(offsetof(pf::fiemap, fm_extent_count) == offsetof(::fiemap, fm_extent_count), "");
static_assert(sizeof(pf::fiemap_t<4>) == sizeof(::fiemap) + 4 * sizeof(::fiemap_extent), "");

TEST(Fiemap, ConstructorsFillTheRequest) {
    pf::fiemap_t<8> fm(4096, FIEMAP_MAX_OFFSET);
    EXPECT_EQ(4096u, fm.fm_start);
    EXPECT_EQ(~0ull, fm.fm_length);
    EXPECT_EQ(8u, fm.fm_extent_count);
    EXPECT_EQ(0u, fm.fm_flags);
    EXPECT_EQ(0u, fm.fm_mapped_extents);
    // The extents follow the header, where the kernel writes them.
    EXPECT_EQ(sizeof(::fiemap), (size_t)((char*)fm.fm_extents - (char*)&fm));
    EXPECT_EQ((void*)fm.fm_extents, (void*)((pf::fiemap&)fm).fm_extents);
    fm.fm_extents[0].fe_logical = 100;
    fm.fm_extents[0].fe_length = 50;
    EXPECT_EQ(150u, fm.fm_extents[0].fe_logical_end());
}

TEST(Fiemap, TheKernelFillsItAsItIs) {
    photon_test::scratch_dir dir;
    ASSERT_FALSE(dir.path().empty());
    std::string p = dir / "f";
    int fd = ::open(p.c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    std::string data(3 * 4096, 'x');
    ASSERT_EQ((ssize_t)data.size(), ::pwrite(fd, data.data(), data.size(), 0));
    pf::fiemap_t<16> fm(0, FIEMAP_MAX_OFFSET);
    fm.fm_flags = FIEMAP_FLAG_SYNC;
    int r = ::ioctl(fd, FS_IOC_FIEMAP, reinterpret_cast<::fiemap*>(&fm));
    int e = errno;
    ::close(fd);
    if (r < 0 && (e == EOPNOTSUPP || e == ENOTTY)) GTEST_SKIP() << "this file system has no FIEMAP";
    ASSERT_EQ(0, r) << strerror(e);
    ASSERT_GE(fm.fm_mapped_extents, 1u);
    auto& last = fm.fm_extents[fm.fm_mapped_extents - 1];
    EXPECT_TRUE(last.fe_flags & FIEMAP_EXTENT_LAST);
    EXPECT_GE(last.fe_logical_end(), data.size());
}

namespace {

// A file whose fiemap reports one extent per 4 KiB of its data.
struct mapped_file : photon_test::mem_file {
    using mem_file::mem_file;
    int fiemap(pf::detail::fiemap_ptr arg) override {
        auto m = reinterpret_cast<pf::fiemap*>(arg);  // the same layout either way
        m->fm_mapped_extents = 0;
        // The caller's array follows the header (g++ warns on indexing the
        // zero-length member itself).
        auto ext = reinterpret_cast<pf::fiemap_extent*>(reinterpret_cast<char*>(m) +
                                                        offsetof(pf::fiemap, fm_extents));
        for (uint64_t off = m->fm_start;
             off < data.size() && m->fm_mapped_extents < m->fm_extent_count; off += 4096) {
            auto& x = ext[m->fm_mapped_extents++];
            x.fe_logical = off;
            x.fe_length = std::min<uint64_t>(4096, data.size() - off);
            x.fe_flags = off + 4096 >= data.size() ? FIEMAP_EXTENT_LAST : 0;
        }
        return 0;
    }
};

// file->fiemap(&fm) with a photon::fs::fiemap, if IFile takes one (see
// fiemap.h: filesystem.h must declare `struct fiemap` inside photon::fs).
template <typename F, typename M>
auto call_fiemap(F* f, M* m, int) -> decltype(f->fiemap(m)) {
    return f->fiemap(m);
}
template <typename F, typename M>
int call_fiemap(F*, M*, long) {
    return -2;
}

}  // namespace

TEST(Fiemap, IFileFiemapTakesPhotonsStruct) {
    mapped_file f(std::string(10000, 'y'));
    pf::IFile* file = &f;
    pf::fiemap_t<4> fm(0, FIEMAP_MAX_OFFSET);
    int r = call_fiemap(file, &fm, 0);
    if (r == -2)
        GTEST_SKIP() << "filesystem.h declares `struct fiemap` at global scope: "
                        "IFile::fiemap() does not take photon::fs::fiemap yet";
    ASSERT_EQ(0, r);
    EXPECT_EQ(3u, fm.fm_mapped_extents);
    EXPECT_EQ(10000u, fm.fm_extents[2].fe_logical_end());
    EXPECT_TRUE(fm.fm_extents[2].fe_flags & FIEMAP_EXTENT_LAST);
}
