// WebSocket (websocket.h) on both event engines: our client against our
// server (messages small and large, fragments, pings, closing codes,
// timeouts, a sender and a receiver at once, wss), raw bytes against our
// server (the RFC's examples, bad frames of every kind) and against our
// client (a hand-made server), and python3's websockets package as the peer
// on either side. Every server listens on 127.0.0.1.
#include <photon/net/http/websocket.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <photon/net/security-context/tls-stream.h>
#include <photon/thread/thread11.h>

#include "../../net/http/websocket_codec.h"
#include "http_server_test_util.h"
#include "http_test_util.h"
#include "net_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

namespace {

using Op = WebSocketOpcode;
constexpr size_t kBig = 4 << 20;  // receive buffers: above every message sent here

// ---- helpers ------------------------------------------------------------------

// A frame as a test peer writes it: b0 is FIN|RSV|opcode; masked with a
// fixed key unless `masked` is false. Written apart from the library's codec.
std::string frame(uint8_t b0, std::string_view payload, bool masked = true) {
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
std::string claim(uint8_t b0, uint64_t len) {
    std::string f(1, (char)b0);
    f += (char)(0x80 | 127);
    for (int s = 56; s >= 0; s -= 8) f += (char)(len >> s);
    return f.append("\x01\x02\x03\x04", 4);
}

std::string code_bytes(uint16_t code) { return {(char)(code >> 8), (char)(code & 0xFF)}; }

uint16_t code_of(std::string_view close_payload) {
    if (close_payload.size() < 2) return 0;
    return (uint16_t)((uint8_t)close_payload[0] << 8 | (uint8_t)close_payload[1]);
}

std::string upgrade_head(std::string_view path = "/ws",
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
received recv_on(IWebSocketStream* ws, uint64_t timeout = kLongUs, size_t size = kBig) {
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

// Probes for a python3 that has the websockets package (Debian:
// python3-websockets); "" if none. PHOTON_TEST_PYTHON is tried first.
const std::string& websockets_python() {
    static const std::string found = [] {
        const char* env = getenv("PHOTON_TEST_PYTHON");
        for (const char* p : {env ? env : "", "python3", "/usr/bin/python3"}) {
            if (!*p) continue;
            std::string cmd = std::string(p) + " -c 'import websockets' >/dev/null 2>&1";
            if (system(cmd.c_str()) == 0) return std::string(p);
        }
        return std::string();
    }();
    return found;
}

#define SKIP_WITHOUT_WEBSOCKETS_PYTHON()                                                         \
    if (websockets_python().empty())                                                             \
    GTEST_SKIP() << "python3 -c 'import websockets' fails: install python3-websockets (Debian) " \
                    "or set PHOTON_TEST_PYTHON"

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

std::string switching(const std::string& accept) {
    return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Accept: " +
           accept + "\r\n\r\n";
}

void write_all(ISocketStream* s, const std::string& bytes) {
    ASSERT_EQ((ssize_t)bytes.size(), s->write(bytes.data(), bytes.size()));
}

// The first frame of what a client sent (masked): opcode and unmasked payload.
bool first_client_frame(const std::string& bytes, uint8_t* b0, std::string* payload) {
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

// ---- our client and our server --------------------------------------------------

TEST_P(WebSocket, TextBinaryAndEmptyMessagesAreEchoed) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    EXPECT_FALSE(ws->is_closed());
    ASSERT_EQ(5, ws->send_text("hello"));
    auto r = recv_on(ws.get());
    EXPECT_EQ(Op::Text, r.op);
    EXPECT_EQ("hello", r.data);

    const char bin[] = {0, 1, 2, (char)0xFF, (char)0x80, 0x7F};
    ASSERT_EQ(6, ws->send_binary(bin, sizeof(bin)));
    r = recv_on(ws.get());
    EXPECT_EQ(Op::Binary, r.op);
    EXPECT_EQ(std::string(bin, sizeof(bin)), r.data);

    char a[] = "Hello, ", b[] = "World", c[] = "!";
    struct iovec iov[3] = {{a, 7}, {b, 5}, {c, 1}};
    ASSERT_EQ(13, ws->send_binary(iovector_view(iov, 3)));
    r = recv_on(ws.get());
    EXPECT_EQ(Op::Binary, r.op);
    EXPECT_EQ("Hello, World!", r.data);

    ASSERT_EQ(0, ws->send_text(""));
    r = recv_on(ws.get());
    EXPECT_EQ(0, r.n);
    EXPECT_EQ(Op::Text, r.op);

    for (size_t n : {125, 126, 300, 65535, 65536, 70000}) {  // 7-, 16- and 64-bit lengths
        std::string m = pattern(n, (uint32_t)n);
        ASSERT_EQ((ssize_t)n, ws->send_binary(m.data(), n));
        r = recv_on(ws.get());
        EXPECT_EQ(m, r.data) << n;
    }
}

TEST_P(WebSocket, MessagesOfAMebibyteAndMoreArriveIntact) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    std::string bin = pattern((3 << 19) + 3, 7);  // 1.5 MiB + 3
    ASSERT_EQ((ssize_t)bin.size(), ws->send_binary(bin.data(), bin.size()));
    auto r = recv_on(ws.get());  // straight into the caller's buffer
    EXPECT_EQ(Op::Binary, r.op);
    EXPECT_TRUE(r.data == bin);

    std::string text;
    while (text.size() < (1200 << 10)) text += "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // aé€😀
    ASSERT_EQ((ssize_t)text.size(), ws->send_text(text));
    IOVector iov;  // grows to fit
    Op op;
    ASSERT_EQ((ssize_t)text.size(), ws->recv_frame(&iov, &op, kLongUs));
    EXPECT_EQ(Op::Text, op);
    std::string got(text.size(), 0);
    iov.memcpy_to(&got[0], got.size());
    EXPECT_TRUE(got == text);
}

TEST_P(WebSocket, ATooSmallBufferKeepsTheMessageForTheNextCall) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    ASSERT_EQ(11, ws->send_text("hello world"));
    char small[4];
    Op op;
    EXPECT_EQ(-1, ws->recv_frame(small, sizeof(small), &op, kLongUs));
    EXPECT_EQ(ENOBUFS, errno);
    auto r = recv_on(ws.get());
    EXPECT_EQ("hello world", r.data);
    EXPECT_EQ(Op::Text, r.op);
}

TEST_P(WebSocket, FragmentedMessagesAreReassembledBothWays) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    // Our fragments, "ö" split between two of them.
    EXPECT_EQ(4, echo_server::send_piece(ws.get(), Op::Text, "frag", false));
    EXPECT_EQ(0, ws->ping("between"));  // control frames may come between fragments
    EXPECT_EQ(9, echo_server::send_piece(ws.get(), Op::Continuation, "mented w\xC3", false));
    EXPECT_EQ(0, echo_server::send_piece(ws.get(), Op::Continuation, "", false));
    EXPECT_EQ(4, echo_server::send_piece(ws.get(), Op::Continuation, "\xB6rld", true));
    auto r = recv_on(ws.get());
    EXPECT_EQ(Op::Pong, r.op);
    EXPECT_EQ("between", r.data);
    r = recv_on(ws.get());
    EXPECT_EQ(Op::Text, r.op);
    EXPECT_EQ("fragmented w\xC3\xB6rld", r.data);  // the server saw one message

    // The server's fragments, with its Ping inside: we see the Ping first.
    ASSERT_EQ(4, ws->send_text("frag"));
    r = recv_on(ws.get());
    EXPECT_EQ(Op::Ping, r.op);
    EXPECT_EQ("mid", r.data);
    r = recv_on(ws.get());
    EXPECT_EQ(Op::Text, r.op);
    EXPECT_EQ("fragmented w\xC3\xB6rld", r.data);
    EXPECT_TRUE(wait_for([&] { return echo.pongs == 1; }));  // our automatic Pong
}

TEST_P(WebSocket, SendFragmentRefusesOpcodesOutOfOrderAndBadText) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    auto piece = [&](Op op, std::string_view s, bool fin) {
        return echo_server::send_piece(ws.get(), op, s, fin);
    };
    EXPECT_EQ(-1, piece(Op::Continuation, "x", true));  // nothing to continue
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, piece(Op::Ping, "x", true));
    EXPECT_EQ(EINVAL, errno);
    ASSERT_EQ(2, piece(Op::Text, "ab", false));
    EXPECT_EQ(-1, ws->send_text("c"));  // a message inside a message
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, piece(Op::Binary, "c", true));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, piece(Op::Continuation, "\xFF", false));  // not UTF-8: nothing sent
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, piece(Op::Continuation, "\xE2\x82", true));  // ends mid-character
    EXPECT_EQ(EINVAL, errno);
    ASSERT_EQ(3, piece(Op::Continuation, "\xE2\x82\xAC", true));
    auto r = recv_on(ws.get());
    EXPECT_EQ("ab\xE2\x82\xAC", r.data);
    EXPECT_EQ(Op::Text, r.op);
}

TEST_P(WebSocket, PingsAreAnsweredWithPongs) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    ASSERT_EQ(0, ws->ping("abc"));
    auto r = recv_on(ws.get());
    EXPECT_EQ(Op::Pong, r.op);
    EXPECT_EQ("abc", r.data);
    EXPECT_TRUE(wait_for([&] { return echo.pings == 1; }));

    ASSERT_EQ(4, ws->send_text("ping"));  // the server pings us
    r = recv_on(ws.get());
    EXPECT_EQ(Op::Ping, r.op);
    EXPECT_EQ("srv", r.data);
    r = recv_on(ws.get());
    EXPECT_EQ("pong:srv", r.data);  // it got our Pong
}

TEST_P(WebSocket, CloseHandshakeCarriesCodeAndReason) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    ASSERT_EQ(0, ws->close(WebSocketCloseCode::NormalClosure, "done"));
    EXPECT_TRUE(ws->is_closed());
    EXPECT_EQ(0, ws->close());  // once only
    EXPECT_EQ(-1, ws->send_text("late"));
    EXPECT_EQ(EPIPE, errno);
    auto r = recv_on(ws.get());  // the server's reply
    EXPECT_EQ(Op::Close, r.op);
    EXPECT_EQ(1000, code_of(r.data));
    r = recv_on(ws.get());
    EXPECT_EQ(-1, r.n);
    EXPECT_EQ(ENOTCONN, r.err);
    ASSERT_TRUE(wait_for([&] { return echo.ended == 1; }));
    EXPECT_EQ(code_bytes(1000) + "done", echo.close_payload);
}

TEST_P(WebSocket, AServerCloseIsEchoedByTheClient) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    ASSERT_EQ(10, ws->send_text("close:4001"));
    auto r = recv_on(ws.get());
    EXPECT_EQ(Op::Close, r.op);
    EXPECT_EQ(code_bytes(4001) + "bye", r.data);
    EXPECT_TRUE(ws->is_closed());
    ASSERT_TRUE(wait_for([&] { return echo.ended == 1; }));
    EXPECT_EQ(code_bytes(4001), echo.close_payload);  // our echo of its code
}

TEST_P(WebSocket, DeletingAnOpenStreamSaysGoingAway) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    ASSERT_EQ(1, ws->send_text("x"));
    EXPECT_EQ("x", recv_on(ws.get()).data);
    ws.reset();  // waits for the server's reply
    ASSERT_TRUE(wait_for([&] { return echo.ended == 1; }));
    EXPECT_EQ(1001, code_of(echo.close_payload));
}

TEST_P(WebSocket, CloseWithoutACodeAndBadArgumentsAreRefused) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    using C = WebSocketCloseCode;
    EXPECT_EQ(-1, ws->close(C::AbnormalClosure));  // never sent on the wire
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, ws->close(C::TLSHandshake));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, ws->close((C)999));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, ws->close(C::NormalClosure, std::string(124, 'r')));  // > 125 with the code
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, ws->close(C::NormalClosure, "\xC3"));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, ws->close(C::NoStatusRcvd, "reason needs a code"));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, ws->ping(std::string(126, 'p')));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, ws->send_text("\xED\xA0\x80"));  // a surrogate
    EXPECT_EQ(EINVAL, errno);
    EXPECT_FALSE(ws->is_closed());
    ASSERT_EQ(2, ws->send_text("ok"));
    EXPECT_EQ("ok", recv_on(ws.get()).data);

    ASSERT_EQ(0, ws->close(C::NoStatusRcvd));  // a Close without a code
    auto r = recv_on(ws.get());
    EXPECT_EQ(Op::Close, r.op);
    EXPECT_EQ(0, r.n);
    ASSERT_TRUE(wait_for([&] { return echo.ended == 1; }));
    EXPECT_EQ("", echo.close_payload);
    EXPECT_EQ(0, echo.recv_errno);
}

TEST_P(WebSocket, AReceiveTimeoutLosesNothing) {
    auto ws = connect();
    ASSERT_TRUE(ws);
    auto r = recv_on(ws.get(), 20 * 1000);
    EXPECT_EQ(-1, r.n);
    EXPECT_EQ(ETIMEDOUT, r.err);
    EXPECT_FALSE(ws->is_closed());
    ASSERT_EQ(5, ws->send_text("after"));
    EXPECT_EQ("after", recv_on(ws.get()).data);
}

TEST_P(WebSocket, AFrameCutByTimeoutsGoesOnIntoAnotherBuffer) {
    std::string payload = pattern(100000, 3);
    std::string f = frame(0x82, payload, false);
    raw_ws_server srv([&](ISocketStream* s, const std::string& accept) {
        write_all(s, switching(accept) + f.substr(0, 5));  // the header in two parts
        photon::thread_usleep(100 * 1000);
        write_all(s, f.substr(5, 50000));
        photon::thread_usleep(100 * 1000);
        write_all(s, f.substr(50005));
    });
    std::unique_ptr<IWebSocketStream> ws(websocket_connect(client.get(), srv.url(), kLongUs));
    ASSERT_TRUE(ws);
    int timeouts = 0;
    received r{};
    for (int i = 0; i < 500; i++) {  // a new buffer each time: bytes already in move along
        r = recv_on(ws.get(), 10 * 1000, 200000);
        if (r.n >= 0 || r.err != ETIMEDOUT) break;
        timeouts++;
    }
    EXPECT_GE(timeouts, 2);
    EXPECT_EQ(Op::Binary, r.op);
    EXPECT_TRUE(r.data == payload);
    EXPECT_EQ("13", srv.version);
    EXPECT_TRUE(ws_detail::valid_client_key(srv.key)) << srv.key;
}

TEST_P(WebSocket, ASenderAndAReceiverShareAStreamWithPingsInBetween) {
    auto ws = connect("/pinging");  // a Ping before every echo: our Pongs race our sends
    ASSERT_TRUE(ws);
    const int kCount = 40;
    bool sent_all = false;
    photon::thread_create11([&] {
        for (int i = 0; i < kCount; i++) {
            std::string m = pattern(100000, (uint32_t)i);
            if (ws->send_binary(m.data(), m.size(), kLongUs) != (ssize_t)m.size()) return;
        }
        sent_all = true;
    });
    int echoes = 0, pings = 0;
    for (int i = 0; i < 4 * kCount && echoes < kCount; i++) {
        auto r = recv_on(ws.get());
        ASSERT_GE(r.n, 0) << r.err;
        if (r.op == Op::Ping) {
            pings++;
        } else {
            ASSERT_EQ(Op::Binary, r.op);
            EXPECT_TRUE(r.data == pattern(100000, (uint32_t)echoes)) << echoes;
            echoes++;
        }
    }
    EXPECT_TRUE(wait_for([&] { return sent_all; }));
    EXPECT_EQ(kCount, echoes);
    EXPECT_EQ(kCount, pings);
    EXPECT_TRUE(wait_for([&] { return pinging.pongs == kCount; })) << pinging.pongs;
}

TEST_P(WebSocket, WssWorksOverOurTlsServer) {
    std::unique_ptr<TLSContext> probe(new_tls_context());
    if (!probe && errno == ENOSYS) GTEST_SKIP() << "built without TLS (OpenSSL)";
    if (!have_tool("openssl")) GTEST_SKIP() << "the openssl CLI makes the test certificates";
    auto& pki = test_pki::get();
    ASSERT_TRUE(pki.ok());
    std::unique_ptr<TLSContext> cctx(new_tls_context());
    ASSERT_EQ(0, cctx->set_ca_cert(pki.pem("ca.pem").c_str()));
    std::unique_ptr<TLSContext> sctx(
        new_tls_context(pki.pem("srv.pem").c_str(), pki.pem("srv.key").c_str()));
    ASSERT_TRUE(sctx);
    std::unique_ptr<HTTPServer> https(new_http_server());
    echo_server tls_echo;
    https->add_handler(new_websocket_handler({&tls_echo, &echo_server::handle}), true, "/ws");
    std::unique_ptr<ISocketServer> tls(
        new_tls_server(sctx.get(), scripted_server::listening_tcp(), true));
    tls->set_handler(https->get_connection_handler());
    ASSERT_EQ(0, tls->start_loop(false));
    {
        std::unique_ptr<Client> c(new_http_client(nullptr, cctx.get()));
        std::string u = "wss://localhost:" + std::to_string(tls->getsockname().port) + "/ws";
        std::unique_ptr<IWebSocketStream> ws(websocket_connect(c.get(), u, kLongUs));
        ASSERT_TRUE(ws);
        std::string m = pattern(300000, 9);
        ASSERT_EQ((ssize_t)m.size(), ws->send_binary(m.data(), m.size()));
        EXPECT_TRUE(recv_on(ws.get()).data == m);
        ASSERT_EQ(0, ws->close(WebSocketCloseCode::NormalClosure, "tls"));
        EXPECT_EQ(Op::Close, recv_on(ws.get()).op);
    }
    ASSERT_TRUE(wait_for([&] { return tls_echo.ended == 1; }));
    EXPECT_EQ(code_bytes(1000) + "tls", tls_echo.close_payload);
    tls->terminate();
    EXPECT_EQ(0, https->stop(kLongUs));
}

// ---- raw bytes against our server ------------------------------------------------

TEST_P(WebSocket, TheHandshakeAndFramesOfRfc6455sExamples) {
    raw_client raw(ep);
    ASSERT_TRUE(raw.ok());
    ASSERT_EQ(101, raw.request(upgrade_head()));
    EXPECT_EQ("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", raw.resp.headers["Sec-WebSocket-Accept"]);
    EXPECT_TRUE(list_has_token(raw.resp.headers["Upgrade"], "websocket"));
    EXPECT_TRUE(list_has_token(raw.resp.headers["Connection"], "upgrade"));
    EXPECT_FALSE(raw.resp.headers.has("Content-Length"));  // none on a 1xx
    // RFC 6455 5.7: a masked "Hello" in, an unmasked one back.
    ASSERT_TRUE(raw.send("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58"));
    char buf[7];
    ASSERT_TRUE(raw.stream()->recv_at_least(buf, 7, 7) == 7);
    EXPECT_EQ(std::string("\x81\x05Hello", 7), std::string(buf, 7));
}

TEST_P(WebSocket, BadUpgradeRequestsAreRefused) {
    struct {
        std::string head;
        int status;
    } cases[] = {
        {upgrade_head("/ws", ""), 400},                          // no key
        {upgrade_head("/ws", "c2hvcnQ="), 400},                  // not 16 bytes
        {upgrade_head("/ws", "dGhlIHNhbXBsZSBub25jZQ=x"), 400},  // not base64
        {upgrade_head("/ws", "dGhlIHNhbXBsZSBub25jZQ==", "8"), 426},
        {upgrade_head("/ws", "dGhlIHNhbXBsZSBub25jZQ==", "13", "POST"), 400},
        {head("GET", "/ws"), 400},  // not an upgrade at all
        {head("GET", "/ws",
              "Upgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
              "Sec-WebSocket-Version: 13\r\n"),
         400},  // no Connection: upgrade
    };
    for (auto& c : cases) {
        raw_client raw(ep);
        ASSERT_TRUE(raw.ok());
        EXPECT_EQ(c.status, raw.request(c.head)) << c.head;
        if (c.status == 426) {
            EXPECT_EQ("13", raw.resp.headers["Sec-WebSocket-Version"]);
        }
        EXPECT_FALSE(raw.resp.headers.has("Sec-WebSocket-Accept"));
    }
    EXPECT_EQ(0, echo.sessions);
    auto ws = connect();  // the server is fine
    ASSERT_TRUE(ws);
    EXPECT_EQ(1, echo.sessions);
}

struct bad_frame {
    const char* what;
    std::string bytes;
    uint16_t code;
    int err;
    bool small = false;  // to /small: max_message_size 1000
};

TEST_P(WebSocket, BadFramesAreAnsweredWithACloseAndTheConnectionClosed) {
    std::string p126(126, 'p'), kb(600, 'k');
    bad_frame cases[] = {
        {"an unmasked client frame", frame(0x81, "hi", false), 1002, EPROTO},
        {"RSV1", frame(0xC1, "hi"), 1002, EPROTO},
        {"RSV3", frame(0x92, "hi"), 1002, EPROTO},
        {"a reserved data opcode", frame(0x83, "hi"), 1002, EPROTO},
        {"a reserved control opcode", frame(0x8B, ""), 1002, EPROTO},
        {"a control frame over 125 bytes", frame(0x89, p126), 1002, EPROTO},
        {"a fragmented ping", frame(0x09, "p"), 1002, EPROTO},
        {"a continuation of nothing", frame(0x80, "x"), 1002, EPROTO},
        {"a message inside a message", frame(0x01, "a") + frame(0x81, "b"), 1002, EPROTO},
        {"a 64-bit length with the top bit", claim(0x82, 1ULL << 63), 1002, EPROTO},
        {"a one-byte Close", frame(0x88, "\x03"), 1002, EPROTO},
        {"Close code 1005", frame(0x88, code_bytes(1005)), 1002, EPROTO},
        {"Close code 999", frame(0x88, code_bytes(999)), 1002, EPROTO},
        {"Close code 2000", frame(0x88, code_bytes(2000)), 1002, EPROTO},
        {"bad UTF-8", frame(0x81, "\xC3\x28"), 1007, EILSEQ},
        {"an overlong form", frame(0x81, "\xC0\xAF"), 1007, EILSEQ},
        {"a surrogate", frame(0x81, "\xED\xA0\x80"), 1007, EILSEQ},
        {"above U+10FFFF", frame(0x81, "\xF4\x90\x80\x80"), 1007, EILSEQ},
        {"bad UTF-8 across fragments", frame(0x01, "ok\xC3") + frame(0x80, "\x28"), 1007, EILSEQ},
        {"text ending mid-character", frame(0x81, "ab\xE2\x82"), 1007, EILSEQ},
        {"a Close reason not UTF-8", frame(0x88, code_bytes(1000) + "\xFF"), 1007, EILSEQ},
        {"a 1 TiB claim", claim(0x82, 1ULL << 40), 1009, EMSGSIZE},
        {"one frame over the limit", frame(0x82, std::string(1001, 'x')), 1009, EMSGSIZE, true},
        {"fragments over the limit", frame(0x02, kb) + frame(0x80, kb), 1009, EMSGSIZE, true},
    };
    int ended = 0;
    for (auto& c : cases) {
        SCOPED_TRACE(c.what);
        echo_server& srv = c.small ? limited : echo;
        int before = srv.ended;
        EXPECT_EQ(c.code, close_code_for(c.bytes, c.small ? "/small" : "/ws"));
        ASSERT_TRUE(wait_for([&] { return srv.ended == before + 1; }));
        EXPECT_EQ(c.err, srv.recv_errno);
        ended++;
    }
    EXPECT_EQ(ended, echo.ended + limited.ended);
}

TEST_P(WebSocket, AMessageJustAtTheLimitPasses) {
    raw_client raw(ep);
    ASSERT_TRUE(raw.ok());
    ASSERT_EQ(101, raw.request(upgrade_head("/small")));
    std::string m(1000, 'm');
    ASSERT_TRUE(raw.send(frame(0x02, m.substr(0, 400)) + frame(0x80, m.substr(400))));
    std::string want = frame(0x82, m, false), got(want.size(), 0);
    ASSERT_EQ((ssize_t)want.size(), raw.stream()->recv_at_least(&got[0], got.size(), got.size()));
    EXPECT_TRUE(got == want);
}

TEST_P(WebSocket, APeerThatVanishesWithoutACloseIsAReset) {
    {
        raw_client raw(ep);
        ASSERT_TRUE(raw.ok());
        ASSERT_EQ(101, raw.request(upgrade_head()));
        ASSERT_TRUE(raw.send(frame(0x81, "half").substr(0, 4)));  // and gone mid-frame
    }
    ASSERT_TRUE(wait_for([&] { return echo.ended == 1; }));
    EXPECT_EQ(ECONNRESET, echo.recv_errno);
}

TEST_P(WebSocket, ServerAcceptWebsocketFromAPlainHandler) {
    manual_server& m = manual;
    raw_client raw(ep);
    ASSERT_TRUE(raw.ok());
    EXPECT_EQ(400, raw.request(head("GET", "/manual")));
    EXPECT_EQ(EPROTO, m.refused_errno);
    auto ws = connect("/manual");
    ASSERT_TRUE(ws);
    auto r = recv_on(ws.get());
    EXPECT_EQ("welcome", r.data);
    r = recv_on(ws.get());  // the server deleted its stream: Going Away
    EXPECT_EQ(Op::Close, r.op);
    EXPECT_EQ(1001, code_of(r.data));
    EXPECT_EQ(1, m.accepted);
    EXPECT_EQ(1, m.refused);
}

TEST(WebSocketAccept, ARequestNoServerServesIsEinval) {
    Request req;
    Response resp;
    ASSERT_EQ(0, req.headers.insert("Upgrade", "websocket"));
    ASSERT_EQ(0, req.headers.insert("Connection", "Upgrade"));
    ASSERT_EQ(0, req.headers.insert("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="));
    ASSERT_EQ(0, req.headers.insert("Sec-WebSocket-Version", "13"));
    req.verb(Verb::GET);
    EXPECT_EQ(nullptr, server_accept_websocket(req, resp));
    EXPECT_EQ(EINVAL, errno);
}

// ---- raw bytes against our client ------------------------------------------------------

TEST_P(WebSocket, FramesThatCameWithThe101AreRead) {
    raw_ws_server srv([](ISocketStream* s, const std::string& accept) {
        write_all(s, switching(accept) + frame(0x81, "early", false));
    });
    std::unique_ptr<IWebSocketStream> ws(websocket_connect(client.get(), srv.url(), kLongUs));
    ASSERT_TRUE(ws);
    auto r = recv_on(ws.get());
    EXPECT_EQ(Op::Text, r.op);
    EXPECT_EQ("early", r.data);
}

TEST_P(WebSocket, TheClientFailsOnAMaskedServerFrameWithA1002) {
    raw_ws_server srv([](ISocketStream* s, const std::string& accept) {
        write_all(s, switching(accept) + frame(0x81, "masked"));
    });
    std::unique_ptr<IWebSocketStream> ws(websocket_connect(client.get(), srv.url(), kLongUs));
    ASSERT_TRUE(ws);
    auto r = recv_on(ws.get());
    EXPECT_EQ(-1, r.n);
    EXPECT_EQ(EPROTO, r.err);
    EXPECT_TRUE(ws->is_closed());
    EXPECT_EQ(-1, ws->send_text("x"));
    EXPECT_EQ(EPIPE, errno);
    ws.reset();
    ASSERT_TRUE(wait_for([&] { return srv.done; }));
    uint8_t b0;
    std::string payload;
    ASSERT_TRUE(first_client_frame(srv.received, &b0, &payload));  // masked, as a client's
    EXPECT_EQ(0x88, b0);
    EXPECT_EQ(1002, code_of(payload));
}

TEST_P(WebSocket, TheClientEchoesACloseWithoutACode) {
    raw_ws_server srv([](ISocketStream* s, const std::string& accept) {
        write_all(s, switching(accept) + frame(0x88, "", false));
    });
    std::unique_ptr<IWebSocketStream> ws(websocket_connect(client.get(), srv.url(), kLongUs));
    ASSERT_TRUE(ws);
    auto r = recv_on(ws.get());
    EXPECT_EQ(Op::Close, r.op);
    EXPECT_EQ(0, r.n);
    ws.reset();
    ASSERT_TRUE(wait_for([&] { return srv.done; }));
    uint8_t b0;
    std::string payload;
    ASSERT_TRUE(first_client_frame(srv.received, &b0, &payload));
    EXPECT_EQ(0x88, b0);
    EXPECT_EQ("", payload);
}

TEST_P(WebSocket, HandshakesThatDoNotCompleteAreRefused) {
    raw_ws_server wrong([](ISocketStream* s, const std::string&) {
        write_all(s, switching("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));  // the RFC example key's
    });
    EXPECT_EQ(nullptr, websocket_connect(client.get(), wrong.url(), kLongUs));
    EXPECT_EQ(EPROTO, errno);

    raw_ws_server ext([](ISocketStream* s, const std::string& accept) {
        std::string h = switching(accept);
        h.insert(h.size() - 2, "Sec-WebSocket-Extensions: permessage-deflate\r\n");
        write_all(s, h);
    });
    EXPECT_EQ(nullptr, websocket_connect(client.get(), ext.url(), kLongUs));
    EXPECT_EQ(EPROTO, errno);

    EXPECT_EQ(nullptr, websocket_connect(client.get(), url("/nowhere"), kLongUs));  // a 404
    EXPECT_EQ(ECONNREFUSED, errno);
    EXPECT_EQ(nullptr, websocket_connect(client.get(), "ftp://127.0.0.1/", kLongUs));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, websocket_connect(nullptr, url("/ws"), kLongUs));
    EXPECT_EQ(EINVAL, errno);

    // ws:// is taken for http://
    std::unique_ptr<IWebSocketStream> ws(websocket_connect(client.get(), ws_url("/ws"), kLongUs));
    ASSERT_TRUE(ws);
}

TEST_P(WebSocket, OnlyAnUpgradesConnectionCanBeTaken) {
    auto op = client->new_operation(Verb::GET, url("/nowhere"));
    DEFER(op->destroy());
    std::string leftover;
    EXPECT_EQ(nullptr, op->take_connection(&leftover));  // no call yet
    EXPECT_EQ(EINVAL, errno);
    ASSERT_EQ(0, op->call());
    EXPECT_EQ(404, op->status_code);
    EXPECT_EQ(nullptr, op->take_connection(&leftover));  // a pooled connection
    EXPECT_EQ(EINVAL, errno);
}

// ---- python3's websockets as the peer ----------------------------------------------

const char kPythonEchoServer[] = R"(
import asyncio, sys, websockets

async def handler(ws, *args):
    try:
        async for msg in ws:
            if msg == "frag":
                await ws.send(["frag", "mented ", "w\u00f6rld"])
            elif msg == "ping":
                await asyncio.wait_for(await ws.ping(b"py"), 5)
                await ws.send("ponged")
            elif msg == "close":
                await ws.close(4002, "py bye")
            else:
                await ws.send(msg)
    except websockets.ConnectionClosed:
        pass
    print("closed", ws.close_code, ws.close_reason, flush=True)

async def main():
    async with websockets.serve(handler, "127.0.0.1", 0, max_size=8 << 20) as srv:
        print(srv.sockets[0].getsockname()[1], flush=True)
        await asyncio.sleep(60)

asyncio.run(main())
)";

const char kPythonClient[] = R"(
import asyncio, sys, websockets

async def session(uri):
    async with websockets.connect(uri, max_size=8 << 20) as ws:
        await ws.send("hello")
        assert await ws.recv() == "hello"
        data = bytes(range(256)) * 6000 + b"xyz"
        await ws.send(data)
        assert await ws.recv() == data
        await ws.send(["frag", "mented ", "w\u00f6rld"])
        got = await ws.recv()
        assert got == "fragmented w\u00f6rld", got
        await asyncio.wait_for(await ws.ping(b"hi"), 5)
        await ws.send("frag")
        got = await ws.recv()
        assert got == "fragmented w\u00f6rld", got
        await ws.close(1000, "py done")
    async with websockets.connect(uri) as ws:
        await ws.send("close:4001")
        try:
            await ws.recv()
            raise AssertionError("no close")
        except websockets.ConnectionClosed as e:
            assert e.rcvd.code == 4001 and e.rcvd.reason == "bye", e
    print("OK", flush=True)

asyncio.run(asyncio.wait_for(session(sys.argv[1]), 30))
)";

TEST_P(WebSocket, PythonWebsocketsClientAgainstOurServer) {
    SKIP_WITHOUT_WEBSOCKETS_PYTHON();
    temp_dir tmp;
    tmp.write("client.py", kPythonClient);
    child_process py({websockets_python(), tmp.path("client.py"), ws_url("/ws")}, "",
                     tmp.path("out"));
    ASSERT_TRUE(py.started());
    EXPECT_EQ(0, py.wait(40000)) << slurp(tmp.path("out"));
    EXPECT_NE(std::string::npos, slurp(tmp.path("out")).find("OK")) << slurp(tmp.path("out"));
    ASSERT_TRUE(wait_for([&] { return echo.ended == 2; }));
    EXPECT_GE(echo.pings, 1);
    EXPECT_EQ(2, echo.sessions);
}

TEST_P(WebSocket, OurClientAgainstPythonWebsocketsServer) {
    SKIP_WITHOUT_WEBSOCKETS_PYTHON();
    temp_dir tmp;
    tmp.write("server.py", kPythonEchoServer);
    child_server py({websockets_python(), tmp.path("server.py")}, tmp.path("out"));
    ASSERT_NE(0, py.port()) << py.output();
    std::string u = "ws://127.0.0.1:" + std::to_string(py.port()) + "/";
    {
        std::unique_ptr<IWebSocketStream> ws(websocket_connect(client.get(), u, kLongUs));
        ASSERT_TRUE(ws);
        ASSERT_EQ(5, ws->send_text("hello"));
        EXPECT_EQ("hello", recv_on(ws.get()).data);
        std::string bin = pattern((1 << 20) + 77, 5);
        ASSERT_EQ((ssize_t)bin.size(), ws->send_binary(bin.data(), bin.size()));
        auto r = recv_on(ws.get());
        EXPECT_EQ(Op::Binary, r.op);
        EXPECT_TRUE(r.data == bin);
        ASSERT_EQ(4, ws->send_text("frag"));  // python sends three fragments
        r = recv_on(ws.get());
        EXPECT_EQ(Op::Text, r.op);
        EXPECT_EQ("fragmented w\xC3\xB6rld", r.data);
        ASSERT_EQ(0, ws->ping("ours"));
        r = recv_on(ws.get());
        EXPECT_EQ(Op::Pong, r.op);
        EXPECT_EQ("ours", r.data);
        ASSERT_EQ(4, ws->send_text("ping"));
        r = recv_on(ws.get());
        EXPECT_EQ(Op::Ping, r.op);
        EXPECT_EQ("py", r.data);
        EXPECT_EQ("ponged", recv_on(ws.get()).data);  // it got our Pong
        ASSERT_EQ(0, ws->close(WebSocketCloseCode::NormalClosure, "done"));
        r = recv_on(ws.get());
        EXPECT_EQ(Op::Close, r.op);
        EXPECT_EQ(1000, code_of(r.data));
    }
    EXPECT_TRUE(wait_for([&] { return py.output().find("closed 1000 done") != std::string::npos; }))
        << py.output();
    {
        std::unique_ptr<IWebSocketStream> ws(websocket_connect(client.get(), u, kLongUs));
        ASSERT_TRUE(ws);
        ASSERT_EQ(5, ws->send_text("close"));
        auto r = recv_on(ws.get());
        EXPECT_EQ(Op::Close, r.op);
        EXPECT_EQ(code_bytes(4002) + "py bye", r.data);
    }
    // Its close_code is the one we echoed (without the reason).
    EXPECT_TRUE(wait_for([&] { return py.output().find("closed 4002") != std::string::npos; }))
        << py.output();
}

PHOTON_INSTANTIATE_ENGINE_TESTS(WebSocket);

// ---- the codec ---------------------------------------------------------------------

std::string hex(const uint8_t* p, size_t n) {
    static const char d[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; i++) s += d[p[i] >> 4], s += d[p[i] & 15];
    return s;
}

std::string sha1_hex(const std::string& s) {
    uint8_t out[20];
    ws_detail::sha1(s.data(), s.size(), out);
    return hex(out, 20);
}

TEST(WebSocketCodec, Sha1MatchesFips180Vectors) {
    EXPECT_EQ("da39a3ee5e6b4b0d3255bfef95601890afd80709", sha1_hex(""));
    EXPECT_EQ("a9993e364706816aba3e25717850c26c9cd0d89d", sha1_hex("abc"));
    EXPECT_EQ(
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
        sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"));  // 56: 2 blocks
    EXPECT_EQ("34aa973cd4c4daa4f61eeb2bdbad27316534016f", sha1_hex(std::string(1000000, 'a')));
}

TEST(WebSocketCodec, Base64AndKeysFollowTheRfcs) {
    EXPECT_EQ("", ws_detail::base64("", 0));
    EXPECT_EQ("Zg==", ws_detail::base64("f", 1));
    EXPECT_EQ("Zm8=", ws_detail::base64("fo", 2));
    EXPECT_EQ("Zm9vYmFy", ws_detail::base64("foobar", 6));
    EXPECT_EQ("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", ws_detail::accept_key("dGhlIHNhbXBsZSBub25jZQ=="));
    std::string k1 = ws_detail::new_client_key(), k2 = ws_detail::new_client_key();
    EXPECT_TRUE(ws_detail::valid_client_key(k1)) << k1;
    EXPECT_NE(k1, k2);
    EXPECT_TRUE(ws_detail::valid_client_key("dGhlIHNhbXBsZSBub25jZQ=="));
    EXPECT_FALSE(ws_detail::valid_client_key("dGhlIHNhbXBsZSBub25jZR=="));  // stray low bits
    EXPECT_FALSE(ws_detail::valid_client_key("dGhlIHNhbXBsZSBub25jZQ="));
    EXPECT_FALSE(ws_detail::valid_client_key("dGhlIHNhbXBsZSBub25j*Q=="));
}

TEST(WebSocketCodec, Utf8CheckerFollowsRfc3629AcrossFeeds) {
    using ws_detail::is_utf8;
    EXPECT_TRUE(is_utf8(""));
    EXPECT_TRUE(is_utf8("plain ascii, longer than a word"));
    EXPECT_TRUE(
        is_utf8("\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF"));
    for (const char* bad : {"\x80", "\xC1\xBF", "\xE0\x9F\xBF", "\xED\xBF\xBF", "\xF0\x8F\xBF\xBF",
                            "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", "\xC3"})
        EXPECT_FALSE(is_utf8(bad)) << hex((const uint8_t*)bad, strlen(bad));
    // One byte at a time: a character straddling feeds is fine.
    std::string s =
        "a\xF0\x9F\x98\x80"
        "b\xE2\x82\xAC";
    ws_detail::Utf8Checker c;
    for (char ch : s) {
        ASSERT_TRUE(c.feed(&ch, 1));
    }
    EXPECT_TRUE(c.complete());
    EXPECT_TRUE(c.feed("\xE2", 1));
    EXPECT_FALSE(c.complete());
    EXPECT_FALSE(c.feed("A", 1));
    EXPECT_FALSE(c.feed("A", 1));  // stays failed
}

TEST(WebSocketCodec, MaskingFromAnyOffsetMatchesBytewise) {
    const uint8_t key[4] = {0x12, 0x34, 0x56, 0x78};
    std::string data = pattern(1000, 11);
    for (size_t split : {0, 1, 3, 7, 8, 9, 500, 999}) {
        std::string m = data;
        ws_detail::apply_mask(&m[0], split, key, 0);
        ws_detail::apply_mask(&m[split], m.size() - split, key, split);
        for (size_t i = 0; i < data.size(); i++)
            ASSERT_EQ((char)(data[i] ^ key[i % 4]), m[i]) << split << " " << i;
    }
}

TEST(WebSocketCodec, HeadersRoundTripEveryLengthForm) {
    const uint8_t key[4] = {1, 2, 3, 4};
    for (uint64_t len : {0ULL, 125ULL, 126ULL, 65535ULL, 65536ULL, 1ULL << 32, (1ULL << 63) - 1})
        for (bool masked : {false, true}) {
            uint8_t h[ws_detail::kMaxFrameHeader];
            size_t n = ws_detail::build_header(h, ws_detail::kOpBinary, len < 126, len,
                                               masked ? key : nullptr);
            ASSERT_EQ(n, ws_detail::header_size(h[0], h[1]));
            ws_detail::FrameHeader f;
            ASSERT_EQ(0, ws_detail::parse_header(h, &f));
            EXPECT_EQ(len, f.length);
            EXPECT_EQ(masked, f.masked);
            EXPECT_EQ(len < 126, f.fin);
            EXPECT_EQ(ws_detail::kOpBinary, f.opcode);
            if (masked) {
                EXPECT_EQ(0, memcmp(key, f.mask, 4));
            }
        }
}

}  // namespace
