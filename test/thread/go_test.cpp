// photon/thread/go.h: go(), buffered and unbuffered channels (order,
// timeouts, close waking every waiter), select (parking, fairness, one case
// only, non-blocking), and channels between vCPUs. Several tests are named
// after races of PhotonLibOS's channels that are fixed here.
#include <photon/thread/go.h>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using namespace photon_test;
using photon::channel;
using photon::Timeout;

class Go : public VcpuTest {};
class Channel : public VcpuTest {};
class UnbufferedChannel : public VcpuTest {};
class Close : public VcpuTest {};
class Select : public VcpuTest {};
class ChannelCrossVcpu : public VcpuTest {};

// A joinable coroutine started with go().
template <typename F>
task go_joinable(F f) {
    task t;
    t.th = photon::go(kStack, std::move(f));
    t.jh = photon::thread_enable_join(t.th);
    return t;
}

// ---- go ---------------------------------------------------------------------

TEST_F(Go, RunsACallableWithItsArgumentsOnceTheCallerYields) {
    int sum = 0;
    photon::thread* th = photon::go([&sum](int a, int b) { sum = a + b; }, 10, 20);
    ASSERT_NE(nullptr, th);
    EXPECT_EQ(0, sum) << "go() only creates; the caller keeps running";
    run_others();
    EXPECT_EQ(30, sum);
}

struct adder {
    int total = 0;
    void add(int x) { total += x; }
};

TEST_F(Go, TakesAStackSizeFirstAndMemberFunctions) {
    adder a;
    ASSERT_NE(nullptr, photon::go(64 * 1024, &adder::add, &a, 5));
    ASSERT_NE(nullptr, photon::go(&adder::add, &a, 7));
    run_others();
    EXPECT_EQ(12, a.total);
}

// ---- buffered channels ---------------------------------------------------------

TEST_F(Channel, BufferedKeepsFifoOrderUpToItsCapacity) {
    channel<int> ch(3);
    EXPECT_EQ(3u, ch.capacity());
    EXPECT_TRUE(ch.empty());
    ch << 1 << 2;
    EXPECT_TRUE(ch.try_send(3));
    EXPECT_EQ(3u, ch.size());
    errno = 0;
    EXPECT_FALSE(ch.try_send(4));
    EXPECT_EQ(EAGAIN, errno);
    int a = 0, b = 0, c = 0;
    ch >> a >> b;
    EXPECT_TRUE(ch.try_recv(c));
    EXPECT_EQ(1, a);
    EXPECT_EQ(2, b);
    EXPECT_EQ(3, c);
    errno = 0;
    EXPECT_FALSE(ch.try_recv(c));
    EXPECT_EQ(EAGAIN, errno);
    EXPECT_EQ(3, c) << "a failed receive leaves the target alone";
}

TEST_F(Channel, ASenderParksOnAFullBufferAndItsValueKeepsItsPlace) {
    channel<int> ch(1);
    ASSERT_TRUE(ch.send(1));
    auto sender = go_joinable([&] {
        EXPECT_TRUE(ch.send(2, kLongUs));
        EXPECT_TRUE(ch.send(3, kLongUs));
    });
    ASSERT_TRUE(until_sleeping(sender.th));
    for (int want = 1; want <= 3; want++) {
        auto r = ch.recv(kLongUs);
        EXPECT_TRUE(r.second);
        EXPECT_EQ(want, r.first);
    }
    sender.join();
    EXPECT_TRUE(ch.empty());
}

TEST_F(Channel, RecvTimesOutWithEtimedout) {
    channel<int> ch(1);
    int v = 7;
    auto t0 = Clock::now();
    EXPECT_FALSE(ch.recv(v, 20 * 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 19 * 1000u);
    EXPECT_EQ(7, v);
    auto r = ch.recv(Timeout(0));
    EXPECT_FALSE(r.second);
    EXPECT_EQ(ETIMEDOUT, errno);
}

TEST_F(Channel, ASendThatTimesOutKeepsTheMovedFromArgumentIntact) {
    channel<std::string> ch(1);
    ASSERT_TRUE(ch.send(std::string("first")));
    std::string s(100, 'x');
    auto t0 = Clock::now();
    EXPECT_FALSE(ch.send(std::move(s), 20 * 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 19 * 1000u);
    EXPECT_EQ(std::string(100, 'x'), s);
    EXPECT_EQ(1u, ch.size());
}

TEST_F(Channel, RangeForReceivesUntilClosedAndDrained) {
    channel<int> ch(8);
    auto producer = go_joinable([&] {
        for (int i = 0; i < 20; i++) ch << i;
        ch.close();
    });
    std::vector<int> got;
    for (auto v : ch) got.push_back(v);
    producer.join();
    ASSERT_EQ(20u, got.size());
    for (int i = 0; i < 20; i++) EXPECT_EQ(i, got[i]);
    EXPECT_TRUE(ch.begin() == ch.end());
}

TEST_F(Channel, CarriesMoveOnlyValues) {
    for (size_t cap : {0, 2}) {
        channel<std::unique_ptr<int>> ch(cap);
        auto sender = go_joinable([&] { EXPECT_TRUE(ch.send(std::make_unique<int>(42))); });
        std::unique_ptr<int> p;
        ASSERT_TRUE(ch.recv(p, kLongUs)) << "capacity " << cap;
        ASSERT_NE(nullptr, p);
        EXPECT_EQ(42, *p);
        sender.join();
    }
}

struct counted {
    static int alive;
    int v = 0;
    counted() { alive++; }
    explicit counted(int x) : v(x) { alive++; }
    counted(const counted& r) : v(r.v) { alive++; }
    counted(counted&& r) noexcept : v(r.v) { alive++; }
    counted& operator=(const counted&) = default;
    counted& operator=(counted&&) = default;
    ~counted() { alive--; }
};
int counted::alive = 0;

TEST_F(Channel, DestroysTheValuesStillBuffered) {
    counted::alive = 0;
    {
        channel<counted> ch(4);
        ch.send(counted(1));
        ch.send(counted(2));
        EXPECT_EQ(2, counted::alive);
    }
    EXPECT_EQ(0, counted::alive);
}

TEST_F(Channel, MovingTakesTheBufferAndLeavesAnEmptyUnbufferedChannel) {
    auto a = photon::make_channel<int>(4);
    a << 1 << 2;
    channel<int> b(std::move(a));
    EXPECT_EQ(4u, b.capacity());
    EXPECT_EQ(2u, b.size());
    EXPECT_EQ(0u, a.capacity());
    EXPECT_TRUE(a.empty());
    EXPECT_FALSE(a.try_send(3)) << "unbuffered, nobody receives";
    channel<int> c(2);
    c << 9;
    c = std::move(b);
    EXPECT_EQ(1, c.recv().first);
    EXPECT_EQ(2, c.recv().first);
}

TEST_F(Channel, AnUnallocatableCapacityFailsEveryOperationWithEnomem) {
    channel<int> ch(SIZE_MAX / 2);
    EXPECT_TRUE(ch.is_closed());
    EXPECT_FALSE(ch.send(1));
    EXPECT_EQ(ENOMEM, errno);
    int v;
    EXPECT_FALSE(ch.recv(v));
    EXPECT_EQ(ENOMEM, errno);
}

TEST_F(Channel, AnInterruptDoesNotEndAParkedRecvButShutdownDoes) {
    channel<int> ch;
    int got = 0;
    auto receiver = go_joinable([&] { EXPECT_TRUE(ch.recv(got, kLongUs)); });
    ASSERT_TRUE(until_sleeping(receiver.th));
    photon::thread_interrupt(receiver.th);
    run_others();
    ASSERT_TRUE(until_sleeping(receiver.th)) << "parked again after the interrupt";
    ASSERT_TRUE(ch.send(5, kLongUs));
    receiver.join();
    EXPECT_EQ(5, got);

    auto doomed = go_joinable([&] {
        EXPECT_FALSE(ch.recv(got, kLongUs));
        EXPECT_EQ(EPERM, errno);
    });
    ASSERT_TRUE(until_sleeping(doomed.th));
    photon::thread_shutdown(doomed.th);
    doomed.join();
}

TEST_F(Channel, BlockingOperationsOutsideAVcpuFailWithEnosys) {
    channel<int> ch(1);
    int recv_errno = 0, try_ok = 0;
    std::thread os([&] {
        int v;
        if (!ch.recv(v)) recv_errno = errno;
        try_ok = ch.try_send(1);
    });
    os.join();
    EXPECT_EQ(ENOSYS, recv_errno);
    EXPECT_TRUE(try_ok);
    EXPECT_EQ(1, ch.recv().first);
}

TEST_F(Channel, ATrySendFromAPlainOsThreadWakesAParkedReceiver) {
    channel<int> ch;
    int got = 0;
    auto receiver = go_joinable([&] { EXPECT_TRUE(ch.recv(got, kLongUs)); });
    ASSERT_TRUE(until_sleeping(receiver.th));
    bool sent = false;
    std::thread os([&] { sent = ch.try_send(77); });
    os.join();
    EXPECT_TRUE(sent);
    receiver.join();
    EXPECT_EQ(77, got);
}

// ---- unbuffered channels --------------------------------------------------------

TEST_F(UnbufferedChannel, ASendCompletesOnlyWhenAReceiverTakesTheValue) {
    channel<int> ch;
    bool sent = false;
    auto sender = go_joinable([&] { sent = ch.send(42, kLongUs); });
    ASSERT_TRUE(until_sleeping(sender.th));
    EXPECT_FALSE(sent);
    EXPECT_EQ(0u, ch.size());
    EXPECT_EQ(42, ch.recv(kLongUs).first);
    sender.join();
    EXPECT_TRUE(sent);
}

TEST_F(UnbufferedChannel, TrySendSucceedsOnlyWithAParkedReceiver) {
    channel<int> ch;
    EXPECT_FALSE(ch.try_send(1));
    EXPECT_EQ(EAGAIN, errno);
    int got = 0;
    auto receiver = go_joinable([&] { EXPECT_TRUE(ch.recv(got, kLongUs)); });
    ASSERT_TRUE(until_sleeping(receiver.th));
    EXPECT_TRUE(ch.try_send(2));
    EXPECT_FALSE(ch.try_send(3)) << "the one receiver is served";
    receiver.join();
    EXPECT_EQ(2, got);
}

// Photon's try_recv only saw a value already put in its hand-off slot.
TEST_F(UnbufferedChannel, TryRecvTakesFromAParkedSender) {
    channel<int> ch;
    auto sender = go_joinable([&] { EXPECT_TRUE(ch.send(8, kLongUs)); });
    ASSERT_TRUE(until_sleeping(sender.th));
    int v = 0;
    EXPECT_TRUE(ch.try_recv(v));
    EXPECT_EQ(8, v);
    sender.join();
}

// Photon's second sender overwrote the first one's pending value, and the
// first then slept until its timeout although its value was gone.
TEST_F(UnbufferedChannel, TwoParkedSendersBothDeliverAndBothReturn) {
    channel<int> ch;
    std::vector<task> senders;
    int ok = 0;
    for (int i = 1; i <= 2; i++)
        senders.push_back(go_joinable([&, i] { ok += ch.send(i * 10, kLongUs); }));
    for (auto& s : senders) ASSERT_TRUE(until_sleeping(s.th));
    int a = 0, b = 0;
    ASSERT_TRUE(ch.recv(a, kLongUs));
    ASSERT_TRUE(ch.recv(b, kLongUs));
    EXPECT_EQ(10, a) << "senders are served in arrival order";
    EXPECT_EQ(20, b);
    auto t0 = Clock::now();
    for (auto& s : senders) s.join();
    EXPECT_LT(us_since(t0), 1000u * 1000) << "no sender waits for its timeout";
    EXPECT_EQ(2, ok);
}

// Photon left a timed-out sender's value for whoever came next.
TEST_F(UnbufferedChannel, ATimedOutSendIsNotDeliveredLater) {
    channel<int> ch;
    EXPECT_FALSE(ch.send(1, 5 * 1000));
    EXPECT_EQ(ETIMEDOUT, errno);
    int v = 0;
    EXPECT_FALSE(ch.try_recv(v));
    EXPECT_FALSE(ch.recv(v, 5 * 1000));
    EXPECT_EQ(0, v);
}

// ---- close ------------------------------------------------------------------------

TEST_F(Close, WakesEveryParkedReceiverAndSender) {
    channel<int> in;       // receivers park on it
    channel<int> full(1);  // senders park on it
    full << 0;
    std::vector<task> ts;
    int failed = 0;
    for (int i = 0; i < 3; i++) {
        ts.push_back(go_joinable([&] {
            int v;
            if (!in.recv(v, kLongUs) && errno == ESHUTDOWN) failed++;
        }));
        ts.push_back(go_joinable([&] {
            if (!full.send(1, kLongUs) && errno == ESHUTDOWN) failed++;
        }));
    }
    for (auto& t : ts) ASSERT_TRUE(until_sleeping(t.th));
    in.close();
    full.close();
    auto t0 = Clock::now();
    for (auto& t : ts) t.join();
    EXPECT_LT(us_since(t0), 1000u * 1000);
    EXPECT_EQ(6, failed);
    EXPECT_EQ(0, full.recv().first) << "a closed channel still drains";
    EXPECT_FALSE(full.recv().second);
    EXPECT_EQ(ESHUTDOWN, errno);
}

TEST_F(Close, SendsFailAndAClosedEmptyRecvLeavesItsTargetAlone) {
    channel<int> ch(2);
    ch.close();
    ch.close();  // again: nothing
    EXPECT_TRUE(ch.is_closed());
    EXPECT_FALSE(ch.send(1));
    EXPECT_EQ(ESHUTDOWN, errno);
    EXPECT_FALSE(ch.try_send(1));
    EXPECT_EQ(ESHUTDOWN, errno);
    int v = -1;
    EXPECT_FALSE(ch.recv(v));
    EXPECT_FALSE(ch.try_recv(v));
    EXPECT_EQ(ESHUTDOWN, errno);
    EXPECT_EQ(-1, v);
}

// Photon's select never saw a closed channel and spun for ever.
TEST_F(Close, WakesAParkedSelectWhoseRecvCaseThenSeesOkFalse) {
    channel<int> a, b;
    int fired = -2;
    bool ok = true;
    auto selector = go_joinable([&] {
        fired = photon::select(photon::recv_case_of(a, [&](int, bool o) { ok = o; }),
                               photon::recv_case_of(b, [&](int, bool o) { ok = o; }));
    });
    ASSERT_TRUE(until_sleeping(selector.th));
    b.close();
    selector.join();
    EXPECT_EQ(1, fired);
    EXPECT_FALSE(ok);
}

// ---- select ------------------------------------------------------------------------

TEST_F(Select, NonblockReturnsMinusOneWhenNothingIsReady) {
    channel<int> a(1), b;
    bool ran = false;
    EXPECT_EQ(-1, photon::select_nonblock(photon::recv_case_of(a, [&](int, bool) { ran = true; }),
                                          photon::send_case_of(b, 1, [&] { ran = true; })));
    EXPECT_FALSE(ran);
    EXPECT_EQ(-1, photon::select_nonblock());
}

TEST_F(Select, NonblockRunsTheReadyCaseAfterItsOperation) {
    channel<int> empty(1), full(1), room(1);
    full << 42;
    int got = 0;
    int r = photon::select_nonblock(photon::recv_case_of(empty, [&](int, bool) { got = -1; }),
                                    photon::recv_case_of(full, [&](int v, bool ok) {
                                        EXPECT_TRUE(ok);
                                        got = v;
                                    }));
    EXPECT_EQ(1, r);
    EXPECT_EQ(42, got);
    bool sent = false;
    EXPECT_EQ(0, photon::select_nonblock(photon::send_case_of(room, 5, [&] { sent = true; })));
    EXPECT_TRUE(sent);
    EXPECT_EQ(5, room.recv().first);
}

TEST_F(Select, PicksFairlyAmongReadyCases) {
    constexpr int kRounds = 2000;
    channel<int> a(kRounds), b(kRounds);
    for (int i = 0; i < kRounds; i++) {
        a << i;
        b << i;
    }
    int picked[2] = {0, 0};
    for (int i = 0; i < kRounds; i++) {
        int r = photon::select(photon::recv_case_of(a, [](int, bool) {}),
                               photon::recv_case_of(b, [](int, bool) {}));
        ASSERT_TRUE(r == 0 || r == 1);
        picked[r]++;
    }
    EXPECT_GT(picked[0], kRounds / 4);
    EXPECT_GT(picked[1], kRounds / 4);
}

TEST_F(Select, ParksInsteadOfSpinningUntilASendArrives) {
    channel<int> a, b(1);
    int got = 0, fired = -2;
    auto selector = go_joinable([&] {
        fired = photon::select(photon::recv_case_of(a, [&](int v, bool) { got = v; }),
                               photon::recv_case_of(b, [&](int v, bool) { got = v; }));
    });
    ASSERT_TRUE(until_sleeping(selector.th)) << "a select with nothing ready sleeps";
    ASSERT_TRUE(a.send(123, kLongUs));
    selector.join();
    EXPECT_EQ(0, fired);
    EXPECT_EQ(123, got);
}

TEST_F(Select, TimesOutWithEtimedout) {
    channel<int> a, b(1);
    auto t0 = Clock::now();
    EXPECT_EQ(-1, photon::select(Timeout(20 * 1000), photon::recv_case_of(a, [](int, bool) {}),
                                 photon::recv_case_of(b, [](int, bool) {})));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 19 * 1000u);
    EXPECT_EQ(-1, photon::select(Timeout(1000)));
    EXPECT_EQ(ETIMEDOUT, errno);
}

TEST_F(Select, OnlyOneCaseFiresWhenSeveralBecomeReady) {
    channel<int> a, b;
    int fired = -2, runs = 0;
    auto selector = go_joinable([&] {
        fired = photon::select(photon::recv_case_of(a, [&](int, bool) { runs++; }),
                               photon::recv_case_of(b, [&](int, bool) { runs++; }));
    });
    ASSERT_TRUE(until_sleeping(selector.th));
    EXPECT_TRUE(a.try_send(1));
    EXPECT_FALSE(b.try_send(2)) << "the select took one value only";
    selector.join();
    EXPECT_EQ(0, fired);
    EXPECT_EQ(1, runs);
}

TEST_F(Select, AParkedSendCaseCompletesWhenAReceiverComes) {
    channel<std::string> out, unused;
    bool sent = false;
    auto selector = go_joinable([&] {
        EXPECT_EQ(0,
                  photon::select(photon::send_case_of(out, std::string("hi"), [&] { sent = true; }),
                                 photon::recv_case_of(unused, [](std::string, bool) {})));
    });
    ASSERT_TRUE(until_sleeping(selector.th));
    EXPECT_EQ("hi", out.recv(kLongUs).first);
    selector.join();
    EXPECT_TRUE(sent);
}

TEST_F(Select, ASendCaseOnAClosedChannelNeverFires) {
    channel<int> closed(1), open;
    closed.close();
    bool ran = false;
    errno = 0;
    EXPECT_EQ(-1, photon::select_nonblock(photon::send_case_of(closed, 1, [&] { ran = true; })));
    EXPECT_EQ(ESHUTDOWN, errno);
    auto t0 = Clock::now();
    EXPECT_EQ(-1, photon::select(photon::send_case_of(closed, 1, [&] { ran = true; })));
    EXPECT_EQ(ESHUTDOWN, errno) << "only sends on closed channels: nothing can ever happen";
    EXPECT_LT(us_since(t0), 1000u * 1000);
    EXPECT_EQ(-1, photon::select(Timeout(5 * 1000), photon::send_case_of(closed, 1, [] {}),
                                 photon::recv_case_of(open, [](int, bool) {})));
    EXPECT_EQ(ETIMEDOUT, errno);
    // Parked on both; closing the send case's channel leaves the select waiting.
    int fired = -2;
    channel<int> later(1);
    auto selector = go_joinable([&] {
        fired = photon::select(photon::send_case_of(open, 1, [&] { ran = true; }),
                               photon::recv_case_of(later, [](int, bool) {}));
    });
    ASSERT_TRUE(until_sleeping(selector.th));
    open.close();
    run_others();
    ASSERT_TRUE(until_sleeping(selector.th));
    later << 3;
    selector.join();
    EXPECT_EQ(1, fired);
    EXPECT_FALSE(ran);
}

// A closed channel is always ready; without the yield, this loop would
// spin on `a` and the coroutine feeding `b` would never run.
TEST_F(Select, ALoopOverAClosedChannelStillLetsTheOtherCasesFeederRun) {
    channel<int> a, b;
    a.close();
    auto feeder = go_joinable([&] {
        for (int i = 0; i < 10; i++) EXPECT_TRUE(b.send(i, kLongUs));
        b.close();
    });
    int got = 0, closed_seen = 0;
    bool a_open = true, b_open = true;
    for (int rounds = 0; b_open && rounds < 100000; rounds++) {
        photon::select(photon::recv_case_of(a,
                                            [&](int, bool ok) {
                                                EXPECT_FALSE(ok);
                                                closed_seen++;
                                                a_open = false;
                                            }),
                       photon::recv_case_of(b, [&](int, bool ok) { ok ? got++ : b_open = false; }));
    }
    feeder.join();
    EXPECT_FALSE(b_open);
    EXPECT_FALSE(a_open);
    EXPECT_GT(closed_seen, 0);
    EXPECT_EQ(10, got);
}

TEST_F(Select, SendAndRecvCasesOnTheSameChannel) {
    channel<int> ch(1);
    int r = photon::select(photon::recv_case_of(ch, [](int, bool) {}),
                           photon::send_case_of(ch, 4, [] {}));
    EXPECT_EQ(1, r) << "only the send is ready on an empty buffer";
    r = photon::select(photon::recv_case_of(ch, [](int v, bool) { EXPECT_EQ(4, v); }),
                       photon::send_case_of(ch, 5, [] {}));
    EXPECT_EQ(0, r) << "only the recv is ready on a full buffer";
}

struct flag_case {
    bool* flag;
    int* runs;
    bool ready() { return *flag; }
    void execute() { ++*runs; }
};

TEST_F(Select, PollsCasesThatAreNotChannels) {
    channel<int> ch;
    bool flag = false;
    int runs = 0, fired = -2;
    auto selector = go_joinable([&] {
        fired = photon::select(photon::recv_case_of(ch, [](int, bool) {}), flag_case{&flag, &runs});
    });
    run_others();
    flag = true;
    selector.join();
    EXPECT_EQ(1, fired);
    EXPECT_EQ(1, runs);
}

// ---- across vCPUs -------------------------------------------------------------------

// Runs body() on a new OS thread that is a vCPU meanwhile.
template <typename F>
std::thread on_new_vcpu(F body) {
    return std::thread([body]() mutable {
        if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) != 0) {
            ADD_FAILURE() << "photon::init failed";
            return;
        }
        body();
        photon::fini();
    });
}

TEST_F(ChannelCrossVcpu, UnbufferedPingPongBetweenTwoVcpus) {
    constexpr int kRounds = 2000;
    channel<int> ping, pong;
    std::atomic<int> failures{0};
    int last = -1;
    auto a = on_new_vcpu([&] {
        for (int i = 0; i < kRounds; i++) {
            int v = -1;
            if (!ping.send(i, kLongUs) || !pong.recv(v, kLongUs) || v != i + 1) {
                failures++;
                return;
            }
        }
        ping.close();
    });
    auto b = on_new_vcpu([&] {
        for (int v; ping.recv(v, kLongUs);) {
            last = v;
            if (!pong.send(v + 1, kLongUs)) failures++;
        }
    });
    a.join();
    b.join();
    EXPECT_EQ(0, failures.load());
    EXPECT_EQ(kRounds - 1, last);
}

TEST_F(ChannelCrossVcpu, ProducersAndConsumersOnSeveralVcpusLoseAndDuplicateNothing) {
    constexpr int kProducers = 3, kPerProducer = 2000, kConsumers = 2;
    channel<int> ch(8);
    std::atomic<int> producing{kProducers}, received{0}, failures{0};
    std::atomic<long> sum{0};
    std::vector<std::thread> vcpus;
    for (int p = 0; p < kProducers; p++)
        vcpus.push_back(on_new_vcpu([&, p] {
            for (int i = 0; i < kPerProducer; i++)
                if (!ch.send(p * kPerProducer + i, kLongUs)) failures++;
            if (--producing == 0) ch.close();
        }));
    for (int c = 0; c < kConsumers; c++)
        vcpus.push_back(on_new_vcpu([&] {
            // Two coroutines per consumer vCPU, one receiving through select.
            auto other = go_joinable([&] {
                for (int v; ch.recv(v, kLongUs);) sum += v, received++;
            });
            for (bool open = true; open;) {
                photon::select(photon::recv_case_of(ch, [&](int v, bool ok) {
                    open = ok;
                    if (ok) sum += v, received++;
                }));
            }
            other.join();
        }));
    for (auto& t : vcpus) t.join();
    constexpr long n = long(kProducers) * kPerProducer;
    EXPECT_EQ(0, failures.load());
    EXPECT_EQ(n, received.load());
    EXPECT_EQ(n * (n - 1) / 2, sum.load());
}

TEST_F(ChannelCrossVcpu, CloseFromAnotherVcpuWakesParkedSelectsAndReceivers) {
    channel<int> ch;
    std::atomic<int> woken{0};
    std::atomic<bool> parked{false};
    auto waiters = on_new_vcpu([&] {
        auto r = go_joinable([&] {
            int v;
            if (!ch.recv(v, kLongUs) && errno == ESHUTDOWN) woken++;
        });
        auto s = go_joinable([&] {
            photon::select(Timeout(kLongUs), photon::recv_case_of(ch, [&](int, bool ok) {
                               if (!ok) woken++;
                           }));
        });
        parked = until_sleeping(r.th) && until_sleeping(s.th);
        r.join();
        s.join();
    });
    ASSERT_TRUE(wait_for([&] { return parked.load(); }));
    ch.close();
    waiters.join();
    EXPECT_EQ(2, woken.load());
}

}  // namespace
