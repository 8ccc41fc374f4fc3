// websocket.h: the opening handshake on both sides (RFC 6455 4), and the
// HTTPHandler that runs a WebSocketHandler on accepted streams.
#include <photon/net/http/websocket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>

#include "server_conn.h"
#include "websocket_codec.h"
#include "websocket_stream.h"

namespace photon {
namespace net {
namespace http {

using ws_detail::websocket_stream_impl;

namespace {

// Whether any field `name` lists `token` (a field may repeat).
bool has_token(const Headers& h, std::string_view name, std::string_view token) {
    for (auto v : h.get_all(name))
        if (list_has_token(v, token)) return true;
    return false;
}

// ws:// and wss:// as http:// and https://; "" if neither those nor http(s).
std::string http_url(std::string_view url) {
    auto starts = [&](std::string_view p) {
        return url.size() >= p.size() && strncasecmp(url.data(), p.data(), p.size()) == 0;
    };
    if (starts("ws://")) return "http://" + std::string(url.substr(5));
    if (starts("wss://")) return "https://" + std::string(url.substr(6));
    return std::string(url);
}

// Why a 101 does not complete our handshake, or nullptr.
const char* bad_switch(const Response& resp, const std::string& key) {
    const Headers& h = resp.headers;
    if (!has_token(h, "Upgrade", "websocket")) return "no Upgrade: websocket";
    if (!has_token(h, "Connection", "upgrade")) return "no Connection: upgrade";
    if (h["Sec-WebSocket-Accept"] != ws_detail::accept_key(key))
        return "a wrong Sec-WebSocket-Accept";
    // We offered none: the server may not pick any (RFC 6455 4.1).
    if (h.has("Sec-WebSocket-Extensions")) return "an extension not offered";
    if (h.has("Sec-WebSocket-Protocol")) return "a subprotocol not offered";
    return nullptr;
}

// Why req is not an upgrade we accept, or nullptr (RFC 6455 4.2.1).
const char* bad_upgrade(Request& req) {
    const Headers& h = req.headers;
    if (req.verb() != Verb::GET) return "not a GET";
    if (req.minor_version() < 1) return "HTTP/1.0";
    if (!has_token(h, "Upgrade", "websocket")) return "no Upgrade: websocket";
    if (!has_token(h, "Connection", "upgrade")) return "no Connection: upgrade";
    if (!ws_detail::valid_client_key(h["Sec-WebSocket-Key"])) return "a bad Sec-WebSocket-Key";
    // Bytes after the head must be frames, not a body.
    if (req.framing() != Framing::None && req.body_size() != 0) return "a body";
    return nullptr;
}

// Sets resp to a refusal for the handler to return: nullptr, errno EPROTO.
IWebSocketStream* refuse(Response& resp, int status) {
    (void)resp.set_result(status);
    if (status == 426) (void)resp.headers.set("Sec-WebSocket-Version", "13");
    (void)resp.headers.content_length(0);
    errno = EPROTO;
    return nullptr;
}

class websocket_http_handler : public HTTPHandler {
public:
    websocket_http_handler(WebSocketHandler h, const WebSocketOptions& o) : handler_(h), opts_(o) {}

    int handle_request(Request& req, Response& resp, std::string_view) override {
        IWebSocketStream* ws = server_accept_websocket(req, resp, opts_);
        if (!ws) return errno == EPROTO ? 0 : -1;  // refused: resp says why
        int ret = handler_(ws);
        delete ws;
        return ret;
    }

private:
    WebSocketHandler handler_;
    WebSocketOptions opts_;
};

}  // namespace

IWebSocketStream* websocket_connect(Client* client, std::string_view url, uint64_t timeout,
                                    const WebSocketOptions& options) {
    if (!client) LOG_ERROR_RETURN(EINVAL, nullptr, "websocket_connect: no client");
    std::string key = ws_detail::new_client_key();
    Client::OperationOnStack<16 * 1024> op(client, Verb::GET, http_url(url));
    Headers& h = op.req.headers;
    if (h.insert("Upgrade", "websocket") < 0 || h.insert("Connection", "Upgrade") < 0 ||
        h.insert("Sec-WebSocket-Key", key) < 0 || h.insert("Sec-WebSocket-Version", "13") < 0)
        return nullptr;
    op.timeout = Timeout(timeout);
    op.follow = 0;
    op.retry = 0;
    if (op.call() < 0) return nullptr;  // the client logged why
    if (op.status_code != 101)
        LOG_ERROR_RETURN(ECONNREFUSED, nullptr, "websocket_connect: ` answered `", url,
                         op.status_code);
    if (const char* why = bad_switch(op.resp, key))
        LOG_ERROR_RETURN(EPROTO, nullptr, "websocket_connect: ` answered with `", url, why);
    std::string leftover;  // frames the server sent right after its 101
    ISocketStream* s = op.take_connection(&leftover);
    if (!s) return nullptr;
    return new websocket_stream_impl(s, true, true, leftover, options);
}

IWebSocketStream* websocket_connect(Client* client, std::string_view url, uint64_t timeout) {
    return websocket_connect(client, url, timeout, WebSocketOptions());
}

IWebSocketStream* Client::websocket_connect(std::string_view url, uint64_t timeout) {
    return http::websocket_connect(this, url, timeout);
}

IWebSocketStream* server_accept_websocket(Request& req, Response& resp,
                                          const WebSocketOptions& options) {
    if (const char* why = bad_upgrade(req)) {
        LOG_DEBUG("websocket: refusing an upgrade: `", why);
        return refuse(resp, 400);
    }
    if (req.headers["Sec-WebSocket-Version"] != "13") return refuse(resp, 426);
    ISocketStream* s = connection_stream(req);  // EINVAL: no HTTPServer serves req
    if (!s) return nullptr;
    std::string accept = ws_detail::accept_key(req.headers["Sec-WebSocket-Key"]);
    (void)resp.set_result(101);
    if (resp.headers.set("Upgrade", "websocket") < 0 ||
        resp.headers.set("Connection", "Upgrade") < 0 ||
        resp.headers.set("Sec-WebSocket-Accept", accept) < 0 || resp.send() < 0)
        return nullptr;
    server_detail::Connection* c = server_detail::connection_of(req);
    return new websocket_stream_impl(s, false, false, "",
                                     ws_detail::server_defaults(options, c->opts), c);
}

IWebSocketStream* server_accept_websocket(Request& req, Response& resp) {
    return server_accept_websocket(req, resp, WebSocketOptions());
}

HTTPHandler* new_websocket_handler(WebSocketHandler handler, const WebSocketOptions& options) {
    return new websocket_http_handler(handler, options);
}

HTTPHandler* new_websocket_handler(WebSocketHandler handler) {
    return new_websocket_handler(handler, WebSocketOptions());
}

}  // namespace http
}  // namespace net
}  // namespace photon
