// WebSocket code written the way PhotonLibOS users write it (its own test
// and header examples): raw pointers with DEFER, Delegate handlers made of a
// free function and a null object, Client::websocket_connect, a plain
// handler calling server_accept_websocket, and recv_frame loops that stop at
// a Close. It compiles unchanged and behaves as Photon's does.
#include <photon/common/alog.h>
#include <photon/common/iovector.h>
#include <photon/net/http/client.h>
#include <photon/net/http/server.h>
#include <photon/net/http/websocket.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;

namespace {

int closes_seen = 0;

// The echo handler of Photon's header comment and test.
int ws_echo_handler(void*, IWebSocketStream* ws) {
    char buf[4096];
    WebSocketOpcode opcode;
    while (!ws->is_closed()) {
        auto len = ws->recv_frame(buf, sizeof(buf), &opcode);
        if (len < 0) break;
        if (opcode == WebSocketOpcode::Close) {
            closes_seen++;
            break;
        }
        if (opcode == WebSocketOpcode::Text) {
            ws->send_text(std::string_view(buf, len));
        } else if (opcode == WebSocketOpcode::Binary) {
            ws->send_binary(buf, len);
        }
        // Ping/Pong handled automatically
    }
    return 0;
}

int ws_manual_handler(void*, Request& req, Response& resp, std::string_view) {
    if (req.headers["Upgrade"] != "websocket") {
        resp.set_result(400, "Bad Request");
        resp.headers.content_length(0);
        return 0;
    }
    auto* ws = server_accept_websocket(req, resp);
    if (ws) {
        ws->send_text("manual");
        delete ws;
    }
    return 0;
}

// One server per test, as Photon's test sets it up.
struct ws_fixture {
    ISocketServer* tcpserver = nullptr;
    HTTPServer* http_server = nullptr;
    Client* client = nullptr;
    char url[64];

    ws_fixture() {
        photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE);
        net::et_poller_init();
        tcpserver = new_tcp_socket_server();
        tcpserver->timeout(5000ULL * 1000);
        tcpserver->bind_v4localhost();
        tcpserver->listen();
        http_server = new_http_server();
        auto ws_handler = new_websocket_handler({nullptr, &ws_echo_handler});
        http_server->add_handler(ws_handler, true, "/ws");
        http_server->add_handler({nullptr, &ws_manual_handler}, "/manual");
        tcpserver->set_handler(http_server->get_connection_handler());
        tcpserver->start_loop();
        client = new_http_client();
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/ws", tcpserver->getsockname().port);
    }
    ~ws_fixture() {
        delete client;
        delete tcpserver;
        delete http_server;
        net::et_poller_fini();
        photon::fini();
    }
};

TEST(WebSocketStyle, EchoesTextBinaryAndIovectorMessages) {
    ws_fixture f;
    auto ws = f.client->websocket_connect(f.url, 5000000ULL);
    ASSERT_NE(ws, nullptr);
    DEFER(delete ws);

    std::string test_msg = "Hello, WebSocket!";
    ASSERT_EQ(ws->send_text(test_msg), (ssize_t)test_msg.length());
    char recv_buf[4096];
    WebSocketOpcode opcode;
    auto received = ws->recv_frame(recv_buf, sizeof(recv_buf), &opcode);
    ASSERT_EQ(received, (ssize_t)test_msg.length());
    ASSERT_EQ(opcode, WebSocketOpcode::Text);
    ASSERT_EQ(std::string_view(recv_buf, received), test_msg);

    uint8_t binary_data[] = {0x00, 0x01, 0x02, 0xFF, 0xFE, 0x80, 0x7F};
    ASSERT_EQ(ws->send_binary(binary_data, sizeof(binary_data)), (ssize_t)sizeof(binary_data));
    received = ws->recv_frame(recv_buf, sizeof(recv_buf), &opcode);
    ASSERT_EQ(received, (ssize_t)sizeof(binary_data));
    ASSERT_EQ(opcode, WebSocketOpcode::Binary);
    ASSERT_EQ(memcmp(recv_buf, binary_data, sizeof(binary_data)), 0);

    char part1[] = "Hello, ", part2[] = "World", part3[] = "!";
    struct iovec iov[3] = {{part1, strlen(part1)}, {part2, strlen(part2)}, {part3, 1}};
    iovector_view view(iov, 3);
    ASSERT_EQ(ws->send_binary(view), 13);
    IOVector in;
    received = ws->recv_frame(&in, &opcode);
    ASSERT_EQ(received, 13);
    ASSERT_EQ(opcode, WebSocketOpcode::Binary);
    char flat[13];
    in.memcpy_to(flat, sizeof(flat));
    ASSERT_EQ(std::string_view(flat, 13), "Hello, World!");

    for (int i = 0; i < 10; i++) {
        std::string msg = "Message " + std::to_string(i);
        ASSERT_EQ(ws->send_text(msg), (ssize_t)msg.length());
        received = ws->recv_frame(recv_buf, sizeof(recv_buf), &opcode);
        ASSERT_EQ(std::string_view(recv_buf, received), msg);
    }
    ASSERT_EQ(ws->send_text(""), 0);
    ASSERT_EQ(ws->recv_frame(recv_buf, sizeof(recv_buf), &opcode), 0);
    ASSERT_EQ(opcode, WebSocketOpcode::Text);
    ws->close();
}

TEST(WebSocketStyle, CloseIsSentOnceAndTheServerSeesIt) {
    ws_fixture f;
    closes_seen = 0;
    auto ws = f.client->websocket_connect(f.url, 5000000ULL);
    ASSERT_NE(ws, nullptr);
    ASSERT_FALSE(ws->is_closed());
    ASSERT_EQ(ws->close(WebSocketCloseCode::NormalClosure, "Test closure"), 0);
    ASSERT_TRUE(ws->is_closed());
    ASSERT_EQ(ws->close(), 0);
    delete ws;  // waits for the server's reply
    for (int i = 0; i < 1000 && closes_seen == 0; i++) photon::thread_usleep(1000);
    ASSERT_EQ(closes_seen, 1);
}

TEST(WebSocketStyle, PlainHandlersRefuseOrAcceptUpgrades) {
    ws_fixture f;
    auto port = f.tcpserver->getsockname().port;
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/manual", port);
    auto op = f.client->new_operation(Verb::GET, url);
    DEFER(f.client->destroy_operation(op));
    op->call();
    EXPECT_EQ(400, op->resp.status_code());

    auto ws = websocket_connect(f.client, url, 5000000ULL);
    ASSERT_NE(ws, nullptr);
    DEFER(delete ws);
    char buf[64];
    WebSocketOpcode opcode;
    auto len = ws->recv_frame(buf, sizeof(buf), &opcode);
    ASSERT_EQ(std::string_view(buf, len > 0 ? len : 0), "manual");
    len = ws->recv_frame(buf, sizeof(buf), &opcode);
    ASSERT_EQ(opcode, WebSocketOpcode::Close);
}

}  // namespace
