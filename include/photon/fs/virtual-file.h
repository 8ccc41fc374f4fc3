// VirtualFile: a base for files made in software, as PhotonLibOS declares it.
// It keeps the file position (m_offset) and builds the rest of the data
// calls on the positioned ones: read/write on pread/pwrite at the position,
// pread on preadv and preadv on pread (through a bounce buffer for several
// iovecs), and likewise for writes. A derived class overrides at least one
// of pread / preadv (and pwrite / pwritev if writable); with neither the
// defaults would call each other forever. lseek(SEEK_END) asks fstat().
// VirtualReadOnlyFile also answers the write and metadata calls: ENOSYS.
// Calls yield if the derived class's do. One coroutine at a time per file.
//
// Differences from PhotonLibOS: doc/compat.md#fsvirtual-fileh
#pragma once

#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {

class VirtualFile : public IFile {
public:
    off_t lseek(off_t offset, int whence) override;
    ssize_t read(void* buf, size_t count) override;
    ssize_t readv(const struct iovec* iov, int iovcnt) override;
    ssize_t write(const void* buf, size_t count) override;
    ssize_t writev(const struct iovec* iov, int iovcnt) override;
    ssize_t pread(void* buf, size_t count, off_t offset) override;
    ssize_t pwrite(const void* buf, size_t count, off_t offset) override;
    ssize_t preadv(const struct iovec* iov, int iovcnt, off_t offset) override;
    ssize_t pwritev(const struct iovec* iov, int iovcnt, off_t offset) override;

protected:
    off_t m_offset = 0;

    // f over each iovec in turn: the bytes done (short if a part is), or -1
    // with errno if the first part fails.
    ssize_t piov_nocopy(FuncPIO f, const struct iovec* iov, int iovcnt, off_t offset);
    // f once over a bounce buffer holding all the iovecs (4 MiB at a time).
    ssize_t piov_copy(FuncPIO f, const struct iovec* iov, int iovcnt, off_t offset);
    ssize_t piov(FuncPIO f, const struct iovec* iov, int iovcnt, off_t offset) {
        return piov_copy(f, iov, iovcnt, offset);
    }

private:
    // pread or pwrite, called by name: f only selects.
    ssize_t pio(FuncPIO f, void* buf, size_t count, off_t offset);
    ssize_t advance(ssize_t n) {
        if (n > 0) m_offset += n;
        return n;
    }
};

// Even pwrite / pwritev need not be implemented.
class VirtualReadOnlyFile : public VirtualFile {
public:
    UNIMPLEMENTED(ssize_t pwrite(const void* /*buf*/, size_t /*count*/, off_t /*offset*/) override)
    UNIMPLEMENTED(ssize_t pwritev(const struct iovec* /*iov*/, int /*iovcnt*/, off_t /*offset*/)
                      override)
    UNIMPLEMENTED(int fsync() override)
    UNIMPLEMENTED(int fdatasync() override)
    UNIMPLEMENTED(int fchmod(mode_t /*mode*/) override)
    UNIMPLEMENTED(int fchown(uid_t /*owner*/, gid_t /*group*/) override)
    UNIMPLEMENTED(int ftruncate(off_t /*length*/) override)
    int close() override { return 0; }
};

}  // namespace fs
}  // namespace photon
