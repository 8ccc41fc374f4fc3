// Code written the way PhotonLibOS users write go.h code compiles and runs
// here: `using namespace photon`, unqualified go/channel/select, the
// recv_case_of/send_case_of helpers, Timeout arguments, range-for over a
// channel, a fixture that calls photon::init/fini per test; plus Photon's
// intrusive list and PAGE_SIZE under their Photon paths. The functions above
// the gtest include see only what the photon headers included.
#include <photon/photon.h>
#include <photon/common/intrusive_list.h>
#include <photon/thread/arch.h>
#include <photon/thread/go.h>
#include <photon/thread/list.h>

using namespace photon;

namespace {

// A pipeline: a generator, a squarer, and the caller summing; the stages
// end by closing their output.
long pipeline_sum(int n) {
    channel<int> numbers(4);
    channel<long> squares;
    go([&numbers, n] {
        for (int i = 1; i <= n; i++) numbers << i;
        numbers.close();
    });
    go([&] {
        for (auto x : numbers) squares.send((long)x * x);
        squares.close();
    });
    long sum = 0;
    for (auto s : squares) sum += s;
    return sum;
}

// Fan-in with select until both inputs are closed; returns values received.
int fan_in(int per_input) {
    channel<int> a(2), b;
    go([&a, per_input] {
        for (int i = 0; i < per_input; i++) a.send(i);
        a.close();
    });
    go(64 * 1024, [&b, per_input] {
        for (int i = 0; i < per_input; i++) b.send(i);
        b.close();
    });
    int got = 0;
    bool a_open = true, b_open = true;  // a closed channel stays ready: count it once
    while (a_open || b_open) {
        select(recv_case_of(a, [&](int, bool ok) { ok ? got++ : a_open = false; }),
               recv_case_of(b, [&](int, bool ok) { ok ? got++ : b_open = false; }));
    }
    return got;
}

struct item : intrusive_list_node<item> {
    int v;
    explicit item(int v) : v(v) {}
};

int list_sum_then_clear() {
    intrusive_list<item> lst;
    for (int i = 1; i <= 4; i++) lst.push_back(new item(i));
    int sum = 0;
    for (auto x : lst) sum += x->v;
    lst.delete_all();
    return sum;
}

}  // namespace

#include <gtest/gtest.h>

#include <unistd.h>  // sysconf(): no Photon header promises it

namespace {

class GoStyle : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(0, photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE)); }
    void TearDown() override { photon::fini(); }
};

TEST_F(GoStyle, PipelineOfGoroutinesAndChannelsEndsByClosing) {
    EXPECT_EQ(100L * 101 * 201 / 6, pipeline_sum(100));
}

TEST_F(GoStyle, SelectFanInSeesBothInputsClose) { EXPECT_EQ(2 * 50, fan_in(50)); }

TEST_F(GoStyle, TimedOperationsAndNonblockingSelect) {
    channel<int> ch(1);
    EXPECT_FALSE(ch.recv(Timeout(1000)).second);
    EXPECT_TRUE(ch.send(1, Timeout(1000)));
    EXPECT_FALSE(ch.send(2, 1000));
    int got = 0;
    EXPECT_EQ(0, select_nonblock(recv_case_of(ch, [&](int v, bool) { got = v; })));
    EXPECT_EQ(1, got);
    EXPECT_EQ(-1, select(Timeout(1000), recv_case_of(ch, [](int, bool) {})));
    auto ch2 = make_channel<int>(3);
    EXPECT_EQ(3u, ch2.capacity());
}

TEST_F(GoStyle, IntrusiveListAndPageSizeUnderPhotonPaths) {
    EXPECT_EQ(10, list_sum_then_clear());
    EXPECT_EQ((uint32_t)sysconf(_SC_PAGESIZE), photon::PAGE_SIZE);
}

}  // namespace
