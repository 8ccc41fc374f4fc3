// checksum-perf on x86-64: the ideal crc32 loop (SSE4.2) and the
// dependent-add clock probe.
#include <immintrin.h>

#include <cstring>

#include "checksum_perf.h"

namespace perf {

bool crc32c_ideal_available() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2"))) uint64_t crc32c_ideal(const uint8_t* p, size_t n) {
    uint64_t c[kIdealChains] = {};
    const size_t step = 8 * kIdealChains;
    for (size_t off = 0; off + step <= n; off += step) {
#pragma GCC unroll 8
        for (int k = 0; k < kIdealChains; k++) {
            uint64_t v;
            memcpy(&v, p + off + 8 * k, 8);
            c[k] = _mm_crc32_u64(c[k], v);
        }
    }
    uint64_t r = 0;
    for (auto x : c) r ^= x;
    return r;
}

void dependent_adds(uint64_t n) {
    uint64_t x = 0, one = 1, iters = n / 16;
    if (iters == 0) return;
    // 16 adds in one dependency chain per iteration; dec/jnz run on other
    // ports, so an iteration takes 16 core cycles. Register operands: recent
    // Intel cores fold chains of add-immediate at rename, several per cycle.
    asm volatile(
        "1:\n\t"
        ".rept 16\n\t"
        "add %2, %0\n\t"
        ".endr\n\t"
        "dec %1\n\t"
        "jnz 1b\n\t"
        : "+r"(x), "+r"(iters)
        : "r"(one)
        : "cc");
}

}  // namespace perf
