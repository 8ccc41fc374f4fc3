// pooled_stream.h: forwarding with a record of whether the connection is
// still in a known, clean state.
#include "pooled_stream.h"

#include "forward_socket.h"

namespace photon {
namespace net {

namespace {
// Not the owner: the destructor decides where the connection goes.
class pooled_stream : public ForwardSocketStream {
public:
    pooled_stream(stream_home* home, std::string key, ISocketStream* conn)
        : ForwardSocketStream(conn, false), home_(home), key_(std::move(key)) {}
    ~pooled_stream() override {
        if (reusable_)
            home_->give_back(key_, underlay_);
        else
            delete underlay_;
    }

    int close() override {
        reusable_ = false;
        return underlay_->close();
    }
    int shutdown(ShutdownHow how) override {
        reusable_ = false;
        return underlay_->shutdown(how);
    }

    ssize_t read(void* buf, size_t count) override {
        return whole(underlay_->read(buf, count), count);
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return whole(underlay_->readv(iov, iovcnt), total(iov, iovcnt));
    }
    ssize_t readv_mutable(struct iovec* iov, int iovcnt) override {
        size_t n = total(iov, iovcnt);
        return whole(underlay_->readv_mutable(iov, iovcnt), n);
    }
    ssize_t write(const void* buf, size_t count) override {
        return whole(underlay_->write(buf, count), count);
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return whole(underlay_->writev(iov, iovcnt), total(iov, iovcnt));
    }
    ssize_t writev_mutable(struct iovec* iov, int iovcnt) override {
        size_t n = total(iov, iovcnt);
        return whole(underlay_->writev_mutable(iov, iovcnt), n);
    }

    ssize_t recv(void* buf, size_t count, int flags = 0) override {
        return partial(underlay_->recv(buf, count, flags), count);
    }
    ssize_t recv(const struct iovec* iov, int iovcnt, int flags = 0) override {
        return partial(underlay_->recv(iov, iovcnt, flags), total(iov, iovcnt));
    }
    ssize_t send(const void* buf, size_t count, int flags = 0) override {
        return partial(underlay_->send(buf, count, flags), count);
    }
    ssize_t send(const struct iovec* iov, int iovcnt, int flags = 0) override {
        return partial(underlay_->send(iov, iovcnt, flags), total(iov, iovcnt));
    }
    ssize_t sendfile(int in_fd, off_t offset, size_t count) override {
        return whole(underlay_->sendfile(in_fd, offset, count), count);
    }

    // A lease is no layer of its own: callers see the connection's objects.
    Object* get_underlay_object(uint64_t recursion) override {
        return underlay_->get_underlay_object(recursion);
    }

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
    bool reusable_ = true;
};
}  // namespace

ISocketStream* new_pooled_stream(stream_home* home, std::string key, ISocketStream* conn) {
    return new pooled_stream(home, std::move(key), conn);
}

}  // namespace net
}  // namespace photon
