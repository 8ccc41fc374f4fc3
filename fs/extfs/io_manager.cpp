// The io manager that carries libext2fs's block I/O to an IFile: positional
// reads and writes of whole blocks (or byte counts, for a negative count),
// flush as fdatasync. The IFile may yield the coroutine: libext2fs never
// notices, and the file system's mutex keeps other callers out meanwhile.
#include <stdio.h>
#include <string.h>

#include <new>

#include "block_cache.h"
#include "extfs_impl.h"

namespace photon {
namespace fs {
namespace extfs {
namespace {

constexpr const char kPrefix[] = "photon-ifile:";

struct channel_data {
    IFile* file;
    block_cache* cache;
};

channel_data* data_of(io_channel ch) { return static_cast<channel_data*>(ch->private_data); }

errcode_t io_flush(io_channel ch);

errcode_t io_open(const char* name, int flags, io_channel* channel) {
    const channel_target* target = nullptr;
    if (!name || strncmp(name, kPrefix, sizeof(kPrefix) - 1) ||
        sscanf(name + sizeof(kPrefix) - 1, "%p", (void**)&target) != 1 || !target) {
        return EXT2_ET_BAD_DEVICE_NAME;
    }
    io_channel ch = nullptr;
    errcode_t err = ext2fs_get_memzero(sizeof(*ch), &ch);
    if (err) return err;
    err = ext2fs_get_mem(strlen(name) + 1, &ch->name);
    auto* data = new (std::nothrow) channel_data{target->file, target->cache};
    if (err || !data) {
        ext2fs_free_mem(&ch->name);
        ext2fs_free_mem(&ch);
        delete data;
        return err ? err : EXT2_ET_NO_MEMORY;
    }
    strcpy(ch->name, name);
    ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
    ch->manager = ifile_io_manager();
    ch->block_size = 1024;
    ch->refcount = 1;
    ch->private_data = data;
    (void)flags;  // read-only or not, the IFile's own open mode decides
    *channel = ch;
    return 0;
}

errcode_t io_close(io_channel ch) {
    if (--ch->refcount > 0) return 0;
    // Data blocks overwritten in place dirty no metadata, so ext2fs_close may
    // not flush: what the cache holds goes out here.
    auto* d = data_of(ch);
    errcode_t err = 0;
    if (d->cache && d->cache->dirty()) err = io_flush(ch);
    delete d;
    ext2fs_free_mem(&ch->name);
    ext2fs_free_mem(&ch);
    return err;
}

errcode_t io_set_blksize(io_channel ch, int blksize) {
    ch->block_size = blksize;
    return 0;
}

size_t byte_count(io_channel ch, int count) {
    return count < 0 ? (size_t) - (long)count : (size_t)count * ch->block_size;
}

errcode_t io_read64(io_channel ch, unsigned long long block, int count, void* buf) {
    auto* d = data_of(ch);
    size_t size = byte_count(ch, count), done = 0;
    off_t off = (off_t)(block * ch->block_size);
    while (done < size) {
        ssize_t n = d->cache ? d->cache->pread((char*)buf + done, size - done, off + done)
                             : d->file->pread((char*)buf + done, size - done, off + done);
        if (n < 0) return errno ? errno : EIO;
        if (n == 0) break;
        done += n;
    }
    if (done == size) return 0;
    memset((char*)buf + done, 0, size - done);  // as unix_io: zeros after a short read
    return EXT2_ET_SHORT_READ;
}

errcode_t io_write64(io_channel ch, unsigned long long block, int count, const void* buf) {
    auto* d = data_of(ch);
    size_t size = byte_count(ch, count), done = 0;
    off_t off = (off_t)(block * ch->block_size);
    while (done < size) {
        ssize_t n = d->cache ? d->cache->pwrite((const char*)buf + done, size - done, off + done)
                             : d->file->pwrite((const char*)buf + done, size - done, off + done);
        if (n < 0) return errno ? errno : EIO;
        if (n == 0) return EXT2_ET_SHORT_WRITE;
        done += n;
    }
    return 0;
}

errcode_t io_read(io_channel ch, unsigned long block, int count, void* buf) {
    return io_read64(ch, block, count, buf);
}

errcode_t io_write(io_channel ch, unsigned long block, int count, const void* buf) {
    return io_write64(ch, block, count, buf);
}

errcode_t io_flush(io_channel ch) {
    auto* d = data_of(ch);
    if (d->cache && d->cache->flush() < 0) return errno ? errno : EIO;
    // Files that cannot sync (read-only HTTP, memory) have nothing to sync.
    if (d->file->fdatasync() < 0 && errno != ENOSYS && errno != EINVAL && errno != EROFS) {
        return errno ? errno : EIO;
    }
    return 0;
}

errcode_t io_set_option(io_channel, const char*, const char*) { return EXT2_ET_INVALID_ARGUMENT; }

struct_io_manager make_manager() {
    struct_io_manager m;
    memset(&m, 0, sizeof(m));
    m.magic = EXT2_ET_MAGIC_IO_MANAGER;
    m.name = "photon IFile I/O manager";
    m.open = io_open;
    m.close = io_close;
    m.set_blksize = io_set_blksize;
    m.read_blk = io_read;
    m.write_blk = io_write;
    m.flush = io_flush;
    m.set_option = io_set_option;
    m.read_blk64 = io_read64;
    m.write_blk64 = io_write64;
    // discard and zeroout stay null: libext2fs then writes zeros itself.
    return m;
}

}  // namespace

io_manager ifile_io_manager() {
    static struct_io_manager manager = make_manager();
    return &manager;
}

std::string channel_name(const channel_target* target) {
    char buf[64];
    snprintf(buf, sizeof(buf), "%s%p", kPrefix, (const void*)target);
    return buf;
}

}  // namespace extfs
}  // namespace fs
}  // namespace photon
