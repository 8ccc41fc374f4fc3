// tls_socket_stream: the memory BIO, the handshake, reads, writes and
// close_notify. See tls_stream.h for why OpenSSL never calls the base stream.
#include "tls_stream.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <photon/common/alog.h>
#include <photon/common/utility.h>

#include "../kernel_socket.h"

namespace photon {
namespace net {

namespace {
constexpr size_t kInCap = 32 * 1024;        // two full records per base recv
constexpr size_t kWriteChunk = 64 * 1024;   // plaintext per SSL_write, then flush
constexpr size_t kSmallGather = 16 * 1024;  // iovecs this small go out as one record
constexpr size_t kMaxRecord = 16 * 1024;    // TLS plaintext per record

// Before each SSL_read / SSL_write, so that SSL_get_error sees only their
// errors. The queue is nearly always empty, and peeking costs less than
// clearing every slot (ERR_clear_error was 1% of an HTTPS server's CPU).
void clear_ssl_errors() {
    if (ERR_peek_error() != 0) ERR_clear_error();
}
}  // namespace

// The BIO OpenSSL reads and writes: the stream's buffers, never the network.
struct tls_bio {
    static tls_socket_stream* self(BIO* b) {
        return static_cast<tls_socket_stream*>(BIO_get_data(b));
    }

    static int write(BIO* b, const char* data, size_t n, size_t* done) {
        auto s = self(b);
        // After a lost send nothing drains out_: what OpenSSL still writes
        // while reading (KeyUpdate answers) is dropped, not kept.
        if (s->send_err_) return *done = n, 1;
        if (s->gather_) return s->gather_->append(data, n), *done = n, 1;
        size_t sent = s->send_direct(data, n);
        if (sent < n) s->out_.append(data + sent, n - sent);
        *done = n;
        return 1;
    }

    static int read(BIO* b, char* data, size_t n, size_t* done) {
        auto s = self(b);
        BIO_clear_retry_flags(b);
        if (s->in_pos_ == s->in_len_) {
            if (!s->in_eof_) BIO_set_retry_read(b);  // WANT_READ: fill_input, retry
            return 0;
        }
        n = std::min(n, s->in_len_ - s->in_pos_);
        memcpy(data, s->in_.get() + s->in_pos_, n);
        s->in_pos_ += n;
        *done = n;
        return 1;
    }

    static long ctrl(BIO* b, int cmd, long, void*) {
        auto s = self(b);
        switch (cmd) {
            case BIO_CTRL_FLUSH:
                return 1;  // flush_output runs after every SSL call
            case BIO_CTRL_EOF:
                return s->in_eof_ && s->in_pos_ == s->in_len_;
            case BIO_CTRL_PENDING:
                return (long)(s->in_len_ - s->in_pos_);
            case BIO_CTRL_WPENDING:
                return (long)s->out_.size();
            default:
                return 0;
        }
    }

    static int create(BIO* b) {
        BIO_set_init(b, 1);
        return 1;
    }

    static BIO_METHOD* method() {
        static BIO_METHOD* m = [] {
            BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "photon");
            if (!m) return m;
            BIO_meth_set_write_ex(m, &write);
            BIO_meth_set_read_ex(m, &read);
            BIO_meth_set_ctrl(m, &ctrl);
            BIO_meth_set_create(m, &create);
            return m;
        }();
        return m;
    }
};

tls_socket_stream::tls_socket_stream(tls_context_impl* ctx, ISocketStream* base, SecurityRole role,
                                     bool own)
    : ForwardSocketStream(base, own),
      ctx_(ctx),
      role_(role),
      timeout_(base->timeout()),
      hs_deadline_(role == SecurityRole::Server ? ctx->handshake_timeout() : UINT64_MAX) {}

tls_socket_stream::~tls_socket_stream() {
    close();
    SSL_free(ssl_);
}

size_t tls_socket_stream::send_direct(const char* data, size_t n) {
    // Handshake flights stay in out_ and leave in one send.
    if (!kernel_base_ || !handshaken_ || flushing_ || !out_.empty() || err_ || send_err_) return 0;
    ssize_t r = kernel_base_->send_now(data, n);
    return r < 0 ? 0 : (size_t)r;  // errors: send_now keeps them for flush_output
}

int tls_socket_stream::init() {
    kernel_base_ = dynamic_cast<kernel_socket_stream*>(underlay_);
    in_.reset(new char[kInCap]);
    ssl_ = SSL_new(ctx_->ssl_ctx());
    BIO_METHOD* m = tls_bio::method();
    BIO* bio = ssl_ && m ? BIO_new(m) : nullptr;
    if (!bio) {
        log_openssl_error("cannot make a TLS session");
        errno = ENOMEM;
        return -1;
    }
    BIO_set_data(bio, this);
    SSL_set_bio(ssl_, bio, bio);  // one reference, owned by ssl_
    SSL_set_verify(ssl_, ctx_->verify_bits(role_), nullptr);
    if (role_ == SecurityRole::Client)
        SSL_set_connect_state(ssl_);
    else
        SSL_set_accept_state(ssl_);
    return 0;
}

int tls_socket_stream::set_hostname(const char* host) {
    if (!host || !*host) LOG_ERROR_RETURN(EINVAL, -1, "TLS hostname is empty");
    if (handshaken_) LOG_ERROR_RETURN(EISCONN, -1, "TLS hostname set after the handshake");
    ERR_clear_error();
    unsigned char ip[16];
    bool is_ip = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
    int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), host)
                   : SSL_set_tlsext_host_name(ssl_, host) && SSL_set1_host(ssl_, host);
    SSL_set_hostflags(ssl_, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (!ok) {
        log_openssl_error("cannot set the TLS hostname");
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int tls_socket_stream::set_alpn_protos(const std::vector<estring_view>& protos) {
    if (handshaken_) LOG_ERROR_RETURN(EISCONN, -1, "ALPN protocols set after the handshake");
    std::string wire;
    if (alpn_wire(protos, &wire) < 0) return -1;
    // SSL_set_alpn_protos returns 0 on success.
    if (SSL_set_alpn_protos(ssl_, (const unsigned char*)wire.data(), wire.size()) != 0)
        LOG_ERROR_RETURN(ENOMEM, -1, "SSL_set_alpn_protos failed");
    return 0;
}

std::string_view tls_socket_stream::alpn_selected() const {
    const unsigned char* p = nullptr;
    unsigned int n = 0;
    SSL_get0_alpn_selected(ssl_, &p, &n);
    return p ? std::string_view((const char*)p, n) : std::string_view();
}

void tls_socket_stream::timeout(uint64_t tm) {
    timeout_ = tm;
    underlay_->timeout(tm);
}

// Runs one base call bounded by what is left of t: the base stream only
// knows per-call timeouts. Setting and calling do not yield in between, so
// a reader and a writer each get their own.
template <typename F>
ssize_t tls_socket_stream::with_deadline(Timeout& t, F f) {
    if (t.expiration() == UINT64_MAX) return f();
    underlay_->timeout(t.timeout());
    ssize_t r = f();
    int e = errno;
    underlay_->timeout(timeout_);
    errno = e;
    return r;
}

// Refills in_ from base once it is used up. 1: data, 0: EOF, -1: errno.
int tls_socket_stream::fill_input(Timeout& t) {
    if (read_lock_.lock(t) < 0) return -1;
    DEFER(read_lock_.unlock());
    if (in_pos_ < in_len_) return 1;  // another coroutine filled it meanwhile
    if (in_eof_) return 0;
    ssize_t r = with_deadline(t, [&] { return underlay_->recv(in_.get(), kInCap); });
    if (r < 0) return -1;
    if (r == 0) {
        in_eof_ = true;
        return 0;
    }
    in_pos_ = 0;
    in_len_ = (size_t)r;
    return 1;
}

// Sends out_. must = false (readers): if someone is sending already, it
// sends our bytes too, as it loops until out_ is empty; don't wait for it.
int tls_socket_stream::flush_output(Timeout& t, bool must) {
    if (out_.empty() && !must) return 0;
    if (write_lock_.try_lock() != 0) {
        if (!must) return 0;
        if (write_lock_.lock(t) < 0) return -1;
    }
    DEFER(write_lock_.unlock());
    flushing_ = true;
    DEFER(flushing_ = false);
    while (!out_.empty() && !err_ && !send_err_) {
        sending_.clear();
        sending_.swap(out_);
        ssize_t r =
            with_deadline(t, [&] { return underlay_->write(sending_.data(), sending_.size()); });
        // Part of a record may be gone: nothing more can be sent. What the
        // peer sent can still be read (an answer it sent before it closed).
        if (r != (ssize_t)sending_.size()) send_err_ = r < 0 ? errno : EPIPE;
    }
    int e = err_ ? err_ : send_err_;
    if (e) errno = e;
    return e ? -1 : 0;
}

// Maps a failed SSL call to errno, logs it (the first failure only) and
// makes it sticky. Returns -1.
int tls_socket_stream::fatal(int ssl_ret, const char* op) {
    if (err_) {
        errno = err_;
        return -1;
    }
    int e = SSL_get_error(ssl_, ssl_ret);
    long v = SSL_get_verify_result(ssl_);
    bool verifying = SSL_get_verify_mode(ssl_) & SSL_VERIFY_PEER;
    std::string why;
    if (e == SSL_ERROR_SSL && !handshaken_ && verifying && v != X509_V_OK) {
        ERR_clear_error();
        why = std::string("peer certificate rejected: ") + X509_verify_cert_error_string(v);
        err_ = EACCES;
    } else if (in_eof_ && in_pos_ == in_len_) {
        ERR_clear_error();
        why = "peer closed without close_notify";
        err_ = ECONNRESET;
    } else {
        std::string reasons = openssl_errors();
        why = "failed (SSL_get_error " + std::to_string(e) +
              "): " + (reasons.empty() ? "no OpenSSL reason" : reasons);
        err_ = EPROTO;
    }
    // The peer causes each of these at will (a server's bad handshake, an
    // origin's cut response): like the HTTP parser's rejections, log them
    // rarely, at WARN, or any peer floods the log.
    LOG_EVERY_T(10, LOG_WARN("TLS ", op, ": ", why.c_str()));
    errno = err_;
    return -1;
}

int tls_socket_stream::handshake(Timeout t) {
    if (handshaken_) return 0;
    if (err_ || send_err_) {
        errno = err_ ? err_ : send_err_;
        return -1;
    }
    if (hs_deadline_ < t) t.expiration(hs_deadline_.expiration());
    if (hs_lock_.lock(t) < 0) return -1;
    DEFER(hs_lock_.unlock());
    while (!handshaken_) {
        if (err_ || send_err_) {
            errno = err_ ? err_ : send_err_;
            return -1;
        }
        ERR_clear_error();
        int r = SSL_do_handshake(ssl_);
        int e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, r);
        // Send even on failure: the peer should get our alert, not a hang.
        if (flush_output(t, true) < 0) return -1;
        if (r == 1) {
            handshaken_ = true;
        } else if (e == SSL_ERROR_WANT_READ) {
            if (fill_input(t) < 0) return -1;
        } else {
            return fatal(r, "handshake");
        }
    }
    return 0;
}

// One SSL_read. may_wait = false: -1 EAGAIN instead of waiting for base.
ssize_t tls_socket_stream::ssl_read(void* buf, size_t n, Timeout& t, bool may_wait) {
    if (handshake(t) < 0) return -1;
    while (true) {
        if (got_close_notify_) return 0;
        if (err_) {
            errno = err_;
            return -1;
        }
        if (in_pos_ == in_len_ && !in_eof_ && !SSL_has_pending(ssl_)) {
            // Nothing to decrypt: SSL_read could only say WANT_READ.
            if (!may_wait) {
                errno = EAGAIN;
                return -1;
            }
            if (fill_input(t) < 0) return -1;
            continue;
        }
        size_t got = 0;
        clear_ssl_errors();
        int r = SSL_read_ex(ssl_, buf, n, &got);
        int e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, r);
        flush_output(t, false);  // e.g. a key update's answer; a failure is sticky
        if (r == 1) return (ssize_t)got;
        if (e == SSL_ERROR_ZERO_RETURN) {
            got_close_notify_ = true;
            return 0;
        }
        if (e != SSL_ERROR_WANT_READ) return fatal(r, "read");
        if (!may_wait) {
            errno = EAGAIN;
            return -1;
        }
        if (fill_input(t) < 0) return -1;
    }
}

ssize_t tls_socket_stream::ssl_write(const void* buf, size_t n, Timeout& t) {
    if (handshake(t) < 0) return -1;
    if (err_ || send_err_ || sent_close_notify_) {
        errno = err_ ? err_ : send_err_ ? send_err_ : EPIPE;
        return -1;
    }
    size_t done = 0;
    clear_ssl_errors();
    thread_local std::string gathered;
    if (n > kMaxRecord) {
        gathered.clear();
        gather_ = &gathered;
    }
    int r = SSL_write_ex(ssl_, buf, std::min(n, kWriteChunk), &done);
    if (gather_) {
        gather_ = nullptr;
        size_t sent = send_direct(gathered.data(), gathered.size());
        if (sent < gathered.size()) out_.append(gathered, sent, std::string::npos);
    }
    int f = flush_output(t, true);
    if (r != 1) return fatal(r, "write");  // renegotiation is off: never WANT_READ
    return f < 0 ? -1 : (ssize_t)done;
}

// fill: read() semantics (fill iov unless EOF); else recv(): wait for the
// first bytes only, then take what has arrived already.
ssize_t tls_socket_stream::read_iov(const struct iovec* iov, int iovcnt, bool fill) {
    if (read_err_) {
        errno = read_err_;
        read_err_ = 0;
        return -1;
    }
    Timeout t(timeout_);
    size_t done = 0;
    for (int i = 0; i < iovcnt; i++) {
        for (size_t off = 0; off < iov[i].iov_len;) {
            bool wait = fill || done == 0;
            if (!wait && !readable_now()) return (ssize_t)done;
            ssize_t r = ssl_read((char*)iov[i].iov_base + off, iov[i].iov_len - off, t, wait);
            if (r == 0 || (r < 0 && !wait)) return (ssize_t)done;
            if (r < 0) {
                if (!done) return -1;
                read_err_ = errno;  // no byte already read may be lost
                return (ssize_t)done;
            }
            off += (size_t)r;
            done += (size_t)r;
        }
    }
    return (ssize_t)done;
}

// all: write() semantics; else send(): at most one chunk. Small iovecs are
// gathered so that a header and a body share a record.
ssize_t tls_socket_stream::write_iov(const struct iovec* iov, int iovcnt, bool all) {
    if (write_err_) {
        errno = write_err_;
        write_err_ = 0;
        return -1;
    }
    Timeout t(timeout_);
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
    if (iovcnt > 1 && total <= kSmallGather) {
        // Per thread: SSL_write takes it all before anything can park (the
        // handshake, which may, is done first), and it stays warm in cache.
        if (handshake(t) < 0) return -1;
        thread_local std::string g;
        g.clear();
        for (int i = 0; i < iovcnt; i++) g.append((const char*)iov[i].iov_base, iov[i].iov_len);
        struct iovec one = {&g[0], g.size()};
        return write_iov(&one, 1, all);
    }
    size_t done = 0;
    for (int i = 0; i < iovcnt; i++) {
        for (size_t off = 0; off < iov[i].iov_len;) {
            ssize_t r = ssl_write((const char*)iov[i].iov_base + off, iov[i].iov_len - off, t);
            if (r < 0) {
                if (!done) return -1;
                write_err_ = errno;
                return (ssize_t)done;
            }
            off += (size_t)r;
            done += (size_t)r;
            if (!all) return (ssize_t)done;
        }
    }
    return (ssize_t)done;
}

ssize_t tls_socket_stream::read(void* buf, size_t count) {
    struct iovec iov = {buf, count};
    return read_iov(&iov, 1, true);
}
ssize_t tls_socket_stream::readv(const struct iovec* iov, int iovcnt) {
    return read_iov(iov, iovcnt, true);
}
ssize_t tls_socket_stream::recv(void* buf, size_t count, int) {
    struct iovec iov = {buf, count};
    return read_iov(&iov, 1, false);
}
ssize_t tls_socket_stream::recv(const struct iovec* iov, int iovcnt, int) {
    return read_iov(iov, iovcnt, false);
}
ssize_t tls_socket_stream::write(const void* buf, size_t count) {
    struct iovec iov = {const_cast<void*>(buf), count};
    return write_iov(&iov, 1, true);
}
ssize_t tls_socket_stream::writev(const struct iovec* iov, int iovcnt) {
    return write_iov(iov, iovcnt, true);
}
ssize_t tls_socket_stream::send(const void* buf, size_t count, int) {
    struct iovec iov = {const_cast<void*>(buf), count};
    return write_iov(&iov, 1, false);
}
ssize_t tls_socket_stream::send(const struct iovec* iov, int iovcnt, int) {
    return write_iov(iov, iovcnt, false);
}

// No kTLS: the file is read here (pread blocks the vCPU briefly on a page
// cache miss) and encrypted like any write.
ssize_t tls_socket_stream::sendfile(int in_fd, off_t offset, size_t count) {
    std::unique_ptr<char[]> buf(new char[kWriteChunk]);
    size_t done = 0;
    while (done < count) {
        ssize_t n = ::pread(in_fd, buf.get(), std::min(count - done, kWriteChunk), offset);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) LOG_ERRNO_RETURN(0, done ? (ssize_t)done : -1, "sendfile: pread failed");
        if (n == 0) break;  // end of the file
        ssize_t w = write(buf.get(), (size_t)n);
        if (w < 0) return done ? (ssize_t)done : -1;
        done += (size_t)w;
        offset += w;
        if (w < n) break;
    }
    return (ssize_t)done;
}

void tls_socket_stream::send_close_notify() {
    if (!handshaken_ || err_ || send_err_ || sent_close_notify_) return;
    sent_close_notify_ = true;
    Timeout t(timeout_);
    ERR_clear_error();
    SSL_shutdown(ssl_);  // queues close_notify; we never wait for the peer's
    flush_output(t, true);
    ERR_clear_error();
}

int tls_socket_stream::shutdown(ShutdownHow how) {
    if (how != ShutdownHow::Read) send_close_notify();
    return underlay_->shutdown(how);
}

int tls_socket_stream::close() {
    if (closed_) return 0;
    closed_ = true;
    send_close_notify();
    return owned_ ? underlay_->close() : 0;
}

// ---- factories and helpers --------------------------------------------------

ISocketStream* make_tls_stream(TLSContext* ctx, ISocketStream* base, SecurityRole role,
                               bool ownership, bool handshake_now) {
    auto impl = dynamic_cast<tls_context_impl*>(ctx);
    if (!impl || !base) LOG_ERROR_RETURN(EINVAL, nullptr, "new_tls_stream: no context or base");
    std::unique_ptr<tls_socket_stream> s(new tls_socket_stream(impl, base, role, ownership));
    if (s->init() < 0) return nullptr;
    // A failed handshake (logged, sticky) fails the stream's I/O, as in
    // Photon, whose handlers use the stream without a check.
    if (handshake_now && role == SecurityRole::Server) s->handshake(Timeout(s->timeout()));
    return s.release();
}

ISocketStream* new_tls_stream(TLSContext* ctx, ISocketStream* base, SecurityRole role,
                              bool ownership) {
    return make_tls_stream(ctx, base, role, ownership, true);
}

namespace {
tls_socket_stream* as_tls(ISocketStream* s) {
    auto t = dynamic_cast<tls_socket_stream*>(s);
    if (!t) errno = EINVAL;
    return t;
}
}  // namespace

int tls_stream_set_hostname(ISocketStream* stream, const char* hostname) {
    auto t = as_tls(stream);
    if (!t) LOG_ERROR_RETURN(EINVAL, -1, "tls_stream_set_hostname: not a TLS stream");
    return t->set_hostname(hostname);
}

int tls_stream_set_alpn_protos(ISocketStream* stream, const std::vector<estring_view>& protos) {
    auto t = as_tls(stream);
    if (!t) LOG_ERROR_RETURN(EINVAL, -1, "tls_stream_set_alpn_protos: not a TLS stream");
    return t->set_alpn_protos(protos);
}

estring_view tls_stream_get_alpn_selected(ISocketStream* stream) {
    auto t = as_tls(stream);
    return t ? t->alpn_selected() : std::string_view();
}

int tls_stream_handshake(ISocketStream* stream) {
    auto t = as_tls(stream);
    if (!t) LOG_ERROR_RETURN(EINVAL, -1, "tls_stream_handshake: not a TLS stream");
    return t->handshake(Timeout(t->timeout()));
}

const char* tls_stream_get_version(ISocketStream* stream) {
    auto t = as_tls(stream);
    return t ? t->version() : nullptr;
}

}  // namespace net
}  // namespace photon
