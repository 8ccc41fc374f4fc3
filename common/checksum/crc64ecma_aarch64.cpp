// CRC-64/ECMA on AArch64 by carry-less multiplication (PMULL, part of the
// crypto extension). Same folding as crc64ecma_x86_64.cpp, whose header
// comment derives the constants: eight 128-bit accumulators folded 128
// bytes per round, joined into one, reduced with a Barrett step; short
// inputs and tails below 16 bytes go through the table.
#include <arm_neon.h>

#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_PMULL
#define HWCAP_PMULL (1 << 4)
#endif
#endif

#include "crc_isa.h"
#include "crc_math.h"

// GCC spells target features "+crypto", clang "crypto".
#if defined(__clang__)
#define PHOTON_PMULL __attribute__((target("crypto")))
#else
#define PHOTON_PMULL __attribute__((target("+crypto")))
#endif

namespace photon {
namespace crc_detail {
namespace {

template <size_t D>
struct fold_keys {
    static constexpr uint64_t lo = gf64::x_pow(8 * D + 63);
    static constexpr uint64_t hi = gf64::x_pow(8 * D - 1);
};

constexpr uint64_t kX127 = gf64::x_pow(127);
constexpr uint64_t kNu = gf64::quotient(127);
constexpr uint64_t kQ = (CRC64ECMA_POLY << 1) | 1;

using v128 = uint64x2_t;

PHOTON_PMULL inline v128 load128(const uint8_t* p) { return vreinterpretq_u64_u8(vld1q_u8(p)); }

PHOTON_PMULL inline v128 clmul(uint64_t a, uint64_t b) {
    return vreinterpretq_u64_p128(vmull_p64((poly64_t)a, (poly64_t)b));
}

template <size_t D>
PHOTON_PMULL inline v128 fold(v128 x, v128 next) {
    v128 a = clmul(vgetq_lane_u64(x, 0), fold_keys<D>::lo);
    v128 b = clmul(vgetq_lane_u64(x, 1), fold_keys<D>::hi);
    return veorq_u64(veorq_u64(a, b), next);
}

PHOTON_PMULL inline uint64_t barrett(uint64_t zh, uint64_t zl) {
    uint64_t q = vgetq_lane_u64(clmul(zh, kNu), 0);
    return zl ^ q ^ vgetq_lane_u64(clmul(q, kQ), 1);
}

PHOTON_PMULL inline uint64_t reduce128(v128 x) {
    v128 y = clmul(vgetq_lane_u64(x, 0), kX127);
    return barrett(vgetq_lane_u64(y, 0) ^ vgetq_lane_u64(x, 1), vgetq_lane_u64(y, 1));
}

PHOTON_PMULL uint64_t update(const uint8_t* p, size_t n, uint64_t crc) {
    if (n < 32) return crc64ecma_reg_sw(p, n, crc);
    v128 x0 = veorq_u64(load128(p), vsetq_lane_u64(crc, vdupq_n_u64(0), 0));
    p += 16, n -= 16;
    if (n >= 240) {
        v128 x1 = load128(p), x2 = load128(p + 16), x3 = load128(p + 32), x4 = load128(p + 48),
             x5 = load128(p + 64), x6 = load128(p + 80), x7 = load128(p + 96);
        p += 112, n -= 112;
        for (; n >= 128; p += 128, n -= 128) {
            x0 = fold<128>(x0, load128(p)), x1 = fold<128>(x1, load128(p + 16));
            x2 = fold<128>(x2, load128(p + 32)), x3 = fold<128>(x3, load128(p + 48));
            x4 = fold<128>(x4, load128(p + 64)), x5 = fold<128>(x5, load128(p + 80));
            x6 = fold<128>(x6, load128(p + 96)), x7 = fold<128>(x7, load128(p + 112));
        }
        const v128 zero = vdupq_n_u64(0);
        v128 a = fold<112>(x0, fold<96>(x1, x7));
        v128 b = fold<80>(x2, fold<64>(x3, zero));
        v128 c = fold<48>(x4, fold<32>(x5, zero));
        x0 = veorq_u64(veorq_u64(a, b), fold<16>(x6, c));
    }
    for (; n >= 16; p += 16, n -= 16) x0 = fold<16>(x0, load128(p));
    return crc64ecma_reg_sw(p, n, reduce128(x0));
}

PHOTON_PMULL uint64_t mul(uint64_t a, uint64_t b) {
    v128 r = clmul(a, b);  // a * b * x
    uint64_t lo = vgetq_lane_u64(r, 0), hi = vgetq_lane_u64(r, 1);
    return barrett(lo << 1, (hi << 1) | (lo >> 63));
}

bool has_pmull() {
#if defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_PMULL) != 0;
#elif defined(__APPLE__)
    return true;
#else
    return false;
#endif
}

}  // namespace

crc64_isa crc64ecma_isa_probe() {
    if (has_pmull()) return {&update, &mul};
    return {nullptr, nullptr};
}

}  // namespace crc_detail
}  // namespace photon
