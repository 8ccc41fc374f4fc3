// queue-perf: transfer rate of the lock-free queues of photon/common/lockfree_queue.h between
// OS threads, beside a std::deque under a std::mutex bounded to the same capacity.
//
//   queue-perf [--ms M] [--rounds R] [--capacity C] [--only SUBSTRING]
//
// Each case runs its producer and consumer threads for M ms (default 150), R times (default 3),
// and prints the median rate in items/s and ns per item (wall time / items delivered), with the
// range over the rounds. Producers push increasing numbers; consumers check the sums, so a lost
// or duplicated item fails the run. With more threads than cores the numbers mostly measure
// the OS scheduler: a full or empty queue makes a thread spin briefly, then yield its CPU.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <photon/common/lockfree_queue.h>
#include <photon/photon.h>

namespace {

using clock_type = std::chrono::steady_clock;
constexpr size_t kCapacity = 1024;  // compile-time N of the fixed queues
constexpr size_t kBatch = 32;

// A thread that found the queue full or empty: spin a little, then give the CPU away.
struct idle_wait {
    uint32_t n = 0;
    void pause() {
        if (++n < 32)
            photon::spin_wait();
        else
            std::this_thread::yield();
    }
    void reset() { n = 0; }
};

// The baseline: a std::deque under a std::mutex, refusing pushes beyond the capacity.
class locked_deque {
public:
    explicit locked_deque(size_t cap) : cap_(cap) {}
    bool push(uint64_t x) {
        std::lock_guard<std::mutex> l(m_);
        if (q_.size() >= cap_) return false;
        q_.push_back(x);
        return true;
    }
    bool pop(uint64_t& x) {
        std::lock_guard<std::mutex> l(m_);
        if (q_.empty()) return false;
        x = q_.front();
        q_.pop_front();
        return true;
    }

private:
    std::mutex m_;
    std::deque<uint64_t> q_;
    size_t cap_;
};

// How a case moves items: produce(next) pushes item `next` (and maybe more after it) and
// returns how many went in; consume(sum) pops some, adds them to sum, returns how many.
struct ops {
    std::function<size_t(uint64_t next)> produce;
    std::function<size_t(uint64_t& sum)> consume;
};

struct result {
    double items_per_s = 0, ns_per_item = 0;
    bool ok = true;
};

result run_once(const ops& o, int producers, int consumers, int ms) {
    std::atomic<bool> go{false}, stop{false};
    std::atomic<int> producers_left{producers};
    std::atomic<uint64_t> produced_sum{0}, consumed_sum{0}, items{0};
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; p++)
        threads.emplace_back([&] {
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            uint64_t next = 0, sum = 0;
            idle_wait w;
            while (!stop.load(std::memory_order_relaxed)) {
                size_t n = o.produce(next);
                if (n == 0) {
                    w.pause();
                    continue;
                }
                w.reset();
                for (size_t i = 0; i < n; i++) sum += next + i;
                next += n;
            }
            produced_sum += sum;
            producers_left--;
        });
    for (int c = 0; c < consumers; c++)
        threads.emplace_back([&] {
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            uint64_t sum = 0, count = 0;
            idle_wait w;
            for (;;) {
                bool last_look = producers_left.load(std::memory_order_acquire) == 0;
                size_t n = o.consume(sum);
                count += n;
                if (n) {
                    w.reset();
                    continue;
                }
                if (last_look) break;  // no producer left and the queue was empty after that
                w.pause();
            }
            consumed_sum += sum;
            items += count;
        });
    auto t0 = clock_type::now();
    go.store(true, std::memory_order_release);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    stop = true;
    for (auto& t : threads) t.join();
    double ns = std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
    result r;
    uint64_t n = std::max<uint64_t>(items.load(), 1);
    r.items_per_s = n * 1e9 / ns;
    r.ns_per_item = ns / n;
    r.ok = produced_sum == consumed_sum && items > 0;
    return r;
}

// The RingChannel case: a plain OS thread sends, a vCPU receives (parking while empty).
result run_channel_once(int ms) {
    auto ch =
        std::make_unique<photon::common::RingChannel<LockfreeMPMCRingQueue<uint64_t, kCapacity>>>();
    const uint64_t kEnd = UINT64_MAX;
    std::atomic<bool> stop{false};
    uint64_t produced_sum = 0, consumed_sum = 0, count = 0;
    std::thread consumer([&] {
        if (photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE) < 0) {
            perror("queue-perf: photon::init");
            exit(1);
        }
        for (uint64_t x; (x = ch->recv()) != kEnd; count++) consumed_sum += x;
        photon::fini();
    });
    auto t0 = clock_type::now();
    std::thread producer([&] {
        for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); i++) {
            ch->send<ThreadPause>(i);
            produced_sum += i;
        }
        ch->send<ThreadPause>(kEnd);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    stop = true;
    producer.join();
    consumer.join();
    double ns = std::chrono::duration<double, std::nano>(clock_type::now() - t0).count();
    result r;
    uint64_t n = std::max<uint64_t>(count, 1);
    r.items_per_s = n * 1e9 / ns;
    r.ns_per_item = ns / n;
    r.ok = produced_sum == consumed_sum && count > 0;
    return r;
}

bool g_failed = false;

void report(const char* name, const char* threads, std::vector<result> v) {
    std::sort(v.begin(), v.end(),
              [](const result& a, const result& b) { return a.items_per_s < b.items_per_s; });
    const result& med = v[v.size() / 2];
    bool ok = std::all_of(v.begin(), v.end(), [](const result& r) { return r.ok; });
    g_failed |= !ok;
    printf("%-36s %-6s %12.2f M/s %9.1f ns/item   (%.2f .. %.2f M/s)%s\n", name, threads,
           med.items_per_s / 1e6, med.ns_per_item, v.front().items_per_s / 1e6,
           v.back().items_per_s / 1e6, ok ? "" : "  ITEMS LOST OR DUPLICATED");
    fflush(stdout);
}

template <typename MakeOps>
void bench(const char* name, int producers, int consumers, int rounds, int ms, MakeOps make) {
    std::vector<result> v;
    for (int r = 0; r < rounds; r++) {
        auto holder = make();  // a fresh queue per round
        v.push_back(run_once(holder.second, producers, consumers, ms));
    }
    char threads[16];
    snprintf(threads, sizeof(threads), "%dp%dc", producers, consumers);
    report(name, threads, std::move(v));
}

// Ops over a queue Q with push/pop, and with push_batch/pop_batch of kBatch items.
template <typename Q>
std::pair<std::shared_ptr<Q>, ops> single_ops(std::shared_ptr<Q> q) {
    ops o;
    o.produce = [q](uint64_t next) -> size_t { return q->push(next) ? 1 : 0; };
    o.consume = [q](uint64_t& sum) -> size_t {
        uint64_t x;
        if (!q->pop(x)) return 0;
        sum += x;
        return 1;
    };
    return {q, o};
}

template <typename Q>
std::pair<std::shared_ptr<Q>, ops> batch_ops(std::shared_ptr<Q> q) {
    ops o;
    o.produce = [q](uint64_t next) -> size_t {
        uint64_t buf[kBatch];
        for (size_t i = 0; i < kBatch; i++) buf[i] = next + i;
        return q->push_batch(buf, kBatch);
    };
    o.consume = [q](uint64_t& sum) -> size_t {
        uint64_t buf[kBatch];
        size_t n = q->pop_batch(buf, kBatch);
        for (size_t i = 0; i < n; i++) sum += buf[i];
        return n;
    };
    return {q, o};
}

// The Flex queues have no std::shared_ptr-friendly destructor: wrap destroy().
template <typename F>
std::shared_ptr<F> make_flex(size_t capacity) {
    F* q = F::create(capacity);
    if (!q) {
        perror("queue-perf: create");
        exit(1);
    }
    return std::shared_ptr<F>(q, [](F* p) { F::destroy(p); });
}

}  // namespace

int main(int argc, char** argv) {
    int ms = 150, rounds = 3;
    size_t capacity = kCapacity;
    std::string only;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ms") && i + 1 < argc)
            ms = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--capacity") && i + 1 < argc)
            capacity = strtoull(argv[++i], nullptr, 10);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr,
                    "usage: %s [--ms M] [--rounds R] [--capacity C] [--only SUBSTRING]\n"
                    "  M ms per round (150), R rounds per case (3), C items of queue capacity\n"
                    "  for the run-time sized queues and the deque (1024)\n",
                    argv[0]);
            return 2;
        }
    }
    ms = std::max(ms, 1);
    rounds = std::max(rounds, 1);
    capacity = std::max<size_t>(capacity, 1);
    auto want = [&](const char* name) { return only.empty() || strstr(name, only.c_str()); };

    printf("queue-perf: %d round(s) of %d ms per case, capacity %zu (fixed queues %zu), %u CPUs\n",
           rounds, ms, capacity, kCapacity, std::thread::hardware_concurrency());
    printf("%-36s %-6s %16s %16s\n", "case", "thr", "median rate", "median time");

    using spsc = LockfreeSPSCRingQueue<uint64_t, kCapacity>;
    using mpmc = LockfreeMPMCRingQueue<uint64_t, kCapacity>;
    using batch = LockfreeBatchMPMCRingQueue<uint64_t, kCapacity>;
    auto fixed = [](auto* tag) {
        using Q = std::remove_pointer_t<decltype(tag)>;
        return std::make_shared<Q>();
    };
    struct c {
        const char* name;
        int p, c;
        std::function<std::pair<std::shared_ptr<void>, ops>()> make;
    };
    auto erase = [](auto pair) { return std::pair<std::shared_ptr<void>, ops>(pair); };
    std::vector<c> cases = {
        {"spsc push/pop", 1, 1, [&] { return erase(single_ops(fixed((spsc*)nullptr))); }},
        {"spsc push_batch/pop_batch x32", 1, 1,
         [&] { return erase(batch_ops(fixed((spsc*)nullptr))); }},
        {"flex spsc push/pop", 1, 1,
         [&] {
             return erase(single_ops(make_flex<FlexLockfreeSPSCRingQueue<uint64_t>>(capacity)));
         }},
        {"mpmc push/pop", 1, 1, [&] { return erase(single_ops(fixed((mpmc*)nullptr))); }},
        {"mpmc push/pop", 2, 2, [&] { return erase(single_ops(fixed((mpmc*)nullptr))); }},
        {"flex mpmc push/pop", 2, 2,
         [&] {
             return erase(single_ops(make_flex<FlexLockfreeMPMCRingQueue<uint64_t>>(capacity)));
         }},
        {"batch-mpmc push/pop", 2, 2, [&] { return erase(single_ops(fixed((batch*)nullptr))); }},
        {"batch-mpmc push_batch/pop_batch x32", 2, 2,
         [&] { return erase(batch_ops(fixed((batch*)nullptr))); }},
        {"std::deque + std::mutex", 1, 1,
         [&] { return erase(single_ops(std::make_shared<locked_deque>(capacity))); }},
        {"std::deque + std::mutex", 2, 2,
         [&] { return erase(single_ops(std::make_shared<locked_deque>(capacity))); }},
    };
    for (auto& x : cases)
        if (want(x.name)) bench(x.name, x.p, x.c, rounds, ms, x.make);

    if (want("RingChannel send/recv (to a vCPU)")) {
        std::vector<result> v;
        for (int r = 0; r < rounds; r++) v.push_back(run_channel_once(ms));
        report("RingChannel send/recv (to a vCPU)", "1p1c", std::move(v));
    }
    return g_failed ? 1 : 0;
}
