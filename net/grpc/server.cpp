// The gRPC server: a call per HTTP/2 request stream (net/http2/server_connection.h).
#include <photon/net/grpc/server.h>

#include <photon/common/alog.h>
#include <photon/common/timeout.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

#include "../http2/server_connection.h"
#include "wire.h"

namespace photon {
namespace net {
namespace grpc {

namespace {

struct call_impl;
struct conn_state;

struct registered_method {
    UnaryHandler unary;
    StreamingHandler streaming;
};

}  // namespace

struct Server::Impl {
    ServerOptions opt;
    std::unordered_map<std::string, registered_method> methods;
    std::mutex lock;  // conns: connections may be served on several vCPUs
    std::set<conn_state*> conns;
    std::atomic<size_t> nconns{0}, calls{0};
    std::atomic<bool> stopping{false};

    // Stops the connections (GOAWAY, calls in flight finish): each serving
    // coroutine is interrupted out of its read (any vCPU may do it).
    void stop_all();

    void serve_call(conn_state* cs, http2::Stream& s);
};

namespace {

// Per connection: the calls with deadlines, and the coroutine that ends
// them when their time comes.
struct conn_state {
    http2::server_connection* sc = nullptr;
    ISocketStream* sock = nullptr;
    thread* reader = nullptr;  // the serving coroutine
    std::atomic<bool> stop_flag{false};
    std::atomic<bool> stopped{false};  // it saw the flag (GOAWAY sent)
    std::multimap<uint64_t, call_impl*> deadlines;
    thread* dog = nullptr;
    join_handle* dog_join = nullptr;
    uint64_t dog_wake = UINT64_MAX;
    bool closing = false;
    condition_variable dog_idle;  // the watchdog finished a call's status

    void add(call_impl* c);
    void remove(call_impl* c);
    void watch();
    void close() {
        closing = true;
        if (dog) {
            thread_interrupt(dog, ECANCELED);
            thread_join(dog_join);
        }
    }
};

const char kAcceptEncoding[] = "identity,gzip";
const std::string kEmpty;

struct call_impl final : ServerCall {
    using ServerCall::write;
    Server::Impl* srv;
    conn_state* conn;
    http2::Stream& s;
    const std::string* method_ = &kEmpty;  // the request's fields, which outlive the call
    const std::string* authority_ = &kEmpty;
    Metadata client_md_, initial_md_, trailing_md_;
    uint64_t deadline_ = UINT64_MAX;
    std::multimap<uint64_t, call_impl*>::iterator dl_it_;
    bool head_sent_ = false, done_ = false, in_io_ = false, expired_ = false;
    bool cancelled_ = false, eof_ = false, req_gzip_ = false, accepts_gzip_ = false;
    Compression out_ = Compression::none;
    bool forced_ = false;
    bool dog_busy_ = false;  // the watchdog is sending its DEADLINE_EXCEEDED
    Status forced_status_;
    int forced_errno_ = 0;
    message_reader reader_;

    call_impl(Server::Impl* sv, conn_state* cs, http2::Stream& st)
        : srv(sv), conn(cs), s(st), reader_(sv->opt.max_receive_message_size) {}

    const std::string& method() const override { return *method_; }
    const std::string& authority() const override { return *authority_; }
    const Metadata& client_metadata() const override { return client_md_; }
    uint64_t deadline() const override { return deadline_; }
    bool cancelled() const override { return cancelled_ || expired_ || done_; }

    uint64_t time_left() const {
        if (deadline_ == UINT64_MAX) return UINT64_MAX;
        Timeout t;
        t.expiration(deadline_);
        return t.timeout();
    }
    bool past_deadline() const { return deadline_ != UINT64_MAX && time_left() == 0; }
    int over_errno() const { return expired_ || past_deadline() ? ETIMEDOUT : ECONNRESET; }

    int add_initial_metadata(const std::string& k, const std::string& v) override {
        if (!valid_metadata(k, v)) return errno = EINVAL, -1;
        if (head_sent_ || done_) return errno = EALREADY, -1;
        initial_md_.emplace_back(k, v);
        return 0;
    }
    int add_trailing_metadata(const std::string& k, const std::string& v) override {
        if (!valid_metadata(k, v)) return errno = EINVAL, -1;
        if (done_) return errno = EALREADY, -1;
        trailing_md_.emplace_back(k, v);
        return 0;
    }
    int set_compression(Compression c) override {
        if (c == Compression::gzip && !gzip_supported()) return errno = ENOSYS, -1;
        if (head_sent_ && c != out_) return errno = EALREADY, -1;
        out_ = c;
        return 0;
    }

    std::vector<header_field> head_fields() {
        std::vector<header_field> f = {{":status", "200"}, {"content-type", "application/grpc"}};
        if (out_ == Compression::gzip) f.push_back({"grpc-encoding", "gzip"});
        if (gzip_supported()) f.push_back({"grpc-accept-encoding", kAcceptEncoding});
        metadata_to_fields(initial_md_, &f);
        return f;
    }
    int send_initial_metadata() override {
        if (done_) return errno = over_errno(), -1;
        if (head_sent_) return 0;
        head_sent_ = true;
        in_io_ = true;
        // The usual head needs no vector of its own (no allocation per call).
        static const std::vector<header_field> plain = {{":status", "200"},
                                                        {"content-type", "application/grpc"}};
        static const std::vector<header_field> plain_gzip = {
            {":status", "200"},
            {"content-type", "application/grpc"},
            {"grpc-accept-encoding", kAcceptEncoding}};
        bool usual = out_ == Compression::none && initial_md_.empty();
        int r = usual ? s.respond(gzip_supported() ? plain_gzip : plain, false)
                      : s.respond(head_fields(), false);
        in_io_ = false;
        if (r < 0) return fail_io();
        return 0;
    }
    int fail_io() {
        int e = over_errno();
        if (e == ECONNRESET) cancelled_ = true;
        return errno = e, -1;
    }
    // A peer's mistake found while reading: the call's status is fixed.
    int force(StatusCode code, const char* msg, int e) {
        if (!forced_) {
            forced_ = true;
            forced_status_ = Status(code, msg);
            forced_errno_ = e;
        }
        return errno = forced_errno_, -1;
    }

    int read(std::string* msg) override {
        if (forced_) return errno = forced_errno_, -1;
        while (true) {
            bool compressed = false;
            auto r = reader_.next(&compressed, msg);
            if (r == message_reader::kMessage) {
                if (!compressed) return 1;
                if (!req_gzip_)
                    return force(StatusCode::INTERNAL, "compressed flag set without grpc-encoding",
                                 EPROTO);
                std::string plain;
                if (gzip_decompress(*msg, srv->opt.max_receive_message_size, &plain) < 0) {
                    if (errno == EMSGSIZE)
                        return force(StatusCode::RESOURCE_EXHAUSTED,
                                     "decompressed message larger than the limit", EMSGSIZE);
                    return force(StatusCode::INTERNAL, "bad gzip data", EPROTO);
                }
                msg->swap(plain);
                return 1;
            }
            if (r == message_reader::kBadFlag)
                return force(StatusCode::INTERNAL, "bad compressed flag", EPROTO);
            if (r == message_reader::kTooLarge)
                return force(StatusCode::RESOURCE_EXHAUSTED,
                             "message larger than max_receive_message_size", EMSGSIZE);
            if (eof_) {
                if (reader_.partial())
                    return force(StatusCode::INTERNAL, "truncated message", EPROTO);
                return 0;
            }
            if (done_) return errno = over_errno(), -1;
            const size_t chunk = reader_.want();
            in_io_ = true;
            ssize_t n = s.read(reader_.reserve(chunk), chunk, time_left());
            in_io_ = false;
            reader_.commit(n > 0 ? n : 0);
            if (n == 0) eof_ = true;
            if (n < 0) return fail_io();
        }
    }

    // The message with its prefix (compressed as asked) in out.
    int frame(const void* msg, size_t n, std::string* out) {
        if (n > srv->opt.max_send_message_size) return errno = EMSGSIZE, -1;
        std::string z;
        bool compressed = out_ == Compression::gzip;
        if (compressed) {
            if (gzip_compress(std::string_view((const char*)msg, n), &z) < 0) return -1;
            msg = z.data();
            n = z.size();
        }
        out->resize(5 + n);
        write_prefix(compressed, (uint32_t)n, &(*out)[0]);
        memcpy(&(*out)[5], msg, n);
        return 0;
    }

    int write(const void* msg, size_t n) override {
        if (done_) return errno = over_errno(), -1;
        std::string buf;
        if (frame(msg, n, &buf) < 0) return -1;
        if (!head_sent_ && send_initial_metadata() < 0) return -1;
        in_io_ = true;
        ssize_t r = s.write(buf.data(), buf.size(), time_left());
        in_io_ = false;
        if (r != (ssize_t)buf.size()) {
            int e = over_errno();
            if (e == ETIMEDOUT) {  // half a message may be out: the stream cannot go on
                expired_ = done_ = true;
                s.reset(http2::ErrorCode::CANCEL);
            }
            return fail_io();
        }
        return 0;
    }

    std::vector<header_field> status_fields(const Status& st) {
        std::vector<header_field> f;
        f.push_back({"grpc-status", std::to_string((int)st.code)});
        if (!st.message.empty()) f.push_back({"grpc-message", percent_encode(st.message)});
        metadata_to_fields(trailing_md_, &f);
        return f;
    }

    // Sends the status (trailers, or a trailers-only response).
    void finish_call(Status st, const std::string* unary_response = nullptr) {
        if (done_) return;
        if (forced_) st = forced_status_;
        if (expired_ || past_deadline())
            st = Status(StatusCode::DEADLINE_EXCEEDED, "deadline exceeded");
        if (cancelled_) {
            done_ = true;
            return;
        }
        if (st.ok() && unary_response) {
            if (unary_response->size() > srv->opt.max_send_message_size)
                st = Status(StatusCode::RESOURCE_EXHAUSTED, "response larger than the limit");
            else if (write(unary_response->data(), unary_response->size()) < 0)
                return;  // the call is over (cancelled, or its deadline passed)
        }
        done_ = true;
        in_io_ = true;
        if (!head_sent_) {
            head_sent_ = true;
            auto f = head_fields();
            f.resize(2);  // :status and content-type
            auto t = status_fields(st);
            f.insert(f.end(), t.begin(), t.end());
            s.respond(f, true);
        } else if (st.ok() && trailing_md_.empty()) {
            static const std::vector<header_field> ok = {{"grpc-status", "0"}};
            s.finish(&ok);
        } else {
            auto t = status_fields(st);
            s.finish(&t);
        }
        // A request body not read to its end: the rest is refused now, by
        // a reset (RFC 9113 8.1), so that DATA still on its way is dropped
        // as on a reset stream rather than taken for DATA on a closed one.
        if (!eof_) {
            ssize_t n = s.read(reader_.reserve(1), 1, 0);
            reader_.commit(0);
            if (n != 0) s.reset(http2::ErrorCode::NO_ERROR);
        }
        in_io_ = false;
    }
};

void conn_state::add(call_impl* c) {
    c->dl_it_ = deadlines.emplace(c->deadline_, c);
    if (!dog) {
        dog = thread_create11(&conn_state::watch, this);
        if (dog) dog_join = thread_enable_join(dog);
    } else if (c->deadline_ < dog_wake) {
        thread_interrupt(dog, EAGAIN);
    }
}

void conn_state::remove(call_impl* c) { deadlines.erase(c->dl_it_); }

void conn_state::watch() {
    while (!closing) {
        // With no call to watch it still wakes each second: a call that
        // comes with a deadline further off then needs no interrupt (one
        // per call would cost two switches, for calls that end in time).
        Timeout t(1000 * 1000);
        if (!deadlines.empty() && deadlines.begin()->first < t.expiration())
            t.expiration(deadlines.begin()->first);
        dog_wake = t.expiration();
        if (!t.expired() && thread_usleep(t) < 0) continue;  // a nearer deadline, or the end
        while (!deadlines.empty()) {
            Timeout first;
            first.expiration(deadlines.begin()->first);
            if (!first.expired()) break;
            call_impl* c = deadlines.begin()->second;
            deadlines.erase(deadlines.begin());
            c->dl_it_ = deadlines.end();
            c->expired_ = true;
            // A read or write of the handler is bounded by the deadline itself;
            // otherwise the client hears DEADLINE_EXCEEDED now, and the
            // handler's later calls fail (it is not interrupted: it may be in
            // the middle of other I/O that must not be cut).
            if (c->in_io_) continue;
            c->dog_busy_ = true;
            c->finish_call(Status());
            c->dog_busy_ = false;
            dog_idle.notify_all();
        }
    }
}

}  // namespace

void Server::Impl::stop_all() {
    std::lock_guard<std::mutex> g(lock);
    for (auto c : conns) {
        if (c->stopped) continue;  // once it stopped, an interrupt could only cut its I/O
        c->stop_flag = true;
        thread_interrupt(c->reader, ECANCELED);
    }
}

void Server::Impl::serve_call(conn_state* cs, http2::Stream& s) {
    call_impl call(this, cs, s);
    auto reply = [&](StatusCode code, const char* msg) { call.finish_call(Status(code, msg)); };
    if (s.field(":method") != "POST") {
        s.respond({{":status", "405"}, {"allow", "POST"}}, true);
        return;
    }
    auto ct = s.field("content-type");
    if (ct.compare(0, 16, "application/grpc") != 0 ||
        (ct.size() > 16 && ct[16] != '+' && ct[16] != ';')) {
        s.respond({{":status", "415"},
                   {"grpc-status", std::to_string((int)StatusCode::INTERNAL)},
                   {"grpc-message", "content-type is not application/grpc"}},
                  true);
        return;
    }
    auto& fields = s.request();
    if (auto p = find_field(fields, ":path")) call.method_ = p;
    if (auto a = find_field(fields, ":authority")) call.authority_ = a;
    if (auto enc = find_field(fields, "grpc-accept-encoding"))
        call.accepts_gzip_ = enc->find("gzip") != std::string::npos && gzip_supported();
    if (auto enc = find_field(fields, "grpc-encoding")) {
        if (*enc == "gzip" && gzip_supported()) {
            call.req_gzip_ = true;
        } else if (*enc != "identity") {
            call.trailing_md_.clear();
            std::vector<header_field> f = {
                {":status", "200"},
                {"content-type", "application/grpc"},
                {"grpc-status", std::to_string((int)StatusCode::UNIMPLEMENTED)},
                {"grpc-message", percent_encode("grpc-encoding " + *enc + " not supported")},
                {"grpc-accept-encoding", gzip_supported() ? kAcceptEncoding : "identity"}};
            s.respond(f, true);
            return;
        }
    }
    if (call.req_gzip_ && call.accepts_gzip_) call.out_ = Compression::gzip;
    if (auto t = find_field(fields, "grpc-timeout")) {
        uint64_t us;
        if (!parse_timeout(*t, &us)) return reply(StatusCode::INTERNAL, "malformed grpc-timeout");
        Timeout d(us);
        call.deadline_ = d.expiration();
    }
    if (!metadata_from_fields(fields, &call.client_md_))
        return reply(StatusCode::INTERNAL, "malformed binary metadata");
    auto it = methods.find(*call.method_);
    if (it == methods.end())
        return reply(StatusCode::UNIMPLEMENTED, ("unknown method " + *call.method_).c_str());

    calls++;
    if (call.deadline_ != UINT64_MAX) cs->add(&call);
    Status st;
    std::string response;
    bool unary = bool(it->second.unary);
    if (unary) {
        std::string req, extra;
        int r = call.read(&req);
        int r2 = r == 1 ? call.read(&extra) : 0;
        if (r == 1 && r2 == 0)
            st = it->second.unary(call, req, &response);
        else if (r == 0)
            st = Status(StatusCode::INTERNAL, "no request message");
        else if (r2 == 1)
            st = Status(StatusCode::INTERNAL, "more than one request message");
        else
            st = Status(StatusCode::CANCELLED, "cancelled");
    } else {
        st = it->second.streaming(call);
    }
    if (call.deadline_ != UINT64_MAX && call.dl_it_ != cs->deadlines.end()) cs->remove(&call);
    call.finish_call(st, unary && st.ok() ? &response : nullptr);
    while (call.dog_busy_) cs->dog_idle.wait_no_lock();  // it writes on the stream
    calls--;
}

Server::Server(const ServerOptions& opt) : impl_(new Impl) { impl_->opt = opt; }

Server::~Server() {
    impl_->stopping = true;
    {
        std::lock_guard<std::mutex> g(impl_->lock);
        for (auto c : impl_->conns) c->sock->shutdown(ShutdownHow::ReadWrite);
    }
    while (impl_->nconns) thread_usleep(1000);
    delete impl_;
}

static bool valid_method_name(const std::string& n) {
    size_t slash = n.find('/', 1);
    return n.size() > 3 && n[0] == '/' && slash != std::string::npos && slash > 1 &&
           slash + 1 < n.size() && n.find('/', slash + 1) == std::string::npos;
}

int Server::add_unary(const std::string& name, UnaryHandler handler) {
    if (!valid_method_name(name) || !handler) return errno = EINVAL, -1;
    if (impl_->methods.count(name)) return errno = EEXIST, -1;
    impl_->methods[name].unary = std::move(handler);
    return 0;
}

int Server::add_streaming(const std::string& name, StreamingHandler handler) {
    if (!valid_method_name(name) || !handler) return errno = EINVAL, -1;
    if (impl_->methods.count(name)) return errno = EEXIST, -1;
    impl_->methods[name].streaming = std::move(handler);
    return 0;
}

int Server::handle_connection(ISocketStream* stream) {
    auto impl = impl_;
    if (impl->stopping) return 0;
    http2::connection_options o;
    o.max_concurrent_streams = impl->opt.max_concurrent_streams;
    o.initial_window_size = impl->opt.initial_window_size;
    o.connection_window = impl->opt.connection_window;
    o.idle_timeout = impl->opt.idle_timeout;
    conn_state cs;
    cs.sock = stream;
    cs.reader = CURRENT;
    http2::server_connection sc(stream, o,
                                [impl, &cs](http2::Stream& s) { impl->serve_call(&cs, s); });
    cs.sc = &sc;
    sc.stop_on(&cs.stop_flag, [&cs] { cs.stopped = true; });
    {
        std::lock_guard<std::mutex> g(impl->lock);
        impl->conns.insert(&cs);
        impl->nconns++;
    }
    int r = impl->stopping ? 0 : sc.serve();
    int e = errno;
    cs.close();
    {
        std::lock_guard<std::mutex> g(impl->lock);
        impl->conns.erase(&cs);
        impl->nconns--;
    }
    errno = e;
    return r;
}

int Server::stop(uint64_t timeout) {
    auto impl = impl_;
    impl->stopping = true;
    impl->stop_all();
    Timeout t(timeout);
    // Polled: the connections may end on other vCPUs. The interrupt is
    // repeated every 100 ms for a connection that has not seen it yet (its
    // serving coroutine was not parked in a read then: ready to run, the
    // interrupt went to a yield).
    for (int i = 1; impl->nconns; i++) {
        if (t.expired()) return errno = ETIMEDOUT, -1;
        thread_usleep(std::min<uint64_t>(t.timeout(), 1000));
        if (i % 100 == 0) impl->stop_all();
    }
    return 0;
}

size_t Server::connections() const { return impl_->nconns; }
size_t Server::calls() const { return impl_->calls; }

}  // namespace grpc
}  // namespace net
}  // namespace photon
