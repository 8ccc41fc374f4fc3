// Helpers for the WebSocket tests: frames written by hand (apart from the
// library's codec), an echo server that obeys commands, a hand-made server
// for our client, and the fixture serving them on 127.0.0.1 under each event
// engine.
#pragma once

#include <photon/net/http/websocket.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "../../net/http/websocket_codec.h"
#include "http_server_test_util.h"
#include "http_test_util.h"
#include "net_test_util.h"

namespace photon_test {

using Op = photon::net::http::WebSocketOpcode;
constexpr size_t kBig = 4 << 20;  // receive buffers: above every message sent here

// A frame as a test peer writes it: b0 is FIN|RSV|opcode; masked with a
// fixed key unless `masked` is false. Written apart from the library's codec.
inline std::string frame(uint8_t b0, std::string_view payload, bool masked = true) {
    static const char key[4] = {0x37, (char)0xfa, 0x21, 0x3d};
    std::string f(1, (char)b0);
    char m = masked ? (char)0x80 : 0;
    uint64_t n = payload.size();
    if (n < 126) {
        f += (char)(m | n);
    } else if (n < 65536) {
        f += (char)(m | 126);
        f += (char)(n >> 8), f += (char)n;
    } else {
        f += (char)(m | 127);
        for (int s = 56; s >= 0; s -= 8) f += (char)(n >> s);
    }
    if (!masked) return f.append(payload);
    f.append(key, 4);
    for (size_t i = 0; i < n; i++) f += (char)(payload[i] ^ key[i % 4]);
    return f;
}

// A header that claims `len` bytes (64-bit form), masked, with no payload.
inline std::string claim(uint8_t b0, uint64_t len) {
    std::string f(1, (char)b0);
    f += (char)(0x80 | 127);
    for (int s = 56; s >= 0; s -= 8) f += (char)(len >> s);
    return f.append("\x01\x02\x03\x04", 4);
}

inline std::string code_bytes(uint16_t code) { return {(char)(code >> 8), (char)(code & 0xFF)}; }

inline uint16_t code_of(std::string_view close_payload) {
    if (close_payload.size() < 2) return 0;
    return (uint16_t)((uint8_t)close_payload[0] << 8 | (uint8_t)close_payload[1]);
}

inline std::string upgrade_head(std::string_view path = "/ws",
                                std::string_view key = "dGhlIHNhbXBsZSBub25jZQ==",
                                std::string_view version = "13", std::string_view method = "GET") {
    std::string extra = "Upgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n";
    if (!key.empty()) extra.append("Sec-WebSocket-Key: ").append(key).append("\r\n");
    extra.append("Sec-WebSocket-Version: ").append(version).append("\r\n");
    return head(method, path, extra);
}

// What a receive returned: "<opcode> <payload>", or "error <errno>".
struct received {
    ssize_t n;
    Op op;
    std::string data;
    int err;
};
inline received recv_on(IWebSocketStream* ws, uint64_t timeout = kLongUs, size_t size = kBig) {
    std::unique_ptr<char[]> buf(new char[size]);
    received r{};
    r.n = ws->recv_frame(buf.get(), size, &r.op, timeout);
    r.err = r.n < 0 ? errno : 0;
    if (r.n > 0) r.data.assign(buf.get(), (size_t)r.n);
    return r;
}

// The server side of most tests: echoes messages, and obeys commands.
//   "frag"        a fragmented "fragmented wörld" with a Ping("mid") inside
//   "close:<n>"   close(n, "bye"), then waits for the reply
//   "ping"        ping("srv"); its Pong is answered with "pong:<payload>"
// ping_each: a Ping("p") before every binary echo.
struct echo_server {
    bool ping_each = false;
    int sessions = 0, ended = 0, pings = 0, pongs = 0;
    bool answer_pong = false;
    std::string close_payload;  // the peer's Close
    int recv_errno = 0;         // how the last session's receiving ended (0: a Close)

    int handle(IWebSocketStream* ws) {
        sessions++;
        run(ws);
        ended++;
        return 0;
    }

    void run(IWebSocketStream* ws) {
        std::unique_ptr<char[]> buf(new char[kBig]);
        close_payload.clear();
        recv_errno = 0;
        for (int i = 0; i < 100000; i++) {
            Op op;
            ssize_t n = ws->recv_frame(buf.get(), kBig, &op, kLongUs);
            if (n < 0) {
                recv_errno = errno;
                return;
            }
            std::string msg(buf.get(), (size_t)n);
            if (op == Op::Close) {
                close_payload = msg;
                return;
            } else if (op == Op::Ping) {
                pings++;
            } else if (op == Op::Pong) {
                pongs++;
                if (answer_pong) ws->send_text("pong:" + msg);
                answer_pong = false;
            } else if (op == Op::Binary) {
                if (ping_each) ws->ping("p");
                ws->send_binary(msg.data(), msg.size());
            } else if (!command(ws, msg)) {
                ws->send_text(msg);
            }
        }
    }

    bool command(IWebSocketStream* ws, const std::string& msg) {
        if (msg == "frag") {
            send_piece(ws, Op::Text, "frag", false);
            ws->ping("mid");
            send_piece(ws, Op::Continuation, "mented w\xC3", false);  // ö split in two
            send_piece(ws, Op::Continuation, "\xB6rld", true);
        } else if (msg.compare(0, 6, "close:") == 0) {
            ws->close((WebSocketCloseCode)atoi(msg.c_str() + 6), "bye");
        } else if (msg == "ping") {
            answer_pong = true;
            ws->ping("srv");
        } else {
            return false;
        }
        return true;
    }

    static ssize_t send_piece(IWebSocketStream* ws, Op op, std::string_view s, bool fin) {
        struct iovec v = {const_cast<char*>(s.data()), s.size()};
        return ws->send_fragment(op, iovector_view(&v, 1), fin);
    }
};

// A hand-made WebSocket server for our client: it reads the upgrade
// request, runs `script` (which writes the answer and frames), then keeps
// what the client sends until it closes.
class raw_ws_server {
public:
    using Script = std::function<void(ISocketStream*, const std::string& accept)>;
    explicit raw_ws_server(Script script)
        : script_(std::move(script)), tcp_(scripted_server::listening_tcp()) {
        tcp_->set_handler({this, &raw_ws_server::serve});
        tcp_->start_loop(false);
    }
    ~raw_ws_server() {
        tcp_->terminate();
        wait_for([&] { return active_ == 0; });
    }
    std::string url(const std::string& path = "/") {
        return "http://127.0.0.1:" + std::to_string(tcp_->getsockname().port) + path;
    }
    std::string key, version;  // of the request
    std::string received;      // after the handshake, to EOF
    bool done = false;

private:
    int serve(ISocketStream* s) {
        active_++;
        s->timeout(kLongUs);
        InputBuffer in(s);
        Request req;
        req.reset(&in, s);
        if (req.receive_header() == 0) {
            key = std::string(req.headers["Sec-WebSocket-Key"]);
            version = std::string(req.headers["Sec-WebSocket-Version"]);
            script_(s, ws_detail::accept_key(key));
            received.assign(in.data());
            char buf[16384];
            ssize_t n;
            while ((n = s->recv(buf, sizeof(buf))) > 0) received.append(buf, (size_t)n);
        }
        done = true;
        active_--;
        return 0;
    }

    Script script_;
    std::unique_ptr<ISocketServer> tcp_;
    int active_ = 0;
};

inline std::string switching(const std::string& accept) {
    return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Accept: " +
           accept + "\r\n\r\n";
}

inline void write_all(ISocketStream* s, const std::string& bytes) {
    ASSERT_EQ((ssize_t)bytes.size(), s->write(bytes.data(), bytes.size()));
}

// The first frame of what a client sent (masked): opcode and unmasked payload.
inline bool first_client_frame(const std::string& bytes, uint8_t* b0, std::string* payload) {
    if (bytes.size() < 6 || !((uint8_t)bytes[1] & 0x80)) return false;
    size_t n = (uint8_t)bytes[1] & 0x7F;
    if (n > 125 || bytes.size() < 6 + n) return false;
    *b0 = (uint8_t)bytes[0];
    payload->clear();
    for (size_t i = 0; i < n; i++) *payload += (char)(bytes[6 + i] ^ bytes[2 + i % 4]);
    return true;
}

// Photon's own manual use: server_accept_websocket from a plain handler.
struct manual_server {
    int accepted = 0, refused = 0, refused_errno = 0;
    int handle(Request& req, Response& resp, std::string_view) {
        IWebSocketStream* ws = server_accept_websocket(req, resp);
        if (!ws) {
            refused++;
            refused_errno = errno;
            return 0;
        }
        accepted++;
        ws->send_text("welcome");
        delete ws;
        return 0;
    }
};

// ---- the fixture ----------------------------------------------------------------

class WebSocket : public HttpServerTest {
protected:
    void SetUp() override {
        HttpServerTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        WebSocketOptions small;
        small.max_message_size = 1000;
        serve(ServerOptions(), [&](HTTPServer* h) {
            h->add_handler(new_websocket_handler({&echo, &echo_server::handle}), true, "/ws");
            h->add_handler(new_websocket_handler({&pinging, &echo_server::handle}), true,
                           "/pinging");
            h->add_handler(new_websocket_handler({&limited, &echo_server::handle}, small), true,
                           "/small");
            h->add_handler({&manual, &manual_server::handle}, "/manual");
        });
        pinging.ping_each = true;
        client.reset(new_http_client());
    }
    void TearDown() override {
        client.reset();
        HttpServerTest::TearDown();
    }

    std::string ws_url(std::string_view path) const {
        return "ws://127.0.0.1:" + std::to_string(ep.port) + std::string(path);
    }
    std::unique_ptr<IWebSocketStream> connect(std::string_view path = "/ws") {
        return std::unique_ptr<IWebSocketStream>(client->websocket_connect(url(path), kLongUs));
    }

    // Sends `bytes` after a raw handshake on /ws (or path) and returns the
    // server's Close code (0 if none came) once the server has closed.
    uint16_t close_code_for(const std::string& bytes, const char* path = "/ws") {
        raw_client raw(ep);
        EXPECT_TRUE(raw.ok());
        if (!raw.ok()) return 0;
        EXPECT_EQ(101, raw.request(upgrade_head(path)));
        EXPECT_TRUE(raw.send(bytes));
        std::string got;
        char buf[512];
        for (int i = 0; i < 100; i++) {  // a whole Close: 2 + its length
            if (got.size() >= 2 && got.size() >= 2 + (size_t)((uint8_t)got[1] & 0x7F)) break;
            ssize_t n = raw.stream()->recv(buf, sizeof(buf));
            if (n <= 0) break;
            got.append(buf, (size_t)n);
        }
        raw.stream()->shutdown(ShutdownHow::Write);  // as a client does after a Close
        EXPECT_TRUE(raw.closed());
        if (got.size() < 4 || (uint8_t)got[0] != 0x88 || ((uint8_t)got[1] & 0x80)) {
            ADD_FAILURE() << "no unmasked Close came: " << got.size() << " bytes";
            return 0;
        }
        return code_of(got.substr(2));
    }

    echo_server echo, pinging, limited;
    manual_server manual;
    std::unique_ptr<Client> client;
};

}  // namespace photon_test
