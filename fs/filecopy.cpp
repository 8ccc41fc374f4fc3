// filecopy (filecopy.h): read a block, write it all, until the input ends.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/fs/filecopy.h>
#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {
namespace {

constexpr size_t kAlign = 4096;

struct free_deleter {
    void operator()(void* p) const { free(p); }
};

// f() until it returns >= 0 or fails `retries + 1` times in a row.
template <typename F>
ssize_t with_retries(int retries, F f) {
    for (;;) {
        ssize_t n = f();
        if (n >= 0 || retries-- <= 0) return n;
    }
}

// Writes buf[0, len) at offset, resuming after short writes; pads to
// kAlign when the output rejects an unaligned length (O_DIRECT). 0, or -1.
int write_block(IFile* out, char* buf, size_t len, size_t cap, off_t offset, int retries,
                bool* padded) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = with_retries(
            retries, [&] { return out->pwrite(buf + done, len - done, offset + done); });
        if (n < 0 && errno == EINVAL && done == 0 && len % kAlign && align_up(len, kAlign) <= cap) {
            size_t padded_len = align_up(len, kAlign);
            memset(buf + len, 0, padded_len - len);
            n = with_retries(retries, [&] { return out->pwrite(buf, padded_len, offset); });
            if (n == (ssize_t)padded_len) {
                *padded = true;
                return 0;
            }
        }
        if (n < 0) LOG_ERRNO_RETURN(0, -1, "filecopy: failed to write at ", offset + done);
        if (n == 0)
            LOG_ERROR_RETURN(EIO, -1, "filecopy: the output took no bytes at ", offset + done);
        done += n;
    }
    return 0;
}

// After a short read, a read that fails with EINVAL may be an O_DIRECT input
// refusing the unaligned offset at which it ended: the end, if its size says so.
bool ended_unaligned(IFile* in, off_t offset) {
    int e = errno;
    struct stat st;
    bool end = e == EINVAL && in->fstat(&st) == 0 && offset >= st.st_size;
    errno = e;
    return end;
}

}  // namespace

ssize_t filecopy(IFile* infile, IFile* outfile, size_t bs, int retry_limit) {
    if (!infile || !outfile || bs == 0) LOG_ERROR_RETURN(EINVAL, -1, "filecopy: bad arguments");
    size_t cap = align_up(bs, kAlign);
    void* p = nullptr;
    if (cap < bs || posix_memalign(&p, kAlign, cap))
        LOG_ERROR_RETURN(ENOMEM, -1, "filecopy: cannot allocate a buffer of ", bs);
    std::unique_ptr<char, free_deleter> buf((char*)p);
    off_t offset = 0;
    bool padded = false, short_read = false;
    for (;;) {
        ssize_t n = with_retries(retry_limit, [&] { return infile->pread(buf.get(), bs, offset); });
        if (n < 0 && short_read && ended_unaligned(infile, offset)) break;
        if (n < 0) LOG_ERRNO_RETURN(0, -1, "filecopy: failed to read at ", offset);
        if (n == 0) break;
        short_read = (size_t)n < bs;
        if (write_block(outfile, buf.get(), n, cap, offset, retry_limit, &padded) < 0) return -1;
        offset += n;
    }
    // The output ends where the input did: past a padded tail, or an older
    // and longer content. Only a padded tail makes its failure fatal.
    if (outfile->ftruncate(offset) < 0 && padded)
        LOG_ERRNO_RETURN(0, -1, "filecopy: cannot truncate the padded output to ", offset);
    return offset;
}

}  // namespace fs
}  // namespace photon
