// State Threads' st_init and fd calls on photon (st.h): each call tries the
// non-blocking syscall and parks the calling coroutine on the vCPU's event
// engine while it would block. The coroutine calls are in thread/st.cpp.
#include <photon/thread/st.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <memory>
#include <new>

#include <photon/io/fd-events.h>
#include <photon/photon.h>

namespace {

struct netfd {
    int fd;
    void* specific = nullptr;
    void (*destructor)(void*) = nullptr;
};

static_assert(sizeof(socklen_t) == sizeof(int), "st.h passes socklen_t as int");

int fail(int e) {
    errno = e;
    return -1;
}

netfd* obj(st_netfd_t fd) { return static_cast<netfd*>(fd); }

int set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return (flags & O_NONBLOCK) ? 0 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// An fd object for fd, which the caller closes if this fails.
netfd* wrap(int fd) {
    auto f = new (std::nothrow) netfd{fd};
    if (!f) errno = ENOMEM;
    return f;
}

void drop_specific(netfd* f) {
    if (f->specific && f->destructor) f->destructor(f->specific);
    f->specific = nullptr;
}

uint32_t to_events(int poll_events) {
    uint32_t ev = 0;
    if (poll_events & (POLLIN | POLLRDNORM)) ev |= photon::EVENT_READ;
    if (poll_events & (POLLOUT | POLLWRNORM)) ev |= photon::EVENT_WRITE;
    if (poll_events & POLLPRI) ev |= photon::EVENT_ERROR;
    // poll(2) reports errors and hang-ups whatever was asked; so do engines.
    return ev ? ev : photon::EVENT_ERROR;
}

// Runs op() until it does not fail with EAGAIN, parking for `events` in
// between; the timeout covers the whole call.
template <typename OP>
ssize_t doio(int fd, uint32_t events, photon::Timeout& timeout, OP op) {
    while (true) {
        ssize_t r = op();
        if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return r;
        if (errno != EINTR && photon::wait_for_fd(fd, events, timeout) < 0) return -1;
    }
}

// Parks until poll(2) reports fd ready for `how`: 0, or -1 with errno. The
// engine may wake us spuriously; poll decides.
int wait_ready(int fd, int how, photon::Timeout& timeout) {
    struct pollfd p = {fd, (short)how, 0};
    while (true) {
        int r = ::poll(&p, 1, 0);
        if (r < 0 && errno != EINTR) return -1;
        if (r > 0) return (p.revents & POLLNVAL) ? fail(EBADF) : 0;
        if (r == 0 && photon::wait_for_fd(fd, to_events(how), timeout) < 0) return -1;
    }
}

// Skips the consumed bytes and the empty entries at the front of a vector.
void advance(struct iovec** iov, int* cnt, size_t done) {
    while (*cnt > 0 && (done > 0 || (*iov)->iov_len == 0)) {
        size_t step = done < (*iov)->iov_len ? done : (*iov)->iov_len;
        (*iov)->iov_base = static_cast<char*>((*iov)->iov_base) + step;
        (*iov)->iov_len -= step;
        done -= step;
        if ((*iov)->iov_len > 0) break;
        ++*iov;
        --*cnt;
    }
}

bool bad_vector(struct iovec** iov, int* cnt) {
    return !iov || !cnt || *cnt < 0 || (*cnt > 0 && !*iov);
}

// Transfers the whole vector with readv/writev, advancing it; a read stops
// early at EOF. 0, or -1 with errno.
int transfer_all(netfd* f, struct iovec** iov, int* cnt, bool write, photon::Timeout& timeout) {
    uint32_t events = write ? photon::EVENT_WRITE : photon::EVENT_READ;
    advance(iov, cnt, 0);
    while (*cnt > 0) {
        int n = *cnt < IOV_MAX ? *cnt : IOV_MAX;
        ssize_t r = doio(f->fd, events, timeout, [&] {
            return write ? ::writev(f->fd, *iov, n) : ::readv(f->fd, *iov, n);
        });
        if (r < 0) return -1;
        if (r == 0) {
            if (!write) return 0;  // EOF
            return fail(EIO);      // no progress on a non-empty write
        }
        advance(iov, cnt, (size_t)r);
    }
    return 0;
}

// Parks until one of the valid fds of pds may be ready, or the timeout.
int wait_any(struct pollfd* pds, int npds, photon::Timeout& timeout) {
    int valid = 0, last = -1;
    for (int i = 0; i < npds; i++)
        if (pds[i].fd >= 0) valid++, last = i;
    if (valid == 0) return photon::thread_usleep(timeout);
    if (valid == 1) return photon::wait_for_fd(pds[last].fd, to_events(pds[last].events), timeout);
    std::unique_ptr<photon::CascadingEventEngine> engine(photon::new_default_cascading_engine());
    if (!engine) return -1;
    for (int i = 0; i < npds; i++) {
        if (pds[i].fd < 0) continue;
        if (engine->add_interest({pds[i].fd, to_events(pds[i].events), nullptr}) < 0) return -1;
    }
    void* data[1];
    ssize_t r = engine->wait_for_events(data, 1, timeout);
    return r < 0 ? -1 : r == 0 ? fail(ETIMEDOUT) : 0;
}

}  // namespace

extern "C" {

int st_init(void) {
    if (photon::CURRENT) return 0;  // as State Threads: initialized already
    // Photon's init tries epoll before io_uring, so its st_init got epoll
    // unless asked for io_uring; ours prefers io_uring, hence both masks.
    uint64_t engine = photon::INIT_EVENT_DEFAULT;
    if (st_get_eventsys() == ST_EVENTSYS_IOURING)
        engine &= ~photon::INIT_EVENT_EPOLL;
    else
        engine &= ~photon::INIT_EVENT_IOURING;
    photon::PhotonOptions options;
    options.libaio_queue_depth = 0;
    options.bypass_threadpool = true;
    return photon::init(engine, photon::INIT_IO_NONE, options);
}

const char* st_get_eventsys_name(void) {
    switch (photon::master_event_engine_kind()) {
        case photon::INIT_EVENT_IOURING:
            return "io_uring";
        case photon::INIT_EVENT_EPOLL:
            return "epoll";
    }
    return st_get_eventsys() == ST_EVENTSYS_IOURING ? "io_uring" : "epoll";
}

st_netfd_t st_netfd_open(int osfd) {
    if (set_nonblocking(osfd) < 0) return nullptr;
    return wrap(osfd);
}

st_netfd_t st_netfd_open_socket(int osfd) { return st_netfd_open(osfd); }

void st_netfd_free(st_netfd_t fd) {
    if (!fd) return;
    drop_specific(obj(fd));
    delete obj(fd);
}

int st_netfd_close(st_netfd_t fd) {
    if (!fd) return fail(EINVAL);
    int osfd = obj(fd)->fd;
    st_netfd_free(fd);
    // Waiters on osfd (edge-triggered registrations) must not outlive it.
    auto v = photon::get_vcpu();
    if (v && v->master_event_engine) v->master_event_engine->forget_fd(osfd);
    return ::close(osfd);
}

int st_netfd_fileno(st_netfd_t fd) { return fd ? obj(fd)->fd : fail(EINVAL); }

void st_netfd_setspecific(st_netfd_t fd, void* value, void (*destructor)(void*)) {
    if (!fd) return;
    obj(fd)->specific = value;
    obj(fd)->destructor = destructor;
}

void* st_netfd_getspecific(st_netfd_t fd) { return fd ? obj(fd)->specific : nullptr; }

int st_netfd_serialize_accept(st_netfd_t) { return 0; }

int st_netfd_poll(st_netfd_t fd, int how, st_utime_t timeout) {
    if (!fd || !(how & (POLLIN | POLLOUT | POLLPRI))) return fail(EINVAL);
    photon::Timeout t(timeout);
    return wait_ready(obj(fd)->fd, how, t);
}

st_netfd_t st_accept(st_netfd_t fd, struct sockaddr* addr, int* addrlen, st_utime_t timeout) {
    if (!fd) return errno = EINVAL, nullptr;
    int lfd = obj(fd)->fd;
    photon::Timeout t(timeout);
    auto len = reinterpret_cast<socklen_t*>(addrlen);
    int c = (int)doio(lfd, photon::EVENT_READ, t,
                      [&] { return ::accept4(lfd, addr, len, SOCK_NONBLOCK | SOCK_CLOEXEC); });
    if (c < 0) return nullptr;
    netfd* f = wrap(c);
    if (!f) ::close(c);
    return f;
}

int st_connect(st_netfd_t fd, const struct sockaddr* addr, int addrlen, st_utime_t timeout) {
    if (!fd || addrlen < 0) return fail(EINVAL);
    int s = obj(fd)->fd;
    if (::connect(s, addr, (socklen_t)addrlen) == 0) return 0;
    // EINTR: the connection goes on in the background, as EINPROGRESS.
    if (errno != EINPROGRESS && errno != EINTR) return -1;
    photon::Timeout t(timeout);
    if (wait_ready(s, POLLOUT, t) < 0) return -1;
    int err = 0;
    socklen_t len = sizeof(err);
    if (::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return -1;
    return err ? fail(err) : 0;
}

ssize_t st_read(st_netfd_t fd, void* buf, size_t nbyte, st_utime_t timeout) {
    if (!fd) return fail(EINVAL);
    int s = obj(fd)->fd;
    photon::Timeout t(timeout);
    return doio(s, photon::EVENT_READ, t, [&] { return ::read(s, buf, nbyte); });
}

int st_read_resid(st_netfd_t fd, void* buf, size_t* resid, st_utime_t timeout) {
    if (!fd || !resid) return fail(EINVAL);
    struct iovec one = {buf, *resid};
    struct iovec* iov = &one;
    int cnt = 1;
    photon::Timeout t(timeout);
    int r = transfer_all(obj(fd), &iov, &cnt, false, t);
    *resid = cnt ? iov->iov_len : 0;
    return r;
}

ssize_t st_read_fully(st_netfd_t fd, void* buf, size_t nbyte, st_utime_t timeout) {
    size_t resid = nbyte;
    return st_read_resid(fd, buf, &resid, timeout) == 0 ? (ssize_t)(nbyte - resid) : -1;
}

ssize_t st_readv(st_netfd_t fd, const struct iovec* iov, int iov_size, st_utime_t timeout) {
    if (!fd || iov_size < 0 || (iov_size > 0 && !iov)) return fail(EINVAL);
    int s = obj(fd)->fd;
    photon::Timeout t(timeout);
    return doio(s, photon::EVENT_READ, t, [&] { return ::readv(s, iov, iov_size); });
}

int st_readv_resid(st_netfd_t fd, struct iovec** iov, int* iov_size, st_utime_t timeout) {
    if (!fd || bad_vector(iov, iov_size)) return fail(EINVAL);
    photon::Timeout t(timeout);
    return transfer_all(obj(fd), iov, iov_size, false, t);
}

int st_write_resid(st_netfd_t fd, const void* buf, size_t* resid, st_utime_t timeout) {
    if (!fd || !resid) return fail(EINVAL);
    struct iovec one = {const_cast<void*>(buf), *resid};
    struct iovec* iov = &one;
    int cnt = 1;
    photon::Timeout t(timeout);
    int r = transfer_all(obj(fd), &iov, &cnt, true, t);
    *resid = cnt ? iov->iov_len : 0;
    return r;
}

ssize_t st_write(st_netfd_t fd, const void* buf, size_t nbyte, st_utime_t timeout) {
    size_t resid = nbyte;
    return st_write_resid(fd, buf, &resid, timeout) == 0 ? (ssize_t)nbyte : -1;
}

int st_writev_resid(st_netfd_t fd, struct iovec** iov, int* iov_size, st_utime_t timeout) {
    if (!fd || bad_vector(iov, iov_size)) return fail(EINVAL);
    photon::Timeout t(timeout);
    return transfer_all(obj(fd), iov, iov_size, true, t);
}

ssize_t st_writev(st_netfd_t fd, const struct iovec* iov, int iov_size, st_utime_t timeout) {
    if (!fd || iov_size < 0 || (iov_size > 0 && !iov)) return fail(EINVAL);
    size_t total = 0;
    for (int i = 0; i < iov_size; i++) {
        if (iov[i].iov_len > (size_t)SSIZE_MAX - total) return fail(EINVAL);
        total += iov[i].iov_len;
    }
    // The caller's vector is const: advance a copy.
    std::unique_ptr<struct iovec[]> copy(new (std::nothrow) struct iovec[iov_size ? iov_size : 1]);
    if (!copy) return fail(ENOMEM);
    std::copy(iov, iov + iov_size, copy.get());
    struct iovec* v = copy.get();
    int cnt = iov_size;
    photon::Timeout t(timeout);
    return transfer_all(obj(fd), &v, &cnt, true, t) == 0 ? (ssize_t)total : -1;
}

int st_recvfrom(st_netfd_t fd, void* buf, int len, struct sockaddr* from, int* fromlen,
                st_utime_t timeout) {
    if (!fd || len < 0) return fail(EINVAL);
    int s = obj(fd)->fd;
    photon::Timeout t(timeout);
    auto flen = reinterpret_cast<socklen_t*>(fromlen);
    return (int)doio(s, photon::EVENT_READ, t,
                     [&] { return ::recvfrom(s, buf, (size_t)len, 0, from, flen); });
}

int st_sendto(st_netfd_t fd, const void* msg, int len, struct sockaddr* to, int tolen,
              st_utime_t timeout) {
    if (!fd || len < 0 || tolen < 0) return fail(EINVAL);
    int s = obj(fd)->fd;
    photon::Timeout t(timeout);
    return (int)doio(s, photon::EVENT_WRITE, t, [&] {
        return ::sendto(s, msg, (size_t)len, MSG_NOSIGNAL, to, (socklen_t)tolen);
    });
}

int st_recvmsg(st_netfd_t fd, struct msghdr* msg, int flags, st_utime_t timeout) {
    if (!fd || !msg) return fail(EINVAL);
    int s = obj(fd)->fd;
    photon::Timeout t(timeout);
    return (int)doio(s, photon::EVENT_READ, t,
                     [&] { return ::recvmsg(s, msg, flags | MSG_DONTWAIT); });
}

int st_sendmsg(st_netfd_t fd, const struct msghdr* msg, int flags, st_utime_t timeout) {
    if (!fd || !msg) return fail(EINVAL);
    int s = obj(fd)->fd;
    photon::Timeout t(timeout);
    return (int)doio(s, photon::EVENT_WRITE, t,
                     [&] { return ::sendmsg(s, msg, flags | MSG_DONTWAIT | MSG_NOSIGNAL); });
}

st_netfd_t st_open(const char* path, int oflags, mode_t mode) {
    int fd = ::open(path, oflags | O_NONBLOCK, mode);
    if (fd < 0) return nullptr;
    netfd* f = wrap(fd);
    if (!f) ::close(fd);
    return f;
}

int st_poll(struct pollfd* pds, int npds, st_utime_t timeout) {
    if (npds == 0) return 0;
    if (!pds || npds < 0) return fail(EINVAL);
    photon::Timeout t(timeout);
    while (true) {
        int r = ::poll(pds, (nfds_t)npds, 0);
        if (r > 0 || (r < 0 && errno != EINTR)) return r;
        if (r < 0) continue;
        if (t.expired()) return 0;
        if (wait_any(pds, npds, t) < 0) return errno == ETIMEDOUT ? 0 : -1;
    }
}

}  // extern "C"
