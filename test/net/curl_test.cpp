// libcurl on photon (<photon/net/curl.h>), under both event engines, against
// a small HTTP/1.1 server running on the same vCPU (so a transfer that
// blocked the vCPU could never be answered) and against python3's
// http.server: verbs, bodies, headers, many transfers at once, timeouts,
// refused connections, cancellation, fini with transfers in progress, two
// vCPUs, and repeated init / fini.
#if __has_include(<curl/curl.h>)

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <photon/common/stream.h>
#include <photon/common/utility.h>
#include <photon/net/curl.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/thread/thread11.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/tls_pair.h"
#include "net_test_util.h"
#include "tls_test_util.h"
#include "../util/temp_dir.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

// ---- a small HTTP/1.1 server ------------------------------------------------
//
//   GET  /hello           "hello, photon"
//   GET  /big?n=N         pattern(N)
//   GET  /delay?ms=N      "delayed" after N ms
//   GET  /headers         "x-photon-test=<v>;user-agent=<v>"; header X-Reply: pong
//   GET  /status/N        status N, empty body
//   GET  /redirect        302 to /hello
//   POST|PUT /echo        the request body; header X-Method: <verb>
//   DELETE <path>         "deleted <path>"
// HEAD answers as GET without the body. Keep-alive unless close_after.
class mini_http {
public:
    int handlers = 0;  // connections being served
    int requests = 0;
    bool close_after = false;
    uint16_t port = 0;

    // tls: serve HTTPS with it (not owned).
    int start(TLSContext* tls = nullptr) {
        srv_.reset(tls ? new_tls_server(tls, new_tcp_socket_server(), true)
                       : new_tcp_socket_server());
        if (!srv_ || srv_->bind_v4localhost(0) < 0 || srv_->listen() < 0) return -1;
        port = srv_->getsockname().port;
        srv_->set_handler({this, &mini_http::serve});
        return srv_->start_loop(false);
    }
    void stop() { srv_.reset(); }
    std::string url(const std::string& path, const char* scheme = "http") const {
        return std::string(scheme) + "://127.0.0.1:" + std::to_string(port) + path;
    }

private:
    std::unique_ptr<ISocketServer> srv_;

    struct request {
        std::string verb, path, query, body;
        std::map<std::string, std::string> headers;  // lower-case names
    };

    static bool fill(ISocketStream* s, std::string& buf) {
        char tmp[16384];
        ssize_t n = s->recv(tmp, sizeof(tmp));
        if (n <= 0) return false;
        buf.append(tmp, n);
        return true;
    }
    // The next CRLF-terminated line of buf, reading more as needed.
    static bool line(ISocketStream* s, std::string& buf, std::string* out) {
        size_t e;
        while ((e = buf.find("\r\n")) == std::string::npos)
            if (!fill(s, buf)) return false;
        *out = buf.substr(0, e);
        buf.erase(0, e + 2);
        return true;
    }
    static bool take(ISocketStream* s, std::string& buf, size_t n, std::string* out) {
        while (buf.size() < n)
            if (!fill(s, buf)) return false;
        out->append(buf, 0, n);
        buf.erase(0, n);
        return true;
    }

    bool read_request(ISocketStream* s, std::string& buf, request* r) {
        std::string l;
        if (!line(s, buf, &l)) return false;
        auto sp1 = l.find(' '), sp2 = l.rfind(' ');
        if (sp1 == std::string::npos || sp2 == sp1) return false;
        r->verb = l.substr(0, sp1);
        std::string target = l.substr(sp1 + 1, sp2 - sp1 - 1);
        auto q = target.find('?');
        r->path = target.substr(0, q);
        if (q != std::string::npos) r->query = target.substr(q + 1);
        while (line(s, buf, &l) && !l.empty()) {
            auto colon = l.find(':');
            if (colon == std::string::npos) return false;
            std::string k = l.substr(0, colon), v = l.substr(colon + 1);
            for (auto& c : k) c = (char)tolower((unsigned char)c);
            v.erase(0, v.find_first_not_of(' '));
            r->headers[k] = v;
        }
        if (r->headers["expect"] == "100-continue") {
            const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
            if (s->write(cont, sizeof(cont) - 1) < 0) return false;
        }
        if (r->headers["transfer-encoding"] == "chunked") {
            while (true) {
                if (!line(s, buf, &l)) return false;
                size_t n = strtoul(l.c_str(), nullptr, 16);
                if (n == 0) {
                    while (line(s, buf, &l) && !l.empty()) {
                    }  // trailers
                    return true;
                }
                std::string crlf;
                if (!take(s, buf, n, &r->body) || !take(s, buf, 2, &crlf)) return false;
            }
        }
        size_t n = strtoul(r->headers["content-length"].c_str(), nullptr, 10);
        return take(s, buf, n, &r->body);
    }

    static int query_int(const std::string& q, const char* key) {
        auto p = q.find(std::string(key) + "=");
        return p == std::string::npos ? 0 : atoi(q.c_str() + p + strlen(key) + 1);
    }

    int serve(ISocketStream* s) {
        handlers++;
        DEFER(handlers--);
        std::string buf;
        request r;
        while (read_request(s, buf, &r)) {
            requests++;
            int status = 200;
            std::string body, extra;
            if (r.verb == "DELETE") {
                body = "deleted " + r.path;
            } else if (r.path == "/hello") {
                body = "hello, photon";
            } else if (r.path == "/big") {
                body = pattern(query_int(r.query, "n"));
            } else if (r.path == "/delay") {
                thread_usleep((uint64_t)query_int(r.query, "ms") * 1000);
                body = "delayed";
            } else if (r.path == "/headers") {
                body = "x-photon-test=" + r.headers["x-photon-test"] +
                       ";user-agent=" + r.headers["user-agent"];
                extra = "X-Reply: pong\r\n";
            } else if (r.path.rfind("/status/", 0) == 0) {
                status = atoi(r.path.c_str() + 8);
            } else if (r.path == "/redirect") {
                status = 302;
                extra = "Location: /hello\r\n";
            } else if (r.path == "/echo") {
                body = r.body;
                extra = "X-Method: " + r.verb + "\r\n";
            } else {
                status = 404;
            }
            std::string out = "HTTP/1.1 " + std::to_string(status) +
                              " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
                              extra + (close_after ? "Connection: close\r\n" : "") + "\r\n";
            if (r.verb != "HEAD") out += body;
            if (s->write(out.data(), out.size()) != (ssize_t)out.size() || close_after) break;
            r = request();
        }
        return 0;
    }
};

// A TCP socket on 127.0.0.1 that listens but never accepts (the kernel
// completes handshakes; nobody answers), or is bound without listening
// (connections are refused).
class raw_socket {
public:
    explicit raw_socket(bool listening) {
        fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        sockaddr_in a = {};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(a);
        if (fd_ < 0 || bind(fd_, (sockaddr*)&a, sizeof(a)) < 0 ||
            (listening && listen(fd_, 128) < 0) || ::getsockname(fd_, (sockaddr*)&a, &len) < 0)
            return;
        port = ntohs(a.sin_port);
    }
    ~raw_socket() {
        for (auto& c : conns_) close(c.fd);
        if (fd_ >= 0) close(fd_);
    }
    std::string url(const std::string& path) const {
        return "http://127.0.0.1:" + std::to_string(port) + path;
    }
    // Listening: accepts what is queued and reads what the clients sent,
    // never answering; how many whole request heads have arrived. Once a
    // client's has, that client can only be waiting for the reply. Does not
    // block: poll it with wait_for().
    int requests_received() {
        for (int c; (c = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0;)
            conns_.push_back({c, {}});
        int n = 0;
        for (auto& c : conns_) {
            char buf[4096];
            ssize_t r;
            while ((r = ::read(c.fd, buf, sizeof(buf))) > 0) c.in.append(buf, (size_t)r);
            if (c.in.find("\r\n\r\n") != std::string::npos) n++;
        }
        return n;
    }
    uint16_t port = 0;

private:
    struct conn {
        int fd;
        std::string in;
    };
    int fd_ = -1;
    std::vector<conn> conns_;
};

// An IStream over a string: writes append, reads consume from `pos`.
struct string_stream : public IStream {
    std::string data;
    size_t pos = 0;
    int close() override { return 0; }
    ssize_t read(void* buf, size_t n) override {
        n = std::min(n, data.size() - pos);
        memcpy(buf, data.data() + pos, n);
        pos += n;
        return n;
    }
    ssize_t readv(const struct iovec* iov, int cnt) override {
        ssize_t total = 0;
        for (int i = 0; i < cnt; i++) total += read(iov[i].iov_base, iov[i].iov_len);
        return total;
    }
    ssize_t write(const void* buf, size_t n) override {
        data.append((const char*)buf, n);
        return n;
    }
    ssize_t writev(const struct iovec* iov, int cnt) override {
        ssize_t total = 0;
        for (int i = 0; i < cnt; i++) total += write(iov[i].iov_base, iov[i].iov_len);
        return total;
    }
};

// A reader without size(): uploads are chunked.
struct sizeless_reader {
    BufReader r;
    size_t read(void* p, size_t n) { return r.read(p, n); }
};

constexpr uint64_t kTransferUs = 20 * 1000 * 1000;  // "never" for a transfer that works

// Results of a transfer run in a coroutine.
struct outcome {
    long code = 0;
    int err = 0;
    CURLcode curl = CURLE_OK;
    std::string body;
};

outcome fetch(const std::string& url, uint64_t timeout = kTransferUs) {
    cURL c;
    StringWriter w;
    outcome o;
    o.code = c.GET(url.c_str(), &w, timeout);
    o.err = errno;
    o.curl = c.error_code();
    o.body = std::move(w.string);
    return o;
}

class Curl : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
#if !PHOTON_HAVE_CURL
        GTEST_SKIP() << "built without libcurl";
#endif
        ASSERT_EQ(0, libcurl_init());
        ASSERT_EQ(0, server.start());
    }
    void TearDown() override {
        if (CURRENT) {
            libcurl_fini();  // closes curl's cached connections: the handlers end
            EXPECT_TRUE(wait_for([&] { return server.handlers == 0; }));
            server.stop();
        }
        EngineTest::TearDown();
    }
    std::string url(const std::string& path) const { return server.url(path); }

    mini_http server;
};

TEST_P(Curl, GetReturnsTheBody) {
    cURL c;
    StringWriter w;
    EXPECT_EQ(200, c.GET(url("/hello").c_str(), &w, kTransferUs));
    EXPECT_EQ("hello, photon", w.string);
    EXPECT_EQ(CURLE_OK, c.error_code());

    StringWriter big;
    EXPECT_EQ(200, c.GET(url("/big?n=3000000").c_str(), &big, kTransferUs));
    EXPECT_EQ(pattern(3000000), big.string);

    BufferWriter<8> small;  // too small: the transfer fails, with what fit kept
    EXPECT_EQ(-1, c.GET(url("/hello").c_str(), &small, kTransferUs));
    EXPECT_EQ(CURLE_WRITE_ERROR, c.error_code());
    EXPECT_EQ(8u, small.size());
    EXPECT_EQ(0, memcmp(small.buffer, "hello, p", 8));

    EXPECT_EQ(200, c.GET(url("/hello").c_str(), kTransferUs));  // body discarded
    EXPECT_EQ(13, (long)c.getinfo<curl_off_t>(CURLINFO_SIZE_DOWNLOAD_T));
}

TEST_P(Curl, GetWritesIntoAnIStream) {
    cURL c;
    string_stream s;
    EXPECT_EQ(200, c.GET(url("/big?n=100000").c_str(), (IStream*)&s, kTransferUs));
    EXPECT_EQ(pattern(100000), s.data);
}

TEST_P(Curl, PostBodiesAreEchoed) {
    cURL c;
    StringWriter w;
    EXPECT_EQ(200, c.POST(url("/echo").c_str(), "a=1&b=two", &w, kTransferUs));
    EXPECT_EQ("a=1&b=two", w.string);

    std::string big = pattern(200000);  // Content-Length, Expect: 100-continue
    BufReader r(big.data(), big.size());
    StringWriter w2;
    EXPECT_EQ(200, c.POST(url("/echo").c_str(), &r, &w2, kTransferUs));
    EXPECT_EQ(big, w2.string);

    sizeless_reader chunked{BufReader(big.data(), 5000)};  // chunked
    StringWriter w3;
    EXPECT_EQ(200, c.POST(url("/echo").c_str(), &chunked, &w3, kTransferUs));
    EXPECT_EQ(big.substr(0, 5000), w3.string);

    string_stream in;  // an IStream as the reader
    in.data = "from a stream";
    StringWriter w4;
    EXPECT_EQ(200, c.POST(url("/echo").c_str(), (IStream*)&in, &w4, kTransferUs));
    EXPECT_EQ("from a stream", w4.string);

    // The post fields of the first call are gone: an empty body now.
    StringWriter w5;
    EXPECT_EQ(200, c.POST(url("/echo").c_str(), &w5, kTransferUs));
    EXPECT_EQ("", w5.string);
}

TEST_P(Curl, PutUploadsAndDeleteAnswers) {
    cURL c;
    HeaderMap h;
    c.set_header_container(&h);
    std::string data = pattern(70000, 7);
    BufReader r(data.data(), data.size());
    StringWriter w;
    EXPECT_EQ(200, c.PUT(url("/echo").c_str(), &r, &w, kTransferUs));
    EXPECT_EQ(data, w.string);
    EXPECT_EQ("PUT", h["x-method"]);

    StringWriter d;
    EXPECT_EQ(200, c.DELETE(url("/thing").c_str(), &d, kTransferUs));
    EXPECT_EQ("deleted /thing", d.string);

    // DELETE's custom verb does not stick to the next call.
    StringWriter g;
    EXPECT_EQ(200, c.GET(url("/hello").c_str(), &g, kTransferUs));
    EXPECT_EQ("hello, photon", g.string);
}

TEST_P(Curl, HeadHasHeadersAndNoBody) {
    cURL c;
    HeaderMap h;
    StringWriter w;
    c.set_header_container(&h);
    EXPECT_EQ(200, c.HEAD(url("/hello").c_str(), &w, kTransferUs));
    EXPECT_EQ("", w.string);
    uint64_t len = 0;
    EXPECT_EQ(0, h.try_get("Content-Length", len));
    EXPECT_EQ(13u, len);
    EXPECT_TRUE(h.exists({"content-length"}));
    EXPECT_FALSE(h.exists({"content-length", "x-reply"}));

    // A GET after HEAD has its body again.
    StringWriter g;
    EXPECT_EQ(200, c.GET(url("/hello").c_str(), &g, kTransferUs));
    EXPECT_EQ("hello, photon", g.string);
}

TEST_P(Curl, HeadersAreSentAndReceived) {
    cURL c;
    HeaderMap h;
    StringWriter w;
    c.append_header("X-Photon-Test", "ping").set_user_agent("photon-test/1");
    c.set_header_container(&h);
    EXPECT_EQ(200, c.GET(url("/headers").c_str(), &w, kTransferUs));
    EXPECT_EQ("x-photon-test=ping;user-agent=photon-test/1", w.string);
    EXPECT_EQ("pong", h["x-reply"]);
    char reply[16];
    EXPECT_EQ(0, h.try_get("X-Reply", reply));
    EXPECT_STREQ("pong", reply);
    EXPECT_EQ(-1, h.try_get("x-absent", reply));

    c.clear_header();
    StringWriter w2;
    EXPECT_EQ(200, c.GET(url("/headers").c_str(), &w2, kTransferUs));
    EXPECT_EQ("x-photon-test=;user-agent=photon-test/1", w2.string);
}

TEST_P(Curl, StatusCodesAndRedirects) {
    cURL c;
    EXPECT_EQ(404, c.GET(url("/status/404").c_str(), kTransferUs));
    EXPECT_EQ(CURLE_OK, c.error_code());
    EXPECT_EQ(302, c.GET(url("/redirect").c_str(), kTransferUs));
    StringWriter w;
    c.set_redirect(3);
    EXPECT_EQ(200, c.GET(url("/redirect").c_str(), &w, kTransferUs));
    EXPECT_EQ("hello, photon", w.string);
}

TEST_P(Curl, AFailedSetoptFailsOnlyTheNextTransfer) {
    cURL c;
    c.setopt((CURLoption)(CURLOPTTYPE_LONG + 9999), 1L);  // no such option
    EXPECT_EQ(-1, c.GET(url("/hello").c_str(), kTransferUs));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_NE(CURLE_OK, c.error_code());
    EXPECT_EQ(0, server.requests);  // it never ran
    EXPECT_EQ(200, c.GET(url("/hello").c_str(), kTransferUs));
}

TEST_P(Curl, HundredConcurrentTransfersLeaveTheVcpuFree) {
    ASSERT_EQ(0, libcurl_set_maxconnects(0));  // no cap: all 100 at once
    constexpr int kN = 100;
    std::vector<outcome> results(kN);
    std::vector<task> tasks;
    bool stop = false;
    int ticks = 0;
    auto ticker = spawn([&] {
        while (!stop) {
            thread_usleep(5000);
            ticks++;
        }
    });
    auto t0 = Clock::now();
    for (int i = 0; i < kN; i++)
        tasks.push_back(spawn([&, i] { results[i] = fetch(url("/delay?ms=200")); }));
    for (auto& t : tasks) t.join();
    double ms = ms_since(t0);
    stop = true;
    ticker.join();
    for (auto& r : results) {
        EXPECT_EQ(200, r.code) << "CURLcode " << r.curl;
        EXPECT_EQ("delayed", r.body);
    }
    EXPECT_EQ(kN, server.requests);
    // Each request waited 200 ms in the server: the ticker ran meanwhile,
    // and the transfers overlapped (one after another would take 20 s).
    EXPECT_GE(ticks, 10);
    EXPECT_LT(ms, 10000.0);
}

TEST_P(Curl, CallbacksThatSleepDoNotBreakOtherTransfers) {
    // Writers sleep (in the driver): meanwhile other coroutines add and
    // remove handles, which must wait for the multi handle, not fail.
    struct slow_writer {
        std::string s;
        size_t write(const void* p, size_t n) {
            thread_usleep(1000);
            s.append((const char*)p, n);
            return n;
        }
    };
    constexpr int kN = 8;
    std::vector<std::string> got(kN);
    std::vector<long> codes(kN);
    std::vector<task> tasks;
    for (int i = 0; i < kN; i++)
        tasks.push_back(spawn([&, i] {
            cURL c;
            slow_writer w;
            codes[i] = c.GET(url("/big?n=300000").c_str(), &w, kTransferUs);
            got[i] = std::move(w.s);
        }));
    for (auto& t : tasks) t.join();
    for (int i = 0; i < kN; i++) {
        EXPECT_EQ(200, codes[i]);
        EXPECT_EQ(pattern(300000), got[i]);
    }
}

TEST_P(Curl, ATransferFromACallbackFailsInsteadOfDeadlocking) {
    struct nesting_writer {
        std::string u;
        long inner = 0;
        int err = 0;
        size_t write(const void*, size_t n) {
            cURL c;
            inner = c.GET(u.c_str(), kTransferUs);
            err = errno;
            return n;
        }
    } w{url("/hello")};
    cURL c;
    EXPECT_EQ(200, c.GET(url("/hello").c_str(), &w, kTransferUs));
    EXPECT_EQ(-1, w.inner);
    EXPECT_EQ(EDEADLK, w.err);
}

TEST_P(Curl, TimesOutAgainstASilentServer) {
    raw_socket silent(true);
    ASSERT_NE(0, silent.port);
    cURL c;
    auto t0 = Clock::now();
    EXPECT_EQ(-1, c.GET(silent.url("/").c_str(), 300 * 1000));
    double ms = ms_since(t0);
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(CURLE_OPERATION_TIMEDOUT, c.error_code());
    EXPECT_STRNE("", c.error_message());
    EXPECT_GE(ms, 290.0);
    EXPECT_LT(ms, 10000.0);

    // curl's own timer (CURLOPT_TIMEOUT_MS) runs on photon too.
    c.setopt(CURLOPT_TIMEOUT_MS, 200L);
    t0 = Clock::now();
    EXPECT_EQ(-1, c.GET(silent.url("/").c_str()));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(CURLE_OPERATION_TIMEDOUT, c.error_code());
    EXPECT_GE(ms_since(t0), 190.0);
    c.setopt(CURLOPT_TIMEOUT_MS, 0L);

    // The handle left the multi handle cleanly: it works again.
    StringWriter w;
    EXPECT_EQ(200, c.GET(url("/hello").c_str(), &w, kTransferUs));
    EXPECT_EQ("hello, photon", w.string);
}

TEST_P(Curl, ConnectionRefused) {
    raw_socket closed(false);
    ASSERT_NE(0, closed.port);
    cURL c;
    EXPECT_EQ(-1, c.GET(closed.url("/").c_str(), kTransferUs));
    EXPECT_EQ(ECONNREFUSED, errno);
    EXPECT_EQ(CURLE_COULDNT_CONNECT, c.error_code());
    EXPECT_EQ(-1, c.get_response_code());
}

TEST_P(Curl, InterruptCancelsATransfer) {
    raw_socket silent(true);
    outcome o;
    auto t = spawn([&] { o = fetch(silent.url("/")); });
    // The request arrived and the caller parked: it waits for the reply now.
    ASSERT_TRUE(wait_for([&] { return silent.requests_received() == 1; }, 10000));
    ASSERT_TRUE(until_sleeping(t.th));
    thread_interrupt(t.th, ECANCELED);
    t.join();
    EXPECT_EQ(-1, o.code);
    EXPECT_EQ(ECANCELED, o.err);
    EXPECT_EQ(CURLE_ABORTED_BY_CALLBACK, o.curl);
    EXPECT_EQ("hello, photon", fetch(url("/hello")).body);
}

TEST_P(Curl, FiniEndsTransfersInProgress) {
    raw_socket silent(true);
    std::vector<outcome> results(5);
    std::vector<task> tasks;
    for (auto& r : results) tasks.push_back(spawn([&] { r = fetch(silent.url("/")); }));
    ASSERT_TRUE(wait_for([&] { return silent.requests_received() == 5; }, 10000));
    for (auto& t : tasks) ASSERT_TRUE(until_sleeping(t.th));
    auto t0 = Clock::now();
    libcurl_fini();
    for (auto& t : tasks) t.join();
    EXPECT_LT(ms_since(t0), 5000.0);
    for (auto& r : results) {
        EXPECT_EQ(-1, r.code);
        EXPECT_EQ(ESHUTDOWN, r.err);
        EXPECT_EQ(CURLE_ABORTED_BY_CALLBACK, r.curl);
    }
    // Not initialized now: transfers fail at once.
    outcome o = fetch(url("/hello"));
    EXPECT_EQ(-1, o.code);
    EXPECT_EQ(ENOSYS, o.err);
    EXPECT_EQ(CURLE_FAILED_INIT, o.curl);
    EXPECT_EQ(-1, libcurl_set_maxconnects(4));
    libcurl_fini();  // again: nothing to do
    ASSERT_EQ(0, libcurl_init());
    EXPECT_EQ("hello, photon", fetch(url("/hello")).body);
}

TEST_P(Curl, InitAndFiniRepeated) {
    for (int i = 0; i < 20; i++) {
        libcurl_fini();
        ASSERT_EQ(0, libcurl_init());
        ASSERT_EQ(0, libcurl_init());  // idempotent
        EXPECT_EQ("hello, photon", fetch(url("/hello")).body) << i;
    }
}

// A fresh vCPU on its own OS thread: photon::init(INIT_IO_LIBCURL) sets up
// libcurl and photon::fini() ends it.
TEST_P(Curl, PhotonInitAndFiniRunLibcurlRepeatedly) {
    uint64_t engine = GetParam();
    int ok = 0;
    std::thread th([&] {
        for (int i = 0; i < 10; i++) {
            if (photon::init(engine, INIT_IO_LIBCURL) != 0) return;
            mini_http srv;
            srv.close_after = true;  // no connection outlives its request
            if (srv.start() == 0 && fetch(srv.url("/hello")).body == "hello, photon") ok++;
            wait_for([&] { return srv.handlers == 0; });
            srv.stop();
            if (photon::fini() != 0) return;
        }
    });
    th.join();
    EXPECT_EQ(10, ok);
}

TEST_P(Curl, PhotonFiniEndsTransfersInProgress) {
    uint64_t engine = GetParam();
    std::vector<outcome> results(3);
    int fini_ret = -2;
    bool parked = false;
    std::thread th([&] {
        if (photon::init(engine, INIT_IO_DEFAULT) != 0) return;
        raw_socket silent(true);
        std::vector<photon::thread*> ths;
        for (auto& r : results) ths.push_back(thread_create11([&] { r = fetch(silent.url("/")); }));
        // All three wait for their replies: fini meets them in the transfer.
        parked = wait_for([&] { return silent.requests_received() == 3; }, 10000);
        for (auto th : ths) parked = parked && until_sleeping(th);
        fini_ret = photon::fini();  // else it would wait out their timeout
    });
    th.join();
    EXPECT_TRUE(parked);
    EXPECT_EQ(0, fini_ret);
    for (auto& r : results) {
        EXPECT_EQ(-1, r.code);
        EXPECT_EQ(ESHUTDOWN, r.err);
    }
}

// Two vCPUs, each with a server, fetch from both servers at once.
TEST_P(Curl, TwoVcpusTransferAtOnce) {
    uint64_t engine = GetParam();
    std::atomic<uint16_t> ports[2] = {{0}, {0}};
    std::atomic<int> finished{0}, good[2] = {{0}, {0}};
    auto vcpu = [&](int me) {
        if (photon::init(engine, INIT_IO_LIBCURL) != 0) return;
        DEFER(photon::fini());
        mini_http srv;
        if (srv.start() != 0) return;
        ports[me] = srv.port;
        if (!wait_for([&] { return ports[1 - me] != 0; }, 10000)) return;
        std::string other = "http://127.0.0.1:" + std::to_string(ports[1 - me]);
        std::vector<task> tasks;
        for (int i = 0; i < 20; i++)
            tasks.push_back(spawn([&, i] {
                auto o = fetch(i % 2 ? srv.url("/delay?ms=50") : other + "/delay?ms=50");
                if (o.code == 200 && o.body == "delayed") good[me]++;
            }));
        for (auto& t : tasks) t.join();
        finished++;
        wait_for([&] { return finished == 2; }, 20000);  // keep serving the other
        libcurl_fini();
        wait_for([&] { return srv.handlers == 0; });
        srv.stop();
    };
    std::thread a(vcpu, 0), b(vcpu, 1);
    a.join();
    b.join();
    EXPECT_EQ(20, good[0]);
    EXPECT_EQ(20, good[1]);
}

TEST_P(Curl, GetsAFileFromPythonHttpServer) {
    if (!have_tool("python3")) GTEST_SKIP() << "python3 is not installed";
    temp_dir tmp("photon-curl");
    ASSERT_TRUE(tmp.ok());
    const std::string& dir = tmp.path();
    std::string data = pattern(300000, 3);
    std::ofstream(dir + "/file.bin", std::ios::binary) << data;
    child_process py(
        {"python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", dir}, "",
        dir + "/log");
    ASSERT_TRUE(py.started());
    std::string port;
    ASSERT_TRUE(wait_for(
        [&] {
            std::string log = slurp(dir + "/log");
            auto p = log.find(" port ");
            if (p == std::string::npos) return false;
            port = std::to_string(atoi(log.c_str() + p + 6));
            return true;
        },
        10000));
    std::string u = "http://127.0.0.1:" + port + "/file.bin";
    cURL c;
    StringWriter w;
    EXPECT_EQ(200, c.GET(u.c_str(), &w, kTransferUs));
    EXPECT_EQ(data, w.string);
    HeaderMap h;
    c.set_header_container(&h);
    EXPECT_EQ(200, c.HEAD(u.c_str(), kTransferUs));
    EXPECT_EQ(std::to_string(data.size()), h["content-length"]);
    EXPECT_EQ(404, c.GET(("http://127.0.0.1:" + port + "/missing").c_str(), kTransferUs));
}

TEST_P(Curl, HttpsToAPhotonTlsServer) {
#if !PHOTON_HAVE_TLS
    GTEST_SKIP() << "built without TLS";
#endif
    tls_pair pair;  // curl brings its own client side
    PHOTON_TEST_MAKE_TLS_PAIR(pair);
    mini_http tls_server;
    ASSERT_EQ(0, tls_server.start(pair.server.get()));
    cURL c;
    c.set_cafile(test_pki::get().path("ca.pem").c_str());
    StringWriter w;
    EXPECT_EQ(200, c.GET(tls_server.url("/big?n=500000", "https").c_str(), &w, kTransferUs))
        << c.error_message();
    EXPECT_EQ(pattern(500000), w.string);

    cURL untrusting;  // the system CAs do not know the test CA
    EXPECT_EQ(-1, untrusting.GET(tls_server.url("/hello", "https").c_str(), kTransferUs));
    EXPECT_EQ(CURLE_PEER_FAILED_VERIFICATION, untrusting.error_code());

    libcurl_fini();  // closes the connections before the server goes
    EXPECT_TRUE(wait_for([&] { return tls_server.handlers == 0; }));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Curl);

TEST(CurlHelpers, UrlBufferAndEscapes) {
    URLBuffer<32> u;
    u.snp_append("http://%s:%d", "host", 80);
    EXPECT_STREQ("http://host:80", (const char*)u);
    EXPECT_FALSE(u.overflow());
    u.snp_append("/%s", "a-path-that-does-not-fit-anymore");
    EXPECT_TRUE(u.overflow());
    EXPECT_EQ(31u, strlen(u));
    EXPECT_EQ("a%20b%2Fc", url_escape("a b/c"));
    EXPECT_EQ("a b/c", url_unescape("a%20b%2Fc"));
}

#if !PHOTON_HAVE_CURL
TEST(CurlAbsent, EverythingFailsWithEnosys) {
    ASSERT_EQ(0, photon::init(INIT_EVENT_EPOLL, INIT_IO_DEFAULT));  // the flag is ignored
    DEFER(photon::fini());
    EXPECT_EQ(-1, libcurl_init());
    EXPECT_EQ(ENOSYS, errno);
    cURL c;
    EXPECT_EQ(-1, c.GET("http://127.0.0.1:1/"));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(CURLE_NOT_BUILT_IN, c.error_code());
}
#endif

}  // namespace

#else
#include <gtest/gtest.h>
TEST(Curl, NeedsLibcurlHeaders) { GTEST_SKIP() << "libcurl's headers are not installed"; }
#endif
