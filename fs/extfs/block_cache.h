// A write-back cache of an IFile's bytes in aligned blocks, least recently
// used first out: what new_extfs(file, true) puts under libext2fs, whose
// metadata I/O is a stream of small reads and writes. Not thread-safe: the
// file system's mutex serializes its users.
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include <list>
#include <unordered_map>

#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {
namespace extfs {

class block_cache {
public:
    // `capacity` bytes in blocks of `block_size` (a power of 2 dividing it);
    // check ok() after construction.
    block_cache(IFile* file, uint32_t capacity, uint32_t block_size);
    ~block_cache();  // drops what is not flushed: flush() first
    block_cache(const block_cache&) = delete;
    block_cache& operator=(const block_cache&) = delete;

    bool ok() const { return max_blocks_ > 0; }
    // As IFile's: short at the file's end, -1 and errno.
    ssize_t pread(void* buf, size_t count, off_t offset);
    ssize_t pwrite(const void* buf, size_t count, off_t offset);
    // Writes every dirty block back (no fdatasync). 0, or -1 and errno.
    int flush();
    bool dirty() const;

private:
    struct block {
        uint64_t index;
        char* data;
        uint32_t dirty_lo, dirty_hi;  // the dirty byte range, empty if equal
    };
    // The block `index`, loaded if absent and made most recent; nullptr on error.
    block* get(uint64_t index);
    template <typename F>
    ssize_t each_block(size_t count, off_t offset, F f);
    int write_back(block* b);

    IFile* file_;
    uint32_t block_size_;
    size_t max_blocks_ = 0;
    off_t size_;            // the file's size as the cache sees it
    std::list<block> lru_;  // most recent first
    std::unordered_map<uint64_t, std::list<block>::iterator> map_;
};

}  // namespace extfs
}  // namespace fs
}  // namespace photon
