#include "client_connection.h"

#include <photon/common/alog.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include "connection.h"
#include "request_check.h"

namespace photon {
namespace net {
namespace http2 {
namespace {

// A response head (RFC 9113 8.3.2): :status of three digits first and
// alone among the pseudo-fields, and the rules for names and values.
bool valid_response(const std::vector<header_field>& fields, int* status, int64_t* length) {
    if (fields.empty() || fields[0].name != ":status" || fields[0].value.size() != 3) return false;
    int code = 0;
    for (char c : fields[0].value) {
        if (c < '0' || c > '9') return false;
        code = code * 10 + (c - '0');
    }
    std::vector<header_field> rest(fields.begin() + 1, fields.end());
    if (!valid_trailers(rest)) return false;  // no pseudo-field, names and values as trailers'
    *status = code;
    *length = -1;
    for (auto& f : rest)
        if (f.name == "content-length") {
            char* end = nullptr;
            long long n = strtoll(f.value.c_str(), &end, 10);
            if (f.value.empty() || *end || n < 0) return false;
            *length = n;
        }
    return true;
}

}  // namespace

struct client_stream_impl final : stream_core, client_stream {
    std::vector<header_field> head, trl;
    int status = 0;  // of the final head, once it came
    bool malformed = false;

    using stream_core::stream_core;
    uint32_t id() const override { return id_; }
    ssize_t write(const void* buf, size_t n, uint64_t timeout) override {
        return write_body(buf, n, timeout);
    }
    int finish(const std::vector<header_field>* trailers) override { return end_body(trailers); }
    int response(uint64_t timeout) override {
        Timeout t(timeout);
        while (!status && !gone() && !malformed)
            if (readable.wait_no_lock(t) < 0 && errno == ETIMEDOUT) return -1;
        if (status) return status;
        if (malformed) return errno = EPROTO, -1;
        if (reset_code == (uint32_t)ErrorCode::REFUSED_STREAM) return errno = EAGAIN, -1;
        return errno = ECONNRESET, -1;
    }
    const std::vector<header_field>& response_fields() const override { return head; }
    ssize_t read(void* buf, size_t n, uint64_t timeout) override {
        if (!status && response(timeout) < 0) return -1;
        return read_body(buf, n, timeout);
    }
    const std::vector<header_field>& trailers() const override { return trl; }
    void reset(ErrorCode code) override { reset_stream(code); }
};

struct client_connection::Impl final : Connection {
    uint32_t next_id = 1;
    thread* reader = nullptr;
    join_handle* reader_join = nullptr;
    condition_variable settled;  // the server's SETTINGS came, or the connection ended

    Impl(ISocketStream* s, const connection_options& o) : Connection(s, o, false) {}

    // A HEADERS on a stream we never opened (push is off): broken protocol.
    bool on_new_block(uint32_t, uint8_t, std::vector<header_field>&&, bool) override {
        return goaway(ErrorCode::PROTOCOL_ERROR, "HEADERS on a stream never opened"), false;
    }
    bool on_stream_block(stream_core* core, uint8_t fl, std::vector<header_field>&& fields,
                         bool too_large) override {
        auto s = static_cast<client_stream_impl*>(core);
        if (s->end_remote) return s->reset(ErrorCode::STREAM_CLOSED), true;
        bool end = fl & flags::END_STREAM;
        if (!s->status) {
            int status;
            int64_t length;
            if (too_large || !valid_response(fields, &status, &length) || (status < 200 && end)) {
                return malformed(s), true;
            }
            if (status < 200) return true;  // interim (1xx): the final head follows
            s->head = std::move(fields);
            s->status = status;
            s->content_length = length;
        } else if (!end || too_large || !valid_trailers(fields)) {
            return malformed(s), true;
        } else {
            s->trl = std::move(fields);
        }
        if (end) {
            s->end_remote = true;
            if (s->content_length >= 0 && (uint64_t)s->content_length != s->received)
                return malformed(s), true;
        }
        s->readable.notify_all();
        return true;
    }
    void malformed(client_stream_impl* s) {
        s->malformed = true;
        s->reset(ErrorCode::PROTOCOL_ERROR);
        s->readable.notify_all();
    }
    // Streams we never opened: odd ids not yet given, and every even one.
    bool is_idle(uint32_t id) const override { return id % 2 == 0 || id >= next_id; }
    // The reader ends when the connection is closing and no stream is open.
    bool winding_down() const override { return stopping; }

    void read_frames() {
        while (next_frame() == 1)
            if (got_settings) settled.notify_all();
        end_all();
        settled.notify_all();
    }
};

client_connection::client_connection(ISocketStream* sock, const connection_options& opt)
    : impl_(new Impl(sock, opt)) {}

client_connection::~client_connection() {
    auto c = impl_;
    if (c->reader_join) {
        c->stopping = true;
        if (!c->dead) c->goaway(ErrorCode::NO_ERROR, "closing");
        c->sock->shutdown(ShutdownHow::Read);  // the reader's wait ends
        thread_join(c->reader_join);
    }
    c->reap();
    for (auto& kv : c->streams) delete kv.second;
    delete c;
}

int client_connection::start() {
    auto c = impl_;
    if (c->reader) return errno = EALREADY, -1;
    c->meter_start = c->last_frame_us = now_us();
    if (c->send(std::string(kClientPreface)) < 0 || c->send_settings() < 0) return -1;
    c->reader = thread_create11(&Impl::read_frames, c);
    if (!c->reader) return -1;
    c->reader_join = thread_enable_join(c->reader);
    return 0;
}

int client_connection::wait_settings(uint64_t timeout) {
    auto c = impl_;
    Timeout t(timeout);
    while (!c->got_settings && c->reader && !c->dead)
        if (c->settled.wait_no_lock(t) < 0 && errno == ETIMEDOUT) return -1;
    return c->got_settings ? 0 : (errno = EPROTONOSUPPORT, -1);
}

bool client_connection::usable() const {
    auto c = impl_;
    return c->reader && !c->dead && !c->peer_goaway && !c->goaway_sent && c->next_id < (1u << 31);
}

size_t client_connection::active() const { return impl_->streams.size(); }

client_stream* client_connection::request(const std::vector<header_field>& fields, bool end_stream,
                                          uint64_t timeout) {
    auto c = impl_;
    if (fields.empty() || fields[0].name != ":method") return errno = EINVAL, nullptr;
    Timeout t(timeout);
    while (usable() && c->streams.size() >= c->peer_max_streams)
        if (c->windows.wait_no_lock(t) < 0 && errno == ETIMEDOUT) return nullptr;
    if (!usable()) return errno = c->dead && !c->peer_goaway ? ECONNRESET : EAGAIN, nullptr;
    SCOPED_LOCK(c->wlock);  // ids go out in the order they are given
    uint32_t id = c->next_id;
    c->next_id += 2;
    auto s = new client_stream_impl(c, id);
    c->streams[id] = s;
    if (s->write_head_locked(vector_fields(fields), end_stream) < 0) {
        c->end_all();
        c->close_stream(s, true);
        c->reaped.push_back(s);
        return errno = ECONNRESET, nullptr;
    }
    return s;
}

void client_connection::release(client_stream* cs) {
    auto c = impl_;
    auto s = static_cast<client_stream_impl*>(cs);
    if (!s) return;
    if (!s->is_closed) {
        if (!(s->end_remote && s->end_local)) s->reset(ErrorCode::CANCEL);
        c->close_stream(s, s->reset_);
    }
    c->reaped.push_back(s);  // the reader may be in the middle of a frame for it
    if (!c->reader_join) c->reap();
}

}  // namespace http2
}  // namespace net
}  // namespace photon
