#include "connection.h"

#include <sys/uio.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <photon/common/alog.h>
#include <photon/net/socket.h>
#include <photon/thread/thread11.h>

#include "../../common/metric-meter/counting.h"
#include "../lazy_timeout.h"
#include "request_check.h"

namespace photon {
namespace net {
namespace http2 {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kResetMemory = 4096;      // reset stream ids remembered (late frames ignored)
constexpr uint64_t kStopPoll = 50 * 1000;  // how often a stopping reader looks for the end
// The outbox's bounds: a stream's HEADERS and DATA wait while this much is
// queued (the backpressure a socket write gave before frames were queued);
// control frames, mostly the reader's answers, only past kControlLimit, so
// that the reader does not stop for a slow writer unless the peer floods.
constexpr size_t kStreamLimit = 64 * 1024;
constexpr size_t kControlLimit = 1 << 20;
constexpr size_t kKeepCapacity = 256 * 1024;  // an outbox larger than this is freed once written
constexpr size_t kSpareBuffers = 16;          // written outboxes a vCPU keeps for the next ones

// Outboxes written out, for the next connection of this vCPU (OS thread)
// that queues a frame: the buffer written last, still in the cache, is the
// next one filled, and idle connections hold none.
thread_local std::vector<std::string> t_spare_buffers;

// Into a counter of the owner's metrics, if it gave one.
void count(std::atomic<uint64_t>* c, uint64_t n) {
    if (metrics::kCounting && c) c->fetch_add(n, std::memory_order_relaxed);
}

}  // namespace

uint64_t now_us() {
    using namespace std::chrono;
    return (uint64_t)duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

// ---- a stream ---------------------------------------------------------------

stream_core::stream_core(Connection* conn, uint32_t id)
    : c(conn),
      id_(id),
      send_window(conn->peer_initial_window),
      recv_window(conn->opt.initial_window_size) {}

bool stream_core::gone() const { return reset_ || c->dead; }

ssize_t stream_core::read_body(void* buf, size_t n, uint64_t timeout) {
    lazy_timeout t(timeout);
    while (buffered == 0 && !end_remote && !gone())
        if (readable.wait_no_lock(t.get()) < 0 && errno == ETIMEDOUT) return -1;
    if (buffered == 0) {
        if (gone()) return errno = ECONNRESET, -1;
        return 0;
    }
    size_t done = 0;
    while (done < n && in_head < in.size()) {
        auto& front = in[in_head];
        size_t k = std::min(n - done, front.size() - in_off);
        memcpy((char*)buf + done, front.data() + in_off, k);
        done += k;
        in_off += k;
        if (in_off == front.size()) {
            in_head++;
            in_off = 0;
        }
    }
    if (in_head == in.size()) {
        in.clear();
        in_head = 0;
    }
    buffered -= done;
    c->consumed(this, done);
    return (ssize_t)done;
}

int stream_core::send_head(const field_list& fields, bool end_stream) {
    if (gone()) return errno = ECONNRESET, -1;
    if (end_local) return errno = EPIPE, -1;
    SCOPED_LOCK(c->wlock);  // HPACK state follows the order on the wire
    return write_head_locked(fields, end_stream);
}

namespace {

// A field_list's fields into a header block.
struct block_writer {
    hpack_encoder* enc;
    std::string* block;

    static void put(void* ctx, std::string_view name, std::string_view value, bool never) {
        auto* w = (block_writer*)ctx;
        w->enc->put(name, value, w->block, never);
    }
};

}  // namespace

int stream_core::write_head_locked(const field_list& fields, bool end_stream) {
    if (c->room(kStreamLimit) < 0) return -1;
    c->fill_outbox();
    auto& block = c->hblock_;
    block.clear();
    c->enc.begin_block(&block);
    block_writer w{&c->enc, &block};
    fields.each(&block_writer::put, &w);
    write_headers(id_, block, end_stream, c->peer_max_frame, &c->out_);
    c->last_data_at_ = SIZE_MAX;
    c->queued();
    if (end_stream) end_local = true;
    head_sent = true;
    return 0;
}

ssize_t stream_core::write_body(const void* buf, size_t n, uint64_t timeout) {
    lazy_timeout t(timeout);
    size_t done = 0;
    while (done < n) {
        if (gone()) return errno = ECONNRESET, -1;
        if (end_local) return errno = EPIPE, -1;
        if (send_window <= 0 || c->send_window <= 0) {
            if (c->windows.wait_no_lock(t.get()) < 0 && errno == ETIMEDOUT) return -1;
            continue;
        }
        if (c->out_.size() >= kStreamLimit) {  // (the windows may move while it waits)
            if (c->room(kStreamLimit, t.get()) < 0) return -1;
            continue;
        }
        size_t k = std::min<int64_t>(
            {(int64_t)(n - done), send_window, c->send_window, (int64_t)c->peer_max_frame});
        c->fill_outbox();
        size_t at = c->out_.size();
        write_data_header(id_, k, false, &c->out_);
        c->out_.append((const char*)buf + done, k);
        c->last_data_at_ = at;
        c->last_data_stream_ = id_;
        send_window -= k;
        c->send_window -= k;
        done += k;
        c->queued();
    }
    return (ssize_t)n;
}

int stream_core::end_body(const std::vector<header_field>* trailers) {
    if (end_local) return 0;
    if (trailers && !trailers->empty()) return send_head(*trailers, true);
    if (gone()) return errno = ECONNRESET, -1;
    end_local = true;
    if (c->last_data_at_ != SIZE_MAX && c->last_data_stream_ == id_) {
        // The stream's last DATA frame is still queued: it ends the stream.
        c->out_[c->last_data_at_ + 4] |= flags::END_STREAM;
        return 0;
    }
    std::string out;
    write_data_header(id_, 0, true, &out);
    return c->send(out);
}

void stream_core::reset_stream(ErrorCode code) {
    if (reset_ || c->dead) return;
    reset_ = true;
    c->rst(id_, code);
    c->close_stream(this, true);
}

// ---- the connection ---------------------------------------------------------

Connection::Connection(ISocketStream* s, const connection_options& o, bool is_server)
    : sock(s),
      opt(o),
      server(is_server),
      dec(o.header_table_size),
      account(o.budget ? o.budget : MemoryBudget::process()),
      reset_ids(kResetMemory) {
    dec.set_max_header_list_size(o.max_header_list_size);
}

int Connection::fill(size_t n, Timeout deadline) {
    if (rpos > 0 && rpos + n > rbuf.size() && rpos >= rbuf.size() / 2) {
        rbuf.erase(0, rpos);
        rpos = 0;
    }
    while (rbuf.size() - rpos < n) {
        size_t have = rbuf.size();
        size_t need = n - (have - rpos);
        uint64_t t = deadline.timeout();
        if (t == 0) return errno = ETIMEDOUT, -1;
        sock->timeout(t);
        ssize_t r;
        if (need < kReadChunk) {
            // Most reads are short: read into chunk_ and append what came,
            // rather than grow rbuf by a chunk (zeroed) each time.
            if (!chunk_) chunk_.reset(new char[kReadChunk]);
            r = sock->recv(chunk_.get(), kReadChunk);
            if (r > 0) rbuf.append(chunk_.get(), r);
        } else {
            rbuf.resize(have + need);
            r = sock->recv(&rbuf[have], need);
            rbuf.resize(have + (r > 0 ? r : 0));
        }
        if (r == 0) return errno = ECONNRESET, -1;
        if (r < 0) return -1;
        count(opt.received_bytes, (uint64_t)r);
    }
    return 0;
}

Connection::~Connection() { finish_writes(); }

int Connection::send(const std::string& bytes) {
    if (room(kControlLimit) < 0) return -1;
    fill_outbox();
    out_.append(bytes);
    last_data_at_ = SIZE_MAX;
    queued();
    return 0;
}

int Connection::room(size_t limit, Timeout t) {
    while (!dead && out_.size() >= limit)
        if (drained_.wait_no_lock(t) < 0 && errno == ETIMEDOUT) return -1;
    if (dead) return errno = ECONNRESET, -1;
    return 0;
}

void Connection::queued() {
    if (writer_ || start_writer())
        out_ready_.notify_one();  // it runs after the coroutines now ready
    else
        write_out();  // no coroutine to be had: the caller writes
}

bool Connection::start_writer() {
    if (writer_stop_) return false;
    writer_ = thread_create11(&Connection::write_loop, this);
    if (!writer_) return false;
    writer_join_ = thread_enable_join(writer_);
    return true;
}

// The writer: the frames queued while it waited for its turn go out in one
// write, so the responses to the requests of one read leave together, while a
// lone frame waits for nothing but the coroutines that were ready before it.
void Connection::write_loop() {
    for (;;) {
        while (out_.empty() && !writer_stop_) out_ready_.wait_no_lock();
        if (out_.empty()) return;
        write_out();
    }
}

// Writes what is queued, batch after batch, until nothing is.
void Connection::write_out() {
    if (writing_) return;  // the coroutine writing now loops for these bytes too
    writing_ = true;
    while (!out_.empty()) {
        batch_.swap(out_);  // the outbox fills up again while the batch is written
        last_data_at_ = SIZE_MAX;
        drained_.notify_all();
        if (!broken_) {
            sock->timeout(opt.idle_timeout);
            ssize_t w = sock->write(batch_.data(), batch_.size());
            if (w > 0) count(opt.sent_bytes, (uint64_t)w);
            if (w != (ssize_t)batch_.size()) {
                broken_ = true;
                // (After finish_writes() began, the streams may be gone already.)
                if (writer_stop_)
                    dead = true;
                else
                    end_all();  // every waiter hears ECONNRESET
            }
        }
        batch_.clear();
        auto& spare = t_spare_buffers;
        if (batch_.capacity() <= kKeepCapacity && spare.size() < kSpareBuffers)
            spare.push_back(std::move(batch_));
        std::string().swap(batch_);
    }
    writing_ = false;
}

void Connection::fill_outbox() {
    if (!out_.empty() || out_.capacity() >= 4096) return;
    auto& spare = t_spare_buffers;
    if (!spare.empty()) {
        out_.swap(spare.back());
        spare.pop_back();
    } else {
        // Room for what the streams queue before they wait (and a frame):
        // growing by doubling would copy a full outbox about once more.
        out_.reserve(kStreamLimit + 16 * 1024 + 64);
    }
}

void Connection::finish_writes() {
    writer_stop_ = true;
    if (writer_join_) {
        out_ready_.notify_one();
        thread_join(writer_join_);
        writer_join_ = nullptr;
        writer_ = nullptr;
    }
    write_out();
}

void Connection::goaway(ErrorCode code, const char* why) {
    if (goaway_sent && code == ErrorCode::NO_ERROR) return;
    if (code != ErrorCode::NO_ERROR)
        LOG_EVERY_T(10, LOG_WARN("http2: closing a connection: `", why));
    std::string out;
    write_goaway(last_stream, code, code == ErrorCode::NO_ERROR ? "" : why, &out);
    goaway_sent = true;
    send(out);
}

void Connection::rst(uint32_t id, ErrorCode code) {
    // What the peer sent before it sees this is to be ignored (RFC 9113 5.1).
    if (!is_idle(id)) reset_ids.insert(id);
    std::string out;
    write_rst_stream(id, code, &out);
    send(out);
}

// Counts an event of a kind the peer may not flood; true past the limit.
bool Connection::over_limit(uint32_t* counter, uint32_t limit) {
    uint64_t now = now_us();
    if (now - meter_start >= 1000 * 1000) {
        meter_start = now;
        resets = controls = 0;
    }
    return ++*counter > limit;
}

Timeout Connection::next_deadline() const {
    uint64_t quiet = now_us() - last_frame_us;
    uint64_t t = quiet >= opt.idle_timeout ? 0 : opt.idle_timeout - quiet;
    if (winding_down()) t = std::min(t, kStopPoll);
    if (!settings_acked && settings_sent_us) {
        uint64_t gone = now_us() - settings_sent_us;
        uint64_t left = gone >= opt.settings_timeout ? 0 : opt.settings_timeout - gone;
        t = std::min(t, left);
    }
    return Timeout(t);
}

bool Connection::on_timeout() {
    uint64_t now = now_us();
    if (!settings_acked && now - settings_sent_us >= opt.settings_timeout) {
        goaway(ErrorCode::SETTINGS_TIMEOUT, "SETTINGS not acknowledged");
        return false;
    }
    if (now - last_frame_us >= opt.idle_timeout) {
        goaway(ErrorCode::NO_ERROR, "idle");
        return false;
    }
    return true;  // a stop poll: the loop looks whether the streams are done
}

// A HEADERS frame refused as a stream error (a stream depending on itself):
// its block is still decoded, so that both HPACK tables stay in step.
bool Connection::refused_headers(const Frame& f, const frame_error& err) {
    uint32_t id = f.h.stream;
    if (auto s = find(id)) {
        s->reset_stream(err.code);
    } else {
        if (!server || id % 2 == 0 || !is_idle(id))
            return goaway(ErrorCode::PROTOCOL_ERROR, "a bad stream id"), false;
        last_stream = id;
        rst(id, err.code);
    }
    discard_block = true;
    block.assign(f.data.data(), f.data.size());
    if (!(f.h.flags & flags::END_HEADERS)) {
        continuing = id;
        return true;
    }
    return on_block(id, f.h.flags, block);
}

void Connection::consumed(stream_core* s, size_t n) {
    if (n == 0 || dead) return;
    std::string out;
    s->unacked += n;
    if (!s->end_remote && s->unacked >= opt.initial_window_size / 2) {
        write_window_update(s->id_, (uint32_t)s->unacked, &out);
        s->recv_window += s->unacked;
        s->unacked = 0;
    }
    recv_consumed += n;
    if (recv_consumed >= granted / 2) {
        write_window_update(0, (uint32_t)recv_consumed, &out);
        recv_window += recv_consumed;
        recv_consumed = 0;
    }
    if (!out.empty()) send(out);
}

void Connection::close_stream(stream_core* s, bool reset) {
    if (s->is_closed) return;
    s->is_closed = true;
    streams.erase(s->id_);
    // A stream that ended needs no record: an id neither idle nor open is closed. A reset
    // one is remembered, as its peer may still send what it had queued (ignored).
    if (reset) reset_ids.insert(s->id_);
    // Bytes never read still count against the connection window: give them back.
    size_t unread = s->buffered;
    s->buffered = 0;
    s->in.clear();
    s->in_head = s->in_off = 0;
    if (unread) recv_consumed += unread;
    s->readable.notify_all();
    windows.notify_all();
}

void Connection::end_all() {
    dead = true;
    for (auto& kv : streams) kv.second->readable.notify_all();
    windows.notify_all();
    drained_.notify_all();
}

void Connection::linger() {
    finish_writes();
    if (!goaway_sent) return;
    sock->shutdown(ShutdownHow::Write);
    Timeout t(1000 * 1000);
    char buf[16384];
    for (size_t total = 0; total < (1u << 20);) {
        uint64_t left = t.timeout();
        if (left == 0) break;
        sock->timeout(left);
        ssize_t r = sock->recv(buf, sizeof(buf));
        if (r <= 0) break;
        total += r;
    }
}

void Connection::reap() {
    while (!reaped.empty()) {
        delete reaped.front();
        reaped.pop_front();
    }
}

bool Connection::handle(const Frame& f) {
    const auto& h = f.h;
    if (continuing && !(f.type() == frame_type::CONTINUATION && h.stream == continuing))
        return goaway(ErrorCode::PROTOCOL_ERROR, "a frame inside a header block"), false;
    switch (f.type()) {
        case frame_type::HEADERS:
            return on_headers(f);
        case frame_type::CONTINUATION:
            if (!continuing) return goaway(ErrorCode::PROTOCOL_ERROR, "CONTINUATION alone"), false;
            block.append(f.data);
            if (block.size() > opt.max_header_list_size * 2 + 4096)
                return goaway(ErrorCode::ENHANCE_YOUR_CALM, "a header block too large"), false;
            if (h.flags & flags::END_HEADERS) {
                uint32_t id = continuing;
                continuing = 0;
                return on_block(id, block_flags, block);
            }
            return true;
        case frame_type::DATA:
            return on_data(f);
        case frame_type::SETTINGS:
            return on_settings(f);
        case frame_type::WINDOW_UPDATE:
            return on_window_update(f);
        case frame_type::RST_STREAM:
            return on_rst(f);
        case frame_type::PING:
            if (over_limit(&controls, opt.max_control_per_second))
                return goaway(ErrorCode::ENHANCE_YOUR_CALM, "a PING flood"), false;
            if (!(h.flags & flags::ACK)) {
                std::string out;
                write_ping((const uint8_t*)f.data.data(), true, &out);
                send(out);
            }
            return true;
        case frame_type::PRIORITY:
            if (over_limit(&controls, opt.max_control_per_second))
                return goaway(ErrorCode::ENHANCE_YOUR_CALM, "a PRIORITY flood"), false;
            return true;
        case frame_type::GOAWAY:
            return on_goaway(f);
        case frame_type::PUSH_PROMISE:  // a server may not; a client of ours disabled push
            return goaway(ErrorCode::PROTOCOL_ERROR, "PUSH_PROMISE"), false;
        default:
            return true;  // unknown types are ignored
    }
}

bool Connection::on_headers(const Frame& f) {
    uint32_t id = f.h.stream;
    if (server && id % 2 == 0) return goaway(ErrorCode::PROTOCOL_ERROR, "an even stream id"), false;
    if (!(f.h.flags & flags::END_HEADERS)) {
        continuing = id;
        block_flags = f.h.flags;
        block.assign(f.data.data(), f.data.size());
        return true;
    }
    return on_block(id, f.h.flags, f.data);
}

bool Connection::on_block(uint32_t id, uint8_t fl, std::string_view blk) {
    std::vector<header_field> fields;
    fields.reserve(16);  // one allocation for a usual request, not one per doubling
    int r = dec.decode((const uint8_t*)blk.data(), blk.size(), &fields);
    if (r == hpack_decoder::kCompressionError)
        return goaway(ErrorCode::COMPRESSION_ERROR, dec.error()), false;
    bool too_large = r == hpack_decoder::kListTooLarge;
    if (discard_block) {
        discard_block = false;
        return true;
    }
    if (auto s = find(id)) return on_stream_block(s, fl, std::move(fields), too_large);
    // An idle id was never opened, so never closed: a new stream needs no
    // lookup among the closed ones (a cache miss).
    if (is_idle(id)) return on_new_block(id, fl, std::move(fields), too_large);
    if (reset_ids.count(id)) return rst(id, ErrorCode::STREAM_CLOSED), true;
    return goaway(ErrorCode::STREAM_CLOSED, "HEADERS on a closed stream"), false;
}

bool Connection::on_data(const Frame& f) {
    uint32_t id = f.h.stream;
    size_t len = f.h.length;  // padding counts against the windows too
    if ((int64_t)len > recv_window)
        return goaway(ErrorCode::FLOW_CONTROL_ERROR, "DATA past the connection window"), false;
    recv_window -= len;
    if (len == 0 && !(f.h.flags & flags::END_STREAM) &&
        over_limit(&controls, opt.max_control_per_second))
        return goaway(ErrorCode::ENHANCE_YOUR_CALM, "a flood of empty DATA frames"), false;
    auto s = find(id);
    if (!s || s->end_remote) {
        recv_consumed += len;  // nobody will read them
        if (!s && is_idle(id))
            return goaway(ErrorCode::PROTOCOL_ERROR, "DATA on an idle stream"), false;
        if (!s && !reset_ids.count(id))
            return goaway(ErrorCode::STREAM_CLOSED, "DATA on a closed stream"), false;
        if (s)
            s->reset_stream(ErrorCode::STREAM_CLOSED);
        else
            rst(id, ErrorCode::STREAM_CLOSED);
        return true;
    }
    if ((int64_t)len > s->recv_window) {
        recv_consumed += len;
        s->reset_stream(ErrorCode::FLOW_CONTROL_ERROR);
        return true;
    }
    s->recv_window -= len;
    recv_consumed += len - f.data.size();  // the padding is not for the handler
    s->received += f.data.size();
    if (s->content_length >= 0 && s->received > (uint64_t)s->content_length) {
        s->reset_stream(ErrorCode::PROTOCOL_ERROR);
        return true;
    }
    if (!f.data.empty()) {
        s->in.emplace_back(f.data);
        s->buffered += f.data.size();
    }
    if (f.h.flags & flags::END_STREAM) {
        s->end_remote = true;
        if (s->content_length >= 0 && s->received != (uint64_t)s->content_length) {
            s->reset_stream(ErrorCode::PROTOCOL_ERROR);
            return true;
        }
    }
    s->readable.notify_all();
    return true;
}

bool Connection::apply_settings(std::string_view payload, frame_error* err) {
    bool ok = true;
    bool parsed = parse_settings(
        payload,
        [&](uint16_t id, uint32_t v) {
            switch ((setting_id)id) {
                case setting_id::HEADER_TABLE_SIZE:
                    enc.set_peer_max_table_size(v);
                    break;
                case setting_id::INITIAL_WINDOW_SIZE: {
                    int64_t delta = (int64_t)v - peer_initial_window;
                    peer_initial_window = v;
                    for (auto& kv : streams) {
                        kv.second->send_window += delta;
                        if (kv.second->send_window > kMaxWindow) ok = false;
                    }
                    break;
                }
                case setting_id::MAX_FRAME_SIZE:
                    peer_max_frame = v;
                    break;
                case setting_id::MAX_CONCURRENT_STREAMS:
                    peer_max_streams = v;
                    break;
                default:
                    break;
            }
        },
        err);
    if (!parsed) return false;
    if (!ok) *err = {ErrorCode::FLOW_CONTROL_ERROR, true, "a window past 2^31-1"};
    return ok;
}

bool Connection::on_settings(const Frame& f) {
    if (f.h.flags & flags::ACK) {
        settings_acked = true;
        return true;
    }
    if (got_settings && over_limit(&controls, opt.max_control_per_second))
        return goaway(ErrorCode::ENHANCE_YOUR_CALM, "a SETTINGS flood"), false;
    frame_error err;
    if (!apply_settings(f.data, &err)) return goaway(err.code, err.why), false;
    got_settings = true;
    std::string out;
    write_settings_ack(&out);
    send(out);
    windows.notify_all();
    return true;
}

bool Connection::on_window_update(const Frame& f) {
    uint32_t id = f.h.stream;
    if (id == 0) {
        send_window += f.increment;
        if (send_window > kMaxWindow)
            return goaway(ErrorCode::FLOW_CONTROL_ERROR, "the connection window past 2^31-1"),
                   false;
    } else if (auto s = find(id)) {
        s->send_window += f.increment;
        if (s->send_window > kMaxWindow) s->reset_stream(ErrorCode::FLOW_CONTROL_ERROR);
    } else if (is_idle(id)) {
        return goaway(ErrorCode::PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream"), false;
    }
    windows.notify_all();
    return true;
}

bool Connection::on_rst(const Frame& f) {
    uint32_t id = f.h.stream;
    if (is_idle(id))
        return goaway(ErrorCode::PROTOCOL_ERROR, "RST_STREAM on an idle stream"), false;
    auto s = find(id);
    if (!s) return true;
    // A server's open streams are those whose handlers run (then they close).
    if (server && over_limit(&resets, opt.max_resets_per_second))
        return goaway(ErrorCode::ENHANCE_YOUR_CALM, "streams reset too fast"), false;
    s->reset_code = f.error;
    s->reset_ = true;
    close_stream(s, true);
    return true;
}

int Connection::send_settings() {
    std::string out;
    std::pair<setting_id, uint32_t> s[] = {
        {setting_id::INITIAL_WINDOW_SIZE, opt.initial_window_size},
        {setting_id::MAX_FRAME_SIZE, opt.max_frame_size},
        {setting_id::MAX_HEADER_LIST_SIZE, opt.max_header_list_size},
        {setting_id::HEADER_TABLE_SIZE, opt.header_table_size},
        {setting_id::ENABLE_PUSH, 0},
        {setting_id::MAX_CONCURRENT_STREAMS, opt.max_concurrent_streams}};
    // (A client's MAX_CONCURRENT_STREAMS would be about pushed streams: not sent.)
    write_settings(s, sizeof(s) / sizeof(s[0]) - (server ? 0 : 1), &out);
    // The bytes the peer may have in flight to us are bytes we may have to
    // hold: a window past the protocol's initial one is granted only if the
    // memory budget has room for it.
    size_t extra =
        opt.connection_window > kDefaultWindow ? opt.connection_window - kDefaultWindow : 0;
    if (extra && account.try_acquire(extra) < 0) {
        LOG_EVERY_T(10, LOG_WARN("http2: no room in the memory budget for a ` byte window; "
                                 "the connection keeps 65535",
                                 opt.connection_window));
        extra = 0;
    }
    if (extra) write_window_update(0, (uint32_t)extra, &out);
    recv_window = granted = kDefaultWindow + extra;
    settings_sent_us = now_us();
    return send(out);
}

// Checks and handles a frame whose bytes are at rpos: false to end.
bool Connection::dispatch(const FrameHeader& h) {
    Frame f;
    frame_error err;
    bool ok = parse_frame(h, (const uint8_t*)&rbuf[rpos + kFrameHeaderSize], &f, &err);
    if (!got_settings && (h.type != (uint8_t)frame_type::SETTINGS || (h.flags & flags::ACK)))
        return goaway(ErrorCode::PROTOCOL_ERROR, "the first frame is not SETTINGS"), false;
    if (!ok && err.connection) return goaway(err.code, err.why), false;
    if (!ok && h.type == (uint8_t)frame_type::HEADERS) return refused_headers(f, err);
    if (!ok) {
        if (auto s = find(h.stream))
            s->reset_stream(err.code);
        else
            rst(h.stream, err.code);
        return true;
    }
    return handle(f);
}

// Reads and handles the next frame: 1 to go on, 0 at a clean end, -1 on
// an error end (errno).
int Connection::next_frame() {
    reap();
    if (winding_down() && streams.empty()) return 0;
    // (The deadlines cost clock reads: only a read that waits needs one.)
    if (rbuf.size() - rpos < kFrameHeaderSize) {
        on_frames_handled();
        if (fill(kFrameHeaderSize, next_deadline()) < 0) {
            if (errno == ETIMEDOUT && on_timeout()) return 1;
            return errno == ECONNRESET || errno == ETIMEDOUT ? 0 : -1;
        }
    }
    last_frame_us = photon::now;  // the scheduler's clock: the idle deadline is coarse anyway
    auto h = read_frame_header((const uint8_t*)&rbuf[rpos]);
    if (h.length > opt.max_frame_size) {
        goaway(ErrorCode::FRAME_SIZE_ERROR, "a frame above SETTINGS_MAX_FRAME_SIZE");
        return errno = EPROTO, -1;
    }
    size_t whole = kFrameHeaderSize + h.length;
    if (rbuf.size() - rpos < whole && fill(whole, Timeout(opt.idle_timeout)) < 0) return -1;
    in_frame = true;
    bool go_on = dispatch(h);
    in_frame = false;
    rpos += kFrameHeaderSize + h.length;
    if (go_on) return 1;
    return goaway_sent && !peer_goaway ? (errno = EPROTO, -1) : 0;
}

bool Connection::on_goaway(const Frame& f) {
    peer_goaway = true;
    peer_last_stream = f.last_stream;
    // Streams we opened past the last one the peer took were not processed:
    // they end (a client may retry them on another connection).
    if (!server)
        for (auto& kv : streams)
            if (kv.first > f.last_stream) {
                kv.second->reset_code = (uint32_t)ErrorCode::REFUSED_STREAM;
                kv.second->reset_ = true;
                kv.second->readable.notify_all();
            }
    windows.notify_all();
    return !streams.empty();
}

}  // namespace http2
}  // namespace net
}  // namespace photon
