// xfile.h: linear, fixed-size linear and stripe files over in-memory parts,
// checked byte for byte against the layout each one promises.
#include <photon/fs/xfile.h>

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../net/net_test_util.h"
#include "mem_file.h"

using namespace photon::fs;
using photon_test::mem_file;
using photon_test::pattern;

namespace {

// Parts of the given sizes, filled with distinct patterns; the caller owns
// them unless a composite took them.
struct parts {
    std::vector<mem_file*> files;
    std::vector<IFile*> ptrs;
    explicit parts(std::vector<size_t> sizes) {
        for (size_t i = 0; i < sizes.size(); i++) {
            files.push_back(new mem_file(pattern(sizes[i], 10 + i)));
            ptrs.push_back(files.back());
        }
    }
    void release() {
        for (auto f : files) delete f;
        files.clear();
    }
    IFile** data() { return ptrs.data(); }
};

// Random preads against `image`, and the same through preadv.
void expect_reads_match(IFile* x, const std::string& image) {
    std::mt19937 rng(3);
    for (int i = 0; i < 300; i++) {
        size_t off = rng() % (image.size() + 10), n = rng() % 5000;
        std::string buf(n, '\0');
        ssize_t r = x->pread(&buf[0], n, off);
        size_t want = off >= image.size() ? 0 : std::min(n, image.size() - off);
        ASSERT_EQ((ssize_t)want, r) << off << "+" << n;
        ASSERT_EQ(image.substr(std::min(off, image.size()), want), buf.substr(0, want));
    }
    std::string a(100, '\0'), b(3000, '\0');
    struct iovec iov[] = {{&a[0], a.size()}, {&b[0], b.size()}};
    size_t want = std::min<size_t>(3100, image.size() - 7);
    ASSERT_EQ((ssize_t)want, x->preadv(iov, 2, 7));
    EXPECT_EQ(image.substr(7, want), (a + b).substr(0, want));
}

}  // namespace

TEST(XFile, LinearFileIsThePartsInOrder) {
    parts p({1000, 0, 4096, 77, 3000});  // an empty part is skipped
    std::string image;
    for (auto f : p.files) image += f->data;
    std::unique_ptr<IFile> x(new_linear_file(p.data(), 5, true));
    ASSERT_TRUE(x);
    struct stat st;
    ASSERT_EQ(0, x->fstat(&st));
    EXPECT_EQ((off_t)image.size(), st.st_size);
    expect_reads_match(x.get(), image);
    // Writes land in the right parts; past the end there is no room.
    std::string w = pattern(2000, 99);
    ASSERT_EQ(2000, x->pwrite(w.data(), w.size(), 900));
    image.replace(900, 2000, w);
    expect_reads_match(x.get(), image);
    EXPECT_EQ(10, x->pwrite("0123456789", 10, image.size() - 10));
    EXPECT_EQ(5, x->pwrite("0123456789", 10, image.size() - 5));  // short across the end
    EXPECT_EQ(-1, x->pwrite("x", 1, image.size()));
    EXPECT_EQ(ENOSPC, errno);
    EXPECT_EQ(0, x->pwrite("x", 0, image.size()));
}

TEST(XFile, FixedSizeLinearFileUsesTheUnitSize) {
    for (uint64_t unit : {4096u, 1000u}) {  // a power of two, and not
        parts p({unit, unit, unit});
        std::string image = p.files[0]->data + p.files[1]->data + p.files[2]->data;
        std::unique_ptr<IFile> x(new_fixed_size_linear_file(unit, p.data(), 3, true));
        ASSERT_TRUE(x);
        expect_reads_match(x.get(), image);
        EXPECT_EQ((off_t)image.size() - 1, x->lseek(-1, SEEK_END));
    }
}

TEST(XFile, StripeFileDealsStripesRoundRobin) {
    const uint64_t stripe = 512;
    parts p({4096, 4096, 4096});
    std::string image;
    for (uint64_t s = 0; s < 8; s++)
        for (auto f : p.files) image += f->data.substr(s * stripe, stripe);
    std::unique_ptr<IFile> x(new_stripe_file(stripe, p.data(), 3, true));
    ASSERT_TRUE(x);
    struct stat st;
    ASSERT_EQ(0, x->fstat(&st));
    EXPECT_EQ(3 * 4096, st.st_size);
    expect_reads_match(x.get(), image);
    std::string w = pattern(1500, 5);
    ASSERT_EQ(1500, x->pwrite(w.data(), w.size(), 700));
    image.replace(700, 1500, w);
    expect_reads_match(x.get(), image);
}

TEST(XFile, BadPartsAreRejectedAndLeftToTheCaller) {
    parts p({1024, 2048});
    EXPECT_EQ(nullptr, new_stripe_file(512, p.data(), 2, true));  // unequal sizes
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_stripe_file(500, p.data(), 2, true));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_stripe_file(4096, p.data(), 1, true));  // not a multiple
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_linear_file(p.data(), 0));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_linear_file(nullptr, 2));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_fixed_size_linear_file(0, p.data(), 2));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_fixed_size_linear_file(1ull << 62, p.data(), 2));  // past 2^63
    EXPECT_EQ(EINVAL, errno);
    IFile* with_null[] = {p.ptrs[0], nullptr};
    EXPECT_EQ(nullptr, new_linear_file(with_null, 2, true));
    EXPECT_EQ(EINVAL, errno);
    // The failed calls deleted nothing: the parts still work.
    char c;
    EXPECT_EQ(1, p.files[1]->pread(&c, 1, 0));
    p.release();
}

TEST(XFile, WithoutOwnershipThePartsStay) {
    parts p({100, 100});
    {
        std::unique_ptr<IFile> x(new_linear_file(p.data(), 2, false));
        ASSERT_TRUE(x);
        EXPECT_EQ(0, x->close());
        EXPECT_EQ(0, p.files[0]->closes);  // not ours to close
    }
    EXPECT_EQ(100u, p.files[1]->data.size());
    p.release();
}

TEST(XFile, AShortOrFailingPartEndsTheRequestWithTheBytesDone) {
    parts p({1000, 1000, 1000});
    std::string image = p.files[0]->data + p.files[1]->data + p.files[2]->data;
    std::unique_ptr<IFile> x(new_fixed_size_linear_file(1000, p.data(), 3, true));
    p.files[1]->max_io = 300;
    std::string buf(2500, '\0');
    EXPECT_EQ(1300, x->pread(&buf[0], buf.size(), 0));  // Photon: -1, data lost
    EXPECT_EQ(image.substr(0, 1300), buf.substr(0, 1300));
    p.files[0]->fail_next = 1;
    EXPECT_EQ(-1, x->pread(&buf[0], 10, 0));
    EXPECT_EQ(EIO, errno);
    p.files[2]->fail_next = 1;
    EXPECT_EQ(-1, x->fsync());  // Photon: 0
    EXPECT_EQ(0, x->fsync());
    EXPECT_EQ(-1, x->ftruncate(0));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(nullptr, x->filesystem());
    EXPECT_EQ(p.files[1], x->get_underlay_object(1));
}
