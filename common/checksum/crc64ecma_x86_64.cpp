// CRC-64/ECMA on x86-64 by carry-less multiplication (PCLMULQDQ). A 128-bit
// accumulator X standing for the message so far is moved D bytes ahead by
//     X * x^(8D) = lo(X) * x^(8D+63) * x + hi(X) * x^(8D-1) * x   (mod P)
// (the "* x" is what clmul of reflected operands adds), two clmuls whose
// 127-bit sum is then xored into the data D bytes later. Eight accumulators
// folding 128 bytes per round keep the multiplier busy (with AVX-512
// VPCLMULQDQ, four zmm accumulators fold 256); at the end they fold into
// one, which is reduced to 64 bits with a Barrett step. Tails shorter than
// 16 bytes and short inputs go through the table.
#include <immintrin.h>

#include "crc_isa.h"
#include "crc_math.h"

#define PHOTON_CLMUL __attribute__((target("sse2,pclmul")))
#define PHOTON_VPCLMUL __attribute__((target("avx512f,vpclmulqdq,pclmul")))

namespace photon {
namespace crc_detail {
namespace {

// Fold distance D bytes: {lo, hi} multipliers as in the header comment.
template <size_t D>
struct fold_keys {
    static constexpr uint64_t lo = gf64::x_pow(8 * D + 63);
    static constexpr uint64_t hi = gf64::x_pow(8 * D - 1);
};

constexpr uint64_t kX127 = gf64::x_pow(127);        // moves the high qword 16 bytes on
constexpr uint64_t kNu = gf64::quotient(127);       // floor(x^127 / P), Barrett quotient
constexpr uint64_t kQ = (CRC64ECMA_POLY << 1) | 1;  // (P - 1) / x

PHOTON_CLMUL inline __m128i load128(const uint8_t* p) { return _mm_loadu_si128((const __m128i*)p); }

template <size_t D>
PHOTON_CLMUL inline __m128i fold(__m128i x, __m128i next) {
    const __m128i k = _mm_set_epi64x((long long)fold_keys<D>::hi, (long long)fold_keys<D>::lo);
    __m128i a = _mm_clmulepi64_si128(x, k, 0x00), b = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(a, b), next);
}

PHOTON_CLMUL inline uint64_t lo64(__m128i v) { return (uint64_t)_mm_cvtsi128_si64(v); }
PHOTON_CLMUL inline uint64_t hi64(__m128i v) { return lo64(_mm_unpackhi_epi64(v, v)); }
PHOTON_CLMUL inline __m128i clmul(uint64_t a, uint64_t b) {
    return _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a), _mm_cvtsi64_si128((long long)b),
                                0);
}

// (zh * x^64 + zl) mod P. q = floor(zh * x^64 / P) comes from one clmul with
// kNu; q * P = q * kQ * x + q gives the remainder's low 64 coefficients.
PHOTON_CLMUL inline uint64_t barrett(uint64_t zh, uint64_t zl) {
    uint64_t q = lo64(clmul(zh, kNu));
    return zl ^ q ^ hi64(clmul(q, kQ));
}

// The CRC register of the 16 bytes X stands for: X * x^64 mod P.
PHOTON_CLMUL inline uint64_t reduce128(__m128i x) {
    __m128i y = clmul(lo64(x), kX127);
    return barrett(lo64(y) ^ hi64(x), hi64(y));
}

// Folds the remaining whole 16-byte blocks into x, reduces, and finishes
// the last 0..15 bytes in software.
PHOTON_CLMUL inline uint64_t finish(__m128i x, const uint8_t* p, size_t n) {
    for (; n >= 16; p += 16, n -= 16) x = fold<16>(x, load128(p));
    return crc64ecma_reg_sw(p, n, reduce128(x));
}

PHOTON_CLMUL uint64_t update(const uint8_t* p, size_t n, uint64_t crc) {
    if (n < 32) return crc64ecma_reg_sw(p, n, crc);
    __m128i x0 = _mm_xor_si128(load128(p), _mm_cvtsi64_si128((long long)crc));
    p += 16, n -= 16;
    if (n >= 240) {
        __m128i x1 = load128(p), x2 = load128(p + 16), x3 = load128(p + 32), x4 = load128(p + 48),
                x5 = load128(p + 64), x6 = load128(p + 80), x7 = load128(p + 96);
        p += 112, n -= 112;
        for (; n >= 128; p += 128, n -= 128) {
            x0 = fold<128>(x0, load128(p)), x1 = fold<128>(x1, load128(p + 16));
            x2 = fold<128>(x2, load128(p + 32)), x3 = fold<128>(x3, load128(p + 48));
            x4 = fold<128>(x4, load128(p + 64)), x5 = fold<128>(x5, load128(p + 80));
            x6 = fold<128>(x6, load128(p + 96)), x7 = fold<128>(x7, load128(p + 112));
        }
        // Every accumulator moves to where x7 ends, in four independent pairs.
        __m128i a = fold<112>(x0, fold<96>(x1, x7));
        __m128i b = fold<80>(x2, fold<64>(x3, _mm_setzero_si128()));
        __m128i c = fold<48>(x4, fold<32>(x5, _mm_setzero_si128()));
        x0 = _mm_xor_si128(_mm_xor_si128(a, b), fold<16>(x6, c));
    }
    return finish(x0, p, n);
}

// With AVX-512 VPCLMULQDQ one instruction folds four 128-bit lanes: four
// zmm accumulators take 256 bytes per round.
template <size_t D>
PHOTON_VPCLMUL inline __m512i fold512(__m512i x, __m512i next) {
    constexpr long long lo = (long long)fold_keys<D>::lo, hi = (long long)fold_keys<D>::hi;
    const __m512i k = _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
    __m512i a = _mm512_clmulepi64_epi128(x, k, 0x00), b = _mm512_clmulepi64_epi128(x, k, 0x11);
    return _mm512_ternarylogic_epi64(a, b, next, 0x96);  // a ^ b ^ next
}

// Lane i of v (the maskz form: GCC 12 warns about the plain one's
// undefined filler).
template <int I>
PHOTON_VPCLMUL inline __m128i lane(__m512i v) {
    return _mm512_maskz_extracti32x4_epi32(0xf, v, I);
}

PHOTON_VPCLMUL inline __m512i load512(const uint8_t* p) { return _mm512_loadu_si512(p); }

PHOTON_VPCLMUL uint64_t update_vpclmul(const uint8_t* p, size_t n, uint64_t crc) {
    if (n < 512) return update(p, n, crc);
    __m512i c = _mm512_inserti32x4(_mm512_setzero_si512(), _mm_cvtsi64_si128((long long)crc), 0);
    __m512i x0 = _mm512_xor_si512(load512(p), c), x1 = load512(p + 64), x2 = load512(p + 128),
            x3 = load512(p + 192);
    p += 256, n -= 256;
    for (; n >= 256; p += 256, n -= 256) {
        x0 = fold512<256>(x0, load512(p)), x1 = fold512<256>(x1, load512(p + 64));
        x2 = fold512<256>(x2, load512(p + 128)), x3 = fold512<256>(x3, load512(p + 192));
    }
    __m512i y = fold512<192>(x0, fold512<128>(x1, fold512<64>(x2, x3)));
    // Lane j of y still has (3 - j) * 16 bytes to go; lane 3 is in place.
    const __m512i k =
        _mm512_set_epi64(0, 0, (long long)fold_keys<16>::hi, (long long)fold_keys<16>::lo,
                         (long long)fold_keys<32>::hi, (long long)fold_keys<32>::lo,
                         (long long)fold_keys<48>::hi, (long long)fold_keys<48>::lo);
    __m512i t = _mm512_xor_si512(_mm512_clmulepi64_epi128(y, k, 0x00),
                                 _mm512_clmulepi64_epi128(y, k, 0x11));
    __m128i x =
        _mm_xor_si128(_mm_xor_si128(lane<0>(t), lane<1>(t)), _mm_xor_si128(lane<2>(t), lane<3>(y)));
    return finish(x, p, n);
}

PHOTON_CLMUL uint64_t mul(uint64_t a, uint64_t b) {
    __m128i r = clmul(a, b);  // a * b * x, 127 bits
    uint64_t lo = lo64(r), hi = hi64(r);
    // Shifting the 128-bit value left by one bit divides by x (bit k stands
    // for x^(127-k)); bit 127 is clear, so nothing is lost.
    return barrett(lo << 1, (hi << 1) | (lo >> 63));
}

}  // namespace

crc64_isa crc64ecma_isa_probe() {
    __builtin_cpu_init();
    bool pclmul = __builtin_cpu_supports("pclmul");
    if (pclmul && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq"))
        return {&update_vpclmul, &mul};
    if (pclmul) return {&update, &mul};
    return {nullptr, nullptr};
}

}  // namespace crc_detail
}  // namespace photon
