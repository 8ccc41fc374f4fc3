// Forwarding bases for socket decorators, under PhotonLibOS's names (its
// net/base_socket.h): every virtual passes to the underlay given at
// construction, so a decorator (TLS, a pooled connection, an HTTP server's
// connection) overrides only what it changes, as LevelDB's EnvWrapper does
// for Env. Same vCPU and blocking as the underlay. Private header of net/.
//
// What a decorator must still think about:
// - readv_mutable / writev_mutable are not forwarded: IStream's defaults
//   call this->readv / writev, so a decorator that changes the bytes (TLS)
//   cannot be bypassed by them. A pass-through one may forward them itself.
// - get_underlay_object(0) is the underlay, deeper levels are asked of it,
//   as a layer in Photon counts; a decorator that is no layer of its own
//   (a pool's lease) forwards the recursion unchanged.
// - With ownership the underlay is deleted after the decorator's destructor
//   and close() closes it; without, close() leaves it open for its owner.
#pragma once

#include <photon/net/socket.h>

namespace photon {
namespace net {
namespace forward_detail {

// What every socket interface I has: the underlay and its ownership, the
// timeouts, the options and the layer chain.
template <typename I>
class Common : public I {
public:
    Common(I* underlay, bool ownership) : underlay_(underlay), owned_(ownership) {}
    ~Common() override {
        if (owned_) delete underlay_;
    }

    uint64_t timeout() const override { return underlay_->timeout(); }
    void timeout(uint64_t tm) override { underlay_->timeout(tm); }
    Object* get_underlay_object(uint64_t recursion) override {
        return recursion == 0 ? (Object*)underlay_ : underlay_->get_underlay_object(recursion - 1);
    }
    int setsockopt(int level, int name, const void* value, socklen_t len) override {
        return underlay_->setsockopt(level, name, value, len);
    }
    int getsockopt(int level, int name, void* value, socklen_t* len) override {
        return underlay_->getsockopt(level, name, value, len);
    }

protected:
    I* underlay_;
    bool owned_;
};

// And the names, which streams and servers have.
template <typename I>
class Named : public Common<I> {
public:
    using Common<I>::Common;
    int getsockname(EndPoint& addr) override { return this->underlay_->getsockname(addr); }
    int getpeername(EndPoint& addr) override { return this->underlay_->getpeername(addr); }
    int getsockname(char* path, size_t count) override {
        return this->underlay_->getsockname(path, count);
    }
    int getpeername(char* path, size_t count) override {
        return this->underlay_->getpeername(path, count);
    }
};

}  // namespace forward_detail

class ForwardSocketStream : public forward_detail::Named<ISocketStream> {
public:
    using Named::Named;

    int close() override { return owned_ ? underlay_->close() : 0; }
    int shutdown(ShutdownHow how) override { return underlay_->shutdown(how); }

    ssize_t read(void* buf, size_t count) override { return underlay_->read(buf, count); }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return underlay_->readv(iov, iovcnt);
    }
    ssize_t write(const void* buf, size_t count) override { return underlay_->write(buf, count); }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return underlay_->writev(iov, iovcnt);
    }
    ssize_t recv(void* buf, size_t count, int flags = 0) override {
        return underlay_->recv(buf, count, flags);
    }
    ssize_t recv(const struct iovec* iov, int iovcnt, int flags = 0) override {
        return underlay_->recv(iov, iovcnt, flags);
    }
    ssize_t send(const void* buf, size_t count, int flags = 0) override {
        return underlay_->send(buf, count, flags);
    }
    ssize_t send(const struct iovec* iov, int iovcnt, int flags = 0) override {
        return underlay_->send(iov, iovcnt, flags);
    }
    ssize_t sendfile(int in_fd, off_t offset, size_t count) override {
        return underlay_->sendfile(in_fd, offset, count);
    }
};

class ForwardSocketClient : public forward_detail::Common<ISocketClient> {
public:
    using Common::Common;

    ISocketStream* connect(const EndPoint& remote, const EndPoint* local = nullptr) override {
        return underlay_->connect(remote, local);
    }
    ISocketStream* connect(const char* path, size_t count = 0) override {
        return underlay_->connect(path, count);
    }
};

class ForwardSocketServer : public forward_detail::Named<ISocketServer> {
public:
    using Named::Named;

    int bind(const EndPoint& ep) override { return underlay_->bind(ep); }
    int bind(const char* path, size_t count) override { return underlay_->bind(path, count); }
    int listen(int backlog = 1024) override { return underlay_->listen(backlog); }
    ISocketStream* accept(EndPoint* remote_endpoint = nullptr) override {
        return underlay_->accept(remote_endpoint);
    }
    // Returns this server, not the underlay, as the caller chains on it.
    ISocketServer* set_handler(Handler handler) override {
        underlay_->set_handler(handler);
        return this;
    }
    int start_loop(bool block = false) override { return underlay_->start_loop(block); }
    void terminate() override { underlay_->terminate(); }
};

}  // namespace net
}  // namespace photon
