#include "block_cache.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace photon {
namespace fs {
namespace extfs {

block_cache::block_cache(IFile* file, uint32_t capacity, uint32_t block_size)
    : file_(file), block_size_(block_size) {
    if (block_size < 4096 || (block_size & (block_size - 1)) || capacity < block_size ||
        capacity % block_size) {
        return;
    }
    struct stat st;
    // A file that cannot tell its size: reads past its end are zeros, as
    // holes are; libext2fs never asks for those on a sound image.
    size_ = file->fstat(&st) == 0 ? st.st_size : (off_t)(LLONG_MAX / 2);
    max_blocks_ = capacity / block_size;
}

block_cache::~block_cache() {
    for (auto& b : lru_) free(b.data);
}

block_cache::block* block_cache::get(uint64_t index) {
    auto it = map_.find(index);
    if (it != map_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        return &lru_.front();
    }
    if (map_.size() >= max_blocks_) {
        block& victim = lru_.back();
        if (write_back(&victim) < 0) return nullptr;
        map_.erase(victim.index);
        free(victim.data);
        lru_.pop_back();
    }
    void* data = nullptr;
    if (posix_memalign(&data, 4096, block_size_)) return errno = ENOMEM, nullptr;
    off_t off = (off_t)(index * block_size_);
    size_t want = off >= size_ ? 0 : (size_t)std::min<off_t>(block_size_, size_ - off);
    size_t got = 0;
    while (got < want) {
        ssize_t n = file_->pread((char*)data + got, want - got, off + got);
        if (n < 0) {
            free(data);
            return nullptr;
        }
        if (n == 0) break;  // shorter than fstat said: the rest reads as zeros
        got += n;
    }
    memset((char*)data + got, 0, block_size_ - got);
    lru_.push_front(block{index, (char*)data, 0, 0});
    map_[index] = lru_.begin();
    return &lru_.front();
}

int block_cache::write_back(block* b) {
    off_t off = (off_t)(b->index * block_size_);
    // Whole 4 KiB sectors from an aligned buffer, so that O_DIRECT files work
    // unadapted; not past the file's end (as far as the writes went).
    if (b->dirty_lo < b->dirty_hi) {
        uint32_t lo = b->dirty_lo & ~4095u,
                 hi = std::min(block_size_, (b->dirty_hi + 4095) & ~4095u);
        if (off + (off_t)hi > size_) hi = std::max<uint32_t>(b->dirty_hi, (uint32_t)(size_ - off));
        b->dirty_lo = lo;
        b->dirty_hi = hi;
    }
    while (b->dirty_lo < b->dirty_hi) {
        ssize_t n =
            file_->pwrite(b->data + b->dirty_lo, b->dirty_hi - b->dirty_lo, off + b->dirty_lo);
        if (n < 0) return -1;
        if (n == 0) return errno = EIO, -1;
        b->dirty_lo += n;
    }
    b->dirty_lo = b->dirty_hi = 0;
    return 0;
}

// Calls f(block, offset in it, bytes, bytes done so far) for each block of [offset, offset +
// count); returns the bytes covered, or -1 if the first block cannot be had.
template <typename F>
ssize_t block_cache::each_block(size_t count, off_t offset, F f) {
    size_t done = 0;
    while (done < count) {
        uint64_t pos = offset + done;
        block* b = get(pos / block_size_);
        if (!b) return done ? (ssize_t)done : -1;
        uint32_t in = pos % block_size_;
        size_t n = std::min<size_t>(count - done, block_size_ - in);
        f(b, in, n, done);
        done += n;
    }
    return done;
}

ssize_t block_cache::pread(void* buf, size_t count, off_t offset) {
    if (offset < 0) return errno = EINVAL, -1;
    if (offset >= size_) return 0;
    count = (size_t)std::min<off_t>((off_t)count, size_ - offset);
    return each_block(count, offset, [&](block* b, uint32_t in, size_t n, size_t done) {
        memcpy((char*)buf + done, b->data + in, n);
    });
}

ssize_t block_cache::pwrite(const void* buf, size_t count, off_t offset) {
    if (offset < 0) return errno = EINVAL, -1;
    return each_block(count, offset, [&](block* b, uint32_t in, size_t n, size_t done) {
        memcpy(b->data + in, (const char*)buf + done, n);
        if (b->dirty_lo == b->dirty_hi) {
            b->dirty_lo = in;
            b->dirty_hi = in + n;
        } else {
            b->dirty_lo = std::min<uint32_t>(b->dirty_lo, in);
            b->dirty_hi = std::max<uint32_t>(b->dirty_hi, in + n);
        }
        off_t end = offset + (off_t)(done + n);
        if (end > size_) size_ = end;
    });
}

bool block_cache::dirty() const {
    for (auto& b : lru_) {
        if (b.dirty_lo < b.dirty_hi) return true;
    }
    return false;
}

int block_cache::flush() {
    for (auto& b : lru_) {
        if (write_back(&b) < 0) return -1;
    }
    return 0;
}

}  // namespace extfs
}  // namespace fs
}  // namespace photon
