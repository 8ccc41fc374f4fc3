// The parts of socket.h, basic_socket.h, utils.h, utils-stdstring.h, curl.h,
// tls-stream.h and verb.h that PhotonLibOS declares and the other net tests
// do not reach: typed socket options, address logging, the SMC and F-Stack
// factories, the doio helpers, _gethostbyname, Base64, Resolver's filter,
// curl's writers and unix sockets, and interfaces a Photon user implements.
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/basic_socket.h>
#include <photon/net/http/server.h>
#include <photon/net/http/verb.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/net/utils-stdstring.h>
#include <photon/net/utils.h>
#if PHOTON_HAVE_CURL
#include <photon/net/curl.h>
#endif

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/fds.h"
#include "../util/temp_dir.h"
#include "net_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

std::string logged(void (*put)(LogBuffer&)) {
    LogBuffer log;
    put(log);
    return std::string(log.begin(), log.end());
}

// A connected loopback TCP pair: a client stream and the server's.
struct tcp_pair {
    std::unique_ptr<ISocketServer> server{new_tcp_socket_server()};
    std::unique_ptr<ISocketClient> client{new_tcp_socket_client()};
    std::unique_ptr<ISocketStream> a, b;
    bool open() {
        if (server->bind_v4localhost(0) < 0 || server->listen() < 0) return false;
        a.reset(client->connect(server->getsockname()));
        if (!a) return false;
        b.reset(server->accept());
        return b != nullptr;
    }
};

class NetApi : public EngineTest {};

// ---- socket.h -----------------------------------------------------------

TEST_P(NetApi, TypedSockoptsConvertThroughTheWireType) {
    tcp_pair p;
    ASSERT_TRUE(p.open());
    // P is the wire type, the value converts (Photon's form).
    ASSERT_EQ(0, p.a->setsockopt<int>(IPPROTO_TCP, TCP_NODELAY, false));
    bool on = true;
    ASSERT_EQ(0, p.a->getsockopt<int>(IPPROTO_TCP, TCP_NODELAY, &on));
    EXPECT_FALSE(on);
    ASSERT_EQ(0, p.a->setsockopt<int>(IPPROTO_TCP, TCP_NODELAY, true));
    ASSERT_EQ(0, p.a->getsockopt<int>(IPPROTO_TCP, TCP_NODELAY, &on));
    EXPECT_TRUE(on);
    // Without P: the value's own type.
    int rcv = 0;
    ASSERT_EQ(0, p.a->setsockopt(SOL_SOCKET, SO_RCVBUF, 64 * 1024));
    ASSERT_EQ(0, p.a->getsockopt(SOL_SOCKET, SO_RCVBUF, &rcv));
    EXPECT_GE(rcv, 64 * 1024);  // the kernel doubles it
    // A failed get leaves the value alone.
    long untouched = 77;
    EXPECT_EQ(-1, p.a->getsockopt<int>(SOL_SOCKET, 0x7fff, &untouched));
    EXPECT_EQ(77, untouched);
    // A client remembers options for its sockets, typed the same way.
    ASSERT_EQ(0, p.client->setsockopt<int>(SOL_SOCKET, SO_KEEPALIVE, true));
    bool ka = false;
    ASSERT_EQ(0, p.client->getsockopt<int>(SOL_SOCKET, SO_KEEPALIVE, &ka));
    EXPECT_TRUE(ka);
}

TEST(NetApiLog, LibcAddressStructsPrintLikeEndPoints) {
    EXPECT_EQ("10.1.2.3", logged([](LogBuffer& l) {
                  in_addr a;
                  inet_pton(AF_INET, "10.1.2.3", &a);
                  l << a;
              }));
    EXPECT_EQ("10.1.2.3:8080", logged([](LogBuffer& l) {
                  sockaddr_in s = {};
                  s.sin_family = AF_INET;
                  s.sin_port = htons(8080);
                  inet_pton(AF_INET, "10.1.2.3", &s.sin_addr);
                  l << s;
              }));
    EXPECT_EQ("2001:db8::1", logged([](LogBuffer& l) {
                  in6_addr a;
                  inet_pton(AF_INET6, "2001:db8::1", &a);
                  l << a;
              }));
    EXPECT_EQ("[::1]:443", logged([](LogBuffer& l) {
                  sockaddr_in6 s = {};
                  s.sin6_family = AF_INET6;
                  s.sin6_port = htons(443);
                  s.sin6_addr = in6addr_loopback;
                  l << s;
              }));
}

TEST_P(NetApi, SmcSocketsEchoOrFailCleanlyWithoutKernelSupport) {
    std::unique_ptr<ISocketServer> server(new_smc_socket_server());
    std::unique_ptr<ISocketClient> client(new_smc_socket_client());
    ASSERT_TRUE(server && client);
    EXPECT_EQ(-1, server->bind("/tmp/no-uds-for-smc"));  // SMC is IP only
    EXPECT_EQ(EINVAL, errno);
    if (server->bind_v4localhost(0) < 0) {
        int e = errno;
        ASSERT_TRUE(e == EAFNOSUPPORT || e == EPROTONOSUPPORT || e == EPERM || e == EACCES)
            << strerror(e);
        EXPECT_EQ(nullptr, client->connect(EndPoint("127.0.0.1:1")));
        GTEST_SKIP() << "no AF_SMC here: " << strerror(e);
    }
    ASSERT_EQ(0, server->listen());
    auto echo = [](ISocketStream* s) {
        char buf[16];
        ssize_t n = s->recv(buf, sizeof(buf));
        return n > 0 && s->write(buf, n) == n ? 0 : -1;
    };
    server->set_handler(echo);
    ASSERT_EQ(0, server->start_loop(false));
    std::unique_ptr<ISocketStream> s(client->connect(server->getsockname()));
    ASSERT_NE(nullptr, s) << strerror(errno);  // falls back to TCP on loopback
    ASSERT_EQ(5, s->write("hello", 5));
    char got[5];
    ASSERT_EQ(5, s->read(got, 5));
    EXPECT_EQ(0, memcmp(got, "hello", 5));
}

TEST(NetApiFactories, FstackDpdkIsNotBuiltIn) {
    errno = 0;
    EXPECT_EQ(nullptr, new_fstack_dpdk_socket_client());
    EXPECT_EQ(ENOSYS, errno);
    errno = 0;
    EXPECT_EQ(nullptr, new_fstack_dpdk_socket_server());
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(0, et_poller_init());
    EXPECT_EQ(0, et_poller_fini());
}

// ---- basic_socket.h -------------------------------------------------------

TEST_P(NetApi, DoioOnceWaitsOnEagainAndStopsWhenTheWaitFails) {
    pipe_fds p;
    char c = 0;
    int calls = 0, waits = 0;
    auto writer = spawn([&] {
        thread_usleep(2000);
        p.put('z');
    });
    auto n = doio_once(
        [&] {
            calls++;
            return ::read(p.r, &c, 1);
        },
        [&] {
            waits++;
            return wait_for_fd_readable(p.r, kLongUs);
        });
    writer.join();
    EXPECT_EQ(1, n);
    EXPECT_EQ('z', c);
    EXPECT_GE(calls, 2);
    EXPECT_GE(waits, 1);
    // The macro form; a wait that times out ends it with -1 ETIMEDOUT.
    errno = 0;
    EXPECT_EQ(-1, DOIO_ONCE(::read(p.r, &c, 1), wait_for_fd_readable(p.r, 1000)));
    EXPECT_EQ(ETIMEDOUT, errno);
    // Other errors come back at once.
    EXPECT_EQ(-1, DOIO_ONCE(::read(-1, &c, 1), (waits = 100)));
    EXPECT_EQ(EBADF, errno);
    EXPECT_LT(waits, 100);
}

TEST(NetApiDoio, LoopWithBufStepFillsTheBufferAcrossShortTransfers) {
    std::string src = pattern(1000);
    size_t at = 0;
    char dst[1000];
    void* buf = dst;
    size_t count = sizeof(dst);
    auto n = DOIO_LOOP(
        [&] {
            size_t k = std::min<size_t>({count, 7, src.size() - at});
            memcpy(buf, src.data() + at, k);
            at += k;
            return (ssize_t)k;
        }(),
        BufStep(buf, count));
    EXPECT_EQ(1000, n);
    EXPECT_EQ(0u, count);
    EXPECT_EQ((char*)dst + 1000, buf);
    EXPECT_EQ(0, memcmp(dst, src.data(), 1000));

    // Count only (no buffer): the placeholder pointer moves without UB.
    size_t left = 10;
    // 3, 3, 3, then a claimed 3 with 1 left: stopped, count not wrapped around.
    EXPECT_EQ(12, doio_loop([] { return (ssize_t)3; }, BufStep(left)));
    EXPECT_EQ(0u, left);
    // EOF ends the loop with what came so far; an error is returned as is.
    size_t want = 100;
    int round = 0;
    EXPECT_EQ(5, doio_loop([&] { return (ssize_t)(round++ ? 0 : 5); }, BufStep(want)));
    EXPECT_EQ(-1, DOIO_LOOP_LAMBDA(-1, return true));
}

TEST(NetApiDoio, LoopWithBufStepVSkipsEmptyElements) {
    char a[3], b[4];
    iovec iov[] = {{nullptr, 0}, {a, sizeof(a)}, {nullptr, 0}, {b, sizeof(b)}, {nullptr, 0}};
    iovector_view v(iov, 5);
    std::string src = "abcdefg";
    size_t at = 0;
    int calls = 0;
    auto n = doio_loop(
        [&] {
            calls++;
            if (v.iovcnt == 0 || v.front().iov_len == 0) return (ssize_t)0;  // would be EOF
            size_t k = std::min<size_t>(v.front().iov_len, 2);
            memcpy(v.front().iov_base, src.data() + at, k);
            at += k;
            return (ssize_t)k;
        },
        BufStepV(v));
    EXPECT_EQ(7, n);
    EXPECT_EQ(0, v.iovcnt);
    EXPECT_EQ(0, memcmp(a, "abc", 3));
    EXPECT_EQ(0, memcmp(b, "defg", 4));
    EXPECT_EQ(4, calls);  // 2+1 into a, 2+2 into b
}

TEST_P(NetApi, DeprecatedSendfileFallbackSendsTheFile) {
    tcp_pair p;
    ASSERT_TRUE(p.open());
    char path[] = "/tmp/photon-net-api-XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    unlink(path);
    std::string data = pattern(100000, 3);
    ASSERT_EQ((ssize_t)data.size(), ::write(fd, data.data(), data.size()));
    std::string got(data.size() - 10, 0);
    auto reader = spawn([&] { EXPECT_EQ((ssize_t)got.size(), p.b->read(&got[0], got.size())); });
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    EXPECT_EQ((ssize_t)got.size(), sendfile_fallback(p.a.get(), fd, 10, got.size(), kLongUs));
#pragma GCC diagnostic pop
    reader.join();
    ::close(fd);
    EXPECT_TRUE(got == data.substr(10));
}

// ---- utils.h ----------------------------------------------------------------

TEST(NetApiResolve, UnderscoreGethostbynameStopsWhenTheCallbackSaysSo) {
    int seen = 0;
    int n = _gethostbyname("localhost", [&](IPAddr ip) {
        seen++;
        EXPECT_TRUE(ip.is_loopback());
        return -1;  // the first is enough
    });
    EXPECT_EQ(0, n);  // the refused one is not counted (as Photon)
    EXPECT_EQ(1, seen);
    EXPECT_EQ(1, _gethostbyname("127.0.0.1", [](IPAddr) { return 0; }));
    errno = 0;
    EXPECT_EQ(-1, _gethostbyname("", [](IPAddr) { return 0; }));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, _gethostbyname("no-such-host.invalid", [](IPAddr) { return 0; }));
}

TEST(NetApiResolve, VectorFormsReplaceWhatWasThereAndBufferFormCountsWhatFits) {
    std::vector<IPAddr> v{IPAddr("9.9.9.9"), IPAddr("8.8.8.8")};
    ASSERT_EQ(1, gethostbyname("10.0.0.7", v));
    ASSERT_EQ(1u, v.size());
    EXPECT_EQ(IPAddr("10.0.0.7"), v[0]);
    EXPECT_EQ(-1, gethostbyname("no-such-host.invalid", v));
    EXPECT_TRUE(v.empty());
    IPAddr one[1];
    EXPECT_EQ(1, gethostbyname("localhost", one, 1));  // never more than fits
    EXPECT_TRUE(one[0].is_loopback());
    EXPECT_EQ(0, gethostbyname("localhost", one, 0));
}

TEST_P(NetApi, NonBlockingLookupReplacesTheVector) {
    std::vector<IPAddr> v{IPAddr("9.9.9.9")};
    ASSERT_EQ(1, gethostbyname_nb("10.0.0.8", v));
    ASSERT_EQ(1u, v.size());
    EXPECT_EQ(IPAddr("10.0.0.8"), v[0]);
}

TEST(NetApiBase64, EncodesTheRfc4648Vectors) {
    const char* vec[][2] = {{"", ""},
                            {"f", "Zg=="},
                            {"fo", "Zm8="},
                            {"foo", "Zm9v"},
                            {"foob", "Zm9vYg=="},
                            {"fooba", "Zm9vYmE="},
                            {"foobar", "Zm9vYmFy"}};
    for (auto& p : vec) {
        std::string out = "junk";
        Base64Encode(p[0], out);
        EXPECT_EQ(p[1], out);
        if (!*p[0]) continue;
        std::string back = "junk";
        EXPECT_TRUE(Base64Decode(out, back)) << out;
        EXPECT_EQ(p[0], back);
    }
    std::string all;
    Base64Encode(std::string("\xfb\xff\xbf", 3), all);
    EXPECT_EQ("+/+/", all);  // both extra characters
}

TEST(NetApiBase64, RoundTripsRandomBytes) {
    std::mt19937 rng(11);
    for (int i = 0; i < 300; i++) {
        std::string s(rng() % 100 + 1, 0);
        for (auto& c : s) c = (char)rng();
        std::string enc, dec;
        Base64Encode(s, enc);
        EXPECT_EQ((s.size() + 2) / 3 * 4, enc.size());
        ASSERT_TRUE(Base64Decode(enc, dec));
        ASSERT_EQ(s, dec);
    }
}

TEST(NetApiBase64, RejectsMalformedInput) {
    std::string out;
    for (const char* bad : {"", "Zg=", "Z===", "====", "Zg==Zg==", "Zm9v!A==", "Zm 9", "Zm9\n",
                            "=m9v", "Zm=v", "\xc3\xa9\xc3\xa9"}) {
        EXPECT_FALSE(Base64Decode(bad, out)) << bad;
    }
}

TEST(NetApiMisc, ZerocopyAvailableFollowsTheKernelVersion) {
    struct utsname u;
    ASSERT_EQ(0, uname(&u));
    unsigned major = 0, minor = 0;
    ASSERT_EQ(2, sscanf(u.release, "%u.%u", &major, &minor));
    EXPECT_EQ(major > 4 || (major == 4 && minor >= 15), zerocopy_available());
}

// A resolver written against Photon's interface: resolve and discard_cache
// only; resolve_filter and resolve(host, func) come from the base.
class fixed_resolver : public Resolver {
public:
    IPAddr resolve(std::string_view host) override {
        calls++;
        return host == "a.test" ? IPAddr("10.0.0.1") : (errno = ENOENT, IPAddr());
    }
    void discard_cache(std::string_view, IPAddr) override {}
    int calls = 0;
};

TEST(NetApiResolver, AUserResolverGetsTheBaseFilterAndCallbackForms) {
    fixed_resolver r;
    Resolver* base = &r;
    EXPECT_EQ(IPAddr("10.0.0.1"), base->resolve("a.test"));
    int called = 0;
    base->resolve("a.test", [&](IPAddr ip) {
        called++;
        EXPECT_EQ(IPAddr("10.0.0.1"), ip);
    });
    EXPECT_EQ(1, called);
    auto accept_all = [](IPAddr) { return true; };
    auto reject_all = [](IPAddr) { return false; };
    EXPECT_EQ(IPAddr("10.0.0.1"), base->resolve_filter("a.test", accept_all));
    errno = 0;
    EXPECT_TRUE(base->resolve_filter("a.test", reject_all).undefined());
    EXPECT_EQ(ENOENT, errno);
    EXPECT_TRUE(base->resolve_filter("b.test", accept_all).undefined());
}

TEST_P(NetApi, DefaultResolverFiltersCachedAddressesAtEachCall) {
    std::unique_ptr<Resolver> r(new_default_resolver(kLongUs, kLongUs));
    auto only_v6 = [](IPAddr ip) { return ip.is_ipv6(); };
    auto only_v4 = [](IPAddr ip) { return ip.is_ipv4(); };
    EXPECT_EQ(IPAddr("127.0.0.1"), r->resolve_filter("127.0.0.1", only_v4));
    errno = 0;
    EXPECT_TRUE(r->resolve_filter("127.0.0.1", only_v6).undefined());  // cached, still filtered
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(IPAddr::V6Loopback(), r->resolve_filter("::1", only_v6));
    EXPECT_EQ(IPAddr("127.0.0.1"), r->resolve_filter("127.0.0.1", nullptr));  // no filter
}

// ---- utils-stdstring.h -----------------------------------------------------

TEST(NetApiStrings, EndPointTextIsAnEstring) {
    static_assert(std::is_same<decltype(to_string(EndPoint())), estring>::value, "as Photon");
    static_assert(std::is_same<decltype(to_string(IPAddr())), std::string>::value, "as Photon");
    estring s = to_string(EndPoint("[2001:db8::2]:53"));
    EXPECT_EQ("[2001:db8::2]:53", s);
    char text[INET6_ADDRSTRLEN];
    __to_string(IPAddr("192.168.0.1"), text);
    EXPECT_STREQ("192.168.0.1", text);
    __to_string(IPAddr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe"), text);  // the longest
    EXPECT_STREQ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", text);
}

#if PHOTON_HAVE_CURL  // curl.h needs libcurl's headers
// ---- curl.h helpers ------------------------------------------------------

TEST(NetApiCurlWriters, IovWriterFillsItsBuffersAndCountsTheRest) {
    char a[4], b[3];
    iovec iov[] = {{a, sizeof(a)}, {b, sizeof(b)}};
    IOVWriter w(iov, 2);
    EXPECT_EQ(5u, w.write("hello", 5));
    EXPECT_EQ(4u, w.write(" wor", 4));  // 2 fit, 2 dropped; curl is told all went
    EXPECT_EQ(7u, w.written);
    EXPECT_EQ(2u, w.drop);
    EXPECT_EQ(0, memcmp(a, "hell", 4));
    EXPECT_EQ(0, memcmp(b, "o w", 3));
    EXPECT_EQ(0u, w.sum());
}

TEST(NetApiCurlWriters, WritersShowWhatTheyHoldForLogs) {
    char buf[8];
    BufWriter bw(buf, sizeof(buf));
    bw.write("abc", 3);
    EXPECT_EQ("abc", bw.alog_string());
    StringWriter sw;
    sw.write("xyz", 3);
    EXPECT_EQ("xyz", sw.alog_string());
    LogBuffer log;
    log << bw.alog_string();
    EXPECT_EQ("abc", std::string(log.begin(), log.end()));
}

struct lower_map : HeaderMap {
    std::string lower_of(std::string s) { return str_lower(std::move(s)); }
};

TEST(NetApiCurlWriters, HeaderMapLowersNamesForSubclasses) {
    lower_map m;
    EXPECT_EQ("content-type", m.lower_of("Content-TYPE"));
}

// A cURL subclass using Photon's protected setter.
struct my_curl : cURL {
    my_curl& timeout_ms(long ms) {
        _setopt(CURLOPT_TIMEOUT_MS, ms);
        return *this;
    }
};

class CurlUds : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        ASSERT_EQ(0, libcurl_init());
    }
    void TearDown() override {
        if (CURRENT) libcurl_fini();
        EngineTest::TearDown();
    }
};

TEST_P(CurlUds, GetGoesThroughTheUnixSocket) {
    temp_dir dir("photon-curl-uds");
    ASSERT_TRUE(dir.ok());
    const std::string path = dir / "sock";
    std::unique_ptr<ISocketServer> uds(new_uds_server(true));
    std::unique_ptr<http::HTTPServer> http(http::new_http_server());
    int hits = 0;
    auto hello = [&](http::Request& req, http::Response& resp, std::string_view) {
        hits++;
        std::string body = "over uds " + std::string(req.target());
        resp.headers.content_length(body.size());
        return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
    };
    http->add_handler(hello);
    uds->set_handler(http->get_connection_handler());
    ASSERT_EQ(0, uds->bind(path.c_str()));
    ASSERT_EQ(0, uds->listen());
    ASSERT_EQ(0, uds->start_loop(false));
    {
        my_curl c;
        StringWriter w;
        c.timeout_ms(10000).set_unix_socket(path.c_str());
        // The host in the URL is only its Host field: nothing listens there.
        EXPECT_EQ(200, c.GET("http://127.0.0.1:1/x", &w));
        EXPECT_EQ("over uds /x", w.string);
    }
    EXPECT_EQ(1, hits);
    libcurl_fini();  // closes curl's cached connection before the server goes
    uds->terminate();
}

#endif  // PHOTON_HAVE_CURL

// ---- tls-stream.h -------------------------------------------------------------

// A TLSContext written against Photon's interface (its pure virtuals only)
// is complete: our extensions have defaults.
class photon_style_context : public TLSContext {
public:
    int set_pass_phrase(const char*) override { return 0; }
    int set_cert(const char*) override { return 0; }
    int set_pkey(const char*, const char*) override { return 0; }
    int set_verify_mode(VerifyMode) override { return 0; }
    int set_alpn_protos(const std::vector<estring_view>& protos) override {
        n = protos.size();
        return 0;
    }
    int set_alpn_select_cb(Delegate<estring_view, const std::vector<estring_view>&> cb) override {
        pick = cb;
        return 0;
    }
    int set_ca_cert(const char*) override { return 0; }
    int set_ca_file(const char*, const char*) override { return 0; }
    size_t n = 0;
    Delegate<estring_view, const std::vector<estring_view>&> pick;
};

estring_view second(void*, const std::vector<estring_view>& v) { return v.size() > 1 ? v[1] : ""; }

TEST(NetApiTls, AContextWithPhotonsInterfaceIsComplete) {
    photon_style_context c;
    TLSContext* ctx = &c;
    EXPECT_EQ(0, ctx->set_alpn_protos({"h2", "http/1.1"}));
    EXPECT_EQ(2u, c.n);
    std::vector<estring_view> protos{"h2", "http/1.1"};
    EXPECT_EQ(0, ctx->set_alpn_protos(protos));
    EXPECT_EQ(0, ctx->set_alpn_select_cb({nullptr, &second}));
    EXPECT_EQ("http/1.1", c.pick(protos));
    errno = 0;
    EXPECT_EQ(-1, ctx->set_cert_file("/x"));
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(-1, ctx->add_sni_context("a", ctx));
    static_assert(
        std::is_same<decltype(tls_stream_get_alpn_selected(nullptr)), estring_view>::value,
        "as Photon");
    EXPECT_EQ("", tls_stream_get_alpn_selected(nullptr));
}

// ---- verb.h ---------------------------------------------------------------------

TEST(NetApiVerb, VerbstrIsIndexedByTheEnum) {
    using http::Verb;
    using http::verbstr;
    EXPECT_EQ("GET", verbstr[Verb::GET]);
    EXPECT_EQ("DELETE", verbstr[Verb::DELETE]);
    EXPECT_EQ("UNKNOWN", verbstr[Verb::UNKNOWN]);
    EXPECT_EQ("MOVE", verbstr[Verb::MOV]);  // the registered name, not Photon's "MOV"
    EXPECT_EQ("PUT", verbstr[(int)Verb::PUT]);
    EXPECT_EQ("", verbstr[-1]);
    EXPECT_EQ("", verbstr[(size_t)Verb::UNLINK + 1]);
    EXPECT_EQ("", verbstr[(Verb)100]);
    static_assert(verbstr[Verb::HEAD] == std::string_view("HEAD"), "a constant expression");
    for (size_t i = 1; i < verbstr.size(); i++)
        EXPECT_EQ((Verb)i, http::string_to_verb(verbstr[i])) << i;
}

PHOTON_INSTANTIATE_ENGINE_TESTS(NetApi);
#if PHOTON_HAVE_CURL
PHOTON_INSTANTIATE_ENGINE_TESTS(CurlUds);
#endif

}  // namespace
