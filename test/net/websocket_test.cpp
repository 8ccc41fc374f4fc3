// WebSocket (websocket.h) on both event engines: our client against our
// server (messages small and large, fragments, pings, closing codes,
// timeouts, a sender and a receiver at once, wss), raw bytes against our
// server (the RFC's examples, bad frames of every kind) and against our
// client (a hand-made server); python3's websockets as the peer is in
// websocket_peers_test.cpp, the codec in websocket_codec_test.cpp. Every
// server listens on 127.0.0.1.
#include <photon/net/http/websocket.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <photon/net/security-context/tls-stream.h>
#include <photon/thread/thread11.h>

#include "../util/tls_pair.h"
#include "websocket_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

namespace {

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
    tls_pair pair;
    PHOTON_TEST_MAKE_TLS_PAIR(pair);
    std::unique_ptr<HTTPServer> https(new_http_server());
    echo_server tls_echo;
    https->add_handler(new_websocket_handler({&tls_echo, &echo_server::handle}), true, "/ws");
    std::unique_ptr<ISocketServer> tls(
        new_tls_server(pair.server.get(), scripted_server::listening_tcp(), true));
    tls->set_handler(https->get_connection_handler());
    ASSERT_EQ(0, tls->start_loop(false));
    {
        std::unique_ptr<Client> c(new_http_client(nullptr, pair.client.get()));
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

PHOTON_INSTANTIATE_ENGINE_TESTS(WebSocket);

}  // namespace
