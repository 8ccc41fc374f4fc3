// The operators' handlers (server.h). new_thread_dump_handler: the coroutine dump of
// photon/thread/dump.h; GET gives text, ?format=json (or Accept: application/json) JSON,
// ?frames=N caps the backtraces (0: none). new_metrics_handler: the metrics registry of
// photon/common/metric-meter/prometheus.h in Prometheus's text format.
#include <cstdlib>
#include <string>
#include <string_view>

#include <photon/common/metric-meter/prometheus.h>
#include <photon/net/http/server.h>
#include <photon/thread/dump.h>

namespace photon {
namespace net {
namespace http {

namespace {

// The value of `key` in a query string ("a=1&b=2"), or "" (found: *has).
std::string_view query_value(std::string_view q, std::string_view key, bool* has) {
    *has = false;
    while (!q.empty()) {
        size_t amp = q.find('&');
        std::string_view item = q.substr(0, amp);
        size_t eq = item.find('=');
        if (item.substr(0, eq) == key) {
            *has = true;
            return eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
        }
        if (amp == std::string_view::npos) break;
        q.remove_prefix(amp + 1);
    }
    return {};
}

int reply(Request& req, Response& resp, int status, const char* type, const std::string& body) {
    resp.set_result(status);
    (void)resp.headers.insert("Content-Type", type);
    (void)resp.headers.insert("Cache-Control", "no-store");
    if (status == 405) (void)resp.headers.insert("Allow", "GET, HEAD");
    (void)resp.headers.content_length(body.size());
    if (req.verb() == Verb::HEAD) return resp.send();
    return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
}

class thread_dump_handler final : public HTTPHandler {
public:
    int handle_request(Request& req, Response& resp, std::string_view) override {
        const char* text = "text/plain; charset=utf-8";
        if (req.verb() != Verb::GET && req.verb() != Verb::HEAD)
            return reply(req, resp, 405, text, "405 Method Not Allowed\n");
        ThreadDumpOptions o;
        bool has = false;
        std::string_view q = req.query();
        std::string_view format = query_value(q, "format", &has);
        o.json = has ? format == "json"
                     : req.headers["Accept"].find("application/json") != std::string_view::npos;
        std::string_view frames = query_value(q, "frames", &has);
        if (has) {
            std::string f(frames);
            char* end = nullptr;
            long n = strtol(f.c_str(), &end, 10);
            if (f.empty() || *end || n < 0 || n > 256)
                return reply(req, resp, 400, text, "400 frames must be 0..256\n");
            o.max_frames = (int)n;
        }
        std::string body;
        if (thread_dump(&body, o) < 0)
            return reply(req, resp, 503, text, "503 another dump is running\n");
        return reply(req, resp, 200, o.json ? "application/json" : text, body);
    }
};

class metrics_handler final : public HTTPHandler {
public:
    int handle_request(Request& req, Response& resp, std::string_view) override {
        const char* text = "text/plain; charset=utf-8";
        if (req.verb() != Verb::GET && req.verb() != Verb::HEAD)
            return reply(req, resp, 405, text, "405 Method Not Allowed\n");
        std::string body;
        metrics::render_prometheus(&body);
        return reply(req, resp, 200, "text/plain; version=0.0.4; charset=utf-8", body);
    }
};

}  // namespace

HTTPHandler* new_thread_dump_handler() { return new thread_dump_handler; }

HTTPHandler* new_metrics_handler() { return new metrics_handler; }

}  // namespace http
}  // namespace net
}  // namespace photon
