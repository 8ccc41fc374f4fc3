// The parts of PhotonLibOS's net/http API (url.h, headers.h, message.h,
// client.h, server.h) that the other HTTP tests do not reach: Photon's URL
// forms and helpers, HeadersBase's accessors, Message's socket binding and
// states, the client's proxy credentials, and handlers that get their
// pattern as Photon's do.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <photon/net/http/client.h>
#include <photon/net/http/headers.h>
#include <photon/net/http/message.h>
#include <photon/net/http/server.h>
#include <photon/net/http/url.h>
#include <photon/net/socket.h>
#include <photon/net/utils.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "http_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

namespace {

// ---- url.h ---------------------------------------------------------------------

TEST(HttpApiUrl, AcceptsPhotonsRelativeAndBareForms) {
    URL u0("/");
    EXPECT_EQ("/", u0.path());
    EXPECT_EQ("/", u0.target());
    EXPECT_FALSE(u0.is_absolute());
    URL u1("/path?query=1");
    EXPECT_EQ("/path", u1.path());
    EXPECT_EQ("/path?query=1", u1.target());
    EXPECT_EQ("query=1", u1.query());
    EXPECT_EQ("", u1.host());
    EXPECT_EQ("", u1.host_port());
    EXPECT_EQ(80, u1.port());
    URL q("?a=b");
    EXPECT_EQ("/?a=b", q.target());

    URL u3("example.com");  // no scheme: http
    EXPECT_TRUE(u3.is_absolute());
    EXPECT_EQ("example.com", u3.host());
    EXPECT_EQ(80, u3.port());
    EXPECT_EQ("/", u3.path());
    EXPECT_EQ("http://example.com/", u3.to_string());
    URL u6("example.com:8080/path?q=1");
    EXPECT_EQ("example.com", u6.host_no_port());
    EXPECT_EQ(8080, u6.port());
    EXPECT_EQ("/path?q=1", u6.target());
    EXPECT_FALSE(u6.secure());
}

TEST(HttpApiUrl, SplitsUserinfo) {
    URL u0("http://root:password@123.123.1.1:3123/path");
    EXPECT_EQ("root:password", u0.user_passwd());
    EXPECT_EQ("root", u0.user());
    EXPECT_EQ("password", u0.passwd());
    EXPECT_EQ("123.123.1.1", u0.host());
    EXPECT_EQ("123.123.1.1:3123", u0.host_port());  // never the userinfo
    EXPECT_EQ(3123, u0.port());
    URL u5("http://onlyuser@example.com:8080/path");
    EXPECT_EQ("onlyuser", u5.user_passwd());
    EXPECT_EQ("onlyuser", u5.user());
    EXPECT_EQ("", u5.passwd());
    URL u6("https://user:@example.com/");
    EXPECT_EQ("user:", u6.user_passwd());
    EXPECT_EQ("", u6.passwd());
    EXPECT_EQ(443, u6.port());
    URL u4("http://example.com/path?email=a@b.com");  // '@' after the host is not userinfo
    EXPECT_EQ("", u4.user_passwd());
    EXPECT_EQ("example.com", u4.host());
    EXPECT_EQ("email=a@b.com", u4.query());
    URL u7("http://u%40x:p%3Aw@[::1]:81/");
    EXPECT_EQ("u%40x", u7.user());
    EXPECT_EQ("p%3Aw", u7.passwd());
    EXPECT_EQ("::1", u7.host());
    EXPECT_EQ("[::1]:81", u7.host_port());
}

TEST(HttpApiUrl, HostPortOmitsTheDefaultPortAsPhoton) {
    EXPECT_EQ("h", URL("http://h:80/").host_port());
    EXPECT_EQ("h:443", URL("http://h:443/").host_port());
    EXPECT_EQ("h", URL("https://h:443").host_port());
    EXPECT_EQ("[::1]", URL("http://[::1]:80/").host_port());
    EXPECT_FALSE(need_optional_port(URL("http://www.taobao.com:80")));
    EXPECT_FALSE(need_optional_port(URL("https://www.taobao.com:443")));
    EXPECT_TRUE(need_optional_port(URL("http://www.taobao.com:8080")));
    EXPECT_TRUE(need_optional_port(URL("https://www.taobao.com:4443")));
}

TEST(HttpApiUrl, SchemeHelpers) {
    EXPECT_EQ(1, what_protocol("http://www.taobao.com"));
    EXPECT_EQ(2, what_protocol("https://www.taobao.com"));
    EXPECT_EQ(2, what_protocol("HTTPS://www.taobao.com/"));
    EXPECT_EQ(0, what_protocol("www.taobao.com"));
    EXPECT_EQ("http://", http_or_s(true));
    EXPECT_EQ("https://", http_or_s(false));
    EXPECT_STREQ("http://", http_url_scheme);
    EXPECT_STREQ("https://", https_url_scheme);
}

std::string host_of(const URL& u) { return std::string(u.host()); }

TEST(HttpApiUrl, OwnsItsTextAndConvertsImplicitly) {
    URL u;
    {
        std::string temp = "http://owned.test/p";
        ASSERT_TRUE(u.from_string(temp));
        temp.assign(temp.size(), 'x');  // Photon's URL would now read x's
    }
    EXPECT_EQ("owned.test", u.host());
    EXPECT_STREQ("http://owned.test/p", u.c_str());
    u.fix_target();
    EXPECT_EQ("/p", u.target());
    EXPECT_EQ("implicit.test", host_of(std::string_view("http://implicit.test")));
    StoredURL s("https://stored.test:8443/a");
    EXPECT_EQ(8443, s.port());
    EXPECT_TRUE(s.secure());
    s.clear();
    EXPECT_TRUE(s.empty());
    EXPECT_TRUE(s.from_string("http://again.test"));
    EXPECT_EQ("again.test", s.host());
}

// ---- headers.h ---------------------------------------------------------------

TEST(HttpApiHeaders, EqualRangeStepsThroughOneName) {
    Headers h;
    h.insert("Set-Cookie", "a=1");
    h.insert("X", "x");
    h.insert("set-cookie", "b=2", 1);
    h.insert("Y", "y");
    h.insert("SET-COOKIE", "c=3", 1);
    auto r = h.equal_range("Set-Cookie");
    std::string got;
    for (auto it = r.first; it != r.second; ++it) got += std::string(it.second()) + ";";
    EXPECT_EQ("a=1;b=2;c=3;", got);
    auto none = h.equal_range("Nope");
    EXPECT_TRUE(none.first == none.second);
    Headers::iterator it = h.find("Y");  // Photon's name for the type
    EXPECT_EQ("y", it.second());
    auto post = r.first++;
    EXPECT_EQ("a=1", post.second());
    EXPECT_EQ("b=2", r.first.second());
}

TEST(HttpApiHeaders, PhotonAccessors) {
    HeadersBase h;  // Photon's base class name
    ASSERT_EQ(0, h.insert("Host", "a.test"));
    ASSERT_EQ(0, h.insert("Accept", "*/*"));
    EXPECT_EQ("a.test", h.get_value("host"));
    EXPECT_EQ("a.test", h[(size_t)0]);
    EXPECT_EQ("*/*", h[1]);
    EXPECT_EQ("", h[2]);
    EXPECT_EQ("a.test", h["Host"]);
    EXPECT_EQ(strlen("Host: a.test\r\nAccept: */*\r\n"), h.size());  // bytes, as Photon
    EXPECT_EQ(2u, h.field_count());
    EXPECT_EQ(16u, h.kv_size());
    EXPECT_EQ(64u * 1024 - h.size(), h.space_remain());
    ASSERT_EQ(0, h.reset_host(12, "b.test:81"));
    EXPECT_EQ("b.test:81", h["Host"]);
    EXPECT_EQ(1u, h.count("Host"));
    h.reset();
    EXPECT_TRUE(h.empty());
    EXPECT_EQ(0u, h.size());
}

TEST(HttpApiHeaders, ResetParsesARawFieldBlock) {
    Headers h;
    char raw[] = "Host: x.test\r\nContent-Length:  12 \r\nX-A: 1\r\n\r\nbody";
    ASSERT_EQ(0, h.reset(raw, 1024, (uint16_t)strlen(raw)));
    EXPECT_EQ(3u, h.field_count());
    EXPECT_EQ("x.test", h["host"]);
    EXPECT_EQ(12u, h.content_length());
    EXPECT_EQ("1", h["X-A"]);
    char bad[] = "Host x.test\r\n";
    h.insert("Keep", "no");
    errno = 0;
    EXPECT_EQ(-1, h.reset(bad, 1024, (uint16_t)strlen(bad)));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_TRUE(h.empty());
    char big[] = "A: 0123456789\r\n";
    EXPECT_EQ(-1, h.reset(big, 8, (uint16_t)strlen(big)));  // the capacity bounds it
    EXPECT_EQ(ENOBUFS, errno);
    EXPECT_EQ(0, h.reset(nullptr, 100));
    EXPECT_EQ(100u, h.space_remain());
}

TEST(HttpApiHeaders, MergeValueAppendAndInsertFormat) {
    Headers a, b;
    a.insert("A", "1");
    b.insert("B", "2");
    b.insert("A", "3");
    EXPECT_EQ(-1, a.merge(b));  // A is there already
    EXPECT_EQ(0, a.merge(b, 1));
    EXPECT_EQ(2u, a.count("A"));

    Headers h;
    errno = 0;
    EXPECT_FALSE(h.value_append("x"));
    EXPECT_EQ(ENOENT, errno);
    h.insert("Accept", "text/html");
    h.insert("Via", "1.1 a");
    EXPECT_TRUE(h.value_append(", 1.1 b"));
    EXPECT_EQ("1.1 a, 1.1 b", h["Via"]);
    EXPECT_FALSE(h.value_append("\r\nEvil: yes"));  // no header injection
    EXPECT_EQ(EINVAL, errno);
    EXPECT_TRUE(h.value_append(std::string(h["Via"]).substr(0, 3)));  // text of our own
    EXPECT_EQ("1.1 a, 1.1 b1.1", h["Via"]);
    h.erase("Via");
    EXPECT_TRUE(h.value_append(";q=0.9"));  // the last field left
    EXPECT_EQ("text/html;q=0.9", h["Accept"]);
    std::string wire;
    h.serialize(&wire);
    EXPECT_EQ("Accept: text/html;q=0.9\r\n", wire);
    EXPECT_EQ(wire.size(), h.size());

    EXPECT_EQ(0, h.insert_format("X-N", "%d-%s", 42, "z"));
    EXPECT_EQ("42-z", h["X-N"]);
    errno = 0;
    std::string nine = "123456789";
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-truncation"  // the truncation is the test
#endif
    EXPECT_EQ(-1, (h.insert_format<8>("X-Long", "%s", nine.c_str())));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    EXPECT_EQ(ENOBUFS, errno);
    EXPECT_FALSE(h.has("X-Long"));
}

TEST(HttpApiHeaders, RangesAndChunked) {
    Headers h;
    EXPECT_EQ(std::make_pair((ssize_t)0, (ssize_t)-1), h.range());
    ASSERT_EQ(0, h.range(10, 19));
    EXPECT_EQ("bytes=10-19", h["Range"]);
    EXPECT_EQ(std::make_pair((ssize_t)10, (ssize_t)19), h.range());
    ASSERT_EQ(0, h.range(5, 6));  // replaces
    EXPECT_EQ(1u, h.count("Range"));
    h.set("Range", "bytes=100-");
    EXPECT_EQ(std::make_pair((ssize_t)100, (ssize_t)-1), h.range());
    h.set("Range", "bytes=-50");
    EXPECT_EQ(std::make_pair((ssize_t)-1, (ssize_t)50), h.range());
    for (const char* bad :
         {"bytes=", "bytes=-", "bytes=a-b", "bytes=9-1", "items=1-2", "bytes=1-2,4-5"}) {
        h.set("Range", bad);
        EXPECT_EQ(std::make_pair((ssize_t)0, (ssize_t)-1), h.range()) << bad;
    }
    ASSERT_EQ(0, h.content_range(0, 9, 100));
    EXPECT_EQ("bytes 0-9/100", h["Content-Range"]);
    ASSERT_EQ(0, h.content_range(0, 9));
    EXPECT_EQ("bytes 0-9/*", h["Content-Range"]);
    EXPECT_FALSE(h.chunked());
    h.insert("Transfer-Encoding", "gzip, Chunked");
    EXPECT_TRUE(h.chunked());
    h.set("Transfer-Encoding", "chunked, gzip");
    EXPECT_FALSE(h.chunked());
}

TEST(HttpApiHeaders, CommonHeadersAndBufAppend) {
    CommonHeaders<64> h;  // 64 bytes of fields at most
    EXPECT_EQ(0, h.insert("A", std::string(40, 'a')));
    errno = 0;
    EXPECT_EQ(-1, h.insert("B", std::string(40, 'b')));
    EXPECT_EQ(ENOBUFS, errno);
    CommonHeaders<> big;
    EXPECT_EQ(64u * 1024 - 1, big.space_remain());
    char buf[32];
    char* p = buf;
    buf_append(p, std::string_view("len="));
    buf_append(p, (uint64_t)1234567890123ULL);
    buf_append(p, (uint64_t)0);
    EXPECT_EQ("len=12345678901230", std::string(buf, p));
}

// ---- message.h ----------------------------------------------------------------

TEST(HttpApiMessage, StatesVersionsAndReasons) {
    EXPECT_EQ("Not Found", obsolete_reason(404));
    Request req;
    EXPECT_EQ(INIT, req.message_status);
    EXPECT_EQ("1.1", req.version());
    Response resp;
    static_assert(std::is_same<decltype(resp.status_code()), uint16_t>::value, "as Photon");
    Message& m = resp;
    EXPECT_EQ(Verb::GET, m.verb());
    resp.reset((char*)nullptr, 1024, false, nullptr, false, Verb::HEAD);
    EXPECT_EQ(Verb::HEAD, m.verb());
    Message& mr = req;
    req.verb(Verb::PUT);
    EXPECT_EQ(Verb::PUT, mr.verb());
    errno = 0;
    EXPECT_EQ(-1, resp.send());  // bound to nothing
    EXPECT_EQ(ENOTCONN, errno);
}

TEST(HttpApiMessage, HostNoPortFromTheHostField) {
    Request r;
    r.headers.insert("Host", "a.test:8080");
    EXPECT_EQ("a.test", r.host_no_port());
    r.headers.set("Host", "[::1]:81");
    EXPECT_EQ("::1", r.host_no_port());
    r.headers.set("Host", "plain.test");
    EXPECT_EQ("plain.test", r.host_no_port());
    ASSERT_EQ(0, r.reset(Verb::GET, "http://url.test:9/x"));
    EXPECT_EQ("url.test", r.host_no_port());
    EXPECT_EQ("url.test:9", r.host());
}

TEST(HttpApiMessage, KeepAliveSetterWritesTheConnectionField) {
    Response r;
    EXPECT_EQ(0, r.keep_alive(false));
    EXPECT_FALSE(r.keep_alive());
    EXPECT_EQ("close", r.headers["Connection"]);
    EXPECT_EQ(0, r.keep_alive(true));
    EXPECT_TRUE(r.keep_alive());
    EXPECT_FALSE(r.headers.has("Connection"));
}

TEST(HttpApiMessage, OwnedBuffersAreFreed) {
    // Under ASan a leak here fails the run. The request constructor does
    // not take ownership (as Photon's).
    char stack_buf[4096];
    Request r(stack_buf, sizeof(stack_buf), Verb::GET, "http://buf.test/a", false);
    EXPECT_EQ("/a", r.target());
    EXPECT_EQ(Verb::GET, r.verb());
    r.reset(malloc(100), 100, true);
    Response resp((char*)nullptr, 1000);
    resp.reset((char*)malloc(64), 64, true);
}

class HttpApi : public EngineTest {};

// A request and a response over a socket pair, bound the Photon way.
TEST_P(HttpApi, MessagesBoundToSocketStreams) {
    temp_dir dir("photon-http-api");
    ASSERT_TRUE(dir.ok());
    const std::string path = dir / "sock";
    std::unique_ptr<ISocketServer> srv(new_uds_server(true));
    ASSERT_EQ(0, srv->bind(path.c_str()));
    ASSERT_EQ(0, srv->listen());
    std::unique_ptr<ISocketClient> cli(new_uds_client());
    ISocketStream* client_end = cli->connect(path.c_str());
    ASSERT_NE(nullptr, client_end);
    ISocketStream* server_end = srv->accept();
    ASSERT_NE(nullptr, server_end);

    Request out;
    out.reset(client_end, true);  // deleted with `out` (or its next reset)
    ASSERT_EQ(0, out.reset(Verb::POST, "http://pair.test/up?x=1"));
    EXPECT_EQ(client_end, out.get_socket_stream());
    out.headers.content_length(5);
    EXPECT_EQ(INIT, out.message_status);
    ASSERT_EQ(0, out.send_header());
    EXPECT_EQ(HEADER_SENT, out.message_status);
    ASSERT_EQ(5, out.write("hello", 5));
    EXPECT_EQ(BODY_SENT, out.message_status);
    ASSERT_EQ(0, out.send());

    Request in;
    in.reset(server_end, true);
    ASSERT_EQ(0, in.receive_header());
    EXPECT_EQ(HEADER_PARSED, in.message_status);
    EXPECT_EQ(Verb::POST, in.verb());
    EXPECT_EQ("/up?x=1", in.target());
    EXPECT_EQ("pair.test", in.host_no_port());
    EXPECT_EQ("1.1", in.version());
    EXPECT_EQ(5, in.resource_size());
    char body[8] = {};
    ASSERT_EQ(5, in.read(body, sizeof(body)));
    EXPECT_STREQ("hello", body);

    Response reply;
    reply.reset(in.steal_socket_stream(), true);  // ownership moves with the stream
    EXPECT_EQ(nullptr, in.get_socket_stream());
    ASSERT_EQ(0, reply.set_result(201));
    reply.headers.content_length(0);
    ASSERT_EQ(0, reply.send());

    Response back;
    back.reset(out.steal_socket_stream(), true);
    ASSERT_EQ(0, back.receive_header(Verb::POST));
    EXPECT_EQ(201, back.status_code());
    EXPECT_EQ("Created", back.status_message());
    EXPECT_EQ(HEADER_PARSED, back.message_status);
    back.reset_status();
    EXPECT_EQ(INIT, back.message_status);
    back.reset();  // deletes the client end it owned
    EXPECT_EQ(nullptr, back.steal_socket_stream());
}

// ---- server.h --------------------------------------------------------------------

// An HTTPServer written against Photon's interface: its pure virtuals only.
class photon_style_server : public HTTPServer {
public:
    int handle_connection(ISocketStream*) override { return 0; }
    void add_handler(DelegateHTTPHandler, std::string_view) override {}
    void add_handler(HTTPHandler*, bool, std::string_view) override {}
};

TEST(HttpApiServer, AServerWithPhotonsInterfaceIsComplete) {
    photon_style_server s;
    HTTPServer* h = &s;
    errno = 0;
    EXPECT_EQ(-1, h->stop());
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(0u, h->connections());
    EXPECT_TRUE((bool)h->get_connection_handler());
}

class pattern_echo : public HTTPHandler {
public:
    int handle_request(Request& req, Response& resp, std::string_view pattern) override {
        std::string b =
            "obj|" + std::string(pattern) + "|" + std::string(pattern_remain(req, pattern));
        resp.headers.content_length(b.size());
        return resp.write(b.data(), b.size()) == (ssize_t)b.size() ? 0 : -1;
    }
};

struct delegate_owner {
    int handle(Request& req, Response& resp, std::string_view pattern) {
        std::string b =
            "fn|" + std::string(pattern) + "|" + std::string(pattern_remain(req, pattern));
        if (req.target() == "/close/now") resp.keep_alive(false);
        resp.headers.content_length(b.size());
        return resp.write(b.data(), b.size()) == (ssize_t)b.size() ? 0 : -1;
    }
};

// A raw exchange: the response's status line, Connection field and body.
struct raw_reply {
    std::string head, body;
};

raw_reply raw_get(ISocketStream* s, const std::string& target) {
    std::string req = "GET " + target + " HTTP/1.1\r\nHost: t\r\n\r\n";
    raw_reply r;
    if (s->write(req.data(), req.size()) != (ssize_t)req.size()) return r;
    std::string all;
    char buf[1024];
    while (all.find("\r\n\r\n") == all.npos) {
        ssize_t n = s->recv(buf, sizeof(buf));
        if (n <= 0) return r;
        all.append(buf, n);
    }
    size_t end = all.find("\r\n\r\n") + 4;
    r.head = all.substr(0, end);
    size_t cl = r.head.find("Content-Length: ");
    size_t len = cl == all.npos ? 0 : atoi(r.head.c_str() + cl + 16);
    r.body = all.substr(end);
    while (r.body.size() < len) {
        ssize_t n = s->recv(buf, sizeof(buf));
        if (n <= 0) break;
        r.body.append(buf, n);
    }
    return r;
}

TEST_P(HttpApi, HandlersGetTheirPatternAsPhotons) {
    std::unique_ptr<HTTPServer> http(new_http_server());
    pattern_echo obj;
    delegate_owner fn;
    http->add_handler(&obj, false, "/static/");
    http->add_handler({&fn, &delegate_owner::handle}, "/api");
    http->add_handler({&fn, &delegate_owner::handle}, "=/exact");
    http->add_handler({&fn, &delegate_owner::handle}, "/close");
    http->add_handler(&obj, false);  // the default
    std::unique_ptr<ISocketServer> tcp(new_tcp_socket_server());
    tcp->set_handler(http->get_connection_handler());
    ASSERT_EQ(0, tcp->bind_v4localhost(0));
    ASSERT_EQ(0, tcp->listen());
    ASSERT_EQ(0, tcp->start_loop(false));
    std::unique_ptr<ISocketClient> cli(new_tcp_socket_client());
    std::unique_ptr<ISocketStream> s(cli->connect(tcp->getsockname()));
    ASSERT_NE(nullptr, s);
    EXPECT_EQ("obj|/static/|a/b.txt", raw_get(s.get(), "/static/a/b.txt?q=1").body);
    EXPECT_EQ("fn|/api|/v1", raw_get(s.get(), "/api/v1").body);
    EXPECT_EQ("fn|=/exact|", raw_get(s.get(), "/exact").body);
    EXPECT_EQ("obj||/exact/more", raw_get(s.get(), "/exact/more").body);
    EXPECT_EQ("obj||/other", raw_get(s.get(), "/other").body);
    raw_reply r = raw_get(s.get(), "/close/now");  // the handler said keep_alive(false)
    EXPECT_EQ("fn|/close|/now", r.body);
    EXPECT_NE(std::string::npos, r.head.find("Connection: close")) << r.head;
    char c;
    EXPECT_EQ(0, s->recv(&c, 1));  // and the server closed
    tcp->terminate();
}

// ---- client.h --------------------------------------------------------------------

TEST_P(HttpApi, ProxyCredentialsGoToTheProxyOnly) {
    std::string seen_auth, seen_target;
    int calls = 0;
    scripted_server proxy([&](Request& req, Response& resp, ISocketStream*) {
        calls++;
        seen_auth.assign(req.headers["Proxy-Authorization"]);
        seen_target.assign(req.target());
        resp.headers.content_length(2);
        return resp.write("ok", 2) == 2 ? 0 : -1;
    });
    std::unique_ptr<Client> client(new_http_client());
    client->set_proxy("http://us%3Aer:p%40ss@127.0.0.1:" + std::to_string(proxy.port()));
    StoredURL* p = client->get_proxy();
    EXPECT_EQ("us%3Aer", p->user());
    auto op = client->new_operation(Verb::GET, "http://origin.test/x");
    const StoredURL* op_proxy = op->get_proxy();
    EXPECT_TRUE(op_proxy->empty());  // the client's applies
    ASSERT_EQ(0, op->call());
    EXPECT_EQ(200, op->status_code);
    std::string expect;
    Base64Encode("us:er:p@ss", expect);
    EXPECT_EQ("Basic " + expect, seen_auth);
    EXPECT_EQ("http://origin.test/x", seen_target);
    EXPECT_FALSE(op->req.headers.has("Proxy-Authorization"));  // not kept for later rounds
    client->destroy_operation(op);

    // An operation's own proxy without credentials sends none.
    op = client->new_operation(Verb::GET, "http://origin.test/y");
    op->set_proxy("http://127.0.0.1:" + std::to_string(proxy.port()));
    ASSERT_EQ(0, op->call());
    EXPECT_EQ("", seen_auth);
    client->destroy_operation(op);
    EXPECT_EQ(2, calls);
}

TEST_P(HttpApi, BareHostUrlsWorkAndRelativeOnesFailTheCall) {
    scripted_server origin([&](Request& req, Response& resp, ISocketStream*) {
        std::string b(req.target());
        resp.headers.content_length(b.size());
        return resp.write(b.data(), b.size()) == (ssize_t)b.size() ? 0 : -1;
    });
    std::unique_ptr<Client> client(new_http_client());
    auto op =
        client->new_operation(Verb::GET, "127.0.0.1:" + std::to_string(origin.port()) + "/bare");
    ASSERT_EQ(0, op->call());
    char buf[16] = {};
    EXPECT_EQ(5, op->resp.read(buf, sizeof(buf)));
    EXPECT_STREQ("/bare", buf);
    client->destroy_operation(op);
    op = client->new_operation(Verb::GET, "/relative");
    errno = 0;
    EXPECT_EQ(-1, op->call());  // no host to go to
    EXPECT_EQ(EINVAL, errno);
    client->destroy_operation(op);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpApi);

}  // namespace
