// Kernel sockets over the vCPU's event engine: the stream, client and
// server that the TCP and unix-domain factories return, and the base the
// io_uring and zero-copy flavours derive from. Private header of net/.
#pragma once

#include <sys/socket.h>

#ifndef AF_SMC
#define AF_SMC 43  // Linux >= 4.11; older libcs lack the name
#endif

#include <memory>
#include <string>
#include <vector>

#include <photon/io/fd-events.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>

#include "read_ahead.h"
#include "socket_io.h"

namespace photon {
namespace net {

// Socket options remembered by clients and servers, set on each new socket.
class sockopt_list {
public:
    int add(int level, int name, const void* value, socklen_t len);
    int get(int level, int name, void* value, socklen_t* len) const;
    int apply(int fd) const;

private:
    struct opt {
        int level, name;
        std::string value;
    };
    std::vector<opt> opts_;
};

class kernel_socket_stream : public ISocketStream {
public:
    // Takes ownership of the non-blocking fd.
    explicit kernel_socket_stream(int fd) : fd_(fd) {}
    ~kernel_socket_stream() override;

    int close() override;
    int shutdown(ShutdownHow how) override;

    ssize_t read(void* buf, size_t count) override;
    ssize_t readv(const struct iovec* iov, int iovcnt) override;
    ssize_t readv_mutable(struct iovec* iov, int iovcnt) override;
    ssize_t write(const void* buf, size_t count) override;
    ssize_t writev(const struct iovec* iov, int iovcnt) override;
    ssize_t writev_mutable(struct iovec* iov, int iovcnt) override;

    ssize_t recv(void* buf, size_t count, int flags = 0) override;
    ssize_t recv(const struct iovec* iov, int iovcnt, int flags = 0) override;
    ssize_t send(const void* buf, size_t count, int flags = 0) override;
    ssize_t send(const struct iovec* iov, int iovcnt, int flags = 0) override;
    ssize_t sendfile(int in_fd, off_t offset, size_t count) override;

    uint64_t timeout() const override { return timeout_; }
    void timeout(uint64_t tm) override { timeout_ = tm; }

    Object* get_underlay_object(uint64_t recursion) override;
    int setsockopt(int level, int name, const void* value, socklen_t len) override;
    int getsockopt(int level, int name, void* value, socklen_t* len) override;
    int getsockname(EndPoint& addr) override;
    int getpeername(EndPoint& addr) override;
    int getsockname(char* path, size_t count) override;
    int getpeername(char* path, size_t count) override;

    // Bytes read from the kernel that no caller has taken yet (read_ahead.h).
    size_t buffered() const { return ahead_.size(); }

    // One non-blocking send(2) that never parks, for layers that must not
    // yield (the TLS BIO): bytes sent, or -1 with errno (EAGAIN: full). Any
    // other error, or one deferred already, is left for the next send() to
    // report.
    ssize_t send_now(const void* buf, size_t count);

protected:
    // One transfer each, parking on EAGAIN until the stream's deadline.
    virtual ssize_t recv_once(const struct iovec* iov, int iovcnt, int flags, lazy_timeout& t);
    virtual ssize_t send_once(const struct iovec* iov, int iovcnt, int flags, lazy_timeout& t);
    // A send with ISocketStream::ZEROCOPY_FLAG: returns once the kernel has
    // let go of the buffer. Defined in zerocopy_socket.cpp.
    virtual ssize_t send_zerocopy(const struct iovec* iov, int iovcnt, int flags, lazy_timeout& t);

    // -1 with the error that cut short the last read / write, if any.
    bool take_deferred(int& err);
    ssize_t transfer(bool& short_before, uint32_t event, const struct iovec* iov, int iovcnt,
                     int flags, lazy_timeout& t, bool sending);
    // One syscall; *asked: the bytes given to the kernel (fewer than iov's
    // under an injected short transfer).
    ssize_t syscall_once(const struct iovec* iov, int iovcnt, int flags, bool sending,
                         size_t* asked);
    // Whether an injected short transfer may cut this one: a send, or a
    // receive that is neither a peek (which shows all the kernel has) nor the
    // one after a peek. Records the peek.
    bool may_cut(int flags, bool sending) {
        if (sending) return true;
        bool was = peeked_;
        peeked_ = flags & MSG_PEEK;
        return !peeked_ && !was;
    }
    // A receive through the read-ahead buffer when it applies, else recv_once.
    ssize_t recv_some(const struct iovec* iov, int iovcnt, int flags, lazy_timeout& t);
    ssize_t recv_ahead(const struct iovec* iov, int iovcnt, int flags, lazy_timeout& t);

    int fd_;
    uint64_t timeout_ = -1;
    int read_err_ = 0;         // cut a read short; the next read reports it
    int write_err_ = 0;        // likewise for writes
    bool recv_short_ = false;  // the last recv drained the receive queue
    // The last receive was a peek: the next one gets at least the bytes it
    // saw, so an injected short receive (fault_injection.h) leaves it alone.
    bool peeked_ = false;
    bool send_short_ = false;  // the last send filled the send buffer
    // Small reads go through ahead_; flavours whose receive is not a
    // readiness-driven recv(2) (io_uring) turn it off.
    bool read_ahead_on_ = true;
    read_ahead ahead_;
};

// Makes the stream for a connected or accepted fd; the flavours override it.
using stream_factory = ISocketStream* (*)(int fd);

// make(fd), or nullptr with ENOMEM under an injected NOMEM (the caller
// closes fd).
inline ISocketStream* make_stream(stream_factory make, int fd) {
    if (fault::hit(fault::NOMEM)) return errno = ENOMEM, nullptr;
    return make(fd);
}

class kernel_socket_client : public ISocketClient {
public:
    kernel_socket_client(int family, stream_factory make, const IPAddr* bind_ips = nullptr,
                         uint32_t n = 0)
        : family_(family), make_(make), bind_ips_(bind_ips, bind_ips + n) {}

    ISocketStream* connect(const EndPoint& remote, const EndPoint* local = nullptr) override;
    ISocketStream* connect(const char* path, size_t count = 0) override;
    uint64_t timeout() const override { return timeout_; }
    void timeout(uint64_t tm) override { timeout_ = tm; }
    Object* get_underlay_object(uint64_t recursion) override { return nullptr; }
    int setsockopt(int level, int name, const void* value, socklen_t len) override {
        return opts_.add(level, name, value, len);
    }
    int getsockopt(int level, int name, void* value, socklen_t* len) override {
        return opts_.get(level, name, value, len);
    }

private:
    ISocketStream* finish(int fd, const sockaddr* addr, socklen_t len);

    int family_;  // AF_INET (v4 or v6 by address), AF_SMC (likewise) or AF_UNIX
    stream_factory make_;
    std::vector<IPAddr> bind_ips_;
    sockopt_list opts_;
    uint64_t timeout_ = -1;
};

class kernel_socket_server : public ISocketServer {
public:
    kernel_socket_server(int family, stream_factory make, bool autoremove = false)
        : family_(family), make_(make), autoremove_(autoremove) {}
    ~kernel_socket_server() override;

    int bind(const EndPoint& ep) override;
    int bind(const char* path, size_t count) override;
    int listen(int backlog = 1024) override;
    ISocketStream* accept(EndPoint* remote_endpoint = nullptr) override;
    ISocketServer* set_handler(Handler handler) override {
        handler_ = handler;
        return this;
    }
    int start_loop(bool block = false) override;
    void terminate() override;
    uint64_t timeout() const override { return timeout_; }
    void timeout(uint64_t tm) override { timeout_ = tm; }

    Object* get_underlay_object(uint64_t recursion) override;
    int setsockopt(int level, int name, const void* value, socklen_t len) override;
    int getsockopt(int level, int name, void* value, socklen_t* len) override;
    int getsockname(EndPoint& addr) override;
    int getpeername(EndPoint& addr) override;
    int getsockname(char* path, size_t count) override;
    int getpeername(char* path, size_t count) override;

private:
    struct loop_state;
    int make_socket(int family);
    void drop_socket();  // closes fd_, errno kept
    void accept_loop(loop_state* ls);
    static void* accept_loop_entry(void* self);
    int accept_fd(EndPoint* remote);

    int family_;
    stream_factory make_;
    bool autoremove_;
    int fd_ = -1;
    std::string path_;  // bound unix-domain path, for autoremove
    Handler handler_;
    sockopt_list opts_;  // also set on accepted sockets
    uint64_t timeout_ = -1;
    // The running accept loop, shared with terminate() callers, which may be
    // on other vCPUs and must not touch the server once the loop has left
    // (a blocking start_loop's caller may delete it then).
    spinlock loop_lock_;  // guards loop_
    std::shared_ptr<loop_state> loop_;

    void run_loop(loop_state* ls);
};

}  // namespace net
}  // namespace photon
