// An HTTP server and client and a socket echo written the way PhotonLibOS's
// examples and users write them: handlers that take the matched prefix,
// `{this, &X::method}` delegates, raw new / DEFER(delete), destroy_operation,
// OperationOnStack, Photon's URL and header helpers, typed setsockopt, the
// doio helpers of basic_socket.h. The code above the gtest include sees only
// what the photon headers bring.
#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/net/basic_socket.h>
#include <photon/net/http/client.h>
#include <photon/net/http/server.h>
#include <photon/net/http/url.h>
#include <photon/net/socket.h>
#include <photon/net/utils-stdstring.h>
#include <photon/net/utils.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include <netinet/tcp.h>  // TCP_NODELAY: no Photon header promises it

namespace net_api_style {

// In a named namespace: at global scope (or in an unnamed namespace, which
// is as good as global) the using-directives would make basic_socket.h's
// photon::net::read / write collide with gtest's calls of ::read / ::write,
// as they do with Photon's header.
using namespace photon;
using namespace photon::net;
using namespace photon::net::http;

const char kDoc[] = "photon compat document\n";

// ---- socket echo, as Photon's examples/simple --------------------------------

class EchoServer {
public:
    int serve(ISocketStream* stream) {
        char buf[1024];
        while (true) {
            ssize_t n = stream->recv(buf, sizeof(buf));
            if (n <= 0) break;
            if (stream->write(buf, n) != n) break;
            served += n;
        }
        return 0;
    }
    size_t served = 0;
};

// 0 when every step worked; the number of the failing step otherwise.
int socket_echo(std::string* got) {
    EchoServer echo;
    auto server = new_tcp_socket_server();
    DEFER(delete server);
    server->setsockopt<int>(SOL_SOCKET, SO_REUSEADDR, 1);
    server->set_handler({&echo, &EchoServer::serve});
    if (server->bind_v4localhost() != 0 || server->listen() != 0) return 1;
    if (server->start_loop() != 0) return 2;
    auto ep = server->getsockname();
    LOG_INFO("echo server at ", ep, " (", to_string(ep), ")");

    auto client = new_tcp_socket_client();
    DEFER(delete client);
    auto stream = client->connect(ep);
    if (!stream) return 3;
    DEFER(delete stream);
    bool nodelay = false;
    if (stream->getsockopt<int>(IPPROTO_TCP, TCP_NODELAY, &nodelay) != 0 || !nodelay) return 4;
    const char msg[] = "ping through photon";
    if (stream->write(msg, sizeof(msg)) != (ssize_t)sizeof(msg)) return 5;
    char buf[sizeof(msg)];
    // A partial-read loop the basic_socket.h way.
    void* p = buf;
    size_t left = sizeof(buf);
    auto n = DOIO_LOOP(stream->recv(p, left), BufStep(p, left));
    if (n != (ssize_t)sizeof(msg)) return 6;
    got->assign(buf, sizeof(buf) - 1);
    server->terminate();
    return echo.served == sizeof(msg) ? 0 : 7;
}

// ---- HTTP server ----------------------------------------------------------------

// Serves kDoc under its prefix: the third argument is the pattern it was
// added with, and the file name is what follows it (as Photon's fs handler).
class DocHandler : public HTTPHandler {
public:
    int handle_request(Request& req, Response& resp, std::string_view prefix) override {
        estring_view target = req.target();
        auto q = target.find('?');
        estring_view name = target.substr(0, q).substr(prefix.size() - 1);
        if (name != "/doc.txt") {
            resp.set_result(404);
            resp.headers.content_length(0);
            return 0;
        }
        auto range = req.headers.range();
        if (range.first < 0) range.first = sizeof(kDoc) - 1 - range.second;
        if (range.second < 0 || range.second >= (ssize_t)sizeof(kDoc) - 1)
            range.second = sizeof(kDoc) - 2;
        size_t len = range.second - range.first + 1;
        if (len == sizeof(kDoc) - 1) {
            resp.set_result(200);
        } else {
            resp.set_result(206);
            resp.headers.content_range(range.first, range.second, sizeof(kDoc) - 1);
        }
        resp.headers.insert("Content-Type", "text/plain");
        resp.headers.content_length(len);
        if (req.verb() == Verb::HEAD) return 0;
        return resp.write(kDoc + range.first, len) == (ssize_t)len ? 0 : -1;
    }
};

// An API object with member-function handlers, as Photon users bind them.
class Api {
public:
    int echo(Request& req, Response& resp, std::string_view) {
        auto token = req.headers["X-Token"];
        std::string expect;
        Base64Encode("user:secret", expect);
        if (req.headers["Authorization"] != "Basic " + expect) {
            resp.set_result(401);
            resp.headers.content_length(0);
            return 0;
        }
        char body[256];
        auto n = req.read(body, sizeof(body));
        if (n < 0) return -1;
        estring reply;
        reply.appends(verbstr[req.verb()], " ", req.query(), " ", token, " ",
                      std::string_view(body, n));
        resp.set_result(200);
        resp.headers.content_length(reply.size());
        resp.headers.insert("X-Version", req.version());
        return resp.write(reply.data(), reply.size()) == (ssize_t)reply.size() ? 0 : -1;
    }
    int bye(Request&, Response& resp, std::string_view) {
        resp.set_result(200);
        resp.keep_alive(false);
        resp.headers.content_length(3);
        return resp.write("bye", 3) == 3 ? 0 : -1;
    }
};

// ---- HTTP client -----------------------------------------------------------------

struct Results {
    int doc_status = 0, range_status = 0, api_status = 0, denied_status = 0, bye_status = 0;
    std::string doc, range, api, content_range, x_version;
    bool bye_keep_alive = true;
};

int http_round_trips(Results* r) {
    Api api;
    auto http = new_http_server();
    DEFER(delete http);
    http->add_handler(new DocHandler, true, "/static/");
    http->add_handler({&api, &Api::echo}, "/api/echo");
    http->add_handler({&api, &Api::bye}, "/bye");
    auto tcp = new_tcp_socket_server();
    DEFER(delete tcp);
    tcp->set_handler(http->get_connection_handler());
    if (tcp->bind_v4localhost() != 0 || tcp->listen() != 0 || tcp->start_loop() != 0) return 1;
    auto port = tcp->getsockname().port;
    std::string base = "http://localhost:" + std::to_string(port);
    URL u(base + "/static/doc.txt");
    if (u.host() != "localhost" || u.port() != port || !need_optional_port(u)) return 2;

    auto client = new_http_client();
    DEFER(delete client);
    client->set_user_agent("compat-test");
    client->timeout_s(10);
    {
        auto op = client->new_operation(Verb::GET, base + "/static/doc.txt");
        DEFER(client->destroy_operation(op));
        op->retry = 0;
        if (op->call() != 0) return 3;
        r->doc_status = op->status_code;
        auto len = op->resp.headers.content_length();
        std::string body(len, '\0');
        if (op->resp.read(&body[0], len) != (ssize_t)len) return 4;
        r->doc = body;
    }
    {
        Client::OperationOnStack<> op(client, Verb::GET, base + "/static/doc.txt");
        op.req.headers.range(7, 12);
        if (op.call() != 0) return 5;
        r->range_status = op.status_code;
        r->content_range = std::string(op.resp.headers["Content-Range"]);
        char buf[64];
        auto n = op.resp.read(buf, sizeof(buf));
        if (n < 0) return 6;
        r->range.assign(buf, n);
    }
    {
        auto op = client->new_operation(Verb::POST, base + "/api/echo?id=" + url_escape("a b"));
        DEFER(client->destroy_operation(op));
        std::string auth;
        Base64Encode("user:secret", auth);
        op->req.headers.insert("Authorization", "Basic " + auth);
        op->req.headers.insert("X-Token", "tok");
        op->set_body(std::string_view("payload"));
        if (op->call() != 0) return 7;
        r->api_status = op->status_code;
        r->x_version = std::string(op->resp.headers["X-Version"]);
        char buf[256];
        auto n = op->resp.read(buf, sizeof(buf));
        if (n < 0) return 8;
        r->api.assign(buf, n);
        LOG_INFO(verbstr[op->req.verb()], " ", op->req.target(), " -> ", op->status_code);
    }
    {
        auto op = client->new_operation(Verb::POST, base + "/api/echo");
        DEFER(client->destroy_operation(op));
        if (op->call() != 0) return 9;
        r->denied_status = op->status_code;
    }
    {
        auto op = client->new_operation(Verb::GET, base + "/bye");
        DEFER(client->destroy_operation(op));
        if (op->call() != 0) return 10;
        r->bye_status = op->status_code;
        r->bye_keep_alive = op->resp.keep_alive();
        char buf[8];
        if (op->resp.read(buf, sizeof(buf)) != 3) return 11;
    }
    tcp->terminate();
    return 0;
}

}  // namespace net_api_style

#include <gtest/gtest.h>

namespace net_api_style {

TEST(NetApiStyle, SocketEchoAsInPhotonsExamples) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE));
    std::string got;
    EXPECT_EQ(0, socket_echo(&got));
    EXPECT_EQ("ping through photon", got);
    EXPECT_EQ(0, photon::fini());
}

TEST(NetApiStyle, HttpServerAndClientAsPhotonUsersWriteThem) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE));
    Results r;
    EXPECT_EQ(0, http_round_trips(&r));
    EXPECT_EQ(200, r.doc_status);
    EXPECT_EQ(kDoc, r.doc);
    EXPECT_EQ(206, r.range_status);
    EXPECT_EQ("compat", r.range);
    EXPECT_EQ("bytes 7-12/23", r.content_range);
    EXPECT_EQ(200, r.api_status);
    EXPECT_EQ("POST id=a%20b tok payload", r.api);
    EXPECT_EQ("1.1", r.x_version);
    EXPECT_EQ(401, r.denied_status);
    EXPECT_EQ(200, r.bye_status);
    EXPECT_FALSE(r.bye_keep_alive);
    EXPECT_EQ(0, photon::fini());
}

TEST(NetApiStyle, DeclarationsKeepPhotonsShapes) {
    static_assert(std::is_same<decltype(verbstr[Verb::GET]), std::string_view>::value, "");
    static_assert(std::is_same<decltype(to_string(EndPoint())), estring>::value, "");
    static_assert(std::is_same<decltype(std::declval<URL&>().from_string("")), bool>::value, "");
    static_assert(std::is_same<decltype(std::declval<Response&>().status_code()), uint16_t>::value,
                  "");
    static_assert(std::is_same<decltype(std::declval<Client&>().get_proxy()), StoredURL*>::value,
                  "");
    static_assert(std::is_same<decltype(&new_smc_socket_client), ISocketClient* (*)()>::value, "");
    static_assert(
        std::is_same<decltype(&Base64Decode), bool (*)(std::string_view, std::string&)>::value, "");
    static_assert(std::is_base_of<Headers, CommonHeaders<>>::value, "");
    static_assert(INIT == 0 && HEADER_SENT == 1 && BODY_SENT == 2 && HEADER_PARSED == 3, "");
}

}  // namespace net_api_style
