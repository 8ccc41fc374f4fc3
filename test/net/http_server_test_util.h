// Helpers for the HTTP server tests: a fixture serving test handlers on
// 127.0.0.1 (port 0) under each event engine, and a raw client that sends
// exact bytes and parses what comes back with the message layer.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <photon/common/alog.h>
#include <photon/net/http/message.h>
#include <photon/net/http/server.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>

#include "../util/engine_fixture.h"
#include "../thread/test_util.h"

namespace photon_test {

using namespace photon::net;
using namespace photon::net::http;

// A connection that writes raw bytes and reads responses.
class raw_client {
public:
    explicit raw_client(const EndPoint& ep) : cli_(new_tcp_socket_client()) {
        cli_->timeout(kLongUs);
        s_.reset(cli_->connect(ep));
        if (s_) {
            s_->timeout(kLongUs);
            in_.reset(s_.get());
            resp.reset(&in_, s_.get());
        }
    }
    bool ok() const { return s_ != nullptr; }
    ISocketStream* stream() { return s_.get(); }

    bool send(std::string_view bytes) {
        return s_->write(bytes.data(), bytes.size()) == (ssize_t)bytes.size();
    }
    // The next response's status (its body in *body), or -1 (errno; ENODATA
    // when the server closed first).
    int get(std::string* body = nullptr, Verb v = Verb::GET) {
        if (resp.receive_header(v) < 0) return -1;
        std::string b;
        char buf[16384];
        ssize_t n;
        while ((n = resp.read(buf, sizeof(buf))) > 0) b.append(buf, n);
        if (n < 0) return -1;
        if (body) *body = std::move(b);
        return resp.status_code();
    }
    // One request, one response: its status or -1.
    int request(std::string_view bytes, std::string* body = nullptr, Verb v = Verb::GET) {
        return send(bytes) ? get(body, v) : -1;
    }
    // Whether the server closed the connection (EOF or reset) within
    // `timeout` us with no further bytes; bytes that arrive go to *extra.
    bool closed(uint64_t timeout = kLongUs, std::string* extra = nullptr) {
        if (in_.size()) {
            if (extra) extra->assign(in_.data());
            in_.consume(in_.size());
            return false;
        }
        s_->timeout(timeout);
        char c[256];
        ssize_t n = s_->recv(c, sizeof(c));
        s_->timeout(kLongUs);
        if (n > 0 && extra) extra->assign(c, n);
        return n == 0 || (n < 0 && errno == ECONNRESET);
    }
    // Whether bytes (or EOF) are there to read now; consumes nothing.
    bool readable() {
        if (in_.size()) return true;
        s_->timeout(0);
        char c;
        ssize_t n = s_->recv(&c, 1, MSG_PEEK);
        s_->timeout(kLongUs);
        return n >= 0;
    }
    // Everything until the server closes.
    std::string read_to_eof() {
        std::string out(in_.data());
        in_.consume(in_.size());
        char buf[16384];
        ssize_t n;
        while ((n = s_->recv(buf, sizeof(buf))) > 0) out.append(buf, n);
        return out;
    }

    Response resp;

private:
    std::unique_ptr<ISocketClient> cli_;
    std::unique_ptr<ISocketStream> s_;
    InputBuffer in_;
};

// A request head: "<method> <target> HTTP/1.1", Host, then `extra` lines
// (each ending CRLF), then the empty line.
inline std::string head(std::string_view method, std::string_view target,
                        std::string_view extra = "") {
    std::string h;
    h.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: t\r\n");
    h.append(extra).append("\r\n");
    return h;
}

// Serves on 127.0.0.1 with an HTTPServer the test configures.
class HttpServerTest : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        set_log_output_level(ALOG_ERROR);
    }
    void TearDown() override {
        tcp.reset();
        http.reset();
        EngineTest::TearDown();
    }
    // Creates the server (handlers are added by `setup`) and starts serving.
    // make: a callable that returns the listening socket server (plain TCP by default).
    template <typename F, typename M = ISocketServer* (*)()>
    void serve(const ServerOptions& opts, F setup, M make = &new_tcp_socket_server) {
        http.reset(new_http_server(opts));
        ASSERT_TRUE(http);
        setup(http.get());
        tcp.reset(make());
        ASSERT_TRUE(tcp);
        ASSERT_EQ(0, tcp->bind_v4localhost(0));
        ASSERT_EQ(0, tcp->listen());
        tcp->set_handler(http->get_connection_handler());
        ASSERT_EQ(0, tcp->start_loop(false));
        ep = tcp->getsockname();
    }
    std::string url(std::string_view path) const {
        return "http://127.0.0.1:" + std::to_string(ep.port) + std::string(path);
    }

    std::unique_ptr<HTTPServer> http;
    std::unique_ptr<ISocketServer> tcp;
    EndPoint ep;
};

}  // namespace photon_test
