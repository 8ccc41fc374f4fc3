// work-pool: spreads CPU-heavy work over several vCPUs with photon::WorkPool.
//
//   work-pool [VCPUS]      (default 2)
//
// Coroutines on the main vCPU hand chunks of work to the pool with call(),
// which parks the caller (not its vCPU) until a pool vCPU has run the chunk.
// The same chunks run first on the main vCPU alone, for comparison.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <photon/common/alog.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>
#include <photon/thread/workerpool.h>

// Primes in [from, to): deliberately plain trial division, to burn CPU.
static long count_primes(long from, long to) {
    long n = 0;
    for (long x = from < 2 ? 2 : from; x < to; x++) {
        bool prime = true;
        for (long d = 2; d * d <= x && prime; d++) prime = x % d != 0;
        n += prime;
    }
    return n;
}

constexpr long kLimit = 3'000'000;
constexpr int kChunks = 32;

static double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) {
    int vcpus = argc > 1 ? atoi(argv[1]) : 2;
    set_log_output_level(ALOG_WARN);  // photon logs INFO lines by default
    if (vcpus < 1 || photon::init() != 0) return 1;

    auto t0 = std::chrono::steady_clock::now();
    long alone = count_primes(0, kLimit);
    double alone_s = seconds_since(t0);

    // Pool vCPUs are OS threads with a scheduler each; thread_mod 0 runs
    // every task in a new coroutine there.
    photon::WorkPool pool(vcpus, photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE, 0);
    std::vector<long> found(kChunks);
    std::vector<photon::join_handle*> callers;
    t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kChunks; i++) {
        // One coroutine per chunk; each waits for its own result.
        auto th = photon::thread_create11([&pool, &found, i] {
            long from = kLimit / kChunks * i,
                 to = i + 1 == kChunks ? kLimit : from + kLimit / kChunks;
            pool.call([&] { found[i] = count_primes(from, to); });
        });
        callers.push_back(photon::thread_enable_join(th));
    }
    for (auto jh : callers) photon::thread_join(jh);
    double pool_s = seconds_since(t0);

    long total = 0;
    for (long n : found) total += n;
    printf("primes below %ld: %ld on one vCPU in %.2f s, %ld on %d pool vCPUs in %.2f s (%.2fx)\n",
           kLimit, alone, alone_s, total, pool.get_vcpu_num(), pool_s, alone_s / pool_s);
    bool ok = total == alone;
    photon::fini();
    return ok ? 0 : 1;
}
