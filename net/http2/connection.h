// What the two sides of an HTTP/2 connection share (RFC 9113): the frame
// reader over a read-ahead buffer, the outbox (frames queued whole and written
// together by a writer coroutine: a group commit), HPACK both ways, flow control (the send windows
// a writer waits for; the receive windows given back as the body is read, the connection's taken
// from the memory budget), SETTINGS, PING, GOAWAY, RST_STREAM, CONTINUATION runs, the limits
// against floods, and a stream's body in both directions. The server (server_connection.h) and the
// client (client_connection.h) add what a HEADERS block means to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/memory_budget.h>
#include <photon/common/timeout.h>
#include <photon/thread/thread.h>

#include "frame.h"
#include "hpack.h"
#include "reset_streams.h"
#include "stream_table.h"
#include "connection_options.h"

namespace photon {
namespace net {
class ISocketStream;
namespace http2 {

class Connection;

// A stream's state and body, both directions.
struct stream_core {
    Connection* c;
    uint32_t id_;
    std::vector<std::string> in;  // received body bytes; those before in_head were read
    size_t in_head = 0, in_off = 0, buffered = 0;
    int64_t send_window, recv_window;
    size_t unacked = 0;  // read since our last WINDOW_UPDATE of the stream
    int64_t content_length = -1;
    uint64_t received = 0;
    bool end_remote = false, end_local = false, head_sent = false, reset_ = false;
    bool is_closed = false;
    uint32_t reset_code = 0;      // the peer's RST_STREAM code (REFUSED_STREAM past its GOAWAY)
    condition_variable readable;  // body bytes, its end, or the stream's

    stream_core(Connection* conn, uint32_t id);
    virtual ~stream_core() = default;
    bool gone() const;
    // Body bytes in: up to n, 0 at the end, -1 (ETIMEDOUT, ECONNRESET).
    ssize_t read_body(void* buf, size_t n, uint64_t timeout);
    // A header block (fields in order; connection-specific ones dropped).
    int send_head(const std::vector<header_field>& fields, bool end_stream) {
        return send_head(vector_fields(fields), end_stream);
    }
    int send_head(const field_list& fields, bool end_stream);
    // The same with the connection's write lock held by the caller.
    int write_head_locked(const field_list& fields, bool end_stream);
    // Body bytes out, as the windows allow: n or -1. The bytes are queued
    // (copied), not yet written, when it returns.
    ssize_t write_body(const void* buf, size_t n, uint64_t timeout);
    // Ends the body (with trailers if given); the END_STREAM flag goes on the
    // stream's last DATA frame if that is still queued.
    int end_body(const std::vector<header_field>* trailers);
    void reset_stream(ErrorCode code);
};

class Connection {
public:
    Connection(ISocketStream* s, const connection_options& o, bool server);
    virtual ~Connection();

    ISocketStream* sock;
    connection_options opt;
    const bool server;
    hpack_decoder dec;
    hpack_encoder enc;
    MemoryBudget::Account account;  // holds the connection window granted past 65,535

    std::string rbuf;  // read ahead; frames parsed from rpos
    size_t rpos = 0;

    uint32_t peer_max_frame = kDefaultMaxFrameSize;
    uint32_t peer_initial_window = kDefaultWindow;
    uint32_t peer_max_streams = UINT32_MAX;
    int64_t send_window = kDefaultWindow;  // the connection's
    int64_t recv_window = kDefaultWindow;  // what the peer may still send
    size_t recv_consumed = 0;              // read since our last WINDOW_UPDATE
    size_t granted = kDefaultWindow;       // the connection window we keep giving

    stream_table streams;             // not yet closed
    std::deque<stream_core*> reaped;  // closed, to delete at the reader's next turn
    // The reader is inside a frame's handling, where it may hold a stream
    // across a switch: a stream closed meanwhile waits in `reaped`.
    bool in_frame = false;
    reset_streams reset_ids;   // recently reset ids (any other closed id ended)
    uint32_t last_stream = 0;  // the highest stream id the peer opened

    uint32_t continuing = 0;  // a HEADERS run waiting for its CONTINUATION
    uint8_t block_flags = 0;
    bool discard_block = false;  // its stream was refused: decode it only to keep HPACK in step
    std::string block;

    mutex wlock;                 // HPACK's encoder: blocks are queued in the order encoded
    condition_variable windows;  // send windows grew, or the connection ended

    bool got_settings = false, settings_acked = false;
    uint64_t settings_sent_us = 0;
    bool goaway_sent = false, stopping = false, peer_goaway = false, dead = false;
    uint32_t peer_last_stream = UINT32_MAX;  // of the peer's GOAWAY
    uint64_t last_frame_us = 0;
    uint64_t meter_start = 0;
    uint32_t resets = 0, controls = 0;

    // Our SETTINGS (and the connection window past 65,535 the budget allows).
    int send_settings();
    // Reads and handles the next frame: 1 to go on, 0 at a clean end, -1 on
    // an error end (errno).
    int next_frame();
    int fill(size_t n, Timeout deadline);
    // Queues a control frame (the writer coroutine writes it): 0, or -1
    // (ECONNRESET once the connection is over). It waits only while a
    // MiB is queued already (a peer that sends but does not read).
    int send(const std::string& bytes);
    // Waits until fewer than `limit` bytes are queued: 0, or -1 (ECONNRESET,
    // ETIMEDOUT). Callers append to the outbox right after, with no yield.
    int room(size_t limit, Timeout t = {});
    // After bytes were appended to the outbox: the writer will write them
    // once the coroutines now ready to run have had their turn.
    void queued();
    // Writes out what is queued and ends the writer (the connection's last
    // writes are done then). Idempotent.
    void finish_writes();
    void goaway(ErrorCode code, const char* why);
    void rst(uint32_t id, ErrorCode code);
    void consumed(stream_core* s, size_t n);
    void close_stream(stream_core* s, bool reset);
    // The connection is over: every waiter is woken.
    void end_all();
    // After our GOAWAY: stop writing and read what the peer still sends
    // (for up to a second and a MiB), so that closing with unread bytes does
    // not reset the connection before the peer has read the GOAWAY.
    void linger();
    void reap();
    stream_core* find(uint32_t id) { return streams.find(id); }

protected:
    // A header block on a stream that is not open: the peer opens one (a
    // server's request), or breaks the protocol. false: the connection ends.
    virtual bool on_new_block(uint32_t id, uint8_t flags, std::vector<header_field>&& fields,
                              bool too_large) = 0;
    // A header block on an open stream (a response head, or trailers).
    virtual bool on_stream_block(stream_core* s, uint8_t flags, std::vector<header_field>&& fields,
                                 bool too_large) = 0;
    // Whether id names a stream never opened (frames on it break the protocol).
    virtual bool is_idle(uint32_t id) const = 0;
    // Whether the reader should end once no stream is open.
    virtual bool winding_down() const { return stopping || peer_goaway; }
    // The reader has handled every frame it read and is about to read more.
    virtual void on_frames_handled() {}

    bool on_block(uint32_t id, uint8_t flags, std::string_view block);
    // Applies a SETTINGS payload (the peer's frame, or an upgrade's
    // HTTP2-Settings): false with *err for a bad value or a stream window
    // pushed past 2^31-1.
    bool apply_settings(std::string_view payload, frame_error* err);

private:
    friend struct stream_core;
    void write_loop();
    bool start_writer();
    void write_out();
    // Before appending to an empty outbox: takes a spare buffer of the vCPU's.
    void fill_outbox();

    // The outbox (queued frames, written in one write per round, the group
    // commit), and the batch being written while the next one fills up.
    std::string out_, batch_;
    size_t last_data_at_ = SIZE_MAX;  // offset in out_ of its last frame if that is DATA
    uint32_t last_data_stream_ = 0;
    std::string hblock_;             // a header block being encoded (kept for its capacity)
    std::unique_ptr<char[]> chunk_;  // what a short read lands in (rbuf's growth is zeroed)
    thread* writer_ = nullptr;
    join_handle* writer_join_ = nullptr;
    bool writer_stop_ = false, writing_ = false;
    bool broken_ = false;           // a write failed: nothing more goes out
    condition_variable out_ready_;  // for the writer: bytes queued, or stop
    condition_variable drained_;    // for queuers: the outbox was taken by the writer

    Timeout next_deadline() const;
    bool on_timeout();
    bool dispatch(const FrameHeader& h);
    bool refused_headers(const Frame& f, const frame_error& err);
    bool handle(const Frame& f);
    bool on_headers(const Frame& f);
    bool on_data(const Frame& f);
    bool on_settings(const Frame& f);
    bool on_window_update(const Frame& f);
    bool on_rst(const Frame& f);
    bool on_goaway(const Frame& f);
    bool over_limit(uint32_t* counter, uint32_t limit);
};

uint64_t now_us();

}  // namespace http2
}  // namespace net
}  // namespace photon
