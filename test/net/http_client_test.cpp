// The HTTP client on both event engines, against scripted servers on our
// message layer (keep-alive reuse, retries, redirects, bodies, timeouts,
// unix sockets, cookies), python3's http.server, nginx, and TLS servers
// (ours and openssl s_server -WWW).
#include <photon/net/http/client.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/tls_pair.h"
#include "http_test_util.h"
#include "net_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

namespace {

// An IStream over a string, read in pieces of at most `piece` bytes.
class string_stream : public IStream {
public:
    explicit string_stream(std::string s, size_t piece = 1000) : s_(std::move(s)), piece_(piece) {}
    int close() override { return 0; }
    ssize_t read(void* buf, size_t count) override {
        size_t n = std::min({count, piece_, s_.size() - pos_});
        memcpy(buf, s_.data() + pos_, n);
        pos_ += n;
        return (ssize_t)n;
    }
    ssize_t readv(const struct iovec* iov, int iovcnt) override {
        return read(iov[0].iov_base, iov[0].iov_len);
    }
    ssize_t write(const void*, size_t) override { return errno = EBADF, -1; }
    ssize_t writev(const struct iovec*, int) override { return errno = EBADF, -1; }

private:
    std::string s_;
    size_t piece_, pos_ = 0;
};

// ---- the message layer's client side --------------------------------------------

TEST(ClientRequest, ResetSetsTargetHostAndTheProxiedForm) {
    Request req;
    req.headers.insert("X-Old", "1");
    ASSERT_EQ(0, req.reset(Verb::PUT, "http://Example.com:8080/a/b?q=1#frag"));
    EXPECT_EQ(Verb::PUT, req.verb());
    EXPECT_EQ("/a/b?q=1", req.target());
    EXPECT_EQ("Example.com:8080", req.headers["Host"]);
    EXPECT_FALSE(req.headers.has("X-Old"));
    EXPECT_EQ("Example.com", req.host_no_port());
    EXPECT_EQ(8080, req.port());
    EXPECT_FALSE(req.secure());
    ASSERT_EQ(0, req.reset(Verb::GET, "http://h/x?y", true));
    EXPECT_EQ("http://h/x?y", req.target());  // absolute-form for a proxy
    ASSERT_EQ(0, req.reset(Verb::GET, "https://h/x", true));
    EXPECT_EQ("/x", req.target());  // https is tunnelled: origin-form
    EXPECT_TRUE(req.secure());
    EXPECT_EQ(443, req.port());
    EXPECT_EQ(-1, req.reset(Verb::GET, "ftp://h/"));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_TRUE(req.url().empty());
}

TEST(ClientRequest, RedirectResolvesLocationsAndKeepsHeaders) {
    Request req;
    ASSERT_EQ(0, req.reset(Verb::GET, "http://a.test/d1/d2/page?q=1"));
    req.headers.insert("X-Keep", "yes");
    auto to = [&](const char* loc) {
        if (req.reset(Verb::GET, "http://a.test/d1/d2/page?q=1") < 0) return std::string("?");
        return req.redirect(Verb::GET, loc) < 0 ? std::string("<fail>")
                                                : std::string(req.url().url());
    };
    EXPECT_EQ("http://a.test/d1/d2/other", to("other"));
    EXPECT_EQ("http://a.test/d1/x", to("../x"));
    EXPECT_EQ("http://a.test/top", to("../../../top"));
    EXPECT_EQ("http://a.test/d1/d2/sub/", to("./sub/"));
    EXPECT_EQ("http://a.test/abs?z", to("/abs?z"));
    EXPECT_EQ("http://a.test/d1/d2/page?new", to("?new"));
    EXPECT_EQ("http://a.test/d1/d2/page?q=1", to("#frag"));
    EXPECT_EQ("http://b.test/p", to("//b.test/p"));
    EXPECT_EQ("https://c.test:4443/", to("HTTPS://c.test:4443"));
    EXPECT_EQ("<fail>", to("http://bad host/"));
    ASSERT_EQ(0, req.reset(Verb::POST, "http://a.test/x"));
    req.headers.insert("X-Keep", "yes");
    ASSERT_EQ(0, req.redirect(Verb::GET, "http://b.test:81/y"));
    EXPECT_EQ(Verb::GET, req.verb());
    EXPECT_EQ("/y", req.target());
    EXPECT_EQ("b.test:81", req.headers["Host"]);
    EXPECT_EQ(1u, req.headers.count("Host"));
    EXPECT_EQ("yes", req.headers["X-Keep"]);
    Request bare;  // no URL: a path sets the target alone (as Photon's reset)
    EXPECT_EQ(0, bare.redirect(Verb::GET, "/relative?x"));
    EXPECT_EQ("/relative?x", bare.target());
    EXPECT_FALSE(bare.url().is_absolute());
    EXPECT_FALSE(bare.headers.has("Host"));
    EXPECT_EQ(0, bare.redirect(Verb::GET, "word:81"));  // a bare host, as Photon's URL
    EXPECT_EQ("word:81", bare.headers["Host"]);
    EXPECT_EQ("/", bare.target());
    EXPECT_EQ(-1, bare.redirect(Verb::GET, "http://bad host/"));
    EXPECT_EQ(EINVAL, errno);
}

TEST(ClientResponse, ResourceSizeComesFromContentRangeOrLength) {
    Response r;
    EXPECT_EQ(-1, r.resource_size());
    r.headers.content_length(10);
    EXPECT_EQ(10, r.resource_size());
    r.headers.insert("Content-Range", "bytes 10-19/12345");
    EXPECT_EQ(12345, r.resource_size());
    r.headers.set("Content-Range", "bytes 10-19/*");
    EXPECT_EQ(-1, r.resource_size());
}

class HttpClient : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        client.reset(new_http_client());
        ASSERT_NE(nullptr, client);
    }
    void TearDown() override {
        client.reset();
        EngineTest::TearDown();
    }
    // A GET of url: the body, with op's status in *status ("<call failed>").
    std::string get(const std::string& url, int* status = nullptr, Client* c = nullptr) {
        auto op = (c ? c : client.get())->new_operation(Verb::GET, url);
        DEFER(op->destroy());
        if (op->call() < 0) return "<call failed " + std::to_string(errno) + ">";
        if (status) *status = op->status_code;
        return body_of(op);
    }
    std::unique_ptr<Client> client;
};

TEST_P(HttpClient, GetReadsTheBodyAndReusesOneConnection) {
    scripted_server srv([](Request& req, Response& resp, ISocketStream*) {
        return reply(resp, "hello " + std::string(req.target()));
    });
    for (int i = 0; i < 3; i++) {
        auto op = client->new_operation(Verb::GET, srv.url("/a?i=" + std::to_string(i)));
        DEFER(client->destroy_operation(op));
        ASSERT_EQ(0, op->call()) << strerror(errno);
        EXPECT_EQ(200, op->status_code);
        std::string want = "hello /a?i=" + std::to_string(i);
        EXPECT_EQ((int64_t)want.size(), op->resp.resource_size());
        EXPECT_EQ(want, body_of(op));
    }
    Client::OperationOnStack<> op(client.get(), Verb::GET, srv.url("/stack"));
    ASSERT_EQ(0, op.call());
    EXPECT_EQ("hello /stack", body_of(&op));
    EXPECT_EQ(1, srv.accepts);
    EXPECT_EQ(4, srv.requests);
}

TEST_P(HttpClient, AnUnreadBodyOrConnectionCloseEndsTheConnection) {
    scripted_server srv([](Request& req, Response& resp, ISocketStream*) {
        if (req.target() == "/close") resp.headers.insert("Connection", "close");
        return reply(resp, pattern(100));
    });
    {
        auto op = client->new_operation(Verb::GET, srv.url("/x"));
        DEFER(op->destroy());
        ASSERT_EQ(0, op->call());
        char buf[10];
        EXPECT_EQ(10, op->resp.read(buf, sizeof(buf)));  // 90 bytes left unread
    }
    EXPECT_EQ(pattern(100), get(srv.url("/x")));      // a new connection, kept
    EXPECT_EQ(pattern(100), get(srv.url("/close")));  // reuses it; the server closes it
    EXPECT_EQ(pattern(100), get(srv.url("/x")));      // a third one
    EXPECT_EQ(3, srv.accepts);
    EXPECT_EQ(4, srv.requests);
}

TEST_P(HttpClient, ReadsChunkedUntilCloseAndHeadResponses) {
    const std::string data = pattern(200000, 7);
    scripted_server srv([&](Request& req, Response& resp, ISocketStream* s) {
        if (req.target() == "/chunked") {  // no Content-Length: chunked to an HTTP/1.1 peer
            for (size_t off = 0, i = 1; off < data.size(); off += i * 1000, i++) {
                size_t n = std::min(i * 1000, data.size() - off);
                if (req.verb() != Verb::HEAD && resp.write(data.data() + off, n) != (ssize_t)n)
                    return -1;
            }
            return 0;
        }
        std::string raw = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + data;
        s->write(raw.data(), raw.size());
        return -1;  // the end of the body is the end of the connection
    });
    int status = 0;
    EXPECT_TRUE(data == get(srv.url("/chunked"), &status));
    EXPECT_EQ(200, status);
    auto op = client->new_operation(Verb::HEAD, srv.url("/chunked"));
    ASSERT_EQ(0, op->call());
    EXPECT_EQ(200, op->status_code);
    EXPECT_TRUE(op->resp.body_done());
    op->destroy();
    EXPECT_EQ(1, srv.accepts);  // chunked and HEAD leave the connection reusable
    EXPECT_TRUE(data == get(srv.url("/close")));
    EXPECT_TRUE(data == get(srv.url("/close")));
    EXPECT_EQ(2, srv.accepts);  // the first until-close body ended the kept connection
}

TEST_P(HttpClient, RetriesOnlyWhatIsSafeWhenAPooledConnectionDies) {
    // Each connection answers its first request and drops the second one
    // unanswered, as a server closing an idle connection at that moment.
    std::map<ISocketStream*, int> seen;
    std::string bodies;
    scripted_server srv([&](Request& req, Response& resp, ISocketStream* s) {
        bodies += read_all(req);
        if (++seen[s] == 2) {
            seen.erase(s);
            return -1;
        }
        return reply(resp, "ok");
    });
    EXPECT_EQ("ok", get(srv.url()));  // connection 1
    EXPECT_EQ("ok", get(srv.url()));  // dropped on 1, re-sent on 2
    EXPECT_EQ(2, srv.accepts);
    {
        auto op = client->new_operation(Verb::PUT, srv.url());  // idempotent: re-sent on 3
        DEFER(op->destroy());
        op->set_body("put");
        ASSERT_EQ(0, op->call()) << strerror(errno);
        EXPECT_EQ("ok", body_of(op));
    }
    EXPECT_EQ(3, srv.accepts);
    {
        auto op = client->new_operation(Verb::POST, srv.url());  // dropped on 3: not re-sent
        DEFER(op->destroy());
        op->set_body("post");
        EXPECT_EQ(-1, op->call());
        EXPECT_EQ(ECONNRESET, errno);
        EXPECT_EQ(-1, op->status_code);
    }
    EXPECT_EQ("ok", get(srv.url()));  // connection 4
    {
        auto op = client->new_operation(Verb::GET, srv.url());  // dropped, retry = 0
        DEFER(op->destroy());
        op->retry = 0;
        EXPECT_EQ(-1, op->call());
        EXPECT_EQ(ECONNRESET, errno);
    }
    EXPECT_EQ(4, srv.accepts);
    EXPECT_EQ("putputpost", bodies);
}

TEST_P(HttpClient, ATruncatedBodyDeliversWhatArrivedBeforeFailingWithEproto) {
    scripted_server srv([](Request&, Response&, ISocketStream* s) {
        std::string raw = "HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n0123456789";
        s->write(raw.data(), raw.size());
        return -1;  // closed: 10 bytes of a declared 1 GB
    });
    auto op = client->new_operation(Verb::GET, srv.url("/big"));
    DEFER(op->destroy());
    ASSERT_EQ(0, op->call()) << strerror(errno);
    std::string got;
    char buf[65536];
    ssize_t n;
    while ((n = op->resp.read(buf, sizeof(buf))) > 0) got.append(buf, n);
    EXPECT_EQ("0123456789", got);
    EXPECT_EQ(-1, n);
    EXPECT_EQ(EPROTO, errno);
    EXPECT_EQ(ParseError::Truncated, op->resp.parse_error());
    EXPECT_EQ(-1, op->resp.read(buf, sizeof(buf)));  // and it sticks
    EXPECT_EQ(EPROTO, errno);
}

TEST_P(HttpClient, DoesNotReuseAConnectionTheServerClosedWhileIdle) {
    int open = 0;
    scripted_server srv([&](Request&, Response& resp, ISocketStream*) {
        open++;
        reply(resp, "ok");
        resp.send();
        open--;
        return -1;  // closed after answering, without a Connection: close
    });
    EXPECT_EQ("ok", get(srv.url()));
    ASSERT_TRUE(wait_for([&] { return open == 0 && srv.requests == 1; }));
    thread_usleep(20 * 1000);  // the FIN arrives
    EXPECT_EQ("ok", get(srv.url()));
    EXPECT_EQ(2, srv.accepts);
    EXPECT_EQ(2, srv.requests);  // nothing was sent to the closed one
}

TEST_P(HttpClient, FollowsRedirectsWithinTheirLimit) {
    scripted_server other([](Request& req, Response& resp, ISocketStream*) {
        return reply(resp, "other " + std::string(req.target()));
    });
    int loops = 0;
    scripted_server srv([&](Request& req, Response& resp, ISocketStream*) {
        std::string t(req.target()), body = read_all(req);
        auto redirect = [&](int code, const std::string& to) {
            resp.headers.insert("Location", to);
            return reply(resp, "moved", code);
        };
        if (t == "/rel") return redirect(302, "target?x=1");
        if (t == "/dir/up") return redirect(301, "../target");
        if (t == "/abs") return redirect(307, other.url("/there"));
        if (t == "/see-other") return redirect(303, "/target");
        if (t == "/temp") return redirect(307, "/target");
        if (t == "/post-found") return redirect(302, "/target");
        if (t == "/loop") return loops++, redirect(302, "/loop");
        return reply(resp, std::string(verbstr[(int)req.verb()]) + " " + t + " " + body);
    });
    EXPECT_EQ("GET /target?x=1 ", get(srv.url("/rel")));
    EXPECT_EQ("GET /target ", get(srv.url("/dir/up")));
    EXPECT_EQ("other /there", get(srv.url("/abs")));
    auto post = [&](const std::string& path, IStream* stream = nullptr) {
        auto op = client->new_operation(Verb::POST, srv.url(path));
        DEFER(op->destroy());
        if (stream) {
            op->body_stream = stream;
            op->req.headers.content_length(4);
        } else {
            op->set_body("data");
        }
        if (op->call() < 0) return std::string("<call failed>");
        return std::to_string(op->status_code) + " " + body_of(op);
    };
    EXPECT_EQ("200 GET /target ", post("/see-other"));   // 303: GET, no body
    EXPECT_EQ("200 GET /target ", post("/post-found"));  // 302 after POST: GET too
    EXPECT_EQ("200 POST /target data", post("/temp"));   // 307: method and body kept
    string_stream once("data");
    EXPECT_EQ("307 moved", post("/temp", &once));  // a stream's body cannot be re-sent
    {
        auto op = client->new_operation(Verb::GET, srv.url("/loop"));
        DEFER(op->destroy());
        op->follow = 3;
        EXPECT_EQ(-1, op->call());
        EXPECT_EQ(ELOOP, errno);
        EXPECT_EQ(4, loops);
        op->follow = 0;  // a 3xx is then the answer
        ASSERT_EQ(0, op->call());
        EXPECT_EQ(302, op->status_code);
        EXPECT_EQ("/loop", op->resp.headers["Location"]);
    }
    // Redirect bodies were read off and the connection kept, up to the
    // ELOOP: its 3xx body stays unread for the caller, so the next call
    // needed a new connection.
    EXPECT_EQ(2, srv.accepts);
}

TEST_P(HttpClient, SendsBodiesFromABufferAStreamAndAWriter) {
    scripted_server srv([](Request& req, Response& resp, ISocketStream*) {
        std::string framing = req.headers.has("Content-Length") ? "length" : "chunked";
        std::string body = read_all(req);
        return reply(resp, framing + " " + std::to_string(body.size()) + " " +
                               (body == pattern(body.size(), 3) ? "intact" : "garbled"));
    });
    auto send = [&](std::function<void(Client::Operation*)> setup) {
        auto op = client->new_operation(Verb::PUT, srv.url("/up"));
        DEFER(op->destroy());
        setup(op);
        if (op->call() < 0) return std::string("<call failed>");
        return body_of(op);
    };
    const std::string data = pattern(300000, 3);
    EXPECT_EQ("length 300000 intact", send([&](Client::Operation* op) { op->set_body(data); }));
    string_stream s1(data), s2(data, 7777);
    EXPECT_EQ("length 300000 intact", send([&](Client::Operation* op) {
                  op->body_stream = &s1;
                  op->req.headers.content_length(data.size());
              }));
    EXPECT_EQ("chunked 300000 intact", send([&](Client::Operation* op) { op->body_stream = &s2; }));
    auto writer = [&](Request* req) -> ssize_t {
        ssize_t a = req->write(data.data(), 1000);
        ssize_t b = req->write(data.data() + 1000, data.size() - 1000);
        return a < 0 || b < 0 ? -1 : a + b;
    };
    EXPECT_EQ("chunked 300000 intact",
              send([&](Client::Operation* op) { op->body_writer = writer; }));
    EXPECT_EQ("length 0 intact", send([&](Client::Operation* op) { op->set_body("", 0); }));
    EXPECT_EQ(1, srv.accepts);
}

TEST_P(HttpClient, AnAnswerSentBeforeTheBodyWasTakenIsReturned) {
    // RFC 9112 9.5: the server answers without reading a 20 MB body and
    // closes (a reset, since the body is unread), as curl sees it.
    scripted_server srv([](Request& req, Response& resp, ISocketStream*) {
        if (req.target() == "/none") return -1;  // closes without an answer
        if (req.target() == "/413") {
            reply(resp, "too large", 413);
            (void)resp.send();
            return -1;
        }
        resp.headers.insert("Connection", "close");
        return reply(resp, "early");
    });
    const std::string big(20 << 20, 'x');
    {
        auto op = client->new_operation(Verb::POST, srv.url("/ok"));
        DEFER(op->destroy());
        op->set_body(big);
        ASSERT_EQ(0, op->call()) << strerror(errno);
        EXPECT_EQ(200, op->status_code);
        EXPECT_EQ("early", body_of(op));
        EXPECT_TRUE(op->body_errno == EPIPE || op->body_errno == ECONNRESET) << op->body_errno;
    }
    {
        auto op = client->new_operation(Verb::PUT, srv.url("/413"));  // chunked, by a writer
        DEFER(op->destroy());
        auto writer = [&](Request* req) -> ssize_t {
            for (size_t off = 0; off < big.size(); off += 65536)
                if (req->write(big.data() + off, 65536) < 0) return -1;
            return (ssize_t)big.size();
        };
        op->body_writer = writer;
        ASSERT_EQ(0, op->call()) << strerror(errno);
        EXPECT_EQ(413, op->status_code);
        EXPECT_EQ("too large", body_of(op));
        EXPECT_NE(0, op->body_errno);
    }
    {
        auto op = client->new_operation(Verb::POST, srv.url("/none"));
        DEFER(op->destroy());
        op->set_body(big);
        EXPECT_EQ(-1, op->call());
        EXPECT_TRUE(errno == EPIPE || errno == ECONNRESET) << errno;  // not EIO
        EXPECT_EQ(-1, op->status_code);
    }
    {  // a complete exchange afterwards: body_errno is cleared, the connection kept
        auto op = client->new_operation(Verb::POST, srv.url("/ok"));
        DEFER(op->destroy());
        op->set_body("small");
        ASSERT_EQ(0, op->call());
        EXPECT_EQ(0, op->body_errno);
    }
}

TEST_P(HttpClient, TimeoutBoundsTheCallAndTheBodyReadAfterIt) {
    scripted_server srv([](Request& req, Response& resp, ISocketStream* s) {
        if (req.target() == "/slow-body") {
            resp.headers.content_length(10);
            if (resp.write("12345", 5) != 5) return -1;
        }
        char c;
        s->recv(&c, 1);  // stalls until the client gives up
        return -1;
    });
    {
        auto op = client->new_operation(Verb::GET, srv.url("/stall"));
        DEFER(op->destroy());
        op->timeout = 200 * 1000;
        auto t0 = Clock::now();
        EXPECT_EQ(-1, op->call());
        EXPECT_EQ(ETIMEDOUT, errno);
        EXPECT_GE(us_since(t0), 190u * 1000);
        EXPECT_LT(us_since(t0), kLongUs);
    }
    {
        auto op = client->new_operation(Verb::GET, srv.url("/slow-body"));
        DEFER(op->destroy());
        op->timeout = 300 * 1000;
        ASSERT_EQ(0, op->call());
        char buf[10];
        auto t0 = Clock::now();
        EXPECT_EQ(5, op->resp.read(buf, sizeof(buf)));  // what came, then the timeout
        EXPECT_EQ(-1, op->resp.read(buf, sizeof(buf)));
        EXPECT_EQ(ETIMEDOUT, errno);
        EXPECT_LT(us_since(t0), kLongUs);
    }
    client->timeout_ms(200);  // the client's default
    int status = 0;
    EXPECT_EQ("<call failed " + std::to_string(ETIMEDOUT) + ">", get(srv.url("/stall"), &status));
}

TEST_P(HttpClient, OtherVcpusCallOnConnectionsOfTheirOwn) {
    scripted_server srv([](Request& req, Response& resp, ISocketStream*) {
        return reply(resp, "from " + std::string(req.target()));
    });
    EXPECT_EQ("from /home", get(srv.url("/home")));  // this vCPU owns the pool
    std::atomic<int> done{0};
    std::string got[2];
    auto vcpu = [&](int i) {
        if (photon::init(GetParam(), photon::INIT_IO_NONE) == 0) {
            for (int k = 0; k < 2; k++) {
                auto op = client->new_operation(Verb::GET, srv.url("/v" + std::to_string(i)));
                if (op->call() == 0) got[i] += body_of(op) + ";";
                op->destroy();
            }
            photon::fini();
        }
        done++;
    };
    std::thread a(vcpu, 0), b(vcpu, 1);
    EXPECT_TRUE(wait_for([&] { return done == 2; }, 20000));  // serving them meanwhile
    a.join();
    b.join();
    EXPECT_EQ("from /v0;from /v0;", got[0]);
    EXPECT_EQ("from /v1;from /v1;", got[1]);
    EXPECT_EQ("from /home", get(srv.url("/home")));
    EXPECT_EQ(5, srv.accepts);  // 1 pooled here + 4 closed after use there
}

TEST_P(HttpClient, FailsWithErrnoOnBadUrlsAndRefusedConnections) {
    auto op = client->new_operation(Verb::GET, "ftp://127.0.0.1/x");
    EXPECT_EQ(-1, op->call());
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, op->set_url("http://a b/"));
    EXPECT_EQ(0, op->set_url("http://127.0.0.1:" + std::to_string(free_loopback_port()) + "/"));
    EXPECT_EQ(-1, op->call());
    EXPECT_EQ(ECONNREFUSED, errno);
    op->destroy();
    auto bare = client->new_operation();
    EXPECT_EQ(-1, bare->call());  // no URL
    EXPECT_EQ(EINVAL, errno);
    bare->destroy();
}

TEST_P(HttpClient, TalksToAUnixSocketWhateverTheUrlSays) {
    temp_dir tmp;
    std::string path = tmp.path("http.sock");
    auto uds = new_uds_server(true);
    ASSERT_EQ(0, uds->bind(path.c_str()));
    ASSERT_EQ(0, uds->listen());
    scripted_server srv(uds, [](Request& req, Response& resp, ISocketStream*) {
        return reply(resp, std::string(req.host()) + std::string(req.target()));
    });
    {
        Client::OperationOnStack<> op(client.get(), Verb::GET, "http://localhost/simple");
        ASSERT_EQ(0, op.call(path)) << strerror(errno);
        EXPECT_EQ(200, op.status_code);
        EXPECT_EQ("localhost/simple", body_of(&op));
    }
    Client::OperationOnStack<> op2(client.get(), Verb::GET, "https://www.wrong.hostname/x");
    ASSERT_EQ(0, op2.call(path));  // plain HTTP on the socket
    EXPECT_EQ("www.wrong.hostname/x", body_of(&op2));
    EXPECT_EQ(1, srv.accepts);  // the first operation gave it back when it went
}

TEST_P(HttpClient, SendsUserAgentCommonHeadersAndCookies) {
    std::unique_ptr<ICookieJar> jar(new_simple_cookie_jar());
    std::unique_ptr<Client> c(new_http_client(jar.get()));
    c->set_user_agent("TEST_UA");
    c->common_headers()->insert("X-Common", "all");
    scripted_server srv([](Request& req, Response& resp, ISocketStream*) {
        if (req.target() == "/login") {
            resp.headers.insert("Set-Cookie", "sid=42; Path=/; HttpOnly");
            resp.headers.insert("Set-Cookie", "theme=dark", 1);
        } else if (req.target() == "/logout") {
            resp.headers.insert("Set-Cookie", "sid=gone; Max-Age=0");
        }
        return reply(resp, std::string(req.headers["User-Agent"]) + "|" +
                               std::string(req.headers["X-Common"]) + "|" +
                               std::string(req.headers["Cookie"]));
    });
    EXPECT_EQ("TEST_UA|all|", get(srv.url("/login"), nullptr, c.get()));
    EXPECT_EQ("TEST_UA|all|sid=42; theme=dark", get(srv.url("/check"), nullptr, c.get()));
    auto op = c->new_operation(Verb::GET, srv.url("/own"));
    op->req.headers.insert("X-Common", "mine");
    op->req.headers.insert("User-Agent", "other");
    ASSERT_EQ(0, op->call());
    EXPECT_EQ("other|mine|sid=42; theme=dark", body_of(op));
    op->destroy();
    EXPECT_EQ("TEST_UA|all|sid=42; theme=dark", get(srv.url("/logout"), nullptr, c.get()));
    EXPECT_EQ("TEST_UA|all|theme=dark", get(srv.url("/check"), nullptr, c.get()));
    EXPECT_EQ("PhotonLibOS_HTTP|", get(srv.url("/check")).substr(0, 17));  // no jar, default UA
}

// ---- real servers ---------------------------------------------------------------

TEST_P(HttpClient, FetchesFilesFromPythonHttpServer) {
    if (!have_tool("python3")) GTEST_SKIP() << "python3 is not installed";
    temp_dir tmp;
    const std::string data = pattern(300000, 5);
    tmp.write("www/file.bin", data);
    {
        child_server py(python_http_server(tmp, tmp.path("www"), "HTTP/1.1"), tmp.path("py11"));
        ASSERT_NE(0, py.port()) << py.output();
        std::string base = "http://127.0.0.1:" + std::to_string(py.port());
        for (int i = 0; i < 3; i++) EXPECT_TRUE(data == get(base + "/file.bin"));
        int status = 0;
        get(base + "/missing", &status);
        EXPECT_EQ(404, status);
        EXPECT_EQ(1, count_lines(py.output(), "conn")) << py.output();
    }
    {
        child_server py(python_http_server(tmp, tmp.path("www"), "HTTP/1.0"), tmp.path("py10"));
        ASSERT_NE(0, py.port()) << py.output();
        std::string base = "http://127.0.0.1:" + std::to_string(py.port());
        for (int i = 0; i < 2; i++) EXPECT_TRUE(data == get(base + "/file.bin"));
        EXPECT_EQ(2, count_lines(py.output(), "conn"));  // HTTP/1.0: one per request
    }
    {
        child_server py(python_http_server(tmp, tmp.path("www"), "HTTP/1.1", 0.2),
                        tmp.path("pyidle"));
        ASSERT_NE(0, py.port()) << py.output();
        std::string base = "http://127.0.0.1:" + std::to_string(py.port());
        EXPECT_TRUE(data == get(base + "/file.bin"));
        thread_usleep(600 * 1000);  // the server closes the idle connection
        EXPECT_TRUE(data == get(base + "/file.bin"));
        EXPECT_EQ(2, count_lines(py.output(), "conn"));
    }
}

TEST_P(HttpClient, KeepsOneConnectionToNginx) {
    if (!have_tool("nginx")) GTEST_SKIP() << "nginx is not installed";
    temp_dir tmp;
    nginx_server ngx(tmp, "location = /moved { return 301 /file.txt; }");
    ASSERT_TRUE(ngx.ok()) << ngx.error_log();
    const std::string data = pattern(100000, 9);
    tmp.write("www/file.txt", data);
    for (int i = 0; i < 5; i++) EXPECT_TRUE(data == get(ngx.url("/file.txt")));
    EXPECT_TRUE(data == get(ngx.url("/moved")));
    auto head = client->new_operation(Verb::HEAD, ngx.url("/file.txt"));
    ASSERT_EQ(0, head->call());
    EXPECT_EQ((int64_t)data.size(), head->resp.resource_size());
    head->destroy();
    int status = 0;
    get(ngx.url("/missing"), &status);
    EXPECT_EQ(404, status);
    ASSERT_TRUE(wait_for([&] { return ngx.connections("/missing").size() == 1; }));
    EXPECT_EQ(1u, ngx.connections(" ").size()) << ngx.access_log();
    EXPECT_EQ(9, count_lines(ngx.access_log(), "HTTP/1.1")) << ngx.access_log();
}

class HttpsClient : public HttpClient {
protected:
    void SetUp() override {
        HttpClient::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        PHOTON_TEST_MAKE_TLS_PAIR(tls);
        tls_client.reset(new_http_client(nullptr, tls.client.get()));
    }
    void TearDown() override {
        tls_client.reset();
        HttpClient::TearDown();  // contexts go after fini: server coroutines may use them
    }
    static test_pki& pki() { return test_pki::get(); }
    tls_pair tls;
    std::unique_ptr<Client> tls_client;
};

TEST_P(HttpsClient, VerifiesTheServerAndKeepsTheConnection) {
    scripted_server srv(new_tls_server(tls.server.get(), scripted_server::listening_tcp(), true),
                        [](Request& req, Response& resp, ISocketStream*) {
                            return reply(resp, "tls " + std::string(req.target()));
                        });
    std::string port = std::to_string(srv.port());
    for (int i = 0; i < 3; i++)
        EXPECT_EQ("tls /x", get("https://localhost:" + port + "/x", nullptr, tls_client.get()));
    EXPECT_EQ("tls /ip", get("https://127.0.0.1:" + port + "/ip", nullptr, tls_client.get()));
    EXPECT_EQ(2, srv.accepts);  // one per host name
    // The default context trusts the system CAs only.
    EXPECT_EQ("<call failed " + std::to_string(EACCES) + ">",
              get("https://localhost:" + port + "/x"));
}

TEST_P(HttpsClient, ReadsFromOpensslSServer) {
    temp_dir tmp;
    const std::string data = pattern(100000, 11);
    tmp.write("file.txt", data);
    uint16_t port = free_loopback_port();
    child_process srv({"sh", "-c",
                       "cd " + tmp.path() + " && exec openssl s_server -accept 127.0.0.1:" +
                           std::to_string(port) + " -cert " + pki().path("srv.pem") + " -key " +
                           pki().path("srv.key") + " -WWW"});
    ASSERT_TRUE(srv.started());
    ASSERT_TRUE(wait_until_listening(port));
    std::string got =
        get("https://localhost:" + std::to_string(port) + "/file.txt", nullptr, tls_client.get());
    EXPECT_TRUE(data == got) << got.substr(0, 100);  // HTTP/1.0, until close
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpClient);
PHOTON_INSTANTIATE_ENGINE_TESTS(HttpsClient);

}  // namespace
