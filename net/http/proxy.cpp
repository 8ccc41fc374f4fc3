// new_proxy_handler and new_default_forward_proxy_handler (server.h): a
// request is re-made by a director, sent with a Client (its body streamed
// from the incoming one), and the answer re-made by a modifier, its body
// streamed back. A forward proxy also tunnels CONNECT.
#include <cerrno>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/net/http/client.h>
#include <photon/net/http/server.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

namespace photon {
namespace net {
namespace http {

namespace {

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = (char)tolower((unsigned char)c);
    return r;
}

// Hop-by-hop fields (RFC 9110 7.6.1) and those Connection names describe one
// connection and are not forwarded; the body framing is set anew by us.
void drop_hop_by_hop(Headers& h) {
    std::vector<std::string> named;
    for (std::string_view list : h.get_all("Connection")) {
        while (!list.empty()) {
            size_t comma = list.find(',');
            std::string_view t = list.substr(0, comma);
            while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
            while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
            if (!t.empty()) named.emplace_back(t);
            list = comma == list.npos ? std::string_view() : list.substr(comma + 1);
        }
    }
    for (auto& n : named) h.erase(n);
    for (const char* n : {"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
                          "Proxy-Authorization", "TE", "Trailer", "Transfer-Encoding", "Upgrade"})
        h.erase(n);
}

// A short text answer of our own, on the headers the server had set.
int answer(Response& resp, const Headers& server_headers, int status) {
    resp.headers = server_headers;
    (void)resp.set_result(status);
    std::string body = std::to_string(status) + " " + std::string(status_reason(status)) + "\n";
    (void)resp.headers.set("Content-Type", "text/plain");
    (void)resp.headers.content_length(body.size());
    return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
}

class proxy_handler : public HTTPHandler {
public:
    proxy_handler(Director d, Modifier m, Client* c, bool own)
        : director_(d), modifier_(m), client_(c), own_(own) {}
    ~proxy_handler() override {
        if (own_) delete client_;
    }

    int handle_request(Request& req, Response& resp, std::string_view) override {
        const Headers server_headers = resp.headers;
        std::unique_ptr<Client::Operation> op(client_->new_operation());
        op->follow = 0;  // the client sees redirects itself
        Request& out = op->req;
        if (director_(req, out) != 0) return answer(resp, server_headers, 502);
        if (out.verb() == Verb::UNKNOWN) out.verb(req.verb());
        drop_hop_by_hop(out.headers);
        out.headers.erase("Content-Length");
        int64_t len = req.body_size();
        if (len != 0) {  // streamed: chunked when the length is unknown
            op->body_stream = &req;
            if (len > 0) (void)out.headers.content_length(len);
        }
        if (op->call() < 0) {
            int e = errno;
            LOG_EVERY_T(10, LOG_WARN("http proxy: ` ` failed: `", verbstr[(int)out.verb()],
                                     out.target(), ERRNO(e)));
            return answer(resp, server_headers, e == ETIMEDOUT ? 504 : 502);
        }

        Response& in = op->resp;
        if (modifier_(in, resp) != 0) return answer(resp, server_headers, 502);
        drop_hop_by_hop(resp.headers);
        std::string_view server_conn = server_headers["Connection"];  // the server's own say
        if (!server_conn.empty()) (void)resp.headers.insert("Connection", server_conn);
        switch (in.framing()) {
            case Framing::None:  // HEAD, 204, 304: a Content-Length is metadata, kept
                return 0;
            case Framing::ContentLength:
                (void)resp.headers.content_length(in.body_size());
                break;
            default:  // chunked to the client (until close for HTTP/1.0)
                resp.headers.erase("Content-Length");
        }
        // After the head went out a failure can only cut the body short: the
        // server closes the connection on -1.
        return resp.write_stream(&in) < 0 ? -1 : 0;
    }

private:
    Director director_;
    Modifier modifier_;
    Client* client_;
    bool own_;
};

// One direction of a tunnel: copies from -> to until from's EOF, which it
// passes on as a write shutdown of `to` (half-close: the peer behind `to`
// sees EOF while the other direction goes on). An error in either stream
// shuts both down both ways, which ends the other direction too. True at EOF.
bool relay(ISocketStream* from, ISocketStream* to) {
    constexpr size_t kBuf = 32 * 1024;
    std::unique_ptr<char[]> buf(new char[kBuf]);
    ssize_t n;
    while ((n = from->recv(buf.get(), kBuf)) > 0)
        if (to->write(buf.get(), n) != n) break;
    if (n == 0 && to->shutdown(ShutdownHow::Write) == 0) return true;
    (void)from->shutdown(ShutdownHow::ReadWrite);
    (void)to->shutdown(ShutdownHow::ReadWrite);
    return false;
}

class forward_proxy_handler : public HTTPHandler {
public:
    explicit forward_proxy_handler(uint64_t timeout)
        : client_(new_http_client()),
          proxy_({this, &forward_proxy_handler::direct}, {this, &forward_proxy_handler::modify},
                 client_.get(), false),
          timeout_(timeout) {
        client_->timeout(timeout);
    }

    int handle_request(Request& req, Response& resp, std::string_view pattern) override {
        if (req.verb() == Verb::CONNECT) return tunnel(req, resp);
        std::string_view t = req.target();
        if (t.empty() || t[0] == '/') return answer(resp, resp.headers, 400);  // not absolute
        return proxy_.handle_request(req, resp, pattern);
    }

private:
    int direct(Request& src, Request& dst) {
        if (dst.reset(src.verb(), src.target()) < 0) return -1;
        for (auto f : src.headers)
            if (!iequals(f.first, "Host") && dst.headers.insert(f.first, f.second, 1) < 0)
                return -1;
        return 0;
    }

    // The upstream's status and fields, replacing the server's of a name.
    int modify(Response& src, Response& dst) {
        if (dst.set_result(src.status_code(), src.status_message()) < 0) return -1;
        std::set<std::string> seen;
        for (auto f : src.headers) {
            if (seen.insert(lower(f.first)).second) dst.headers.erase(f.first);
            if (dst.headers.insert(f.first, f.second, 1) < 0) return -1;
        }
        return 0;
    }

    int tunnel(Request& req, Response& resp) {
        // authority-form, checked by the parser: host:port or [v6]:port
        std::string_view t = req.target();
        size_t colon = t.rfind(':');
        std::string_view host = t.substr(0, colon);
        if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
        int port = colon == t.npos ? 0 : atoi(std::string(t.substr(colon + 1)).c_str());
        if (host.empty() || port <= 0 || port > 65535) return answer(resp, resp.headers, 400);
        std::unique_ptr<ISocketStream> up(
            client_->native_connect(host, (uint16_t)port, false, timeout_));
        if (!up) return answer(resp, resp.headers, errno == ETIMEDOUT ? 504 : 502);
        (void)resp.set_result(200, "Connection Established");
        if (resp.send() < 0) return -1;
        ISocketStream* down = connection_stream(req);  // sends the head
        if (!down) return -1;
        down->timeout(timeout_);  // each read or write of the tunnel
        up->timeout(timeout_);
        // Both directions run until each ended (EOF passed on) or one failed;
        // only then are the streams closed.
        ISocketStream* u = up.get();
        thread* th = thread_create11(&relay, u, down);
        if (!th) return -1;
        join_handle* jh = thread_enable_join(th);
        relay(down, u);
        thread_join(jh);
        return -1;  // the connection was the tunnel's: the server closes it
    }

    std::unique_ptr<Client> client_;
    proxy_handler proxy_;
    uint64_t timeout_;
};

}  // namespace

HTTPHandler* new_proxy_handler(Director cb_Director, Modifier cb_Modifier, Client* client,
                               bool client_ownership) {
    if (!client) {
        client = new_http_client();
        client_ownership = true;
    }
    return new proxy_handler(cb_Director, cb_Modifier, client, client_ownership);
}

HTTPHandler* new_default_forward_proxy_handler(uint64_t timeout) {
    return new forward_proxy_handler(timeout);
}

}  // namespace http
}  // namespace net
}  // namespace photon
