// websocket_stream.h: receiving (frames parsed from a read-ahead buffer,
// resumable after a timeout at any byte), reassembly, control frames, the
// closing handshake, and sending (masked in chunks by a client).
#include "websocket_stream.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include <photon/common/alog.h>

#include "server_conn.h"

namespace photon {
namespace net {
namespace http {
namespace ws_detail {

namespace {
constexpr size_t kReadBuffer = 16 * 1024;
constexpr size_t kMaskChunk = 64 * 1024;        // a client masks a copy, this much at a time
constexpr size_t kMessageStep = 64 * 1024;      // the least a message buffer grows by
constexpr size_t kKeptCapacity = kMessageStep;  // a larger message buffer is freed after use
constexpr uint64_t kReplyTimeout = 5'000'000;   // close(), and at least this for replies
constexpr uint64_t kAwayWait = 1'000'000;       // for the peer's Close after the server stopped
constexpr uint32_t kServerPingRate = 16;        // a server stream's max_ping_rate
constexpr uint64_t kReservePoll = 10'000;       // how often a message waiting for room looks
constexpr uint64_t kLingerTime = 1'000'000;     // waiting for the peer's end
constexpr uint64_t kLingerIdle = 100'000;
constexpr size_t kLingerBytes = 64 * 1024;

class locked {
public:
    locked(photon::mutex& m, const Timeout& t) : m_(m), ok_(m.lock(t) == 0) {}
    ~locked() {
        if (ok_) m_.unlock();
    }
    bool ok() const { return ok_; }

private:
    photon::mutex& m_;
    bool ok_;
};

// Failures a later call may get past: the connection is intact.
bool resumable(int e) { return e == ETIMEDOUT || e == EINTR || e == EAGAIN; }

size_t total(const struct iovec* iov, int iovcnt) {
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++) n += iov[i].iov_len;
    return n;
}

// Copies bytes out of an iovec array, front to back.
struct iov_cursor {
    const struct iovec* iov;
    int iovcnt;
    int i = 0;
    size_t off = 0;

    void copy_to(char* dst, size_t n) {
        while (n && i < iovcnt) {
            size_t k = std::min(n, iov[i].iov_len - off);
            memcpy(dst, (const char*)iov[i].iov_base + off, k);
            dst += k, n -= k, off += k;
            if (off == iov[i].iov_len) i++, off = 0;
        }
    }
};
}  // namespace

WebSocketOptions server_defaults(WebSocketOptions o, const ServerOptions& server) {
    if (o.idle_timeout == 0) o.idle_timeout = server.keepalive_timeout;
    if (o.message_timeout == 0) o.message_timeout = server.header_timeout;
    if (o.max_ping_rate == 0) o.max_ping_rate = kServerPingRate;
    return o;
}

namespace {
// 0 (a client's default): none.
WebSocketOptions client_defaults(WebSocketOptions o) {
    if (o.idle_timeout == 0) o.idle_timeout = UINT64_MAX;
    if (o.message_timeout == 0) o.message_timeout = UINT64_MAX;
    if (o.max_ping_rate == 0) o.max_ping_rate = UINT32_MAX;
    return o;
}
}  // namespace

websocket_stream_impl::websocket_stream_impl(ISocketStream* stream, bool client, bool own,
                                             std::string_view leftover,
                                             const WebSocketOptions& options,
                                             server_detail::Connection* conn)
    : stream_(stream),
      client_(client),
      own_(own),
      opts_(client_defaults(options)),
      conn_(conn),
      own_account_(options.memory_budget ? new MemoryBudget::Account(options.memory_budget)
                                         : nullptr),
      account_(own_account_ ? own_account_.get()
               : conn       ? &conn->account
                            : nullptr),
      rbuf_(new char[std::max(kReadBuffer, leftover.size())]),
      rcap_(std::max(kReadBuffer, leftover.size())),
      idle_(opts_.idle_timeout),
      ping_tokens_(opts_.max_ping_rate),
      ping_time_(photon::now) {
    if (!leftover.empty()) memcpy(rbuf_.get(), leftover.data(), leftover.size());
    rend_ = leftover.size();
}

websocket_stream_impl::~websocket_stream_impl() {
    if (!failed_ && !close_sent_) (void)close(WebSocketCloseCode::GoingAway, "");
    // The peer's Close ends the connection cleanly (RFC 6455 7.1.1).
    if (!failed_ && close_sent_ && !close_received_) wait_for_close();
    free_message();
    if (own_) delete stream_;
}

// ---- receiving ------------------------------------------------------------

ssize_t websocket_stream_impl::recv_frame(void* buf, size_t size, WebSocketOpcode* opcode,
                                          uint64_t timeout) {
    if (!buf && size) {
        errno = EINVAL;
        return -1;
    }
    Timeout t(timeout);
    locked lock(read_lock_, t);
    if (!lock.ok() || receive(t, (char*)buf, size) < 0) return -1;
    size_t n = ready_len_;
    if (ready_ != Ready::Direct) {
        if (n > size) {
            errno = ENOBUFS;
            return -1;
        }
        if (n) memcpy(buf, ready_data(), n);
    }
    if (opcode) *opcode = (WebSocketOpcode)ready_op_;
    consume_ready();
    return (ssize_t)n;
}

ssize_t websocket_stream_impl::recv_frame(iovector* iov, WebSocketOpcode* opcode,
                                          uint64_t timeout) {
    if (!iov) {
        errno = EINVAL;
        return -1;
    }
    Timeout t(timeout);
    locked lock(read_lock_, t);
    if (!lock.ok() || receive(t, nullptr, 0) < 0) return -1;
    size_t n = ready_len_, have = iov->sum();
    if (have < n && iov->push_back(n - have) != n - have) {
        errno = ENOBUFS;
        return -1;
    }
    if (n) iov->memcpy_from(ready_data(), n);
    if (opcode) *opcode = (WebSocketOpcode)ready_op_;
    consume_ready();
    return (ssize_t)n;
}

// Reads frames until a message or a control frame is ready. A data frame
// that is a whole message fitting `direct` is read straight into it.
int websocket_stream_impl::receive(const Timeout& t, char* direct, size_t direct_size) {
    while (ready_ == Ready::None) {
        if (failed_ || close_received_) {
            errno = ENOTCONN;
            return -1;
        }
        if (server_stopping() && go_away() < 0) return -1;
        if (rend_ > rbegin_) got_bytes();  // a frame begun while nobody received
        int r = in_frame_ ? 0 : read_header(t, direct, direct_size);
        if (r == 0) r = read_payload(t, direct);
        if (r == 0) r = end_frame(t);
        if (r < 0) {
            if (in_frame_ && frame_direct_ && !failed_) keep_direct_bytes(direct);
            return -1;
        }
    }
    return 0;
}

int websocket_stream_impl::read_header(const Timeout& t, char* direct, size_t direct_size) {
    // Nothing is consumed until the whole header is in: a timeout loses nothing.
    if (buffer_at_least(2, t) < 0) return -1;
    auto p = (const uint8_t*)rbuf_.get() + rbegin_;
    size_t n = header_size(p[0], p[1]);
    if (buffer_at_least(n, t) < 0) return -1;
    p = (const uint8_t*)rbuf_.get() + rbegin_;
    int r = parse_header(p, &frame_);
    rbegin_ += n;
    if (r < 0) return fail(WebSocketCloseCode::ProtocolError, EPROTO, "a 64-bit length >= 2^63");
    if (check_header() < 0) return -1;
    in_frame_ = true;
    frame_got_ = 0;
    frame_direct_ = false;
    if (is_control(frame_.opcode)) return 0;
    if (frame_.opcode != kOpContinuation) {
        in_message_ = true;
        msg_op_ = frame_.opcode;
        msg_len_ = 0;
        msg_utf8_.reset();
        frame_direct_ = direct && frame_.fin && frame_.length <= direct_size;
    }
    return 0;
}

int websocket_stream_impl::check_header() {
    const FrameHeader& h = frame_;
    auto proto = WebSocketCloseCode::ProtocolError;
    if (h.rsv) return fail(proto, EPROTO, "reserved bits set (no extension was agreed)");
    if (!is_known_opcode(h.opcode)) return fail(proto, EPROTO, "a reserved opcode");
    // Clients mask every frame, servers none (RFC 6455 5.1).
    if (h.masked == client_)
        return fail(proto, EPROTO, client_ ? "a masked frame" : "an unmasked frame");
    if (is_control(h.opcode)) {
        if (!h.fin) return fail(proto, EPROTO, "a fragmented control frame");
        if (h.length > kMaxControlPayload)
            return fail(proto, EPROTO, "a control frame over 125 bytes");
        return 0;
    }
    bool continuation = h.opcode == kOpContinuation;
    if (continuation != in_message_)
        return fail(proto, EPROTO,
                    continuation ? "a continuation of no message"
                                 : "a new message inside a fragmented one");
    size_t so_far = continuation ? msg_len_ : 0;
    if (h.length > opts_.max_message_size - so_far)
        return fail(WebSocketCloseCode::MessageTooBig, EMSGSIZE, "a message over max_message_size");
    return 0;
}

int websocket_stream_impl::read_payload(const Timeout& t, char* direct) {
    while (frame_got_ < frame_.length) {
        size_t room;
        char* dst = payload_room(direct, frame_.length - frame_got_, &room, t);
        if (!dst) return -1;
        ssize_t n = read_some(dst, room, t);
        if (n <= 0) return n == 0 || !resumable(errno) ? broken(n == 0 ? ECONNRESET : errno) : -1;
        if (frame_.masked) apply_mask(dst, (size_t)n, frame_.mask, frame_got_);
        frame_got_ += (uint64_t)n;
        if (is_control(frame_.opcode)) continue;
        if (!frame_direct_) msg_len_ += (size_t)n;
        if (msg_op_ == kOpText && !msg_utf8_.feed(dst, (size_t)n))
            return fail(WebSocketCloseCode::InvalidFramePayloadData, EILSEQ,
                        "text that is not UTF-8");
    }
    return 0;
}

// Where the next payload bytes go, and how many fit (*room); nullptr if the
// message buffer cannot grow. It grows as bytes arrive, not by the lengths
// frames claim.
char* websocket_stream_impl::payload_room(char* direct, uint64_t left, size_t* room,
                                          const Timeout& t) {
    if (is_control(frame_.opcode) || frame_direct_) {
        *room = (size_t)left;
        return (is_control(frame_.opcode) ? ctrl_ : direct) + frame_got_;
    }
    if (msg_cap_ == msg_len_) {
        // left <= max_message_size - msg_len_ (check_header): this fits size_t.
        size_t step = std::min<uint64_t>(left, std::max(msg_len_, kMessageStep));
        if (grow_message(msg_len_ + step, t) < 0) return nullptr;
    }
    *room = std::min<uint64_t>(left, msg_cap_ - msg_len_);
    return msg_ + msg_len_;
}

// Grows the message buffer to cap bytes (page-rounded), its growth taken from
// the budget first: waiting for room until t (ETIMEDOUT, nothing lost) or the
// message's deadline (then the connection fails: Close 1009, ENOMEM). 0 or -1.
int websocket_stream_impl::grow_message(size_t cap, const Timeout& t) {
    if (cap <= msg_cap_) return 0;
    size_t page = 4096;
    cap = (cap + page - 1) / page * page;
    Timeout until = t;
    bool message_first = message_armed_ && message_ < t;
    if (message_first) until = message_;
    size_t more = cap - msg_cap_;
    if (account_) {
        // stop() interrupts the wait for room as it does a wait for frames.
        bool watched = conn_ && !going_away_;
        if (watched) conn_->wait.store(server_detail::wait_state::WebSocket);
        int r = wait_out_of_reserve(more, until);
        if (r == 0) r = account_->acquire(more, until);
        if (watched) conn_->wait.store(server_detail::wait_state::None);
        if (r < 0 && server_stopping())
            return fail(WebSocketCloseCode::GoingAway, ECANCELED, "the server stops");
        if (r < 0 && errno == ETIMEDOUT && !message_first) return -1;  // the caller's: call again
        if (r < 0)
            return fail(WebSocketCloseCode::MessageTooBig, ENOMEM, "no room in the memory budget");
    }
    void* p = msg_ ? mremap(msg_, msg_cap_, cap, MREMAP_MAYMOVE)
                   : mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        if (account_) account_->release(more);
        return fail(WebSocketCloseCode::MessageTooBig, ENOMEM, "out of memory");
    }
    msg_ = (char*)p;
    msg_cap_ = cap;
    return 0;
}

// A message past its first kMessageStep bytes leaves the budget's reserve
// (a quarter) to requests and small messages, however light its account: a
// crowd of connections each growing a message within its fair share would
// take it all. Waits (polling: the budget has no such wait) while the budget
// is above limit - reserve: 0, or -1: ETIMEDOUT at `until`, ENOMEM if the
// connection's bytes alone would pass limit - reserve.
int websocket_stream_impl::wait_out_of_reserve(size_t more, const Timeout& until) {
    MemoryBudget* b = account_->budget();
    if (!b || msg_cap_ < kMessageStep) return 0;
    for (;;) {
        size_t lim = b->limit();
        if (account_->held() + more > lim - lim / 4) {
            errno = ENOMEM;  // never: what this connection would hold is past the reserve
            return -1;
        }
        if (b->used() + more <= lim - lim / 4) return 0;
        uint64_t left = until.timeout();
        if (left == 0 || server_stopping()) {
            errno = left ? ECANCELED : ETIMEDOUT;
            return -1;
        }
        photon::thread_usleep(std::min<uint64_t>(left, kReservePoll));
    }
}

void websocket_stream_impl::free_message() {
    if (msg_) munmap(msg_, msg_cap_);
    if (account_ && msg_cap_) account_->release(msg_cap_);
    msg_ = nullptr;
    msg_cap_ = 0;
}

int websocket_stream_impl::end_frame(const Timeout& t) {
    in_frame_ = false;
    idle_.timeout(opts_.idle_timeout);
    if (!in_message_) message_armed_ = false;  // a control frame between messages
    if (is_control(frame_.opcode)) return on_control(t);
    if (!frame_.fin) return 0;
    message_armed_ = false;
    if (msg_op_ == kOpText && !msg_utf8_.complete())
        return fail(WebSocketCloseCode::InvalidFramePayloadData, EILSEQ, "text that is not UTF-8");
    in_message_ = false;
    ready_ = frame_direct_ ? Ready::Direct : Ready::Message;
    ready_op_ = msg_op_;
    ready_len_ = frame_direct_ ? (size_t)frame_.length : msg_len_;
    frame_direct_ = false;
    return 0;
}

int websocket_stream_impl::on_control(const Timeout& t) {
    size_t n = (size_t)frame_.length;
    // A reply waits for a send of the other coroutine, however short the receive's timeout.
    Timeout reply(std::max<uint64_t>(t.timeout(), kReplyTimeout));
    if (frame_.opcode == kOpPing && check_ping() < 0) return -1;
    if (frame_.opcode == kOpPing && !close_sent_) {
        struct iovec v = {ctrl_, n};
        // The lock may wait for the other coroutine's send; the Pong's own
        // write gets 5 s whatever the receive's timeout.
        uint64_t t0 = photon::now;
        if (send_frame(kOpPong, true, &v, 1, reply, kReplyTimeout) < 0) {
            // Pongs the peer does not read back up: a flood too (a Pong cut
            // short by the time says EIO; the connection is broken then).
            if (errno == ETIMEDOUT || photon::now - t0 >= kReplyTimeout)
                return fail(WebSocketCloseCode::PolicyViolation, ECONNABORTED, "pongs back up");
            return -1;
        }
    } else if (frame_.opcode == kOpClose) {
        uint16_t code = 0;
        if (n == 1)
            return fail(WebSocketCloseCode::ProtocolError, EPROTO, "a 1-byte Close payload");
        if (n >= 2) {
            code = (uint16_t)((uint8_t)ctrl_[0] << 8 | (uint8_t)ctrl_[1]);
            if (!valid_close_code(code))
                return fail(WebSocketCloseCode::ProtocolError, EPROTO, "an invalid close code");
            if (!is_utf8(std::string_view(ctrl_ + 2, n - 2)))
                return fail(WebSocketCloseCode::InvalidFramePayloadData, EILSEQ,
                            "a close reason that is not UTF-8");
        }
        close_received_ = true;
        in_message_ = false;  // a message the Close cut short is dropped
        msg_len_ = 0;
        // Echo the code (RFC 6455 5.5.1); the peer is leaving, a failure is moot.
        (void)send_close(code, "", reply);
    }
    ready_ = Ready::Control;
    ready_op_ = frame_.opcode;
    ready_len_ = n;
    return 0;
}

// A frame going straight to a caller's buffer that a timeout cut short goes on
// in a later call, maybe with another buffer: what came moves to msg_.
void websocket_stream_impl::keep_direct_bytes(const char* direct) {
    frame_direct_ = false;
    int e = errno;
    // The bytes are read already: room is waited for until the message's deadline.
    if (grow_message((size_t)frame_got_, message_armed_ ? message_ : Timeout(0)) < 0) {
        if (!failed_) (void)fail(WebSocketCloseCode::MessageTooBig, ENOMEM, "no room");
        errno = ENOMEM;
        return;
    }
    if (frame_got_) memcpy(msg_, direct, (size_t)frame_got_);
    msg_len_ = (size_t)frame_got_;
    errno = e;
}

const char* websocket_stream_impl::ready_data() const {
    return ready_ == Ready::Control ? ctrl_ : msg_;
}

void websocket_stream_impl::consume_ready() {
    if (ready_ != Ready::Control) {
        msg_len_ = 0;
        if (msg_cap_ > kKeptCapacity) free_message();
    }
    ready_ = Ready::None;
}

// A token bucket of max_ping_rate a second, as deep: 0, or -1 for a flood.
int websocket_stream_impl::check_ping() {
    uint32_t rate = opts_.max_ping_rate;
    if (rate == UINT32_MAX) return 0;
    uint64_t t = photon::now;
    ping_tokens_ = std::min<double>(rate, ping_tokens_ + (double)(t - ping_time_) * rate / 1e6);
    ping_time_ = t;
    if (ping_tokens_ < 1)
        return fail(WebSocketCloseCode::PolicyViolation, ECONNABORTED, "a ping flood");
    ping_tokens_ -= 1;
    return 0;
}

int websocket_stream_impl::arm(const Timeout& t) {
    uint64_t left = t.timeout();
    if (left == 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    stream_->timeout(left);
    return 0;
}

int websocket_stream_impl::buffer_at_least(size_t n, const Timeout& t) {
    while (rend_ - rbegin_ < n) {
        if (rcap_ - rbegin_ < n) {  // n <= kMaxFrameHeader < rcap_: room at the front
            memmove(rbuf_.get(), rbuf_.get() + rbegin_, rend_ - rbegin_);
            rend_ -= rbegin_;
            rbegin_ = 0;
        }
        ssize_t r = wait_recv(rbuf_.get() + rend_, rcap_ - rend_, t);
        if (r == 0) return broken(ECONNRESET);  // closed without a Close
        if (r < 0) return resumable(errno) ? -1 : broken(errno);
        rend_ += (size_t)r;
    }
    return 0;
}

// Buffered bytes first; then a large read goes straight to dst, a small one
// through the buffer (so that the next headers come with it).
ssize_t websocket_stream_impl::read_some(char* dst, size_t n, const Timeout& t) {
    size_t avail = rend_ - rbegin_;
    if (avail == 0 && n >= rcap_ / 2) return wait_recv(dst, n, t);
    if (avail == 0) {
        rbegin_ = rend_ = 0;
        ssize_t r = wait_recv(rbuf_.get(), rcap_, t);
        if (r <= 0) return r;
        rend_ = avail = (size_t)r;
    }
    size_t k = std::min(n, avail);
    memcpy(dst, rbuf_.get() + rbegin_, k);
    rbegin_ += k;
    return (ssize_t)k;
}

// One receive from the connection, waiting until t or the stream's own
// deadline: bytes, 0 at its end, or -1: ETIMEDOUT (t passed: nothing lost),
// the connection's error, or a deadline of the stream's (the connection
// failed). A stop() of the server interrupts it: then Close 1001 goes out and
// the wait goes on for the peer's Close.
ssize_t websocket_stream_impl::wait_recv(char* dst, size_t n, const Timeout& t) {
    for (;;) {
        deadline_kind which;
        const Timeout& own = deadline(&which);
        bool own_first = own < t;
        bool passed = own_first && own.expired();
        // Past the stream's deadline (the caller came back late), bytes that
        // are here already still count: one look without waiting.
        if (passed)
            stream_->timeout(0);
        else if (arm(own_first ? own : t) < 0)
            return -1;
        bool watched = conn_ && !going_away_;
        if (watched) conn_->wait.store(server_detail::wait_state::WebSocket);
        ssize_t r = server_stopping() ? (errno = ECANCELED, (ssize_t)-1) : stream_->recv(dst, n);
        if (watched) conn_->wait.store(server_detail::wait_state::None);
        if (r > 0) got_bytes();
        if (r >= 0) return r;
        if (server_stopping()) {
            if (go_away() < 0) return -1;
            continue;
        }
        if (passed && (errno == ETIMEDOUT || errno == EAGAIN)) return deadline_passed(which);
        if (errno != ETIMEDOUT || t.expired()) return -1;
        // The stream's deadline, or a wake-up ahead of it on the coarse clock.
    }
}

const Timeout& websocket_stream_impl::deadline(deadline_kind* which) const {
    *which = going_away_      ? deadline_kind::Away
             : message_armed_ ? deadline_kind::Message
                              : deadline_kind::Idle;
    return going_away_ ? away_ : message_armed_ ? message_ : idle_;
}

int websocket_stream_impl::deadline_passed(deadline_kind which) {
    switch (which) {
        case deadline_kind::Idle:
            return fail(WebSocketCloseCode::GoingAway, ETIME, "idle_timeout");
        case deadline_kind::Message:
            return fail(WebSocketCloseCode::PolicyViolation, ETIME, "message_timeout");
        default:  // no Close came after ours
            failed_ = true;
            (void)stream_->shutdown(ShutdownHow::ReadWrite);
            errno = ECANCELED;
            return -1;
    }
}

bool websocket_stream_impl::server_stopping() const {
    return conn_ && !going_away_ && conn_->stopping->load(std::memory_order_relaxed);
}

// The server stopped: Close 1001 (unless a Close went already), then a
// bounded wait for the peer's. 0, or -1 if the connection failed.
int websocket_stream_impl::go_away() {
    going_away_ = true;
    away_.timeout(kAwayWait);
    if (!close_sent_)
        (void)send_close((uint16_t)WebSocketCloseCode::GoingAway, "", Timeout(kAwayWait));
    return failed_ || !close_sent_ ? broken(ECANCELED) : 0;
}

// The first byte of a message (or of a control frame between messages)
// starts its deadline.
void websocket_stream_impl::got_bytes() {
    if (message_armed_ || going_away_) return;
    message_armed_ = true;
    message_.timeout(opts_.message_timeout);
}

int websocket_stream_impl::broken(int err) {
    failed_ = true;
    errno = err;
    return -1;
}

// Fails the connection (RFC 6455 7.1.7): a Close with `code`, then the
// connection is shut down. -1 with errno err.
int websocket_stream_impl::fail(WebSocketCloseCode code, int err, const char* why) {
    LOG_DEBUG("websocket: failing the connection (`): Close `", why, (int)code);
    if (!failed_) {
        if (!close_sent_) (void)send_close((uint16_t)code, "", Timeout(kReplyTimeout));
        failed_ = true;
        (void)stream_->shutdown(ShutdownHow::Write);
        linger();
    }
    errno = err;
    return -1;
}

// Reads and drops what the peer still sends, for a while: closing a socket
// with unread bytes resets the connection, and the reset may destroy the
// Close we sent before the peer reads it.
void websocket_stream_impl::linger() {
    Timeout total(kLingerTime);
    char buf[4096];
    for (size_t got = 0; got < kLingerBytes;) {
        uint64_t left = std::min<uint64_t>(total.timeout(), kLingerIdle);
        if (left == 0) break;
        stream_->timeout(left);
        ssize_t n = stream_->recv(buf, sizeof(buf));
        if (n <= 0) break;
        got += (size_t)n;
    }
}

// From the destructor, after our Close: reads (and drops) until the peer's.
void websocket_stream_impl::wait_for_close() {
    Timeout t(kLingerTime);
    locked lock(read_lock_, t);
    if (!lock.ok()) return;
    while (!failed_ && !close_received_ && receive(t, nullptr, 0) == 0) consume_ready();
}

// ---- sending ------------------------------------------------------------------

ssize_t websocket_stream_impl::send_text(std::string_view text, uint64_t timeout) {
    struct iovec v = {const_cast<char*>(text.data()), text.size()};
    return send_frame(kOpText, true, &v, 1, Timeout(timeout));
}

ssize_t websocket_stream_impl::send_binary(const void* data, size_t size, uint64_t timeout) {
    if (!data && size) {
        errno = EINVAL;
        return -1;
    }
    struct iovec v = {const_cast<void*>(data), size};
    return send_frame(kOpBinary, true, &v, 1, Timeout(timeout));
}

ssize_t websocket_stream_impl::send_binary(iovector_view iov, uint64_t timeout) {
    if (iov.iovcnt < 0 || (!iov.iov && iov.iovcnt)) {
        errno = EINVAL;
        return -1;
    }
    return send_frame(kOpBinary, true, iov.iov, iov.iovcnt, Timeout(timeout));
}

ssize_t websocket_stream_impl::send_fragment(WebSocketOpcode opcode, iovector_view iov, bool fin,
                                             uint64_t timeout) {
    auto op = (uint8_t)opcode;
    if ((op != kOpText && op != kOpBinary && op != kOpContinuation) || iov.iovcnt < 0 ||
        (!iov.iov && iov.iovcnt)) {
        errno = EINVAL;
        return -1;
    }
    return send_frame(op, fin, iov.iov, iov.iovcnt, Timeout(timeout));
}

int websocket_stream_impl::ping(std::string_view data, uint64_t timeout) {
    if (data.size() > kMaxControlPayload) {
        errno = EINVAL;
        return -1;
    }
    struct iovec v = {const_cast<char*>(data.data()), data.size()};
    return send_frame(kOpPing, true, &v, 1, Timeout(timeout)) < 0 ? -1 : 0;
}

int websocket_stream_impl::close(WebSocketCloseCode code, std::string_view reason) {
    auto c = (uint16_t)code;
    bool no_code = code == WebSocketCloseCode::NoStatusRcvd;  // a Close without a code
    if ((no_code ? !reason.empty() : !valid_close_code(c)) ||
        reason.size() > kMaxControlPayload - 2 || !is_utf8(reason)) {
        errno = EINVAL;
        return -1;
    }
    return send_close(no_code ? 0 : c, reason, Timeout(kReplyTimeout)) < 0 ? -1 : 0;
}

// Sends a Close (code 0: without a code) unless one was sent: 0 or -1.
int websocket_stream_impl::send_close(uint16_t code, std::string_view reason, const Timeout& t) {
    char payload[kMaxControlPayload];
    size_t n = 0;
    if (code) {
        payload[0] = (char)(code >> 8);
        payload[1] = (char)code;
        memcpy(payload + 2, reason.data(), reason.size());
        n = 2 + reason.size();
    }
    locked lock(write_lock_, t);
    if (!lock.ok()) return -1;
    if (close_sent_) return 0;
    if (failed_) {
        errno = EPIPE;
        return -1;
    }
    close_sent_ = true;  // never a second one, even if this one fails
    struct iovec v = {payload, n};
    return write_frame_locked(kOpClose, true, &v, 1, n, t) < 0 ? -1 : 0;
}

// Any frame but Close; a data frame must fit the message being sent (or
// start one), and text must stay UTF-8 across the fragments.
ssize_t websocket_stream_impl::send_frame(uint8_t opcode, bool fin, const struct iovec* iov,
                                          int iovcnt, const Timeout& t, uint64_t write_us) {
    locked lock(write_lock_, t);
    if (!lock.ok()) return -1;
    if (failed_ || close_sent_) {
        errno = EPIPE;
        return -1;
    }
    bool data = !is_control(opcode);
    bool continuation = opcode == kOpContinuation;
    bool text = opcode == kOpText || (continuation && sending_text_);
    utf8_checker utf8 = continuation ? send_utf8_ : utf8_checker();
    bool bad = data && continuation != sending_fragments_;
    for (int i = 0; text && !bad && i < iovcnt; i++)
        bad = !utf8.feed((const char*)iov[i].iov_base, iov[i].iov_len);
    if (bad || (text && fin && !utf8.complete())) {
        errno = EINVAL;
        return -1;
    }
    Timeout write_t = write_us == UINT64_MAX ? t : Timeout(write_us);
    ssize_t r = write_frame_locked(opcode, fin, iov, iovcnt, total(iov, iovcnt), write_t);
    if (r >= 0 && data) {
        sending_fragments_ = !fin;
        sending_text_ = text;
        send_utf8_ = utf8;
    }
    return r;
}

ssize_t websocket_stream_impl::write_frame_locked(uint8_t opcode, bool fin, const struct iovec* iov,
                                                  int iovcnt, size_t len, const Timeout& t) {
    uint8_t header[kMaxFrameHeader], key[4];
    if (client_) random_bytes(key, sizeof(key));
    size_t header_len = build_header(header, opcode, fin, len, client_ ? key : nullptr);
    if (client_) return write_masked_locked(header, header_len, key, iov, iovcnt, len, t);

    // A server sends the caller's buffers as they are, after the header.
    std::vector<struct iovec> v;
    v.reserve((size_t)iovcnt + 1);
    v.push_back({header, header_len});
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].iov_len) v.push_back(iov[i]);
    if (arm(t) < 0) return -1;
    ssize_t r = stream_->writev(v.data(), (int)v.size());
    return r == (ssize_t)(header_len + len) ? (ssize_t)len : write_broken(r);
}

ssize_t websocket_stream_impl::write_masked_locked(uint8_t* header, size_t header_len,
                                                   const uint8_t* key, const struct iovec* iov,
                                                   int iovcnt, size_t len, const Timeout& t) {
    if (!mask_buf_) mask_buf_.reset(new (std::nothrow) char[kMaskChunk]);
    if (!mask_buf_) {
        errno = ENOMEM;
        return -1;
    }
    iov_cursor src{iov, iovcnt};
    size_t done = 0;
    do {
        size_t k = std::min(kMaskChunk, len - done);
        src.copy_to(mask_buf_.get(), k);
        apply_mask(mask_buf_.get(), k, key, done);
        struct iovec v[2];
        int n = 0;
        if (done == 0) v[n++] = {header, header_len};
        if (k) v[n++] = {mask_buf_.get(), k};
        size_t want = k + (done == 0 ? header_len : 0);
        // A timeout before the first byte leaves the connection as it was.
        if (arm(t) < 0) return done == 0 ? -1 : write_broken(-1);
        ssize_t r = stream_->writev(v, n);
        if (r != (ssize_t)want) return write_broken(r);
        done += k;
    } while (done < len);
    return (ssize_t)len;
}

// A frame went out in part, or maybe did: nothing can follow it. The
// connection is shut down, which also wakes a receiving coroutine.
ssize_t websocket_stream_impl::write_broken(ssize_t r) {
    int e = r >= 0 ? EIO : errno;
    failed_ = true;
    (void)stream_->shutdown(ShutdownHow::ReadWrite);
    errno = e;
    return -1;
}

}  // namespace ws_detail
}  // namespace http
}  // namespace net
}  // namespace photon
