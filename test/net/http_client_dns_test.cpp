// The HTTP client's name resolution on both event engines, bounded by the
// operation's deadline. No real DNS: the socket_dialer's test seam
// (socket_dialer::lookup_for_tests, net/http/client_internal.h) puts a scripted
// lookup under the client's DNS cache (home vCPU) and its direct lookups
// (other vCPUs). Like gethostbyname_nb, the scripted lookup blocks only the
// calling coroutine and gives up with ETIMEDOUT when the timeout it was
// handed runs out, so a call that did not pass its deadline down would wait
// the whole slow answer (5 s).
#include <photon/net/http/client.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include "../../net/http/client_internal.h"
#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "http_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

namespace {

constexpr uint64_t kSlowUs = 5 * 1000 * 1000;  // how long "slow.test" takes to answer

std::atomic<int> g_lookups{0};
std::atomic<uint64_t> g_last_timeout{0};  // what the last lookup was given, us

// "fast.test" is 127.0.0.1 at once; "slow.test" answers 127.0.0.1 after
// kSlowUs, unless `timeout` ends first (-1 ETIMEDOUT); others: -1 ENOENT.
int scripted_lookup(std::string_view name, std::vector<IPAddr>& ret, Timeout timeout) {
    g_lookups++;
    g_last_timeout = timeout.timeout();
    if (name == "fast.test") {
        ret.push_back(IPAddr("127.0.0.1"));
        return 1;
    }
    if (name != "slow.test") {
        errno = ENOENT;
        return -1;
    }
    uint64_t left = timeout.timeout();
    thread_usleep(std::min(left, kSlowUs));
    if (left < kSlowUs) {
        errno = ETIMEDOUT;
        return -1;
    }
    ret.push_back(IPAddr("127.0.0.1"));
    return 1;
}

class HttpClientDns : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        g_lookups = 0;
        socket_dialer::lookup_for_tests = &scripted_lookup;  // before the client exists
        client.reset(new_http_client());
    }
    void TearDown() override {
        client.reset();
        socket_dialer::lookup_for_tests = nullptr;
        EngineTest::TearDown();
    }
    std::unique_ptr<Client> client;
};

// A coroutine that counts 10 ms ticks until stopped: proof that the vCPU
// kept running while another coroutine waited.
struct ticker {
    int ticks = 0;
    bool stop = false;
    join_handle* jh = thread_enable_join(thread_create11([this] {
        for (int i = 0; i < 1000 && !stop; i++) {
            thread_usleep(10 * 1000);
            ticks++;
        }
    }));
    ~ticker() {
        stop = true;
        thread_join(jh);
    }
};

TEST_P(HttpClientDns, ASlowLookupEndsAtTheOperationsDeadlineWithEtimedout) {
    scripted_server srv([](Request&, Response& resp, ISocketStream*) {
        resp.set_result(200);
        resp.headers.content_length(2);
        return resp.write("ok", 2) == 2 ? 0 : -1;
    });
    std::string port = std::to_string(srv.port());
    {
        ticker t;
        auto op = client->new_operation(Verb::GET, "http://slow.test:" + port + "/");
        DEFER(op->destroy());
        op->timeout = 300 * 1000;
        EXPECT_EQ(-1, op->call());
        EXPECT_EQ(ETIMEDOUT, errno);  // the lookup gave up before the slow answer
        EXPECT_LE(g_last_timeout.load(), 300u * 1000);
        EXPECT_GE(t.ticks, 3);  // the vCPU went on meanwhile
    }
    // The client's own timeout bounds the lookup the same way.
    client->timeout_ms(200);
    auto op = client->new_operation(Verb::GET, "http://slow.test:" + port + "/");
    EXPECT_EQ(-1, op->call());
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_LE(g_last_timeout.load(), 200u * 1000);
    op->destroy();
    EXPECT_EQ(0, srv.accepts);  // nothing was connected to
}

TEST_P(HttpClientDns, NamesResolveThroughTheCacheAndUnknownOnesFailWithEnoent) {
    scripted_server srv([](Request& req, Response& resp, ISocketStream*) {
        std::string body = "at " + std::string(req.headers["Host"]);
        resp.set_result(200);
        resp.headers.content_length(body.size());
        return resp.write(body.data(), body.size()) == (ssize_t)body.size() ? 0 : -1;
    });
    std::string host = "fast.test:" + std::to_string(srv.port());
    for (int i = 0; i < 2; i++) {
        auto op = client->new_operation(Verb::GET, "http://" + host + "/");
        DEFER(op->destroy());
        op->timeout = kLongUs;
        ASSERT_EQ(0, op->call());
        EXPECT_EQ("at " + host, body_of(op));
        EXPECT_LE(g_last_timeout.load(), kLongUs);  // the deadline went down
    }
    EXPECT_EQ(1, g_lookups.load());  // the second came from the cache
    auto op = client->new_operation(Verb::GET, "http://nowhere.test/");
    EXPECT_EQ(-1, op->call());
    EXPECT_EQ(ENOENT, errno);
    op->destroy();
}

TEST_P(HttpClientDns, OtherVcpusLookupsEndAtTheDeadlineToo) {
    auto home = client->new_operation(Verb::GET, "http://nowhere.test/");
    EXPECT_EQ(-1, home->call());  // this vCPU owns the pool and the cache
    home->destroy();
    std::atomic<int> done{0}, err{0};
    std::thread other([&] {
        if (photon::init(GetParam(), photon::INIT_IO_NONE) == 0) {
            auto op = client->new_operation(Verb::GET, "http://slow.test:1/");
            op->timeout = 300 * 1000;
            if (op->call() < 0) err = errno;
            op->destroy();
            photon::fini();
        }
        done++;
    });
    EXPECT_TRUE(wait_for([&] { return done == 1; }, 20000));
    other.join();
    EXPECT_EQ(ETIMEDOUT, err.load());  // the lookup gave up before the slow answer
    EXPECT_LE(g_last_timeout.load(), 300u * 1000);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpClientDns);

}  // namespace
