// Built instead of io/iouring_*.cpp when liburing is missing
// (PHOTON_ENABLE_URING=OFF): every io_uring entry point fails with ENOSYS.
#include <photon/io/fd-events.h>
#include <photon/io/iouring-wrapper.h>

namespace photon {

namespace {
template <typename R = int>
R enosys() {
    errno = ENOSYS;
    return (R)-1;
}
}  // namespace

MasterEventEngine* new_iouring_master_engine(const iouring_args&) {
    return errno = ENOSYS, nullptr;
}
CascadingEventEngine* new_iouring_cascading_engine(const iouring_args&) {
    return errno = ENOSYS, nullptr;
}

ssize_t iouring_pread(int, void*, size_t, off_t, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_pwrite(int, const void*, size_t, off_t, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_preadv(int, const iovec*, int, off_t, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_pwritev(int, const iovec*, int, off_t, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_read(int, void*, size_t, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_write(int, const void*, size_t, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_readv(int, const iovec*, int, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_writev(int, const iovec*, int, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_send(int, const void*, size_t, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_sendmsg(int, const msghdr*, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_send_zc(int, const void*, size_t, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_sendmsg_zc(int, const msghdr*, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_recv(int, void*, size_t, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_recvmsg(int, msghdr*, uint64_t, Timeout, CascadingEventEngine*) {
    return enosys<ssize_t>();
}
ssize_t iouring_splice(int, int64_t, int, int64_t, unsigned int, uint64_t, Timeout,
                       CascadingEventEngine*) {
    return enosys<ssize_t>();
}
int iouring_connect(int, const sockaddr*, socklen_t, Timeout, CascadingEventEngine*) {
    return enosys();
}
int iouring_accept(int, sockaddr*, socklen_t*, Timeout, CascadingEventEngine*) { return enosys(); }
int iouring_fsync(int, Timeout, CascadingEventEngine*) { return enosys(); }
int iouring_fdatasync(int, Timeout, CascadingEventEngine*) { return enosys(); }
int iouring_open(const char*, int, mode_t, Timeout, CascadingEventEngine*) { return enosys(); }
int iouring_mkdir(const char*, mode_t, Timeout, CascadingEventEngine*) { return enosys(); }
int iouring_close(int, Timeout, CascadingEventEngine*) { return enosys(); }
int iouring_register_files(int, CascadingEventEngine*) { return enosys(); }
int iouring_unregister_files(int, CascadingEventEngine*) { return enosys(); }
bool iouring_register_files_enabled() { return false; }
ssize_t iouring_recv_more(int, void*, size_t, uint64_t, Timeout, bool* more) {
    *more = false;
    return enosys();
}

}  // namespace photon
