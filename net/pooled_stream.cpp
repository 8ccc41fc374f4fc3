// pooled_stream.h: forwarding with a record of whether the connection is
// still in a known, clean state.
#include "pooled_stream.h"

namespace photon {
namespace net {

namespace {
class PooledStream : public ISocketStream {
public:
    PooledStream(stream_home* home, std::string key, ISocketStream* conn)
        : home_(home), key_(std::move(key)), conn_(conn) {}
    ~PooledStream() override {
        if (reusable_)
            home_->give_back(key_, conn_);
        else
            delete conn_;
    }

    int close() override {
        reusable_ = false;
        return conn_->close();
    }
    int shutdown(ShutdownHow how) override {
        reusable_ = false;
        return conn_->shutdown(how);
    }

    ssize_t read(void* buf, size_t count) override { return whole(conn_->read(buf, count), count); }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return whole(conn_->readv(iov, iovcnt), total(iov, iovcnt));
    }
    ssize_t readv_mutable(struct iovec* iov, int iovcnt) override {
        size_t n = total(iov, iovcnt);
        return whole(conn_->readv_mutable(iov, iovcnt), n);
    }
    ssize_t write(const void* buf, size_t count) override {
        return whole(conn_->write(buf, count), count);
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return whole(conn_->writev(iov, iovcnt), total(iov, iovcnt));
    }
    ssize_t writev_mutable(struct iovec* iov, int iovcnt) override {
        size_t n = total(iov, iovcnt);
        return whole(conn_->writev_mutable(iov, iovcnt), n);
    }

    ssize_t recv(void* buf, size_t count, int flags = 0) override {
        return partial(conn_->recv(buf, count, flags), count);
    }
    ssize_t recv(const struct iovec* iov, int iovcnt, int flags = 0) override {
        return partial(conn_->recv(iov, iovcnt, flags), total(iov, iovcnt));
    }
    ssize_t send(const void* buf, size_t count, int flags = 0) override {
        return partial(conn_->send(buf, count, flags), count);
    }
    ssize_t send(const struct iovec* iov, int iovcnt, int flags = 0) override {
        return partial(conn_->send(iov, iovcnt, flags), total(iov, iovcnt));
    }
    ssize_t sendfile(int in_fd, off_t offset, size_t count) override {
        return whole(conn_->sendfile(in_fd, offset, count), count);
    }

    uint64_t timeout() const override { return conn_->timeout(); }
    void timeout(uint64_t tm) override { conn_->timeout(tm); }
    Object* get_underlay_object(uint64_t recursion) override {
        return conn_->get_underlay_object(recursion);
    }
    int setsockopt(int level, int name, const void* value, socklen_t len) override {
        return conn_->setsockopt(level, name, value, len);
    }
    int getsockopt(int level, int name, void* value, socklen_t* len) override {
        return conn_->getsockopt(level, name, value, len);
    }
    int getsockname(EndPoint& addr) override { return conn_->getsockname(addr); }
    int getpeername(EndPoint& addr) override { return conn_->getpeername(addr); }
    int getsockname(char* path, size_t count) override { return conn_->getsockname(path, count); }
    int getpeername(char* path, size_t count) override { return conn_->getpeername(path, count); }

private:
    static size_t total(const struct iovec* iov, int iovcnt) {
        size_t n = 0;
        for (int i = 0; i < iovcnt; i++) n += iov[i].iov_len;
        return n;
    }
    // All-or-nothing calls: short means EOF or a deferred error.
    ssize_t whole(ssize_t r, size_t want) {
        if (r < 0 || (size_t)r < want) reusable_ = false;
        return r;
    }
    // One-shot calls: 0 for a non-empty buffer means EOF.
    ssize_t partial(ssize_t r, size_t want) {
        if (r < 0 || (r == 0 && want > 0)) reusable_ = false;
        return r;
    }

    stream_home* home_;
    std::string key_;
    ISocketStream* conn_;
    bool reusable_ = true;
};
}  // namespace

ISocketStream* new_pooled_stream(stream_home* home, std::string key, ISocketStream* conn) {
    return new PooledStream(home, std::move(key), conn);
}

}  // namespace net
}  // namespace photon
