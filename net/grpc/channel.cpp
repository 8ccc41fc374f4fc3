// The gRPC channel: calls as HTTP/2 streams of one client_connection
// (net/http2/client_connection.h), reopened when it dies or goes away.
#include <photon/net/grpc/channel.h>

#include <photon/common/alog.h>
#include <photon/common/timeout.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/net/utils.h>
#include <photon/thread/thread.h>

#include <cstring>
#include <vector>

#include "../http2/client_connection.h"
#include "wire.h"

namespace photon {
namespace net {
namespace grpc {

namespace {

struct connection {
    std::unique_ptr<ISocketStream> sock;
    std::unique_ptr<http2::client_connection> h2;
    int calls = 0;
    bool retired = false;
    ~connection() { h2.reset(); }  // before the socket it reads
};

}  // namespace

struct Channel::Impl {
    std::string host, authority, scheme;
    uint16_t port = 0;
    bool bad_target = false;
    ChannelOptions opt;
    std::unique_ptr<ISocketClient> tcp;
    connection* cur = nullptr;
    mutex connecting;
    size_t opened = 0;

    connection* acquire(Timeout deadline, Status* st);
    void release(connection* c) {
        if (--c->calls == 0 && c->retired) delete c;
    }
    void retire(connection* c) {
        if (cur == c) cur = nullptr;
        if (c->retired) return;
        c->retired = true;
        if (c->calls == 0) delete c;
    }
    ISocketStream* dial(Timeout deadline, Status* st);
};

ISocketStream* Channel::Impl::dial(Timeout deadline, Status* st) {
    if (bad_target) return *st = Status(StatusCode::UNAVAILABLE, "bad target"), nullptr;
    IPAddr addr(host.c_str());
    if (addr.undefined() && host != "0.0.0.0") {
        std::vector<IPAddr> addrs;
        if (gethostbyname_nb(host, addrs, deadline) <= 0 || addrs.empty()) {
            *st = Status(StatusCode::UNAVAILABLE, "cannot resolve " + host);
            return nullptr;
        }
        addr = addrs[0];
    }
    if (!tcp) tcp.reset(new_tcp_socket_client());
    uint64_t t = std::min<uint64_t>(deadline.timeout(), opt.connect_timeout);
    tcp->timeout(t);
    std::unique_ptr<ISocketStream> s(tcp->connect(EndPoint(addr, port)));
    if (!s) {
        std::string why = ::strerror(errno);
        *st = Status(StatusCode::UNAVAILABLE,
                     "cannot connect to " + host + ":" + std::to_string(port) + ": " + why);
        return nullptr;
    }
    if (opt.tls) {
        std::unique_ptr<ISocketStream> tls(
            new_tls_stream(opt.tls, s.get(), SecurityRole::Client, true));
        if (!tls) return *st = Status(StatusCode::UNAVAILABLE, "no TLS stream"), nullptr;
        s.release();
        if (IPAddr(host.c_str()).undefined()) tls_stream_set_hostname(tls.get(), host.c_str());
        tls->timeout(t);
        if (tls_stream_handshake(tls.get()) < 0) {
            std::string why = ::strerror(errno);
            *st = Status(StatusCode::UNAVAILABLE, "TLS handshake failed: " + why);
            return nullptr;
        }
        if (tls_stream_get_alpn_selected(tls.get()) != "h2") {
            *st = Status(StatusCode::UNAVAILABLE, "the server did not select ALPN h2");
            return nullptr;
        }
        s = std::move(tls);
    }
    s->timeout(-1);
    return s.release();
}

connection* Channel::Impl::acquire(Timeout deadline, Status* st) {
    while (true) {
        if (cur && cur->h2->usable()) {
            cur->calls++;
            return cur;
        }
        if (connecting.lock(deadline) < 0) {
            *st = Status(StatusCode::DEADLINE_EXCEEDED, "deadline exceeded while connecting");
            return nullptr;
        }
        DEFER(connecting.unlock());
        if (cur && cur->h2->usable()) continue;  // another coroutine connected meanwhile
        if (cur) retire(cur);
        ISocketStream* s = dial(deadline, st);
        if (!s) return nullptr;
        auto c = new connection;
        c->sock.reset(s);
        http2::connection_options o;
        o.initial_window_size = opt.initial_window_size;
        o.connection_window = opt.connection_window;
        c->h2.reset(new http2::client_connection(s, o));
        if (c->h2->start() < 0) {
            *st = Status(StatusCode::UNAVAILABLE, "HTTP/2 start failed");
            delete c;
            return nullptr;
        }
        opened++;
        cur = c;
    }
}

namespace {

class client_call_impl final : public ClientCall {
public:
    using ClientCall::write;
    client_call_impl(Channel::Impl* ch, const std::string& method, const CallOptions& opt)
        : ch_(ch), opt_(opt), deadline_(opt.timeout), reader_(ch->opt.max_receive_message_size) {
        method_ = method;
    }
    ~client_call_impl() override {
        if (!over_) cancel();
        drop();
    }

    bool unprocessed() const { return unprocessed_; }

    // Opens the stream with the request head; false: the call failed.
    bool start() {
        if (opt_.compression == Compression::gzip && !gzip_supported())
            return fail(StatusCode::UNIMPLEMENTED, "gzip: photon was built without zlib");
        if (!valid_metadata_list(opt_.metadata))
            return fail(StatusCode::INTERNAL, "invalid request metadata");
        std::vector<header_field> f = {{":method", "POST"},
                                       {":scheme", ch_->scheme},
                                       {":authority", ch_->authority},
                                       {":path", method_},
                                       {"content-type", "application/grpc"},
                                       {"te", "trailers"}};
        if (opt_.timeout != UINT64_MAX)
            f.push_back({"grpc-timeout", format_timeout(deadline_.timeout())});
        if (opt_.compression == Compression::gzip) f.push_back({"grpc-encoding", "gzip"});
        if (gzip_supported()) f.push_back({"grpc-accept-encoding", "identity,gzip"});
        f.push_back({"user-agent", "photon-grpc/1.0"});
        metadata_to_fields(opt_.metadata, &f);
        for (int attempt = 0;; attempt++) {
            Status st;
            conn_ = ch_->acquire(deadline_, &st);
            if (!conn_) return fail(st.code, st.message);
            s_ = conn_->h2->request(f, false, deadline_.timeout());
            if (s_) return true;
            int e = errno;
            ch_->retire(conn_);  // it will not take more streams
            ch_->release(conn_);
            conn_ = nullptr;
            if (e == ETIMEDOUT || deadline_.expired())
                return fail(StatusCode::DEADLINE_EXCEEDED, "deadline exceeded");
            if (e != EAGAIN || attempt + 1 >= ch_->opt.max_attempts) {
                unprocessed_ = e == EAGAIN;
                return fail(StatusCode::UNAVAILABLE, "the connection failed");
            }
        }
    }

    int write(const void* msg, size_t n) override {
        if (over_ || !s_ || write_failed_) return errno = ECONNRESET, -1;
        if (half_closed_) return errno = EPIPE, -1;
        std::string z;
        bool compressed = opt_.compression == Compression::gzip;
        if (compressed) {
            if (gzip_compress(std::string_view((const char*)msg, n), &z) < 0)
                return fail(StatusCode::INTERNAL, "gzip failed"), -1;
            msg = z.data();
            n = z.size();
        }
        buf_.resize(5 + n);
        write_prefix(compressed, (uint32_t)n, &buf_[0]);
        memcpy(&buf_[5], msg, n);
        if (s_->write(buf_.data(), buf_.size(), deadline_.timeout()) != (ssize_t)buf_.size()) {
            if (errno == ETIMEDOUT || deadline_.expired())
                return fail(StatusCode::DEADLINE_EXCEEDED, "deadline exceeded"), -1;
            write_failed_ = true;  // the response (if any) says why: finish()
            return errno = ECONNRESET, -1;
        }
        return 0;
    }

    int writes_done() override {
        if (half_closed_) return 0;
        half_closed_ = true;
        if (over_ || !s_ || write_failed_) return errno = ECONNRESET, -1;
        if (s_->finish() < 0) {
            write_failed_ = true;
            return -1;
        }
        return 0;
    }

    const Metadata& initial_metadata() override {
        head();
        return initial_md_;
    }

    int read(std::string* msg) override {
        if (!head()) return over_ && status_.ok() ? 0 : -1;
        while (true) {
            bool compressed = false;
            auto r = reader_.next(&compressed, msg);
            if (r == message_reader::kMessage) {
                if (!compressed) return 1;
                if (!resp_gzip_)
                    return fail(StatusCode::INTERNAL, "compressed message without grpc-encoding"),
                           -1;
                std::string plain;
                if (gzip_decompress(*msg, ch_->opt.max_receive_message_size, &plain) < 0)
                    return fail(errno == EMSGSIZE ? StatusCode::RESOURCE_EXHAUSTED
                                                  : StatusCode::INTERNAL,
                                "cannot decompress a response message"),
                           -1;
                msg->swap(plain);
                return 1;
            }
            if (r == message_reader::kBadFlag)
                return fail(StatusCode::INTERNAL, "bad compressed flag"), -1;
            if (r == message_reader::kTooLarge)
                return fail(StatusCode::RESOURCE_EXHAUSTED,
                            "response message larger than max_receive_message_size"),
                       -1;
            if (eof_) {
                if (reader_.partial()) return fail(StatusCode::INTERNAL, "truncated message"), -1;
                trailers();
                return 0;
            }
            const size_t chunk = reader_.want();
            ssize_t n = s_->read(reader_.reserve(chunk), chunk, deadline_.timeout());
            reader_.commit(n > 0 ? n : 0);
            if (n == 0) eof_ = true;
            if (n < 0) return stream_failed(), -1;
        }
    }

    Status finish() override {
        if (!over_) {
            if (!half_closed_) writes_done();
            std::string m;
            while (!over_ && read(&m) == 1) {
            }
            if (!over_) fail(StatusCode::INTERNAL, "the response ended without a status");
        }
        drop();
        return status_;
    }

    const Metadata& trailing_metadata() const override { return trailing_md_; }

    void cancel() override {
        if (over_) return;
        fail(StatusCode::CANCELLED, "cancelled");
    }

private:
    // The call's status is final; the stream is reset if it is still open.
    bool fail(StatusCode code, std::string msg) {
        if (over_) return false;
        over_ = true;
        status_ = Status(code, std::move(msg));
        if (s_ && !eof_) s_->reset(http2::ErrorCode::CANCEL);
        return false;
    }
    void stream_failed() {
        int e = errno;
        if (e == ETIMEDOUT || deadline_.expired())
            fail(StatusCode::DEADLINE_EXCEEDED, "deadline exceeded");
        else if (e == EPROTO)
            fail(StatusCode::INTERNAL, "malformed HTTP/2 response");
        else if (e == EAGAIN)
            unprocessed_ = true,
            fail(StatusCode::UNAVAILABLE, "refused by the server (not processed)");
        else
            fail(StatusCode::UNAVAILABLE, "the stream was reset");
    }
    // Waits for the response head; false if the call is over.
    bool head() {
        if (head_) return !over_;
        if (over_ || !s_) return false;
        int http = s_->response(deadline_.timeout());
        if (http < 0) return stream_failed(), false;
        head_ = true;
        auto& f = s_->response_fields();
        if (find_field(f, "grpc-status")) {  // trailers-only
            eof_ = true;
            status_from(f);
            return false;
        }
        if (http != 200) {
            return fail(code_from_http(http), "HTTP status " + std::to_string(http));
        }
        auto ct = find_field(f, "content-type");
        if (!ct || ct->compare(0, 16, "application/grpc") != 0)
            return fail(StatusCode::UNKNOWN, "content-type is not application/grpc");
        if (auto enc = find_field(f, "grpc-encoding")) {
            if (*enc == "gzip" && gzip_supported())
                resp_gzip_ = true;
            else if (*enc != "identity")
                return fail(StatusCode::INTERNAL, "unsupported grpc-encoding " + *enc);
        }
        if (!metadata_from_fields(f, &initial_md_))
            return fail(StatusCode::INTERNAL, "malformed binary metadata");
        return true;
    }
    void trailers() { status_from(s_->trailers()); }
    void status_from(const std::vector<header_field>& f) {
        auto gs = find_field(f, "grpc-status");
        if (!gs) return (void)fail(StatusCode::INTERNAL, "no grpc-status in the trailers");
        char* end = nullptr;
        long code = strtol(gs->c_str(), &end, 10);
        if (gs->empty() || *end || code < 0) code = (long)StatusCode::UNKNOWN;
        auto gm = find_field(f, "grpc-message");
        trailing_md_.clear();
        metadata_from_fields(f, &trailing_md_);
        over_ = true;
        status_ = Status((StatusCode)code, gm ? percent_decode(*gm) : std::string());
    }
    void drop() {
        if (s_) {
            conn_->h2->release(s_);
            s_ = nullptr;
        }
        if (conn_) {
            ch_->release(conn_);
            conn_ = nullptr;
        }
    }

    Channel::Impl* ch_;
    std::string method_;
    CallOptions opt_;
    Timeout deadline_;
    connection* conn_ = nullptr;
    http2::client_stream* s_ = nullptr;
    Status status_;
    bool over_ = false, head_ = false, eof_ = false, half_closed_ = false, write_failed_ = false;
    bool resp_gzip_ = false, unprocessed_ = false;
    Metadata initial_md_, trailing_md_;
    message_reader reader_;
    std::string buf_;
};

}  // namespace

Channel::Channel(const std::string& target, const ChannelOptions& opt) : impl_(new Impl) {
    auto c = impl_;
    c->opt = opt;
    std::string t = target;
    if (t.compare(0, 7, "dns:///") == 0) t = t.substr(7);
    size_t colon = t.rfind(':');
    if (colon == std::string::npos || colon + 1 == t.size()) {
        c->bad_target = true;
    } else {
        c->host = t.substr(0, colon);
        if (c->host.size() > 1 && c->host.front() == '[' && c->host.back() == ']')
            c->host = c->host.substr(1, c->host.size() - 2);
        c->port = (uint16_t)atoi(t.c_str() + colon + 1);
        if (c->port == 0) c->bad_target = true;
    }
    c->authority = opt.authority.empty() ? t : opt.authority;
    c->scheme = opt.tls ? "https" : "http";
}

Channel::~Channel() {
    if (impl_->cur) impl_->retire(impl_->cur);
    delete impl_;
}

Status Channel::call(const std::string& method, const std::string& request, std::string* response,
                     const CallOptions& opt) {
    Timeout deadline(opt.timeout);
    CallOptions o = opt;
    for (int attempt = 0;; attempt++) {
        o.timeout = opt.timeout == UINT64_MAX ? UINT64_MAX : deadline.timeout();
        client_call_impl call(impl_, method, o);
        Status st;
        if (call.start()) {
            call.write(request);
            call.writes_done();
            std::string msg;
            int r = call.read(response ? response : &msg);
            if (r == 1) {
                std::string extra;
                if (call.read(&extra) == 1) {
                    call.cancel();
                    return Status(StatusCode::INTERNAL, "more than one response message");
                }
            }
            st = call.finish();
            if (st.ok() && r != 1) st = Status(StatusCode::INTERNAL, "no response message");
            if (opt.initial_metadata) *opt.initial_metadata = call.initial_metadata();
            if (opt.trailing_metadata) *opt.trailing_metadata = call.trailing_metadata();
        } else {
            st = call.finish();
        }
        if (st.code == StatusCode::UNAVAILABLE && call.unprocessed() &&
            attempt + 1 < impl_->opt.max_attempts && !deadline.expired())
            continue;  // the server never processed it: safe to send again
        return st;
    }
}

std::unique_ptr<ClientCall> Channel::start_call(const std::string& method, const CallOptions& opt) {
    auto c = new client_call_impl(impl_, method, opt);
    c->start();
    return std::unique_ptr<ClientCall>(c);
}

size_t Channel::connections_opened() const { return impl_->opened; }

}  // namespace grpc
}  // namespace net
}  // namespace photon
