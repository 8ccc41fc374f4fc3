// The in-memory streams of photon/common/memory-stream/memory-stream.h. They
// live in net/ because StringSocketStream is an ISocketStream; the pipes
// only need the coroutine core's mutex and condition variables.
#include <photon/common/memory-stream/memory-stream.h>

#include <limits.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include <photon/common/utility.h>
#include <photon/thread/thread.h>

namespace {

// A per-OS-thread generator for the random parts (fault injection, chunk
// sizes); rand() is neither thread-safe nor ours to reseed.
uint32_t random_u32() {
    thread_local std::minstd_rand rng(std::random_device{}());
    return (uint32_t)rng();
}

// Sum of the iovec lengths, or -1 (EINVAL) for a bad array or an overflow.
ssize_t iov_total(const struct iovec* iov, int iovcnt) {
    if (iovcnt < 0 || iovcnt > IOV_MAX || (iovcnt > 0 && !iov)) return -1;
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (__builtin_add_overflow(total, iov[i].iov_len, &total) || total > SSIZE_MAX) return -1;
    }
    return (ssize_t)total;
}

// Walks an iovec array a chunk at a time.
struct iov_cursor {
    const struct iovec* iov;
    int left;
    size_t off = 0;

    // The rest of the current buffer (skipping empty ones); 0 at the end.
    size_t room() {
        while (left > 0 && off == iov->iov_len) {
            iov++, left--;
            off = 0;
        }
        return left > 0 ? iov->iov_len - off : 0;
    }
    char* at() const { return static_cast<char*>(iov->iov_base) + off; }
};

// The outcome of a transfer: bytes moved, or (none moved) an errno.
struct result {
    size_t done;
    int err;  // 0: success or EOF
    ssize_t finish() const {
        if (done > 0 || err == 0) return (ssize_t)done;
        errno = err;
        return -1;
    }
};

// A one-way pipe over a ring buffer of `cap_` bytes. mtx_ guards the buffer
// and the flags; read_turn_ / write_turn_ let one read / write at a time
// move its whole count, as a socket's callers expect of a blocking call.
class pipe_buffer {
public:
    ~pipe_buffer() { free(buf_); }
    bool init(uint32_t cap) {
        cap_ = cap;
        buf_ = static_cast<char*>(malloc(cap));
        return buf_ != nullptr;
    }

    result read(const struct iovec* iov, int iovcnt, size_t total) {
        SCOPED_LOCK(read_turn_);
        SCOPED_LOCK(mtx_);
        iov_cursor cur{iov, iovcnt};
        size_t done = 0;
        while (done < total) {
            if (reader_closed_) return {done, EBADF};
            if (size_ == 0) {
                if (writer_closed_) return {done, 0};  // end of stream
                if (readable_.wait(mtx_) < 0) return {done, errno};
                continue;
            }
            size_t n = std::min({cur.room(), size_, (size_t)cap_ - head_});
            memcpy(cur.at(), buf_ + head_, n);
            cur.off += n;
            head_ = (head_ + n) % cap_;
            size_ -= n;
            done += n;
            writable_.notify_all();
        }
        return {done, 0};
    }

    result write(const struct iovec* iov, int iovcnt, size_t total) {
        SCOPED_LOCK(write_turn_);
        SCOPED_LOCK(mtx_);
        iov_cursor cur{iov, iovcnt};
        size_t done = 0;
        while (done < total) {
            if (writer_closed_) return {done, EBADF};
            if (reader_closed_) return {done, EPIPE};
            if (size_ == cap_) {
                if (writable_.wait(mtx_) < 0) return {done, errno};
                continue;
            }
            size_t tail = (head_ + size_) % cap_;
            size_t n = std::min({cur.room(), (size_t)cap_ - size_, (size_t)cap_ - tail});
            memcpy(buf_ + tail, cur.at(), n);
            cur.off += n;
            size_ += n;
            done += n;
            readable_.notify_all();
        }
        return {done, 0};
    }

    // No more reads: blocked readers fail, writers get EPIPE.
    void close_reader() {
        SCOPED_LOCK(mtx_);
        reader_closed_ = true;
        wake_all();
    }
    // No more writes: blocked writers fail, readers get EOF once drained.
    void close_writer() {
        SCOPED_LOCK(mtx_);
        writer_closed_ = true;
        wake_all();
    }

private:
    void wake_all() {
        readable_.notify_all();
        writable_.notify_all();
    }

    photon::mutex read_turn_, write_turn_, mtx_;
    photon::condition_variable readable_, writable_;
    char* buf_ = nullptr;
    uint32_t cap_ = 0;
    size_t head_ = 0, size_ = 0;
    bool reader_closed_ = false, writer_closed_ = false;
};

// An IStream that reads from one pipe and writes to another (the same one
// for a simplex stream).
class endpoint : public IStream {
public:
    void attach(pipe_buffer* in, pipe_buffer* out) {
        in_ = in;
        out_ = out;
    }
    int close() override {
        if (!closed_.exchange(true)) {
            in_->close_reader();
            out_->close_writer();
        }
        return 0;
    }
    ssize_t read(void* buf, size_t count) override {
        struct iovec v = {buf, count};
        return readv(&v, 1);
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        ssize_t total = check(iov, iovcnt);
        return total <= 0 ? total : in_->read(iov, iovcnt, total).finish();
    }
    ssize_t write(const void* buf, size_t count) override {
        struct iovec v = {const_cast<void*>(buf), count};
        return writev(&v, 1);
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        ssize_t total = check(iov, iovcnt);
        return total <= 0 ? total : out_->write(iov, iovcnt, total).finish();
    }

private:
    // The byte count, 0 for nothing to do, or -1 with errno.
    ssize_t check(const struct iovec* iov, int iovcnt) {
        if (closed_.load()) {
            errno = EBADF;
            return -1;
        }
        ssize_t total = iov_total(iov, iovcnt);
        if (total < 0) errno = EINVAL;
        return total;
    }

    pipe_buffer* in_ = nullptr;
    pipe_buffer* out_ = nullptr;
    std::atomic<bool> closed_{false};
};

class simplex_stream final : public endpoint {
public:
    bool init(uint32_t capacity) {
        attach(&pipe_, &pipe_);
        return pipe_.init(capacity);
    }

private:
    pipe_buffer pipe_;
};

class duplex_stream final : public DuplexMemoryStream {
public:
    bool init(uint32_t capacity) {
        a_.attach(&b_to_a_, &a_to_b_);
        b_.attach(&a_to_b_, &b_to_a_);
        endpoint_a = &a_;
        endpoint_b = &b_;
        return a_to_b_.init(capacity) && b_to_a_.init(capacity);
    }
    int close() override {
        a_.close();
        b_.close();
        return 0;
    }

private:
    pipe_buffer a_to_b_, b_to_a_;
    endpoint a_, b_;
};

template <typename T>
T* make_stream(uint32_t capacity) {
    if (capacity == 0) {
        errno = EINVAL;
        return nullptr;
    }
    auto s = new (std::nothrow) T;
    if (s && s->init(capacity)) return s;
    delete s;
    errno = ENOMEM;
    return nullptr;
}

class fault_stream final : public IStream {
public:
    fault_stream(IStream* s, int flags, bool own) : s_(s), flags_(flags), own_(own) {}
    ~fault_stream() override {
        if (own_) delete s_;
    }
    int close() override { return s_->close(); }
    ssize_t read(void* buf, size_t count) override { return fault(1) ? -1 : s_->read(buf, count); }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return fault(1) ? -1 : s_->readv(iov, iovcnt);
    }
    ssize_t write(const void* buf, size_t count) override {
        return fault(2) ? -1 : s_->write(buf, count);
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        return fault(2) ? -1 : s_->writev(iov, iovcnt);
    }
    int shutdown(ShutdownHow how) override { return s_->shutdown(how); }
    uint64_t timeout() const override { return s_->timeout(); }
    void timeout(uint64_t tm) override { s_->timeout(tm); }

private:
    // True (errno set) for about 1% of the calls of a kind `flags_` enables.
    bool fault(int kind) {
        static const int kErrnos[] = {EIO,       EPERM,  ENOENT,       ECONNREFUSED, ECONNRESET,
                                      ETIMEDOUT, EPIPE,  EHOSTUNREACH, ENETDOWN,     ENOBUFS,
                                      EAGAIN,    ENOMEM, ECONNABORTED, ENETUNREACH,  EBADMSG};
        if (!(flags_ & kind) || random_u32() % 100 != 0) return false;
        errno = kErrnos[random_u32() % LEN(kErrnos)];
        return true;
    }

    IStream* s_;
    int flags_;
    bool own_;
};

using photon::net::EndPoint;

class string_socket_stream final : public StringSocketStream {
public:
    // At most 1-8 bytes per call, to exercise callers' partial-I/O paths.
    ssize_t recv(void* buf, size_t count, int flags = 0) override {
        if (closed_) return fail(ECANCELED);
        return take(buf, std::min(count, (size_t)random_u32() % 8 + 1));
    }
    ssize_t recv(const struct iovec* iov, int iovcnt, int flags = 0) override {
        const struct iovec* v = first_nonempty(iov, iovcnt);
        if (!v) return iov_total(iov, iovcnt) < 0 ? fail(EINVAL) : closed_ ? fail(ECANCELED) : 0;
        return recv(v->iov_base, v->iov_len);
    }
    ssize_t send(const void* buf, size_t count, int flags = 0) override {
        if (closed_) return fail(ECANCELED);
        return put(buf, std::min(count, (size_t)random_u32() % 8 + 1));
    }
    ssize_t send(const struct iovec* iov, int iovcnt, int flags = 0) override {
        const struct iovec* v = first_nonempty(iov, iovcnt);
        if (!v) return iov_total(iov, iovcnt) < 0 ? fail(EINVAL) : closed_ ? fail(ECANCELED) : 0;
        return send(v->iov_base, v->iov_len);
    }
    int close() override {
        if (closed_) return (int)fail(ECANCELED);
        closed_ = true;
        _inv = {};
        _in.clear();
        _out.clear();
        return 0;
    }
    ssize_t read(void* buf, size_t count) override {
        if (closed_) return fail(ECANCELED);
        return take(buf, count);
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        if (iov_total(iov, iovcnt) < 0) return fail(EINVAL);
        ssize_t sum = 0;
        for (int i = 0; i < iovcnt; i++) {
            ssize_t r = read(iov[i].iov_base, iov[i].iov_len);
            if (r < 0) return r;
            sum += r;
            if ((size_t)r < iov[i].iov_len) break;
        }
        return sum;
    }
    ssize_t write(const void* buf, size_t count) override {
        if (closed_) return fail(ECANCELED);
        return put(buf, count);
    }
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        if (iov_total(iov, iovcnt) < 0) return fail(EINVAL);
        ssize_t sum = 0;
        for (int i = 0; i < iovcnt; i++) {
            ssize_t r = write(iov[i].iov_base, iov[i].iov_len);
            if (r < 0) return r;
            sum += r;
        }
        return sum;
    }
    Object* get_underlay_object(uint64_t recursion = 0) override { return nullptr; }
    ssize_t sendfile(int in_fd, off_t offset, size_t count) override { return fail(ENOSYS); }
    int setsockopt(int level, int option_name, const void* option_value,
                   socklen_t option_len) override {
        return (int)fail(ENOSYS);
    }
    int getsockopt(int level, int option_name, void* option_value, socklen_t* option_len) override {
        return (int)fail(ENOSYS);
    }
    int getsockname(EndPoint& addr) override { return (int)fail(ENOSYS); }
    int getpeername(EndPoint& addr) override { return (int)fail(ENOSYS); }
    int getsockname(char* path, size_t count) override { return (int)fail(ENOSYS); }
    int getpeername(char* path, size_t count) override { return (int)fail(ENOSYS); }

private:
    static ssize_t fail(int e) {
        errno = e;
        return -1;
    }
    static const struct iovec* first_nonempty(const struct iovec* iov, int iovcnt) {
        if (iov_total(iov, iovcnt) <= 0) return nullptr;
        for (int i = 0; i < iovcnt; i++)
            if (iov[i].iov_base && iov[i].iov_len) return &iov[i];
        return nullptr;
    }
    ssize_t take(void* buf, size_t count) {
        size_t n = std::min(count, _inv.size());
        if (n) memcpy(buf, _inv.data(), n);
        _inv.remove_prefix(n);
        return (ssize_t)n;
    }
    ssize_t put(const void* buf, size_t count) {
        _out.append(static_cast<const char*>(buf), count);
        return (ssize_t)count;
    }

    bool closed_ = false;
};

}  // namespace

IStream* new_simplex_memory_stream(uint32_t capacity) {
    return make_stream<simplex_stream>(capacity);
}

DuplexMemoryStream* new_duplex_memory_stream(uint32_t capacity) {
    return make_stream<duplex_stream>(capacity);
}

IStream* new_fault_stream(IStream* stream, int flag, bool ownership) {
    if (!stream) {
        errno = EINVAL;
        return nullptr;
    }
    return new fault_stream(stream, flag, ownership);
}

StringSocketStream* new_string_socket_stream() { return new string_socket_stream; }
