// checksum-perf on AArch64: the ideal crc32cx loop (ARMv8 CRC32 extension)
// and the dependent-add clock probe.
#include <arm_acle.h>

#include <cstring>

#include "checksum_perf.h"

#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

// GCC spells the feature "+crc", clang "crc"; clang before 16 hides the
// ACLE intrinsic unless the file is built with +crc, so it gets the builtin.
#if defined(__clang__)
#define PHOTON_CRC __attribute__((target("crc")))
#define PHOTON_CRC32CD __builtin_arm_crc32cd
#else
#define PHOTON_CRC __attribute__((target("+crc")))
#define PHOTON_CRC32CD __crc32cd
#endif

namespace perf {

bool crc32c_ideal_available() {
#if defined(__linux__)
    return getauxval(AT_HWCAP) & HWCAP_CRC32;
#else
    return true;  // Apple silicon has it
#endif
}

PHOTON_CRC uint64_t crc32c_ideal(const uint8_t* p, size_t n) {
    uint32_t c[kIdealChains] = {};
    const size_t step = 8 * kIdealChains;
    for (size_t off = 0; off + step <= n; off += step) {
#pragma GCC unroll 8
        for (int k = 0; k < kIdealChains; k++) {
            uint64_t v;
            memcpy(&v, p + off + 8 * k, 8);
            c[k] = PHOTON_CRC32CD(c[k], v);
        }
    }
    uint64_t r = 0;
    for (auto x : c) r ^= x;
    return r;
}

void dependent_adds(uint64_t n) {
    uint64_t x = 0, one = 1, iters = n / 16;
    if (iters == 0) return;
    // 16 dependent register adds per iteration, 16 core cycles.
    asm volatile(
        "1:\n\t"
        ".rept 16\n\t"
        "add %0, %0, %2\n\t"
        ".endr\n\t"
        "subs %1, %1, #1\n\t"
        "b.ne 1b\n\t"
        : "+r"(x), "+r"(iters)
        : "r"(one)
        : "cc");
}

}  // namespace perf
