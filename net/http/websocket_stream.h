// Private to net/http/websocket*.cpp: the IWebSocketStream over a connection
// whose handshake is done.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <photon/net/http/websocket.h>
#include <photon/thread/thread.h>

#include "websocket_codec.h"

namespace photon {
namespace net {
namespace http {
namespace server_detail {
struct Connection;
}
namespace ws_detail {

// The options of a server's stream: 0s (defaults) from the server's.
WebSocketOptions server_defaults(WebSocketOptions o, const ServerOptions& server);

class websocket_stream_impl final : public IWebSocketStream {
public:
    // client: we mask what we send and refuse masked frames (the server the
    // reverse). own: the stream is deleted with this object. leftover: bytes
    // that came after the handshake, read before the stream's. conn: the
    // HTTPServer connection a server's stream took over (its budget account,
    // and stop()), else nullptr.
    websocket_stream_impl(ISocketStream* stream, bool client, bool own, std::string_view leftover,
                          const WebSocketOptions& options,
                          server_detail::Connection* conn = nullptr);
    ~websocket_stream_impl() override;

    ssize_t send_text(std::string_view text, uint64_t timeout) override;
    ssize_t send_binary(const void* data, size_t size, uint64_t timeout) override;
    ssize_t send_binary(iovector_view iov, uint64_t timeout) override;
    ssize_t send_fragment(WebSocketOpcode opcode, iovector_view iov, bool fin,
                          uint64_t timeout) override;
    int ping(std::string_view data, uint64_t timeout) override;
    ssize_t recv_frame(void* buf, size_t size, WebSocketOpcode* opcode, uint64_t timeout) override;
    ssize_t recv_frame(iovector* iov, WebSocketOpcode* opcode, uint64_t timeout) override;
    int close(WebSocketCloseCode code, std::string_view reason) override;
    bool is_closed() const override { return close_sent_ || close_received_ || failed_; }
    ISocketStream* get_socket_stream() override { return stream_; }

private:
    // What a receive found, kept until a call takes it (ENOBUFS keeps it).
    enum class Ready : uint8_t { None, Direct, Message, Control };

    // -- receiving (under read_lock_) --
    int receive(const Timeout& t, char* direct, size_t direct_size);
    int read_header(const Timeout& t, char* direct, size_t direct_size);
    int check_header();
    int read_payload(const Timeout& t, char* direct);
    char* payload_room(char* direct, uint64_t left, size_t* room, const Timeout& t);
    int grow_message(size_t cap, const Timeout& t);
    int wait_out_of_reserve(size_t more, const Timeout& until);
    void free_message();
    int check_ping();
    int end_frame(const Timeout& t);
    int on_control(const Timeout& t);
    void keep_direct_bytes(const char* direct);
    int buffer_at_least(size_t n, const Timeout& t);
    ssize_t read_some(char* dst, size_t n, const Timeout& t);
    ssize_t wait_recv(char* dst, size_t n, const Timeout& t);
    // The stream's own deadline for the next wait, and what passing it means.
    enum class deadline_kind : uint8_t { Idle, Message, Away };
    const Timeout& deadline(deadline_kind* which) const;
    int deadline_passed(deadline_kind which);
    bool server_stopping() const;
    int go_away();
    void got_bytes();
    int arm(const Timeout& t);
    int broken(int err);
    int fail(WebSocketCloseCode code, int err, const char* why);
    void linger();
    const char* ready_data() const;
    void consume_ready();
    void wait_for_close();

    // -- sending (under write_lock_) --
    // write_us: the write's own bound from when the lock is had (-1: t).
    ssize_t send_frame(uint8_t opcode, bool fin, const struct iovec* iov, int iovcnt,
                       const Timeout& t, uint64_t write_us = -1);
    ssize_t write_frame_locked(uint8_t opcode, bool fin, const struct iovec* iov, int iovcnt,
                               size_t len, const Timeout& t);
    ssize_t write_masked_locked(uint8_t* header, size_t header_len, const uint8_t* key,
                                const struct iovec* iov, int iovcnt, size_t len, const Timeout& t);
    ssize_t write_broken(ssize_t r);
    int send_close(uint16_t code, std::string_view reason, const Timeout& t);

    ISocketStream* const stream_;
    const bool client_;
    const bool own_;
    const WebSocketOptions opts_;
    server_detail::Connection* const conn_;
    std::unique_ptr<MemoryBudget::Account> own_account_;  // a client's, with memory_budget
    MemoryBudget::Account* const account_;                // nullptr: none
    photon::mutex read_lock_;
    photon::mutex write_lock_;

    // Bytes read ahead of the frame being parsed.
    std::unique_ptr<char[]> rbuf_;
    size_t rcap_, rbegin_ = 0, rend_ = 0;

    // The frame being received: its header is in, frame_got_ payload bytes.
    bool in_frame_ = false;
    FrameHeader frame_;
    uint64_t frame_got_ = 0;
    bool frame_direct_ = false;  // its payload goes straight to the caller's buffer

    // The data message being assembled: msg_len_ bytes in msg_ (msg_cap_).
    bool in_message_ = false;
    uint8_t msg_op_ = 0;
    char* msg_ = nullptr;               // mapped: freed memory leaves the process at once
    size_t msg_cap_ = 0, msg_len_ = 0;  // msg_cap_ bytes are held in account_
    utf8_checker msg_utf8_;

    char ctrl_[kMaxControlPayload];  // a control frame's payload
    Ready ready_ = Ready::None;
    uint8_t ready_op_ = 0;
    size_t ready_len_ = 0;

    // Deadlines: for the next frame to begin (re-armed as each ends); for the
    // message (or control frame) begun, from its first byte; for the peer's
    // Close once the server stopped.
    Timeout idle_;
    Timeout message_;
    bool message_armed_ = false;
    bool going_away_ = false;
    Timeout away_;
    double ping_tokens_ = 0;  // of max_ping_rate, refilled over time
    uint64_t ping_time_ = 0;

    bool close_sent_ = false;
    bool close_received_ = false;
    bool failed_ = false;  // no frame can be read or written any more

    // A fragmented message being sent.
    bool sending_fragments_ = false;
    bool sending_text_ = false;
    utf8_checker send_utf8_;
    std::unique_ptr<char[]> mask_buf_;  // client: masked payload on its way out
};

}  // namespace ws_detail
}  // namespace http
}  // namespace net
}  // namespace photon
