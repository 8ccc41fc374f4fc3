// File data: reads, writes, truncation and fallocate, each through an
// ext2_file_t opened for the one call. A handle kept open across calls would
// cache its own copy of the inode, which a second open file or a path-based
// truncate of the same inode would then overwrite.
#include <fcntl.h>
#include <linux/falloc.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "ext_fs.h"

namespace photon {
namespace fs {
namespace extfs {
namespace {

constexpr size_t kMaxChunk = 64u << 20;  // ext2fs_file_read/write take an unsigned int

struct file_handle {
    ext2_file_t f = nullptr;
    errcode_t open(ext2_filsys fs, ext2_ino_t ino, int flags) {
        return ext2fs_file_open(fs, ino, flags, &f);
    }
    errcode_t close() {
        errcode_t err = f ? ext2fs_file_close(f) : 0;
        f = nullptr;
        return err;
    }
    ~file_handle() { close(); }
};

}  // namespace

ssize_t ext_filesystem::read_locked(ext2_ino_t ino, void* buf, size_t count, off_t offset) {
    if (offset < 0) return errno = EINVAL, -1;
    file_handle h;
    errcode_t err = h.open(fs_, ino, 0);
    if (!err) err = ext2fs_file_llseek(h.f, offset, EXT2_SEEK_SET, nullptr);
    size_t done = 0;
    while (!err && done < count) {
        unsigned int got = 0;
        err = ext2fs_file_read(h.f, (char*)buf + done, std::min(count - done, kMaxChunk), &got);
        if (got == 0) break;
        done += got;
    }
    errcode_t cerr = h.close();
    if (!err) err = cerr;
    if (err && done == 0) return fail(err);
    return done;
}

ssize_t ext_filesystem::write_locked(ext2_ino_t ino, const void* buf, size_t count, off_t offset,
                                     bool append) {
    if (offset < 0 && !append) return errno = EINVAL, -1;
    if (!writable()) return errno = EROFS, -1;
    file_handle h;
    errcode_t err = h.open(fs_, ino, EXT2_FILE_WRITE);
    if (err) return fail(err);
    if (append) offset = (off_t)ext2fs_file_get_size(h.f);
    err = ext2fs_file_llseek(h.f, offset, EXT2_SEEK_SET, nullptr);
    size_t done = 0;
    while (!err && done < count) {
        unsigned int put = 0;
        err = ext2fs_file_write(h.f, (const char*)buf + done, std::min(count - done, kMaxChunk),
                                &put);
        if (put == 0) break;
        done += put;
    }
    errcode_t cerr = h.close();
    if (!err) err = cerr;
    if (done > 0 || count == 0) {
        if (touch(ino, kMtime | kCtime) < 0 && !err) return -1;
    }
    if (err && done == 0) return fail(err);
    return done;
}

int ext_filesystem::truncate_locked(ext2_ino_t ino, off_t length) {
    if (length < 0) return errno = EINVAL, -1;
    if (!writable()) return errno = EROFS, -1;
    file_handle h;
    errcode_t err = h.open(fs_, ino, EXT2_FILE_WRITE);
    if (!err) err = ext2fs_file_set_size2(h.f, (ext2_off64_t)length);
    errcode_t cerr = h.close();
    if (!err) err = cerr;
    if (err) return fail(err);
    return touch(ino, kMtime | kCtime);
}

int ext_filesystem::fallocate_locked(ext2_ino_t ino, int mode, off_t offset, off_t len) {
    if (offset < 0 || len <= 0) return errno = EINVAL, -1;
    if (!writable()) return errno = EROFS, -1;
    ext2_inode_large inode;
    errcode_t err = read_inode(fs_, ino, &inode);
    if (err) return fail(err);
    if (!LINUX_S_ISREG(inode.i_mode)) return errno = ENODEV, -1;
    uint64_t bs = fs_->blocksize, end = (uint64_t)offset + (uint64_t)len;
    uint64_t size = EXT2_I_SIZE(&inode);
    if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
        if ((uint64_t)offset >= size) return 0;
        end = std::min(end, size);
        // Whole blocks are freed; the partial edges are written as zeros.
        uint64_t first = (offset + bs - 1) / bs, last = end / bs;  // [first, last) freed
        if (first < last) {
            err = ext2fs_punch(fs_, ino, reinterpret_cast<ext2_inode*>(&inode), nullptr, first,
                               last - 1);
            if (err) return fail(err);
        }
        std::vector<char> zeros(bs, 0);
        auto zero = [&](uint64_t from, uint64_t to) -> int {
            for (uint64_t at = from; at < to;) {
                size_t n = std::min<uint64_t>(to - at, bs);
                if (write_locked(ino, zeros.data(), n, at, false) < 0) return -1;
                at += n;
            }
            return 0;
        };
        if (first >= last) return zero(offset, end);
        if (zero(offset, first * bs) < 0 || zero(last * bs, end) < 0) return -1;
        return touch(ino, kMtime | kCtime);
    }
    if (mode != 0 && mode != FALLOC_FL_KEEP_SIZE) return errno = EOPNOTSUPP, -1;
    if (!(inode.i_flags & EXT4_EXTENTS_FL)) return errno = EOPNOTSUPP, -1;
    uint64_t first = offset / bs, last = (end + bs - 1) / bs;
    // Unwritten extents: they read as zeros until written, as the kernel's do.
    err = ext2fs_fallocate(fs_, EXT2_FALLOCATE_FORCE_UNINIT, ino,
                           reinterpret_cast<ext2_inode*>(&inode), ~0ULL, first, last - first);
    if (!err) err = write_inode(fs_, ino, &inode);  // the extent tree's root lives in it
    if (err) return fail(err);
    if (!(mode & FALLOC_FL_KEEP_SIZE) && end > size) return truncate_locked(ino, (off_t)end);
    return touch(ino, kCtime);
}

}  // namespace extfs
}  // namespace fs
}  // namespace photon
