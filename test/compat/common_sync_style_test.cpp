// Code written the way PhotonLibOS users write it, against the common/
// headers for coalescing, RCU, consistent hashing, metrics and callback-style
// async operations: Photon's includes, names and call shapes, compiled
// unchanged. The functions above the gtest include see only what the photon
// headers (and the standard headers Photon code includes) provide.
#include <photon/photon.h>
#include <photon/common/alog.h>
#include <photon/common/async_stream.h>
#include <photon/common/consistent-hash-map.h>
#include <photon/common/metric-meter/metrics.h>
#include <photon/common/rcuptr.h>
#include <photon/common/singleflight.h>
#include <photon/thread/thread11.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// SingleFlight as in Photon's tests: joinable coroutines, one run shared.
int singleflight_photon_threads(int* result_sum) {
    photon::SingleFlight sc;
    std::vector<photon::join_handle*> jhs;
    std::atomic<int> count{0};
    *result_sum = 0;
    for (int i = 0; i < 5; i++) {
        jhs.emplace_back(photon::thread_enable_join(photon::thread_create11([&] {
            auto ret = sc.Do(
                [&] {
                    count.fetch_add(1);
                    photon::thread_usleep(50 * 1000);
                    return count.load();
                },
                true);
            *result_sum += ret;
        })));
    }
    for (auto& t : jhs) photon::thread_join(t);
    return count.load();
}

// ... and std::threads that each init photon, sharing a void run.
int singleflight_std_threads() {
    photon::SingleFlight sc;
    std::atomic<int> count{0}, arrived{0};
    std::vector<std::thread> jhs;
    for (int i = 0; i < 3; i++) {
        jhs.emplace_back([&] {
            photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE);
            DEFER(photon::fini());
            arrived++;
            sc.Do([&] {
                count.fetch_add(1);
                // hold the run until everyone has arrived, and a little longer
                while (arrived.load() < 3) photon::thread_usleep(1000);
                photon::thread_usleep(100 * 1000);
            });
        });
    }
    for (auto& t : jhs) t.join();
    return count.load();
}

struct IntObj {
    int val;
    IntObj(int val) : val(val) {}
};

// RCUPtr as in Photon's perf_rcuptr: vCPUs of coroutines, mostly readers.
int rcuptr_readers_and_writers() {
    photon::semaphore sem(0);
    std::atomic<int> cntr(1), bad(0);
    RCUPtr<IntObj> ptr;
    auto old = ptr.update(new IntObj(cntr.fetch_add(1, std::memory_order_acq_rel)));
    ptr.synchronize();
    delete old;
    std::vector<std::thread> ths;
    for (int th = 0; th < 3; th++) {
        ths.emplace_back([&] {
            photon::vcpu_init();
            DEFER(photon::vcpu_fini());
            for (int i = 0; i < 10; i++) {
                photon::thread_create11([&cntr, &ptr, &sem, &bad, i]() {
                    ptr.quiescent();
                    for (int j = 0; j < 300; j++) {
                        if ((i + j) % 10) {  // 90% reader
                            auto x = ptr->val;
                            if (x <= 0) bad++;
                            ptr.quiescent();
                        } else {  // 10% writer
                            auto n = new IntObj(cntr.fetch_add(1, std::memory_order_acq_rel));
                            auto old = ptr.update(n);
                            if (j % 20 == 0) {
                                ptr.rcu_call(old);
                            } else {
                                ptr.synchronize();
                                delete old;
                            }
                        }
                        photon::thread_yield();
                    }
                    ptr.read_lock();
                    if (ptr->val <= 0) bad++;
                    ptr.read_unlock();
                    sem.signal(1);
                });
            }
        });
    }
    sem.wait(30);
    for (auto& x : ths) x.join();
    auto last = ptr.update(nullptr);
    ptr.synchronize();
    delete last;
    return bad.load();
}

// A ring of servers on a consistent_hash_map, keyed by 32-bit points.
uint32_t point_of(const std::string& s) {
    uint32_t h = 2166136261u;  // FNV-1a, then a final mix
    for (unsigned char c : s) h = (h ^ c) * 16777619u;
    h ^= h >> 16;
    h *= 0x7feb352du;
    return h ^ (h >> 15);
}

int consistent_hash_round() {
    consistent_hash_map<uint32_t, std::string> ring;
    for (auto server : {"10.0.0.1", "10.0.0.2", "10.0.0.3"})
        for (int v = 0; v < 50; v++) ring.push_back(point_of(server + std::to_string(v)), server);
    ring.sort();
    auto it = ring.find(point_of("object-42"));
    auto again = ring[point_of("object-42")].second;
    if (it == ring.end() || it->second != again) return -1;
    auto nxt = ring.next(it);
    return (int)ring.size() + (nxt != ring.end() ? 1 : 0);
}

// Metrics as in Photon's metric-meter example.
class Table {
public:
    Metric::IntervalMaxCounter maxv;
    Metric::AverageLatencyCounter pread_latency;
    Metric::MaxLatencyCounter pread_max;
    Metric::QPSCounter qps;
    Metric::AddCounter inflight;
} table;

int64_t metrics_round() {
    table.maxv.reset();
    table.pread_latency.reset();
    table.pread_max.reset();
    table.qps.reset();
    table.inflight.reset();
    table.maxv.interval(10ULL * 1000 * 1000);  // long windows: a slow machine stays inside
    table.pread_latency.interval(10ULL * 1000 * 1000);
    table.pread_max.interval(10ULL * 1000 * 1000);
    table.qps.interval(10 * Metric::QPSCounter::SEC);
    for (int i = 0; i < 5; i++) {
        SCOPE_LATENCY(table.pread_latency);
        SCOPE_LATENCY(table.pread_max);
        table.inflight.inc();
        table.maxv.put(i * 10);
        table.qps.put();
        photon::thread_usleep(2000);
        table.inflight.dec();
    }
    LOG_DEBUG("latency avg ` max `", table.pread_latency.val(), table.pread_max.val());
    return table.maxv.val();
}

// An async stream whose operations complete on another kernel thread.
class AsyncMemStream : public IAsyncStream {
public:
    std::vector<std::thread> ths;
    ~AsyncMemStream() {
        for (auto& t : ths) t.join();
    }
    OVERRIDE_ASYNC0(int, close) { callback(done, OPID_CLOSE, 0, 0); }
    OVERRIDE_ASYNC(ssize_t, read, void* buf, size_t count) {
        ths.emplace_back([=] {
            memset(buf, 'x', count);
            callback(done, OPID_READ, (ssize_t)count, 0);
        });
    }
    OVERRIDE_UNIMPLEMENTED_ASYNC(ssize_t, readv, const struct iovec* iov, int iovcnt);
    OVERRIDE_UNIMPLEMENTED_ASYNC(ssize_t, write, const void* buf, size_t count);
    OVERRIDE_UNIMPLEMENTED_ASYNC(ssize_t, writev, const struct iovec* iov, int iovcnt);
};

// Photon fs's async performers, reduced.
class AsyncPerformer {
public:
    uint64_t _timeout = -1;

    template <typename IF, typename Func, typename... ARGS,
              typename R = typename af_traits<Func>::result_type>
    R perform(IF* _if, Func func, ARGS... args) {
        using AF = AsyncFuncWrapper<R, IF, ARGS...>;
        return AF(_if, func, _timeout).call(args...);
    }

    template <typename IF, typename Func, typename... ARGS,
              typename R = typename af_traits<Func>::result_type>
    R perform2(IF* _if, Func func, ARGS... args) {
        AsyncFuncWrapper_Generic<R> af;
        auto done = [&](AsyncResult<R>* ar) {
            return af.put_result(ar->result, ar->error_number), 0;
        };
        return af.call([&]() { return (_if->*func)(args..., done, _timeout); });
    }
};

int async_round(int* write_errno) {
    AsyncMemStream s;
    IAsyncStream* as = &s;
    AsyncPerformer p;
    char buf[8];
    auto n1 = p.perform(as, &IAsyncStream::read, (void*)buf, sizeof(buf));
    auto n2 = p.perform2(as, &IAsyncStream::read, (void*)buf, (size_t)4);
    auto w = p.perform(as, &IAsyncStream::write, (const void*)buf, (size_t)1);
    *write_errno = errno;
    auto c = p.perform(as, &IAsyncStream::close);
    if (w != -1 || c != 0 || buf[7] != 'x') return -1;
    return (int)(n1 + n2);
}

}  // namespace

#include <gtest/gtest.h>

namespace {

class CommonSyncStyle : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    }
    void TearDown() override { EXPECT_EQ(0, photon::fini()); }
};

TEST_F(CommonSyncStyle, SingleFlightCoalescesPhotonThreads) {
    int sum = 0;
    EXPECT_EQ(1, singleflight_photon_threads(&sum));
    EXPECT_EQ(5, sum);  // every caller got the one run's result, 1
}

// Arrival across OS threads is timed here, as in Photon's test; the exact
// sharing is proven in test/common/singleflight_test.cpp.
TEST_F(CommonSyncStyle, SingleFlightCoalescesStdThreads) {
    int runs = singleflight_std_threads();
    EXPECT_GE(runs, 1);
    EXPECT_LE(runs, 3);
}

TEST_F(CommonSyncStyle, RcuPtrReadersAndWritersOnSeveralVcpus) {
    EXPECT_EQ(0, rcuptr_readers_and_writers());
}

TEST_F(CommonSyncStyle, ConsistentHashRingOfServers) { EXPECT_EQ(151, consistent_hash_round()); }

TEST_F(CommonSyncStyle, MetricsTableFromTheExample) {
    EXPECT_EQ(40, metrics_round());
    EXPECT_EQ(0, table.inflight.val());
    EXPECT_EQ(5, table.qps.val());
    EXPECT_GE(table.pread_latency.val(), 2000);
    EXPECT_GE(table.pread_max.val(), table.pread_latency.val());
}

TEST_F(CommonSyncStyle, AsyncStreamThroughPerformers) {
    int write_errno = 0;
    EXPECT_EQ(12, async_round(&write_errno));
    EXPECT_EQ(ENOSYS, write_errno);
}

}  // namespace
