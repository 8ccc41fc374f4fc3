#include "server_connection.h"

#include <deque>

#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include "connection.h"
#include "request_check.h"

namespace photon {
namespace net {
namespace http2 {

struct stream_impl final : stream_core, Stream {
    std::vector<header_field> req, trl;
    bool handler_done = false;
    bool body_expected = false;

    using stream_core::stream_core;
    uint32_t id() const override { return id_; }
    const std::vector<header_field>& request() const override { return req; }
    const std::vector<header_field>& trailers() const override { return trl; }
    bool has_body() const override { return body_expected; }
    ssize_t read(void* buf, size_t n, uint64_t timeout) override {
        return read_body(buf, n, timeout);
    }
    int respond(const std::vector<header_field>& fields, bool end_stream) override {
        if (head_sent) return errno = EALREADY, -1;
        if (fields.empty() || fields[0].name != ":status") return errno = EINVAL, -1;
        return send_head(fields, end_stream);
    }
    int respond(const field_list& fields, bool end_stream) override {
        if (head_sent) return errno = EALREADY, -1;
        return send_head(fields, end_stream);
    }
    ssize_t write(const void* buf, size_t n, uint64_t timeout) override {
        if (!head_sent && respond({{":status", "200"}}, false) < 0) return -1;
        return write_body(buf, n, timeout);
    }
    int finish(const std::vector<header_field>* trailers) override {
        if (!head_sent) return respond({{":status", "200"}}, true);
        return end_body(trailers);
    }
    void reset(ErrorCode code) override { reset_stream(code); }
};

struct server_connection::Impl final : Connection {
    stream_handler handler;
    condition_variable idle;  // no worker runs
    int handlers = 0;         // worker coroutines, running a handler or parked
    // New streams wait in `pending` for a worker. One worker runs them one
    // after another while their handlers do not block, so that a batch of
    // streams costs one wake-up and one warm stack, not one each. Head-of-line
    // blocking is bounded by a standby: whenever a worker starts a stream
    // while others wait, it makes sure another worker is awake (`spare`), which
    // the scheduler runs as soon as the first one blocks, and which takes the
    // next stream. A worker with nothing to do parks for a while: a busy
    // connection reuses its coroutines instead of making one per stream.
    // One parked worker at a time waits with a deadline: when it passes with
    // nothing to do, the connection is quiet and every parked worker leaves
    // (one timer per connection, not one per worker).
    std::deque<stream_impl*> pending;
    size_t parked = 0;
    size_t spare = 0;    // workers awake and not in a handler (woken ones included)
    size_t tickets = 0;  // wake-ups sent to parked workers and not yet taken
    // The worker last woken or started, until it runs: the reader hands it
    // the CPU when it has read a batch of frames, so that the batch's streams
    // are served while their state is still in the cache (rather than after
    // every other connection's reader has run).
    photon::thread* woken = nullptr;
    bool timed_parked = false;
    uint64_t retirements = 0;
    condition_variable work;
    bool ending = false;  // the connection ends: parked workers leave

    Impl(ISocketStream* s, const connection_options& o, stream_handler h)
        : Connection(s, o, true), handler(std::move(h)) {}

    const std::atomic<bool>* stop_flag = nullptr;
    std::function<void()> on_stop;

    int run(std::string_view pre, stream_impl* upgraded = nullptr);
    int read_preface();
    // A read the stop flag interrupted: stops (once); false if it was not that.
    bool stop_requested();
    void start_handler(stream_impl* s);
    // Makes one more worker spare: wakes a parked one or starts one; false if
    // no coroutine could be had.
    bool wake_spare();
    void run_stream(stream_impl* s);
    // Runs pending streams while there are any, then parks; a spare worker
    // on entry.
    void worker();
    // Waits for a wake-up; false when the worker should leave instead.
    bool park();
    bool apply_upgrade_settings(std::string_view payload);
    bool open_stream(uint32_t id, uint8_t flags, std::vector<header_field>&& fields,
                     bool too_large);

    bool on_new_block(uint32_t id, uint8_t fl, std::vector<header_field>&& fields,
                      bool too_large) override {
        return open_stream(id, fl, std::move(fields), too_large);
    }
    // Trailers: they end the request.
    bool on_stream_block(stream_core* core, uint8_t fl, std::vector<header_field>&& fields,
                         bool too_large) override {
        auto s = static_cast<stream_impl*>(core);
        if (s->end_remote) return s->reset(ErrorCode::STREAM_CLOSED), true;
        if (!(fl & flags::END_STREAM) || too_large || !valid_trailers(fields)) {
            s->reset(ErrorCode::PROTOCOL_ERROR);
            return true;
        }
        s->trl = std::move(fields);
        s->end_remote = true;
        if (s->content_length >= 0 && (uint64_t)s->content_length != s->received)
            s->reset(ErrorCode::PROTOCOL_ERROR);
        s->readable.notify_all();
        return true;
    }
    bool is_idle(uint32_t id) const override { return id > last_stream; }
    void on_frames_handled() override {
        if (woken && !pending.empty()) thread_yield_to(woken);
    }
};

bool server_connection::Impl::open_stream(uint32_t id, uint8_t fl,
                                          std::vector<header_field>&& fields, bool too_large) {
    last_stream = id;
    if (goaway_sent || stopping) return true;  // 6.8: not processed; the peer retries elsewhere
    auto refuse = [&](ErrorCode code) {
        rst(id, code);
        return true;
    };
    if (streams.size() >= opt.max_concurrent_streams) return refuse(ErrorCode::REFUSED_STREAM);
    int64_t cl = -1;
    if (!too_large && !valid_request(fields, &cl)) return refuse(ErrorCode::PROTOCOL_ERROR);
    if ((fl & flags::END_STREAM) && cl > 0) return refuse(ErrorCode::PROTOCOL_ERROR);
    auto s = new stream_impl(this, id);
    s->req = std::move(fields);
    s->content_length = cl;
    s->end_remote = fl & flags::END_STREAM;
    s->body_expected = !s->end_remote;
    streams[id] = s;
    if (too_large) {  // 10.5.1: answered without its handler
        s->send_head({{":status", "431"}}, true);
        if (!s->end_remote) rst(id, ErrorCode::NO_ERROR);
        close_stream(s, false);
        reaped.push_back(s);
        return true;
    }
    start_handler(s);
    return true;
}

// Parked workers a connection keeps, and how long one waits for a stream.
constexpr size_t kMaxParked = 32;
constexpr uint64_t kParkTime = 2'000'000;

void server_connection::Impl::start_handler(stream_impl* s) {
    pending.push_back(s);
    if (spare > 0 || wake_spare()) return;
    if (handlers > 0) return;  // the workers there are take it in turn
    pending.pop_back();        // no coroutine to be had, and none to take it
    uint32_t id = s->id_;
    streams.erase(id);
    delete s;
    rst(id, ErrorCode::REFUSED_STREAM);
}

bool server_connection::Impl::wake_spare() {
    if (parked > tickets) {
        tickets++, spare++;
        woken = work.notify_one();
        return true;
    }
    handlers++, spare++;
    woken = thread_create11([this] { worker(); });
    if (woken) return true;
    handlers--, spare--;
    return false;
}

void server_connection::Impl::run_stream(stream_impl* s) {
    handler(*s);
    if (!s->is_closed && !dead) {
        if (!s->head_sent)
            s->respond({{":status", "500"}}, true);
        else
            s->finish(nullptr);
        if (!s->end_remote && !s->reset_ && !dead)  // 8.1: the rest is refused
            rst(s->id_, ErrorCode::NO_ERROR);
    }
    s->handler_done = true;
    close_stream(s, s->reset_);  // (a reset one, by either side, is closed already)
    // Deleted now, while it is in the cache, unless the reader may hold it.
    if (in_frame)
        reaped.push_back(s);
    else
        delete s;
}

void server_connection::Impl::worker() {
    for (;;) {
        if (woken == CURRENT) woken = nullptr;
        if (pending.empty()) {
            spare--;
            if (!park()) break;
            continue;  // woken: counted spare again by the waker
        }
        auto s = pending.front();
        pending.pop_front();
        spare--;
        if (!pending.empty() && spare == 0) wake_spare();  // the standby
        run_stream(s);
        spare++;
    }
    if (--handlers == 0) idle.notify_all();
}

bool server_connection::Impl::park() {
    if (ending || dead || parked >= kMaxParked) return false;
    parked++;
    bool timed = !timed_parked, quiet = false;
    timed_parked |= timed;
    Timeout t(timed ? kParkTime : UINT64_MAX);
    uint64_t gen = retirements;
    while (tickets == 0 && !ending && !dead && gen == retirements)
        if (work.wait_no_lock(t) < 0 && errno == ETIMEDOUT) {
            quiet = true;
            break;
        }
    if (timed) timed_parked = false;
    parked--;
    if (woken == CURRENT) woken = nullptr;
    if (tickets > 0) {  // woken for work
        tickets--;
        return true;
    }
    if (quiet && pending.empty()) {  // the connection is quiet: all parked leave
        retirements++;
        work.notify_all();
    }
    return false;
}

bool server_connection::Impl::stop_requested() {
    if (errno != ECANCELED || !stop_flag || !stop_flag->load(std::memory_order_relaxed))
        return false;
    if (!stopping) {
        stopping = true;
        goaway(ErrorCode::NO_ERROR, "stopping");
        if (on_stop) on_stop();
    }
    return true;
}

// RFC 7540 3.2.1: the HTTP2-Settings payload counts as the client's first
// SETTINGS, acknowledged by the 101.
bool server_connection::Impl::apply_upgrade_settings(std::string_view payload) {
    frame_error err;
    return payload.size() % 6 == 0 && apply_settings(payload, &err);
}

int server_connection::Impl::read_preface() {
    if (fill(kClientPreface.size(), Timeout(opt.settings_timeout)) < 0) return -1;
    if (std::string_view(rbuf).substr(rpos, kClientPreface.size()) != kClientPreface) {
        goaway(ErrorCode::PROTOCOL_ERROR, "no client preface");
        return errno = EPROTO, -1;
    }
    rpos += kClientPreface.size();
    return 0;
}

int server_connection::Impl::run(std::string_view pre, stream_impl* upgraded) {
    meter_start = last_frame_us = now_us();
    rbuf.assign(pre.data(), pre.size());
    if (send_settings() < 0) {
        delete upgraded;
        return -1;
    }
    if (upgraded) last_stream = 1;  // stream 1, half-closed (remote)
    int r;
    while ((r = read_preface()) < 0 && stop_requested()) {
    }
    // Stream 1's answer waits for the preface: a client may not have left
    // HTTP/1.1 yet (curl 7.88 fails when more than 32 KiB of HTTP/2 follow
    // the 101 in one read).
    if (upgraded && r == 0) {
        streams[1] = upgraded;
        start_handler(upgraded);
    } else {
        delete upgraded;
    }
    while (r == 0) {
        r = next_frame();
        if (r == 1 || (r < 0 && stop_requested()))
            r = 0;
        else if (r == 0)
            break;
    }
    int e = errno;
    end_all();
    ending = true;
    work.notify_all();
    while (handlers > 0) idle.wait_no_lock();
    linger();
    reap();
    for (auto& kv : streams) delete kv.second;
    streams.clear();
    return r < 0 ? (errno = e, -1) : 0;
}

server_connection::server_connection(ISocketStream* sock, const connection_options& opt,
                                     stream_handler handler)
    : impl_(new Impl(sock, opt, std::move(handler))) {}

server_connection::~server_connection() { delete impl_; }

int server_connection::serve(std::string_view read) { return impl_->run(read); }

int server_connection::serve_upgraded(std::vector<header_field> request, std::string_view settings,
                                      std::string_view read) {
    if (!impl_->apply_upgrade_settings(settings)) return errno = EPROTO, -1;
    auto s = new stream_impl(impl_, 1);
    s->req = std::move(request);
    s->end_remote = true;
    return impl_->run(read, s);
}

void server_connection::stop_on(const std::atomic<bool>* flag, std::function<void()> on_stop) {
    impl_->stop_flag = flag;
    impl_->on_stop = std::move(on_stop);
}

void server_connection::stop() {
    if (impl_->stopping) return;
    impl_->stopping = true;
    impl_->goaway(ErrorCode::NO_ERROR, "stopping");  // the reader polls for the end
}

}  // namespace http2
}  // namespace net
}  // namespace photon
