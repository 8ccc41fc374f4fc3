// tls_socket_stream: a TLS session over a base ISocketStream. Private header
// of net/security-context/. Socket options and names are the base's; the
// I/O, close, shutdown and timeout are the session's own.
//
// OpenSSL never parks on the base stream: its BIO reads from in_ and appends
// to out_ (or, with nothing queued, sends with one non-blocking syscall), so
// SSL_* calls never park and need no lock (a stream's coroutines
// share one vCPU). Only moving bytes between the base stream and those
// buffers parks, under read_lock_ / write_lock_. That lets one coroutine wait
// in read while another writes, which a BIO calling base->recv from inside
// SSL_read could not allow.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include <photon/common/timeout.h>
#include <photon/thread/thread.h>

#include "../forward_socket.h"
#include "tls_context.h"

namespace photon {
namespace net {

class kernel_socket_stream;

class tls_socket_stream : public ForwardSocketStream {
public:
    tls_socket_stream(tls_context_impl* ctx, ISocketStream* base, SecurityRole role, bool own);
    ~tls_socket_stream() override;
    int init();  // -1 with errno if OpenSSL cannot make the session
    int handshake(Timeout t);
    int set_hostname(const char* host);
    std::string_view alpn_selected() const;
    int set_alpn_protos(const std::vector<estring_view>& protos);
    const char* version() const { return handshaken_ ? SSL_get_version(ssl_) : nullptr; }

    int close() override;
    int shutdown(ShutdownHow how) override;
    ssize_t read(void* buf, size_t count) override;
    ssize_t readv(const struct iovec* iov, int iovcnt) override;
    ssize_t write(const void* buf, size_t count) override;
    ssize_t writev(const struct iovec* iov, int iovcnt) override;
    ssize_t recv(void* buf, size_t count, int flags = 0) override;
    ssize_t recv(const struct iovec* iov, int iovcnt, int flags = 0) override;
    ssize_t send(const void* buf, size_t count, int flags = 0) override;
    ssize_t send(const struct iovec* iov, int iovcnt, int flags = 0) override;
    ssize_t sendfile(int in_fd, off_t offset, size_t count) override;
    uint64_t timeout() const override { return timeout_; }
    void timeout(uint64_t tm) override;

private:
    friend struct tls_bio;

    ssize_t read_iov(const struct iovec* iov, int iovcnt, bool fill);
    ssize_t write_iov(const struct iovec* iov, int iovcnt, bool all);
    ssize_t ssl_read(void* buf, size_t n, Timeout& t, bool may_wait);
    ssize_t ssl_write(const void* buf, size_t n, Timeout& t);
    int fill_input(Timeout& t);
    int flush_output(Timeout& t, bool must);
    int fatal(int ssl_ret, const char* op);
    void send_close_notify();
    bool readable_now() const { return in_pos_ < in_len_ || SSL_pending(ssl_) > 0; }
    template <typename F>
    ssize_t with_deadline(Timeout& t, F f);

    // After the handshake, a record goes out from OpenSSL's buffer with one
    // non-blocking send when nothing is queued before it; only what that
    // send leaves is copied to out_. Set when base is a kernel socket.
    size_t send_direct(const char* data, size_t n);
    // An SSL_write of more than one record collects them here (a buffer of the OS
    // thread's: nothing parks meanwhile) and sends them in one send, not one each.
    std::string* gather_ = nullptr;

    tls_context_impl* ctx_;
    kernel_socket_stream* kernel_base_ = nullptr;
    SecurityRole role_;
    SSL* ssl_ = nullptr;
    uint64_t timeout_;
    Timeout hs_deadline_;  // a server's handshake ends by then (the context's limit)

    std::unique_ptr<char[]> in_;  // ciphertext from base, not yet given to OpenSSL
    size_t in_pos_ = 0, in_len_ = 0;
    bool in_eof_ = false;  // base recv gave 0
    std::string out_;      // ciphertext OpenSSL wrote, not yet sent
    std::string sending_;  // what the write_lock_ holder is sending now

    mutex read_lock_, write_lock_, hs_lock_;
    bool flushing_ = false;  // a flush_output loop owns the send side
    bool handshaken_ = false;
    bool got_close_notify_ = false;
    bool sent_close_notify_ = false;
    bool closed_ = false;
    int err_ = 0;       // sticky: a TLS failure; reads and writes fail with it
    int send_err_ = 0;  // sticky: a lost send; writes fail with it, reads go on
    int read_err_ = 0;  // cut a read short; the next read reports it
    int write_err_ = 0;
};

// new_tls_stream(); a server stream handshakes here only if handshake_now,
// else on its first I/O (as a client stream does).
ISocketStream* make_tls_stream(TLSContext* ctx, ISocketStream* base, SecurityRole role,
                               bool ownership, bool handshake_now);

}  // namespace net
}  // namespace photon
