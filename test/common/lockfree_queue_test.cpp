// photon/common/lockfree_queue.h: capacity rounding, full/empty, wrap-around and batches on one
// thread; exactly-once delivery under SPSC and MPMC load from std::threads; RingChannel between
// OS threads and vCPUs. Every load loop is bounded in item count and in time.
#include <photon/common/lockfree_queue.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

// A deadline for load loops: far beyond what the test needs, so passing it means a bug.
// A guard against a hang, not a speed check: with more spinning threads than cores, a thread
// preempted between its reservation and its publication stalls the others for whole time slices,
// and a run that takes 0.1 s alone can take tens of seconds beside other tests.
struct deadline {
    Clock::time_point end = Clock::now() + std::chrono::seconds(90);
    bool passed() const { return Clock::now() > end; }
};

// Spins until pred() holds or 5 s pass (OS threads, no vCPU needed).
template <typename P>
bool spin_until(P pred) {
    auto end = Clock::now() + std::chrono::seconds(5);
    while (!pred() && Clock::now() < end) std::this_thread::yield();
    return pred();
}

// ---- static properties -------------------------------------------------------------------

static_assert(LockfreeSPSCRingQueue<int, 1>::SLOTS_NUM == 2, "N = 1 holds 2 like its capacity");
static_assert(LockfreeSPSCRingQueue<int, 2>::SLOTS_NUM == 2, "");
static_assert(LockfreeSPSCRingQueue<int, 3>::SLOTS_NUM == 4, "");
static_assert(LockfreeMPMCRingQueue<int, 256>::SLOTS_NUM == 256, "");
static_assert(LockfreeBatchMPMCRingQueue<int, 257>::SLOTS_NUM == 512, "");
static_assert(LockfreeMPMCRingQueue<int, 0>::SLOTS_NUM == 0, "the Flex base has no slots");
static_assert(sizeof(LockfreeMPMCRingQueue<int, 4>::packedslot) == CPUCacheLine::SIZE,
              "a slot per cache line");

// ---- one thread, every queue kind -------------------------------------------------------

template <typename Q>
struct fixed {
    using queue = Q;
    std::unique_ptr<Q> q{new Q()};
    Q& get() { return *q; }
};

template <typename F>
struct flex {
    using queue = F;
    F* q = F::create(100);
    ~flex() { F::destroy(q); }
    F& get() { return *q; }
};

template <typename H>
class AnyQueue : public ::testing::Test {
protected:
    H holder;  // every kind asks for 100 slots
};

using AllKinds = ::testing::Types<
    fixed<LockfreeMPMCRingQueue<int, 100>>, fixed<LockfreeBatchMPMCRingQueue<int, 100>>,
    fixed<LockfreeSPSCRingQueue<int, 100>>, flex<FlexLockfreeMPMCRingQueue<int>>,
    flex<FlexLockfreeBatchMPMCRingQueue<int>>, flex<FlexLockfreeSPSCRingQueue<int>>>;
TYPED_TEST_SUITE(AnyQueue, AllKinds);

TYPED_TEST(AnyQueue, HoldsExactlyTheRoundedCapacityAndRefusesMore) {
    auto& q = this->holder.get();
    ASSERT_EQ(128u, q.capacity);
    EXPECT_TRUE(q.empty());
    EXPECT_FALSE(q.full());
    EXPECT_EQ(0u, q.read_available());
    EXPECT_EQ(128u, q.write_available());
    int x = -1;
    EXPECT_FALSE(q.pop(x));
    EXPECT_EQ(-1, x) << "a failed pop leaves its argument alone";
    for (int i = 0; i < 128; i++) ASSERT_TRUE(q.push(i)) << i;
    EXPECT_TRUE(q.full());
    EXPECT_FALSE(q.push(1000)) << "full: refused, not overwritten";
    EXPECT_EQ(128u, q.read_available());
    EXPECT_EQ(0u, q.write_available());
    for (int i = 0; i < 128; i++) {
        ASSERT_TRUE(q.pop(x));
        ASSERT_EQ(i, x);
    }
    EXPECT_FALSE(q.pop(x));
    EXPECT_TRUE(q.empty());
}

TYPED_TEST(AnyQueue, WrapsAroundManyLapsInFifoOrder) {
    auto& q = this->holder.get();
    int next_in = 0, next_out = 0;
    for (int round = 0; round < 3000; round++) {
        int k = 1 + round % 128;
        for (int i = 0; i < k; i++) ASSERT_TRUE(q.push(next_in++));
        ASSERT_EQ((size_t)k, q.read_available());
        ASSERT_EQ(128u - k, q.write_available());
        for (int i = 0; i < k; i++) {
            int x;
            ASSERT_TRUE(q.pop(x));
            ASSERT_EQ(next_out++, x);
        }
        ASSERT_TRUE(q.empty());
    }
    EXPECT_GT(next_in, 1000 * (int)q.capacity) << "went round the ring many times";
}

TYPED_TEST(AnyQueue, SendAndRecvRoundTripWhenTheyNeedNotWait) {
    auto& q = this->holder.get();
    for (int i = 0; i < 128; i++) q.template send<CPUPause>(i);
    for (int i = 0; i < 128; i++) ASSERT_EQ(i, q.template recv<CPUPause>());
    EXPECT_TRUE(q.empty());
}

// ---- batches (Batch MPMC and SPSC) --------------------------------------------------------

template <typename H>
class BatchQueue : public AnyQueue<H> {};

using BatchKinds = ::testing::Types<
    fixed<LockfreeBatchMPMCRingQueue<int, 100>>, fixed<LockfreeSPSCRingQueue<int, 100>>,
    flex<FlexLockfreeBatchMPMCRingQueue<int>>, flex<FlexLockfreeSPSCRingQueue<int>>>;
TYPED_TEST_SUITE(BatchQueue, BatchKinds);

TYPED_TEST(BatchQueue, PushBatchStoresWhatFitsAndPopBatchWrapsInOrder) {
    auto& q = this->holder.get();
    std::vector<int> in(200), out(200, -1);
    for (int i = 0; i < 200; i++) in[i] = i;
    EXPECT_EQ(0u, q.push_batch(in.data(), 0));
    EXPECT_EQ(0u, q.pop_batch(out.data(), 0));
    EXPECT_EQ(0u, q.pop_batch(out.data(), 10)) << "empty";
    ASSERT_EQ(100u, q.push_batch(in.data(), 100));
    ASSERT_EQ(60u, q.pop_batch(out.data(), 60));
    for (int i = 0; i < 60; i++) ASSERT_EQ(i, out[i]);
    // 40 left at positions 60..99; 88 slots free, and the run wraps past slot 127.
    EXPECT_EQ(88u, q.push_batch(in.data() + 100, 100));
    EXPECT_TRUE(q.full());
    EXPECT_EQ(0u, q.push_batch(in.data(), 1));
    ASSERT_EQ(128u, q.pop_batch(out.data(), 200));
    for (int i = 0; i < 128; i++) ASSERT_EQ(60 + i, out[i]) << i;
    EXPECT_TRUE(q.empty());
}

TYPED_TEST(BatchQueue, SendBatchAndRecvBatch) {
    auto& q = this->holder.get();
    std::vector<int> in(50), out(100, -1);
    for (int i = 0; i < 50; i++) in[i] = i * 3;
    q.template send_batch<CPUPause>(in.data(), in.size());
    EXPECT_EQ(0u, q.template recv_batch<CPUPause>(out.data(), 0));
    ASSERT_EQ(50u, q.template recv_batch<CPUPause>(out.data(), 100));
    for (int i = 0; i < 50; i++) ASSERT_EQ(i * 3, out[i]);
}

// ---- SPSC in-place batches ----------------------------------------------------------------

TEST(SpscQueue, ProduceAndConsumeGetTwoRunsWhereTheRingWraps) {
    LockfreeSPSCRingQueue<int, 8> q;
    int x;
    for (int i = 0; i < 6; i++) ASSERT_TRUE(q.push(i));
    for (int i = 0; i < 6; i++) ASSERT_TRUE(q.pop(x));
    int calls = 0;
    size_t n = q.produce_push_batch(5, [&](int* p1, size_t n1, int* p2, size_t n2) {
        calls++;
        EXPECT_EQ(2u, n1);
        EXPECT_EQ(3u, n2);
        EXPECT_EQ(p1 + 2, p2 + 8) << "p1 is slot 6, p2 slot 0";
        for (size_t i = 0; i < n1; i++) p1[i] = 100 + i;
        for (size_t i = 0; i < n2; i++) p2[i] = 102 + i;
    });
    EXPECT_EQ(5u, n);
    EXPECT_EQ(1, calls);
    n = q.consume_pop_batch(10, [&](const int* p1, size_t n1, const int* p2, size_t n2) {
        ASSERT_EQ(2u, n1);
        ASSERT_EQ(3u, n2);
        for (size_t i = 0; i < n1; i++) EXPECT_EQ(100 + (int)i, p1[i]);
        for (size_t i = 0; i < n2; i++) EXPECT_EQ(102 + (int)i, p2[i]);
    });
    EXPECT_EQ(5u, n);
    // A run that does not wrap comes as one.
    n = q.produce_push_batch(3, [&](int* p1, size_t n1, int* p2, size_t n2) {
        EXPECT_EQ(3u, n1);
        EXPECT_EQ(nullptr, p2);
        EXPECT_EQ(0u, n2);
        for (size_t i = 0; i < n1; i++) p1[i] = 7;
    });
    EXPECT_EQ(3u, n);
}

TEST(SpscQueue, ProducePushBatchFullyIsAllOrNothing) {
    LockfreeSPSCRingQueue<int, 8> q;
    for (int i = 0; i < 5; i++) ASSERT_TRUE(q.push(i));
    int calls = 0;
    auto fill = [&](int* p1, size_t n1, int* p2, size_t n2) {
        calls++;
        for (size_t i = 0; i < n1; i++) p1[i] = 50;
        for (size_t i = 0; i < n2; i++) p2[i] = 50;
    };
    EXPECT_EQ(0u, q.produce_push_batch_fully(4, fill));
    EXPECT_EQ(0, calls) << "not called when it cannot have all";
    EXPECT_EQ(5u, q.read_available());
    EXPECT_EQ(0u, q.produce_push_batch_fully(0, fill));
    EXPECT_EQ(0u, q.produce_push_batch(0, fill));
    EXPECT_EQ(0, calls);
    EXPECT_EQ(3u, q.produce_push_batch_fully(3, fill));
    EXPECT_TRUE(q.full());
    EXPECT_EQ(0u, q.produce_push_batch(4, fill));
    EXPECT_EQ(1, calls);
}

TEST(SpscQueue, PartialProducePushBatchTakesWhatIsFree) {
    LockfreeSPSCRingQueue<int, 8> q;
    for (int i = 0; i < 5; i++) ASSERT_TRUE(q.push(i));
    size_t got = 0;
    EXPECT_EQ(3u, q.produce_push_batch(4, [&](int* p1, size_t n1, int*, size_t n2) {
        got = n1 + n2;
        for (size_t i = 0; i < n1; i++) p1[i] = 5 + i;
    }));
    EXPECT_EQ(3u, got);
    int x;
    for (int i = 0; i < 8; i++) {
        ASSERT_TRUE(q.pop(x));
        EXPECT_EQ(i, x);
    }
}

// ---- MPMC specifics -----------------------------------------------------------------------

TEST(MpmcQueue, CapacityOfOneHoldsTwo) {
    LockfreeMPMCRingQueue<int, 1> q;
    EXPECT_EQ(2u, q.capacity);
    EXPECT_TRUE(q.push(1));
    EXPECT_TRUE(q.push(2));
    EXPECT_FALSE(q.push(3));
    int x;
    EXPECT_TRUE(q.pop(x));
    EXPECT_EQ(1, x);
    EXPECT_TRUE(q.pop(x));
    EXPECT_EQ(2, x);
}

// The cursors are protected, as in Photon.
template <size_t N>
struct probed_mpmc : LockfreeMPMCRingQueue<int, N> {
    size_t head_pos() const { return this->head.load(); }
    size_t tail_pos() const { return this->tail.load(); }
};

// Photon's pop() spun forever here and empty() said false.
TEST(MpmcQueue, PopSeesAnEmptyQueueWhileARecvWaitsAhead) {
    probed_mpmc<4> q;
    int got = 0;
    std::thread r([&] { got = q.recv<ThreadPause>(); });
    ASSERT_TRUE(spin_until([&] { return q.head_pos() == 1; }));
    int x;
    EXPECT_FALSE(q.pop(x));
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(0u, q.read_available());
    EXPECT_TRUE(q.push(42));
    r.join();
    EXPECT_EQ(42, got);
    EXPECT_FALSE(q.pop(x));
    EXPECT_TRUE(q.push(43));
    EXPECT_TRUE(q.pop(x) && x == 43);
}

TEST(MpmcQueue, SendPastAFullQueueIsServedWhenRoomAppears) {
    probed_mpmc<2> q;
    ASSERT_TRUE(q.push(1));
    ASSERT_TRUE(q.push(2));
    std::thread s([&] { q.send<ThreadPause>(3); });
    ASSERT_TRUE(spin_until([&] { return q.tail_pos() == 3; }));
    EXPECT_TRUE(q.full());
    EXPECT_FALSE(q.push(9)) << "a waiting send holds a position: still full";
    int x;
    ASSERT_TRUE(q.pop(x));
    EXPECT_EQ(1, x);
    s.join();
    EXPECT_TRUE(q.pop(x) && x == 2);
    EXPECT_TRUE(q.pop(x) && x == 3);
    EXPECT_FALSE(q.pop(x));
}

TEST(MpmcQueue, ANarrowMarkTypeWrapsHarmlessly) {
    LockfreeMPMCRingQueue<int, 4, uint8_t> q;
    int x;
    for (int i = 0; i < 100000; i++) {  // 25000 laps: the 8-bit marks wrap ~200 times
        ASSERT_TRUE(q.push(i));
        if (i % 3 == 0) {
            ASSERT_TRUE(q.push(-1));
        }
        ASSERT_TRUE(q.pop(x));
        if (x == -1) {
            ASSERT_TRUE(q.pop(x));
        }
        ASSERT_EQ(i, x);
    }
}

// ---- Flex ---------------------------------------------------------------------------------

TEST(FlexQueue, CreateRoundsTheCapacityAndRefusesHugeOnes) {
    using F = FlexLockfreeSPSCRingQueue<int>;
    for (auto c : {0ul, 1ul, 2ul, 3ul, 1000ul, 1ul << 20}) {
        F* q = F::create(c);
        ASSERT_NE(nullptr, q) << c;
        EXPECT_EQ(photon::lockfree_detail::ring_capacity(c), q->capacity) << c;
        EXPECT_EQ(0u, (uintptr_t)q % CPUCacheLine::SIZE);
        F::destroy(q);
    }
    errno = 0;
    EXPECT_EQ(nullptr, F::create(SIZE_MAX));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(0u, F::required_space(SIZE_MAX));
    EXPECT_EQ(0u, FlexLockfreeMPMCRingQueue<int>::required_space(1ul << 60));
    EXPECT_EQ(sizeof(F) + 128 * sizeof(int), F::required_space(100));
    F::destroy(nullptr);  // no-op
}

// Photon's init_on left the MPMC marks as whatever the memory held.
TEST(FlexQueue, InitOnBuildsAWorkingQueueOnDirtyMemory) {
    using F = FlexLockfreeMPMCRingQueue<int>;
    size_t space = F::required_space(16);
    void* mem = nullptr;
    ASSERT_EQ(0, posix_memalign(&mem, CPUCacheLine::SIZE, space + 64));
    memset(mem, 0xAB, space + 64);
    F* q = F::init_on(mem, 16);
    ASSERT_EQ(mem, (void*)q);
    for (int i = 0; i < 16; i++) ASSERT_TRUE(q->push(i));
    EXPECT_FALSE(q->push(16));
    int x;
    for (int i = 0; i < 16; i++) ASSERT_TRUE(q->pop(x) && x == i);
    F::deinit(q);
    errno = 0;
    EXPECT_EQ(nullptr, F::init_on((char*)mem + 8, 16)) << "misaligned";
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, F::init_on(nullptr, 16));
    EXPECT_EQ(nullptr, F::init_on(mem, SIZE_MAX));
    free(mem);
}

// ---- shared_ptr items ---------------------------------------------------------------------

template <typename Q>
void batch_keeps_reference_counts(Q& q) {
    auto p = std::make_shared<int>(7);
    std::shared_ptr<int> in[3] = {p, p, p}, out[3];
    ASSERT_EQ(4, p.use_count());
    ASSERT_EQ(3u, q.push_batch(in, 3));
    EXPECT_EQ(7, p.use_count()) << "copies counted, not memcpy'd";
    ASSERT_EQ(3u, q.pop_batch(out, 3));
    EXPECT_EQ(7, p.use_count()) << "moved out: the queue keeps no reference";
    for (auto& o : out) EXPECT_EQ(p, o);
    for (auto& s : in) s.reset();
    for (auto& s : out) s.reset();
    EXPECT_EQ(1, p.use_count());
}

TEST(SharedPtrItems, BatchCallsKeepExactReferenceCounts) {
    LockfreeSPSCRingQueue<std::shared_ptr<int>, 8> spsc;
    batch_keeps_reference_counts(spsc);
    LockfreeBatchMPMCRingQueue<std::shared_ptr<int>, 8> batch;
    batch_keeps_reference_counts(batch);
}

TEST(SharedPtrItems, PopReleasesAndDestroyFreesWhatIsLeft) {
    auto p = std::make_shared<int>(1);
    {
        LockfreeMPMCRingQueue<std::shared_ptr<int>, 4> q;
        ASSERT_TRUE(q.push(p));
        std::shared_ptr<int> x;
        ASSERT_TRUE(q.pop(x));
        x.reset();
        EXPECT_EQ(1, p.use_count());
    }
    auto* f = FlexLockfreeSPSCRingQueue<std::shared_ptr<int>>::create(4);
    ASSERT_NE(nullptr, f);
    ASSERT_TRUE(f->push(p));
    ASSERT_TRUE(f->push(p));
    EXPECT_EQ(3, p.use_count());
    FlexLockfreeSPSCRingQueue<std::shared_ptr<int>>::destroy(f);
    EXPECT_EQ(1, p.use_count()) << "destroy() destroys the items left";
}

// ---- many threads ---------------------------------------------------------------------------

TEST(SpscStress, OneProducerOneConsumerKeepOrder) {
    constexpr uint64_t kItems = 1 << 20;
    LockfreeSPSCRingQueue<uint64_t, 256> q;
    deadline dl;
    uint64_t received = 0, sum = 0, out_of_order = 0;
    std::thread consumer([&] {
        uint64_t x;
        while (received < kItems && !dl.passed()) {
            if (!q.pop(x)) {
                CPUPause::pause();
                continue;
            }
            out_of_order += (x != received);
            sum += x;
            received++;
        }
    });
    for (uint64_t i = 0; i < kItems && !dl.passed();)
        if (q.push(i))
            i++;
        else
            ThreadPause::pause();
    consumer.join();
    EXPECT_EQ(kItems, received);
    EXPECT_EQ(0u, out_of_order);
    EXPECT_EQ(kItems * (kItems - 1) / 2, sum);
}

TEST(SpscStress, BatchesOfRandomSizesKeepOrder) {
    constexpr uint64_t kItems = 1 << 20;
    FlexLockfreeSPSCRingQueue<uint64_t>* q = FlexLockfreeSPSCRingQueue<uint64_t>::create(100);
    ASSERT_NE(nullptr, q);
    DEFER(FlexLockfreeSPSCRingQueue<uint64_t>::destroy(q));
    deadline dl;
    uint64_t received = 0, out_of_order = 0;
    std::thread consumer([&] {
        std::minstd_rand rnd(2);
        uint64_t buf[64];
        while (received < kItems && !dl.passed()) {
            size_t n = q->pop_batch(buf, 1 + rnd() % 64);
            if (n == 0) ThreadPause::pause();
            for (size_t i = 0; i < n; i++) out_of_order += (buf[i] != received++);
        }
    });
    std::minstd_rand rnd(1);
    uint64_t buf[64];
    for (uint64_t next = 0; next < kItems && !dl.passed();) {
        size_t want = std::min<uint64_t>(1 + rnd() % 64, kItems - next);
        for (size_t i = 0; i < want; i++) buf[i] = next + i;
        size_t n = q->push_batch(buf, want);
        if (n == 0) ThreadPause::pause();
        next += n;
    }
    consumer.join();
    EXPECT_EQ(kItems, received);
    EXPECT_EQ(0u, out_of_order);
}

// Items per producer in the exactly-once runs: fewer where every step is many times slower
// (qemu-user, ThreadSanitizer), so that they stay well inside their deadline.
#if defined(PHOTON_TEST_EMULATED) || defined(__SANITIZE_THREAD__)
constexpr uint32_t kPerProducer = 25000;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr uint32_t kPerProducer = 25000;
#else
constexpr uint32_t kPerProducer = 100000;
#endif
#else
constexpr uint32_t kPerProducer = 100000;
#endif

// P producers push (producer << 32 | seq); C consumers pop. Every item must arrive once, and
// each consumer must see each producer's items in increasing order (a FIFO property).
template <typename Q, typename Push, typename Pop>
void exactly_once(Q& q, int producers, int consumers, uint32_t per_producer, Push push, Pop pop) {
    deadline dl;
    std::vector<std::vector<std::atomic<uint8_t>>> seen(producers);
    for (auto& s : seen) s = std::vector<std::atomic<uint8_t>>(per_producer);
    const uint64_t total = (uint64_t)producers * per_producer;
    std::atomic<uint64_t> received{0}, sum{0}, reordered{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < consumers; c++)
        threads.emplace_back([&] {
            std::vector<int64_t> last(producers, -1);
            uint64_t local_sum = 0;
            while (received.load(std::memory_order_relaxed) < total && !dl.passed()) {
                uint64_t x;
                if (!pop(q, x)) {
                    ThreadPause::pause();
                    continue;
                }
                uint32_t p = x >> 32, seq = (uint32_t)x;
                if ((int64_t)seq <= last[p]) reordered++;
                last[p] = seq;
                seen[p][seq]++;
                local_sum += seq;
                received++;
            }
            sum += local_sum;
        });
    for (int p = 0; p < producers; p++)
        threads.emplace_back([&, p] {
            for (uint32_t seq = 0; seq < per_producer && !dl.passed();)
                if (push(q, ((uint64_t)p << 32) | seq))
                    seq++;
                else
                    ThreadPause::pause();
        });
    for (auto& t : threads) t.join();
    ASSERT_FALSE(dl.passed()) << "timed out with " << received << " of " << total;
    EXPECT_EQ(total, received.load());
    EXPECT_EQ(0u, reordered.load());
    EXPECT_EQ((uint64_t)producers * per_producer * (per_producer - 1) / 2, sum.load());
    uint64_t wrong = 0;
    for (auto& s : seen)
        for (auto& v : s) wrong += v.load() != 1;
    EXPECT_EQ(0u, wrong) << "items lost or duplicated";
    uint64_t x;
    EXPECT_FALSE(pop(q, x));
}

auto push_one = [](auto& q, uint64_t x) { return q.push(x); };
auto pop_one = [](auto& q, uint64_t& x) { return q.pop(x); };

TEST(MpmcStress, FourProducersFourConsumersDeliverEachItemOnce) {
    auto q = std::make_unique<LockfreeMPMCRingQueue<uint64_t, 256>>();
    exactly_once(*q, 4, 4, kPerProducer, push_one, pop_one);
}

TEST(MpmcStress, FlexQueueWithNarrowMarksDeliversEachItemOnce) {
    auto q = std::make_unique<LockfreeMPMCRingQueue<uint64_t, 8, uint8_t>>();
    exactly_once(*q, 3, 2, kPerProducer, push_one, pop_one);
    auto* f = FlexLockfreeMPMCRingQueue<uint64_t>::create(64);
    ASSERT_NE(nullptr, f);
    exactly_once(*f, 2, 3, kPerProducer, push_one, pop_one);
    FlexLockfreeMPMCRingQueue<uint64_t>::destroy(f);
}

TEST(MpmcStress, BatchQueueDeliversEachItemOnceOneByOne) {
    auto q = std::make_unique<LockfreeBatchMPMCRingQueue<uint64_t, 256>>();
    exactly_once(*q, 4, 4, kPerProducer, push_one, pop_one);
}

TEST(MpmcStress, BatchQueueDeliversEachItemOnceInBatches) {
    auto q = std::make_unique<LockfreeBatchMPMCRingQueue<uint64_t, 128>>();
    // Each call moves a run of up to 16 items; the lambdas keep a per-thread stash so the
    // helper still sees one item at a time.
    auto push = [](auto& q, uint64_t x) {
        thread_local std::vector<uint64_t> pend;
        pend.push_back(x);
        uint32_t seq = (uint32_t)x;
        if (pend.size() < 16 && seq != kPerProducer - 1) return true;  // the producer's last
        size_t done = 0;
        while (done < pend.size()) {
            size_t n = q.push_batch(pend.data() + done, pend.size() - done);
            if (n == 0) ThreadPause::pause();
            done += n;
        }
        pend.clear();
        return true;
    };
    auto pop = [](auto& q, uint64_t& x) {
        thread_local uint64_t buf[16];
        thread_local size_t have = 0, at = 0;
        if (at == have) {
            have = q.pop_batch(buf, 16);
            at = 0;
            if (have == 0) return false;
        }
        x = buf[at++];
        return true;
    };
    exactly_once(*q, 3, 3, kPerProducer, push, pop);
}

TEST(MpmcStress, BlockingSendAndRecvSplitTheItemsEvenly) {
    constexpr int kPerThread = 50000;
    auto q = std::make_unique<LockfreeMPMCRingQueue<int, 64>>();
    std::atomic<int64_t> sum{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < 2; c++)
        threads.emplace_back([&] {
            int64_t s = 0;
            for (int i = 0; i < kPerThread; i++) s += q->recv<ThreadPause>();
            sum += s;
        });
    for (int p = 0; p < 2; p++)
        threads.emplace_back([&] {
            for (int i = 1; i <= kPerThread; i++) q->send<ThreadPause>(i);
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(2 * (int64_t)kPerThread * (kPerThread + 1) / 2, sum.load());
    EXPECT_TRUE(q->empty());
}

// ---- RingChannel ----------------------------------------------------------------------------

// Runs f() on a new OS thread that is a vCPU meanwhile.
template <typename F>
std::thread on_vcpu(F f) {
    return std::thread([f]() mutable {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
        f();
        photon::fini();
    });
}

using Channel = photon::common::RingChannel<LockfreeMPMCRingQueue<int, 64>>;

TEST(RingChannel, CarriesItemsInOrderFromAnOsThreadToAVcpu) {
    constexpr int kItems = 200000;
    Channel ch;
    int64_t sum = 0;
    int out_of_order = 0;
    auto consumer = on_vcpu([&] {
        for (int i = 1; i <= kItems; i++) {
            int x = ch.recv();
            out_of_order += (x != i);
            sum += x;
        }
    });
    std::thread producer([&] {
        for (int i = 1; i <= kItems; i++) ch.send<ThreadPause>(i);
    });
    producer.join();
    consumer.join();
    EXPECT_EQ(0, out_of_order);
    EXPECT_EQ((int64_t)kItems * (kItems + 1) / 2, sum);
    EXPECT_TRUE(ch.empty());
    EXPECT_LE(ch.notification_pending(), 1u);
}

TEST(RingChannel, PhotonPauseSenderParksOnAFullQueueBetweenVcpus) {
    constexpr int kItems = 20000;
    photon::common::RingChannel<LockfreeSPSCRingQueue<int, 4>> ch(8, 100);
    int64_t sum = 0;
    int out_of_order = 0;
    auto consumer = on_vcpu([&] {
        for (int i = 1; i <= kItems; i++) {
            int x = ch.recv();
            out_of_order += (x != i);
            sum += x;
            if (i % 1000 == 0) photon::thread_usleep(1000);  // let the sender find it full
        }
    });
    auto producer = on_vcpu([&] {
        for (int i = 1; i <= kItems; i++) ch.send<PhotonPause>(i);
    });
    producer.join();
    consumer.join();
    EXPECT_EQ(0, out_of_order);
    EXPECT_EQ((int64_t)kItems * (kItems + 1) / 2, sum);
}

// Photon's regression test: a burst leaves no pile of wake-up tokens behind.
TEST(RingChannel, BurstLeavesAtMostOnePendingWakeupForOneConsumer) {
    constexpr int kProducers = 4, kPerProducer = 25000, kSentinel = 0;
    auto ch =
        std::make_unique<photon::common::RingChannel<LockfreeMPMCRingQueue<int, 4096>>>(1024, 1024);
    std::atomic<int> received{0};
    auto consumer = on_vcpu([&] {
        while (ch->recv() != kSentinel) received++;
    });
    std::vector<std::thread> producers;
    for (int p = 0; p < kProducers; p++)
        producers.emplace_back([&] {
            for (int i = 0; i < kPerProducer; i++) ch->send<ThreadPause>(1);
        });
    for (auto& t : producers) t.join();
    EXPECT_TRUE(spin_until([&] { return received == kProducers * kPerProducer; }));
    ch->send<ThreadPause>(kSentinel);
    consumer.join();
    EXPECT_EQ(kProducers * kPerProducer, received.load());
    EXPECT_LE(ch->notification_pending(), 1u);
}

struct probed_channel : Channel {
    probed_channel() : Channel(0, 0) {}  // park on the semaphore at once
    uint64_t idle() const { return idler.load(); }
};

// A parked consumer is woken by send(), not by its 100 ms look-around. Rounds on a busy
// machine may be slow, so only the fastest of several must beat that period.
TEST(RingChannel, SendWakesAParkedConsumer) {
    probed_channel ch;
    constexpr int kRounds = 5;
    std::atomic<int64_t> sent_at{0}, fastest_us{INT64_MAX};
    std::atomic<int> got{0};
    auto consumer = on_vcpu([&] {
        for (int i = 1; i <= kRounds; i++) {
            int x = ch.recv();
            int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(
                             Clock::now().time_since_epoch())
                             .count() -
                         sent_at.load();
            if (us < fastest_us) fastest_us = us;
            got += (x == i);
        }
    });
    for (int i = 1; i <= kRounds; i++) {
        ASSERT_TRUE(spin_until([&] { return ch.idle() == 1; }));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // into the semaphore wait
        sent_at =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
                .count();
        ch.send<ThreadPause>(i);
        ASSERT_TRUE(spin_until([&] { return got == i; }));
    }
    consumer.join();
    EXPECT_EQ(kRounds, got.load());
    EXPECT_LT(fastest_us.load(), 80 * 1000) << "every wake-up waited for the 100 ms timeout";
}

class RingChannelOnOneVcpu : public VcpuTest {};

// Photon's ThreadPause slept the OS thread, so the consumer coroutine never ran: a deadlock.
TEST_F(RingChannelOnOneVcpu, DefaultSendOnAFullQueueLetsTheLocalConsumerRun) {
    photon::common::RingChannel<LockfreeMPMCRingQueue<int, 2>> ch(16, 200);
    int64_t sum = 0;
    auto consumer = spawn([&] {
        for (int i = 1; i <= 50; i++) sum += ch.recv();
    });
    for (int i = 1; i <= 50; i++) ch.send(i);  // ThreadPause by default
    consumer.join();
    EXPECT_EQ(50 * 51 / 2, sum);
}

TEST_F(RingChannelOnOneVcpu, FlexChannelBasics) {
    using F = photon::common::FlexRingChannel<FlexLockfreeMPMCRingQueue<int>>;
    errno = 0;
    EXPECT_EQ(nullptr, F::create(SIZE_MAX));
    EXPECT_EQ(EINVAL, errno);
    F::destroy(nullptr);
    auto* ch = F::create(16);
    ASSERT_NE(nullptr, ch);
    DEFER(F::destroy(ch));
    EXPECT_TRUE(ch->empty());
    EXPECT_FALSE(ch->full());
    for (int i = 1; i <= 10; i++) ch->send(i);
    EXPECT_EQ(10u, ch->read_available());
    EXPECT_EQ(6u, ch->write_available());
    for (int i = 1; i <= 10; i++) EXPECT_EQ(i, ch->recv());
    EXPECT_TRUE(ch->empty());
}

TEST_F(RingChannelOnOneVcpu, FlexChannelTakesItemsFromAnOsThread) {
    using F = photon::common::FlexRingChannel<FlexLockfreeMPMCRingQueue<int>>;
    auto* ch = F::create(32);
    ASSERT_NE(nullptr, ch);
    DEFER(F::destroy(ch));
    constexpr int kItems = 20000;
    std::thread producer([&] {
        for (int i = 1; i <= kItems; i++) ch->send<ThreadPause>(i);
    });
    int64_t sum = 0;
    for (int i = 0; i < kItems; i++) sum += ch->recv();
    producer.join();
    EXPECT_EQ((int64_t)kItems * (kItems + 1) / 2, sum);
    EXPECT_LE(ch->notification_pending(), 1u);
}

}  // namespace
