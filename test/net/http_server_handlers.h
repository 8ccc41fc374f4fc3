// The HTTP server tests' handlers and fixture: a tagged handler that counts
// its instances, the handlers most tests use by path (echo, slow, failing,
// short, chunked, event stream, ...), and the fixture serving them on
// 127.0.0.1 under each event engine.
#pragma once

#include <atomic>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include <photon/thread/thread.h>

#include "http_server_test_util.h"

namespace photon_test {

inline std::atomic<int> g_tagged_alive{0};

// Answers "<tag>|<remain>".
class tagged : public HTTPHandler {
public:
    explicit tagged(std::string t) : tag_(std::move(t)) { g_tagged_alive++; }
    ~tagged() override { g_tagged_alive--; }
    int handle_request(Request& req, Response& resp, std::string_view pattern) override {
        std::string body = tag_ + "|" + std::string(pattern_remain(req, pattern));
        resp.headers.content_length(body.size());
        return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
    }

private:
    std::string tag_;
};

// Content-Length and the body (none for HEAD, whose length is metadata).
inline int reply(Response& resp, std::string_view body, Verb v = Verb::GET) {
    resp.headers.content_length(body.size());
    if (body.empty() || v == Verb::HEAD) return 0;
    return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
}

// The handlers most tests use, by path.
struct handlers {
    std::atomic<int> slow_started{0}, slow_done{0};
    uint64_t slow_us = 300'000;

    void install(HTTPServer* s) {
        s->add_handler({this, &handlers::echo}, "/echo");
        s->add_handler({this, &handlers::text}, "/text");
        s->add_handler({this, &handlers::slow}, "/slow");
        s->add_handler({this, &handlers::fail}, "/fail");
        s->add_handler({this, &handlers::fail_after}, "/fail-after");
        s->add_handler({this, &handlers::short_body}, "/short");
        s->add_handler({this, &handlers::unwritten}, "/unwritten");
        s->add_handler({this, &handlers::chunks}, "/chunks");
        s->add_handler({this, &handlers::info}, "/info");
        s->add_handler({this, &handlers::status}, "/status/");
        s->add_handler({this, &handlers::chunks_fail}, "/chunks-fail");
        s->add_handler({this, &handlers::events}, "/events");
        s->add_handler({this, &handlers::sized}, "/sized");
        s->add_handler({this, &handlers::host}, "/host");
    }
    // The request body back; a failed read fails the request.
    int echo(Request& req, Response& resp, std::string_view) {
        std::string body;
        char buf[4096];
        ssize_t n;
        while ((n = req.read(buf, sizeof(buf))) > 0) body.append(buf, n);
        if (n < 0) return -1;
        return reply(resp, body);
    }
    int text(Request& req, Response& resp, std::string_view) {
        return reply(resp, "hello\n", req.verb());
    }
    int slow(Request&, Response& resp, std::string_view) {
        slow_started++;
        photon::thread_usleep(slow_us);
        slow_done++;
        return reply(resp, "slow\n");
    }
    int fail(Request&, Response&, std::string_view) { return -1; }
    int fail_after(Request&, Response& resp, std::string_view) {
        reply(resp, "partial\n");
        return -1;
    }
    int short_body(Request&, Response& resp, std::string_view) {
        resp.headers.content_length(10);
        resp.write("12345", 5);
        return 0;
    }
    int unwritten(Request&, Response& resp, std::string_view) {
        resp.headers.content_length(10);
        return 0;
    }
    int chunks(Request&, Response& resp, std::string_view) {
        for (const char* p : {"one,", "two,", "three"}) resp.write(p, strlen(p));
        return 0;
    }
    // A sized body, written whatever the verb (HEAD included).
    int sized(Request&, Response& resp, std::string_view) {
        resp.headers.content_length(6);
        return resp.write("sized\n", 6) == 6 ? 0 : -1;
    }
    // "<host> <path>" as the handler sees them.
    int host(Request& req, Response& resp, std::string_view) {
        return reply(resp, std::string(req.host()) + " " + std::string(req.abs_path()));
    }
    int chunks_fail(Request&, Response& resp, std::string_view) {
        resp.write("one,", 4);
        return -1;
    }
    // The status in the path; a body is attempted (refused for 204 / 304).
    int status(Request& req, Response& resp, std::string_view pattern) {
        resp.set_result(atoi(std::string(pattern_remain(req, pattern)).c_str()));
        if (resp.status_code() == 304) resp.headers.insert("ETag", "\"x\"");
        errno = 0;
        EXPECT_EQ(-1, resp.write("body", 4));
        EXPECT_EQ(EMSGSIZE, errno);
        return 0;
    }
    // An event stream: the head at once (no length), then one event after
    // `event` is signalled (or kLongUs).
    photon::semaphore event;
    int events(Request&, Response& resp, std::string_view) {
        resp.headers.insert("Content-Type", "text/event-stream");
        resp.headers.insert("Cache-Control", "no-cache");
        if (resp.send_header() < 0) return -1;
        (void)event.wait(1, kLongUs);
        static const char ev[] = "data: one\n\n";
        return resp.write(ev, sizeof(ev) - 1) == (ssize_t)sizeof(ev) - 1 ? 0 : -1;
    }
    // "<verb> <target> <remain>"
    int info(Request& req, Response& resp, std::string_view pattern) {
        std::string b = std::string(verbstr[req.verb()]) + " " + std::string(req.target()) + " " +
                        std::string(pattern_remain(req, pattern));
        return reply(resp, b);
    }
};

class HttpServer : public HttpServerTest {
protected:
    void serve_default(const ServerOptions& opts = {}) {
        serve(opts, [&](HTTPServer* s) { h.install(s); });
    }
    handlers h;
};

inline std::string chunked(std::initializer_list<std::string_view> pieces) {
    std::string s;
    char size[32];
    for (auto p : pieces) {
        snprintf(size, sizeof(size), "%zx\r\n", p.size());
        s.append(size).append(p).append("\r\n");
    }
    return s + "0\r\n\r\n";
}

}  // namespace photon_test
