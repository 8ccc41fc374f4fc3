// Built instead of io/libaio_*.cpp when libaio is missing
// (PHOTON_ENABLE_LIBAIO=OFF): every libaio entry point fails with ENOSYS.
#include <cerrno>

#include <photon/io/aio-wrapper.h>

namespace {
template <typename R = int>
R enosys() {
    errno = ENOSYS;
    return (R)-1;
}
}  // namespace

extern "C" {
int libaio_wrapper_init(int) { return enosys(); }
int libaio_wrapper_fini() { return enosys(); }
ssize_t libaio_pread(int, void*, size_t, off_t) { return enosys<ssize_t>(); }
ssize_t libaio_preadv(int, const iovec*, int, off_t) { return enosys<ssize_t>(); }
ssize_t libaio_pwrite(int, const void*, size_t, off_t) { return enosys<ssize_t>(); }
ssize_t libaio_pwritev(int, const iovec*, int, off_t) { return enosys<ssize_t>(); }
}
