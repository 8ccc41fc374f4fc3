// Name resolution: only localhost, numeric addresses and /etc/hosts names
// resolve on a machine without network, and a name that does not exist must
// fail cleanly and in time.
#include <memory>
#include <string>
#include <vector>

#include <photon/net/utils-stdstring.h>
#include <photon/net/utils.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"

using namespace photon;
using namespace photon::net;
using namespace photon_test;

namespace {

const char* kNoSuchHost = "no-such-host.invalid";

bool has_loopback(const std::vector<IPAddr>& v) {
    for (auto& ip : v)
        if (ip.is_loopback()) return true;
    return false;
}

class Resolve : public EngineTest {};

TEST_P(Resolve, BlockingLookupsFindLocalhostAndNumericAddresses) {
    EXPECT_TRUE(gethostbyname("localhost").is_loopback());
    EXPECT_EQ(IPAddr("10.1.2.3"), gethostbyname("10.1.2.3"));
    IPAddr buf[4];
    int n = gethostbyname("localhost", buf, 4);
    ASSERT_GE(n, 1);
    EXPECT_TRUE(buf[0].is_loopback());
    std::vector<IPAddr> all;
    EXPECT_EQ(1, gethostbyname("::1", all));
    EXPECT_EQ(IPAddr::V6Loopback(), all[0]);
}

TEST_P(Resolve, UnknownNameFailsWithEnoent) {
    EXPECT_TRUE(gethostbyname(kNoSuchHost).undefined());
    std::vector<IPAddr> v;
    auto t0 = Clock::now();
    EXPECT_EQ(-1, gethostbyname_nb(kNoSuchHost, v, kLongUs));
    EXPECT_TRUE(errno == ENOENT || errno == EAGAIN) << strerror(errno);
    EXPECT_LT(us_since(t0), kLongUs + 1000 * 1000);
    EXPECT_TRUE(v.empty());
}

// The lookup runs on a helper thread; another coroutine of this vCPU stays
// runnable meanwhile. (Whether it gets to run is up to how fast the helper
// answers: the caller only parks if the answer is not there yet.)
TEST_P(Resolve, NonBlockingLookupAnswersWhileOthersAreRunnable) {
    bool done = false, saw_done = false;
    auto ticker = spawn([&] {
        auto t0 = Clock::now();
        while (!done && us_since(t0) < kLongUs) thread_yield();
        saw_done = done;
    });
    std::vector<IPAddr> v;
    int n = gethostbyname_nb("localhost", v);
    done = true;
    ticker.join();
    ASSERT_GE(n, 1);
    EXPECT_TRUE(has_loopback(v));
    EXPECT_TRUE(saw_done);  // the caller came back while the other still ran
}

TEST_P(Resolve, InterruptedLookupFailsWithTheInterruptersErrnoAndLeavesNoMess) {
    std::vector<IPAddr> v;
    int r = 0, err = 0;
    auto t = spawn([&] {
        r = gethostbyname_nb("localhost", v);
        err = errno;
    });
    if (until_sleeping(t.th)) thread_interrupt(t.th, ECANCELED);
    t.join();
    if (r < 0) {
        EXPECT_EQ(ECANCELED, err);
        EXPECT_TRUE(v.empty());
    } else {
        EXPECT_TRUE(has_loopback(v));  // the answer won the race
    }
    thread_usleep(50 * 1000);  // the helper finishes after we gave up: nothing to touch
    std::vector<IPAddr> again;
    EXPECT_GE(gethostbyname_nb("localhost", again, kLongUs), 1);
}

TEST_P(Resolve, ExpiredTimeoutGivesEtimedout) {
    std::vector<IPAddr> v;
    int r = gethostbyname_nb("localhost", v, 0);
    if (r < 0) {
        EXPECT_EQ(ETIMEDOUT, errno);
    }
    EXPECT_TRUE(r < 0 || has_loopback(v));
}

TEST_P(Resolve, GethostbypeerGivesTheLocalAddressForThePeer) {
    EXPECT_EQ(IPAddr("127.0.0.1"), gethostbypeer(IPAddr("127.0.0.1")));
    EXPECT_TRUE(gethostbypeer(std::string_view("localhost")).is_loopback());
    EXPECT_TRUE(gethostbypeer(std::string_view(kNoSuchHost)).undefined());
}

TEST_P(Resolve, ResolverCachesAndDiscards) {
    std::unique_ptr<Resolver> r(new_default_resolver(kLongUs, kLongUs));
    IPAddr ip = r->resolve("localhost");
    EXPECT_EQ(IPAddr("127.0.0.1"), ip);  // IPv4 preferred
    EXPECT_EQ(ip, r->resolve("localhost"));
    int n = 0;
    r->resolve("localhost", [&](IPAddr a) { n += a == ip ? 1 : 100; });
    EXPECT_EQ(1, n);  // once, with resolve()'s answer (as Photon)
    r->discard_cache("localhost", ip);
    r->discard_cache("localhost");
    EXPECT_EQ(ip, r->resolve("localhost"));
    EXPECT_TRUE(r->resolve(kNoSuchHost).undefined());
}

TEST_P(Resolve, ResolverLookupIsBoundedByItsTimeout) {
    std::unique_ptr<Resolver> r(new_default_resolver(kLongUs, 0));  // expired at once
    IPAddr ip = r->resolve("localhost");
    EXPECT_TRUE(ip.undefined() || ip.is_loopback());
    if (ip.undefined()) {
        EXPECT_EQ(ETIMEDOUT, errno);
    }
}

PHOTON_INSTANTIATE_ENGINE_TESTS(Resolve);

TEST(AddressList, ParsesSeparatorsAndDefaultPorts) {
    std::vector<EndPoint> v{EndPoint("9.9.9.9:9")};  // replaced, as Photon
    EXPECT_EQ(0, parse_address_list("1.2.3.4:80, [::1]:443;5.6.7.8", &v, 8080));
    ASSERT_EQ(3u, v.size());
    EXPECT_EQ(EndPoint("1.2.3.4:80"), v[0]);
    EXPECT_EQ(443, v[1].port);
    EXPECT_EQ(EndPoint(IPAddr("5.6.7.8"), 8080), v[2]);
    EXPECT_EQ(-1, parse_address_list("1.2.3.4:80, bogus", &v));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_TRUE(v.empty());  // no half list, and no undefined entry
    EXPECT_EQ(0, parse_address_list(" ,; ", &v));
    EXPECT_TRUE(v.empty());
    EXPECT_EQ(-1, parse_address_list("1.2.3.4", nullptr));
}

TEST(AddressList, ToStringPrintsAddresses) {
    EXPECT_EQ("10.0.0.1", to_string(IPAddr("10.0.0.1")));
    EXPECT_EQ("[::1]:9", to_string(EndPoint("[::1]:9")));
    EXPECT_EQ("1.2.3.4:80", to_string(EndPoint("1.2.3.4:80")));
}

}  // namespace
