// VirtualFile's defaults: the position, and the data calls built on each
// other (see virtual-file.h).
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <photon/fs/virtual-file.h>

namespace photon {
namespace fs {
namespace {

constexpr size_t kBounceMax = 4UL << 20;  // bytes bounced per call of pread/pwrite
constexpr size_t kBounceAlign = 4096;     // enough for an O_DIRECT underlay

struct free_deleter {
    void operator()(void* p) const { free(p); }
};

size_t iov_sum(const struct iovec* iov, int iovcnt) {
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++) n += iov[i].iov_len;
    return n;
}

// Copies between the iovecs, from byte `skip` on, and a flat buffer.
void copy_out(const struct iovec* iov, int iovcnt, size_t skip, const char* src, size_t n) {
    for (int i = 0; i < iovcnt && n; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        size_t k = std::min(n, iov[i].iov_len - skip);
        memcpy((char*)iov[i].iov_base + skip, src, k);
        src += k, n -= k, skip = 0;
    }
}
void copy_in(const struct iovec* iov, int iovcnt, size_t skip, char* dst, size_t n) {
    for (int i = 0; i < iovcnt && n; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        size_t k = std::min(n, iov[i].iov_len - skip);
        memcpy(dst, (const char*)iov[i].iov_base + skip, k);
        dst += k, n -= k, skip = 0;
    }
}

}  // namespace

ssize_t VirtualFile::read(void* buf, size_t count) { return advance(pread(buf, count, m_offset)); }
ssize_t VirtualFile::readv(const struct iovec* iov, int iovcnt) {
    return advance(preadv(iov, iovcnt, m_offset));
}
ssize_t VirtualFile::write(const void* buf, size_t count) {
    return advance(pwrite(buf, count, m_offset));
}
ssize_t VirtualFile::writev(const struct iovec* iov, int iovcnt) {
    return advance(pwritev(iov, iovcnt, m_offset));
}

ssize_t VirtualFile::pread(void* buf, size_t count, off_t offset) {
    struct iovec v = {buf, count};
    return preadv(&v, 1, offset);
}
ssize_t VirtualFile::pwrite(const void* buf, size_t count, off_t offset) {
    struct iovec v = {const_cast<void*>(buf), count};
    return pwritev(&v, 1, offset);
}
ssize_t VirtualFile::preadv(const struct iovec* iov, int iovcnt, off_t offset) {
    return piov(_and_pread(), iov, iovcnt, offset);
}
ssize_t VirtualFile::pwritev(const struct iovec* iov, int iovcnt, off_t offset) {
    return piov(_and_pwrite(), iov, iovcnt, offset);
}

off_t VirtualFile::lseek(off_t offset, int whence) {
    off_t base;
    if (whence == SEEK_SET) {
        base = 0;
    } else if (whence == SEEK_CUR) {
        base = m_offset;
    } else if (whence == SEEK_END) {
        struct stat st;
        if (fstat(&st) < 0) return -1;
        base = st.st_size;
    } else {
        errno = EINVAL;
        return -1;
    }
    off_t pos;
    if (__builtin_add_overflow(base, offset, &pos)) {
        errno = offset > 0 ? EOVERFLOW : EINVAL;
        return -1;
    }
    if (pos < 0) {
        errno = EINVAL;
        return -1;
    }
    return m_offset = pos;
}

ssize_t VirtualFile::pio(FuncPIO f, void* buf, size_t count, off_t offset) {
    return is_readf(f) ? pread(buf, count, offset) : pwrite(buf, count, offset);
}

ssize_t VirtualFile::piov_nocopy(FuncPIO f, const struct iovec* iov, int iovcnt, off_t offset) {
    ssize_t done = 0;
    for (int i = 0; i < iovcnt; i++) {
        ssize_t n = pio(f, iov[i].iov_base, iov[i].iov_len, offset + done);
        if (n < 0) return done ? done : -1;
        done += n;
        if ((size_t)n < iov[i].iov_len) break;
    }
    return done;
}

ssize_t VirtualFile::piov_copy(FuncPIO f, const struct iovec* iov, int iovcnt, off_t offset) {
    if (iovcnt < 0) {
        errno = EINVAL;
        return -1;
    }
    if (iovcnt == 0) return 0;
    if (iovcnt == 1) return pio(f, iov[0].iov_base, iov[0].iov_len, offset);
    size_t total = iov_sum(iov, iovcnt);
    size_t chunk = std::min(total, kBounceMax);
    void* p = nullptr;
    if (posix_memalign(&p, kBounceAlign, chunk ? chunk : 1)) {
        errno = ENOMEM;
        return -1;
    }
    std::unique_ptr<char, free_deleter> buf((char*)p);
    size_t done = 0;
    while (done < total) {
        size_t want = std::min(chunk, total - done);
        if (!is_readf(f)) copy_in(iov, iovcnt, done, buf.get(), want);
        ssize_t n = pio(f, buf.get(), want, offset + done);
        if (n < 0) return done ? (ssize_t)done : -1;
        if (is_readf(f)) copy_out(iov, iovcnt, done, buf.get(), n);
        done += n;
        if ((size_t)n < want) break;
    }
    return done;
}

}  // namespace fs
}  // namespace photon
