// The local file adaptor: one class template over the I/O engines, which
// differ only in how data moves (pread/pwrite, their vector forms, fsync).
// Metadata calls are plain syscalls: they rarely wait on the device.
#include "local_file.h"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <photon/common/alog.h>
#include <photon/common/fault_injection.h>
#include <photon/fs/fiemap.h>
#include <photon/fs/localfs.h>
#include <photon/io/aio-wrapper.h>
#include <photon/io/iouring-wrapper.h>
#include <photon/thread/thread.h>

namespace photon {
namespace fs {
namespace {

// Plain syscalls; the yield first lets other coroutines run, the syscall
// itself then blocks the vCPU (as PhotonLibOS's psync).
struct psync_engine {
    static constexpr bool has_stream_io = true;
    static ssize_t pread(int fd, void* buf, size_t n, off_t off) {
        thread_yield();
        return ::pread(fd, buf, n, off);
    }
    static ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
        thread_yield();
        return ::pwrite(fd, buf, n, off);
    }
    static ssize_t preadv2(int fd, const iovec* iov, int cnt, off_t off, int flags) {
        thread_yield();
        return ::preadv2(fd, iov, cnt, off, flags);
    }
    static ssize_t pwritev2(int fd, const iovec* iov, int cnt, off_t off, int flags) {
        thread_yield();
        return ::pwritev2(fd, iov, cnt, off, flags);
    }
    static ssize_t read(int fd, void* buf, size_t n) {
        thread_yield();
        return ::read(fd, buf, n);
    }
    static ssize_t write(int fd, const void* buf, size_t n) {
        thread_yield();
        return ::write(fd, buf, n);
    }
    static ssize_t readv(int fd, const iovec* iov, int cnt) {
        thread_yield();
        return ::readv(fd, iov, cnt);
    }
    static ssize_t writev(int fd, const iovec* iov, int cnt) {
        thread_yield();
        return ::writev(fd, iov, cnt);
    }
    static int fsync(int fd) { return thread_yield(), ::fsync(fd); }
    static int fdatasync(int fd) { return thread_yield(), ::fdatasync(fd); }
};

struct iouring_engine {
    static constexpr bool has_stream_io = true;
    static ssize_t pread(int fd, void* buf, size_t n, off_t off) {
        return iouring_pread(fd, buf, n, off);
    }
    static ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
        return iouring_pwrite(fd, buf, n, off);
    }
    static ssize_t preadv2(int fd, const iovec* iov, int cnt, off_t off, int flags) {
        return iouring_preadv(fd, iov, cnt, off, (uint32_t)flags);
    }
    static ssize_t pwritev2(int fd, const iovec* iov, int cnt, off_t off, int flags) {
        return iouring_pwritev(fd, iov, cnt, off, (uint32_t)flags);
    }
    static ssize_t read(int fd, void* buf, size_t n) { return iouring_read(fd, buf, n); }
    static ssize_t write(int fd, const void* buf, size_t n) { return iouring_write(fd, buf, n); }
    static ssize_t readv(int fd, const iovec* iov, int cnt) { return iouring_readv(fd, iov, cnt); }
    static ssize_t writev(int fd, const iovec* iov, int cnt) {
        return iouring_writev(fd, iov, cnt);
    }
    static int fsync(int fd) { return iouring_fsync(fd); }
    static int fdatasync(int fd) { return iouring_fdatasync(fd); }
};

// libaio and posixaio: no RWF_* flags, and stream I/O at the file position.
template <typename Aio>
struct aio_engine : Aio {
    static constexpr bool has_stream_io = false;
    static ssize_t preadv2(int fd, const iovec* iov, int cnt, off_t off, int flags) {
        if (flags) return errno = EOPNOTSUPP, -1;
        return Aio::preadv(fd, iov, cnt, off);
    }
    static ssize_t pwritev2(int fd, const iovec* iov, int cnt, off_t off, int flags) {
        if (flags) return errno = EOPNOTSUPP, -1;
        return Aio::pwritev(fd, iov, cnt, off);
    }
};

// An injected EIO (fault_injection.h) for a read, write or sync: true, errno set.
inline bool injected_eio() {
    if (!fault::hit(fault::IO_ERROR)) return false;
    errno = EIO;
    return true;
}

template <typename Engine>
class local_file : public IFile, public IFileXAttr {
public:
    local_file(int fd, IFileSystem* fs) : fd_(fd), fs_(fs) {}
    ~local_file() override { close(); }

    IFileSystem* filesystem() override { return fs_; }
    Object* get_underlay_object(int) override { return (Object*)(intptr_t)fd_; }
    int close() override {
        if (fd_ < 0) return 0;
        int r = ::close(fd_);
        fd_ = -1;
        return r;
    }

    ssize_t pread(void* buf, size_t n, off_t off) override {
        if (injected_eio()) return -1;
        return Engine::pread(fd_, buf, n, off);
    }
    ssize_t pwrite(const void* buf, size_t n, off_t off) override {
        if (injected_eio()) return -1;
        return Engine::pwrite(fd_, buf, n, off);
    }
    ssize_t preadv(const iovec* iov, int cnt, off_t off) override {
        return cnt == 1 ? pread(iov->iov_base, iov->iov_len, off) : preadv2(iov, cnt, off, 0);
    }
    ssize_t pwritev(const iovec* iov, int cnt, off_t off) override {
        return cnt == 1 ? pwrite(iov->iov_base, iov->iov_len, off) : pwritev2(iov, cnt, off, 0);
    }
    ssize_t preadv2(const iovec* iov, int cnt, off_t off, int flags) override {
        if (injected_eio()) return -1;
        return Engine::preadv2(fd_, iov, cnt, off, flags);
    }
    ssize_t pwritev2(const iovec* iov, int cnt, off_t off, int flags) override {
        if (injected_eio()) return -1;
        return Engine::pwritev2(fd_, iov, cnt, off, flags);
    }

    ssize_t read(void* buf, size_t n) override {
        if (injected_eio()) return -1;
        if constexpr (Engine::has_stream_io) return Engine::read(fd_, buf, n);
        iovec v = {buf, n};
        return at_position(&v, 1, false);
    }
    ssize_t write(const void* buf, size_t n) override {
        if (injected_eio()) return -1;
        if constexpr (Engine::has_stream_io) return Engine::write(fd_, buf, n);
        iovec v = {const_cast<void*>(buf), n};
        return at_position(&v, 1, true);
    }
    ssize_t readv(const iovec* iov, int cnt) override {
        if (injected_eio()) return -1;
        if constexpr (Engine::has_stream_io) return Engine::readv(fd_, iov, cnt);
        return at_position(iov, cnt, false);
    }
    ssize_t writev(const iovec* iov, int cnt) override {
        if (injected_eio()) return -1;
        if constexpr (Engine::has_stream_io) return Engine::writev(fd_, iov, cnt);
        return at_position(iov, cnt, true);
    }

    off_t lseek(off_t off, int whence) override { return ::lseek(fd_, off, whence); }
    int fsync() override { return injected_eio() ? -1 : Engine::fsync(fd_); }
    int fdatasync() override { return injected_eio() ? -1 : Engine::fdatasync(fd_); }
    int fchmod(mode_t mode) override { return ::fchmod(fd_, mode); }
    int fchown(uid_t uid, gid_t gid) override { return ::fchown(fd_, uid, gid); }
    int fstat(struct stat* st) override { return ::fstat(fd_, st); }
    int ftruncate(off_t len) override { return ::ftruncate(fd_, len); }
    int fadvise(off_t off, off_t len, int advice) override {
        int r = ::posix_fadvise(fd_, off, len, advice);
        return r ? (errno = r, -1) : 0;
    }
    int sync_file_range(off_t off, off_t n, unsigned int flags) override {
        return ::sync_file_range(fd_, off, n, flags);
    }
    int fallocate(int mode, off_t off, off_t len) override {
        return ::fallocate(fd_, mode, off, len);
    }
    // photon::fs::fiemap has the kernel's layout (fiemap.h), so it goes as it is.
    static_assert(sizeof(struct fiemap) == 32, "the kernel's struct fiemap header");
    int fiemap(struct fiemap* map) override { return ::ioctl(fd_, FS_IOC_FIEMAP, map); }

    ssize_t fgetxattr(const char* name, void* value, size_t size) override {
        return ::fgetxattr(fd_, name, value, size);
    }
    ssize_t flistxattr(char* list, size_t size) override { return ::flistxattr(fd_, list, size); }
    int fsetxattr(const char* name, const void* value, size_t size, int flags) override {
        return ::fsetxattr(fd_, name, value, size, flags);
    }
    int fremovexattr(const char* name) override { return ::fremovexattr(fd_, name); }

private:
    // read/write at the file position for engines that only do positional
    // I/O (not atomic against other users of the position).
    ssize_t at_position(const iovec* iov, int cnt, bool is_write) {
        off_t pos = ::lseek(fd_, 0, SEEK_CUR);
        if (pos < 0) return -1;
        ssize_t n = is_write ? pwritev(iov, cnt, pos) : preadv(iov, cnt, pos);
        if (n > 0 && ::lseek(fd_, pos + n, SEEK_SET) < 0) return -1;
        return n;
    }

    int fd_;
    IFileSystem* fs_;
};

int ensure_direct(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || ((fl & O_DIRECT) == 0 && fcntl(fd, F_SETFL, fl | O_DIRECT) < 0)) {
        LOG_DEBUG("localfs: cannot switch fd ", fd, " to O_DIRECT for libaio: ", ERRNO());
        return -1;
    }
    return 0;
}

}  // namespace

int local_open_flags(int flags, int io_engine) {
    return io_engine == ioengine_libaio ? (flags | O_DIRECT) : flags;
}

IFile* new_local_file(int fd, int io_engine, IFileSystem* fs) {
    if (fd < 0) LOG_ERROR_RETURN(EINVAL, nullptr, "localfs: bad fd ", fd);
    switch (io_engine) {
        case ioengine_libaio:
            if (ensure_direct(fd) < 0) return nullptr;
            return new local_file<aio_engine<libaio>>(fd, fs);
        case ioengine_posixaio:
            return new local_file<aio_engine<posixaio>>(fd, fs);
        case ioengine_iouring:
            return new local_file<iouring_engine>(fd, fs);
        default:
            return new local_file<psync_engine>(fd, fs);
    }
}

extern "C" IFile* new_localfile_adaptor(int fd, int io_engine_type) {
    return new_local_file(fd, io_engine_type, nullptr);
}

extern "C" IFile* open_localfile_adaptor(const char* filename, int flags, mode_t mode,
                                         int io_engine_type) {
    int fd = ::open(filename, local_open_flags(flags, io_engine_type), mode);
    if (fd < 0) {  // an answer the caller handles, as open(2)'s: DEBUG only
        LOG_DEBUG("localfs: cannot open ", filename, ": ", ERRNO());
        return nullptr;
    }
    IFile* f = new_local_file(fd, io_engine_type, nullptr);
    if (!f) ::close(fd);
    return f;
}

}  // namespace fs
}  // namespace photon
