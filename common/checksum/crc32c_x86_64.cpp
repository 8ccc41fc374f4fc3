// CRC32C on x86-64: the SSE4.2 crc32 instruction. Its latency is 3 cycles
// and one issues per cycle, so a single dependent chain runs at a third of
// the core's capacity; large inputs are cut into three equal streams that run
// interleaved, and the three partial CRCs are joined with PCLMULQDQ (shifting
// a CRC over n bytes is a multiplication by x^(8n) mod P, see crc_math.h).
// Functions carry target attributes, so the library needs no -msse4.2 and
// the probe decides at run time what may execute.
#include <immintrin.h>

#include <cstring>

#include "crc_isa.h"
#include "crc_math.h"

#define PHOTON_SSE42 __attribute__((target("sse4.2")))
#define PHOTON_SSE42_CLMUL __attribute__((target("sse4.2,pclmul")))

namespace photon {
namespace crc_detail {
namespace {

inline uint64_t load64(const uint8_t* p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

// Fewer than 8 bytes, in memory order.
PHOTON_SSE42 inline uint32_t update_tail(const uint8_t* p, size_t n, uint32_t crc) {
    if (n & 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        crc = _mm_crc32_u32(crc, v), p += 4;
    }
    if (n & 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        crc = _mm_crc32_u16(crc, v), p += 2;
    }
    if (n & 1) crc = _mm_crc32_u8(crc, *p);
    return crc;
}

// Bytes up to the next 8-byte boundary, so that the qword loads that follow
// never split a cache line.
PHOTON_SSE42 inline uint32_t update_head(const uint8_t*& p, size_t& n, uint32_t crc) {
    size_t head = (0 - (uintptr_t)p) & 7;
    if (head > n) head = n;
    crc = update_tail(p, head, crc);
    p += head, n -= head;
    return crc;
}

PHOTON_SSE42 uint32_t update_1way(const uint8_t* p, size_t n, uint32_t crc) {
    crc = update_head(p, n, crc);
    uint64_t c = crc;
    for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, load64(p));
    return update_tail(p, n, (uint32_t)c);
}

// Joining constants for three streams of L bytes. clmul of two reflected
// 32-bit values yields their product times x, and the crc32 that consumes it
// multiplies by x^32, hence the -33: stream 0 must move 2L bytes, stream 1
// L bytes, relative to the last qword of stream 2.
template <size_t L>
struct join3 {
    static_assert(L % 8 == 0 && L >= 16, "stream length");
    static constexpr uint64_t k0 = gf32::x_pow(8 * 2 * L - 33);
    static constexpr uint64_t k1 = gf32::x_pow(8 * L - 33);
};

// 3 * L bytes from p, continuing crc.
template <size_t L>
PHOTON_SSE42_CLMUL inline uint32_t block3(const uint8_t* p, uint32_t crc) {
    constexpr size_t Q = L / 8;
    uint64_t c0 = crc, c1 = 0, c2 = 0;
#pragma GCC unroll 8
    for (size_t i = 0; i < Q - 1; i++) {
        c0 = _mm_crc32_u64(c0, load64(p + 8 * i));
        c1 = _mm_crc32_u64(c1, load64(p + L + 8 * i));
        c2 = _mm_crc32_u64(c2, load64(p + 2 * L + 8 * i));
    }
    c0 = _mm_crc32_u64(c0, load64(p + L - 8));
    c1 = _mm_crc32_u64(c1, load64(p + 2 * L - 8));
    __m128i c = _mm_set_epi64x((long long)c1, (long long)c0);
    __m128i k = _mm_set_epi64x((long long)join3<L>::k1, (long long)join3<L>::k0);
    __m128i t = _mm_xor_si128(_mm_clmulepi64_si128(c, k, 0x00), _mm_clmulepi64_si128(c, k, 0x11));
    uint64_t folded = load64(p + 3 * L - 8) ^ (uint64_t)_mm_cvtsi128_si64(t);
    return (uint32_t)_mm_crc32_u64(c2, folded);
}

template <size_t L>
PHOTON_SSE42_CLMUL inline uint32_t blocks3(const uint8_t*& p, size_t& n, uint32_t crc) {
    for (; n >= 3 * L; n -= 3 * L, p += 3 * L) crc = block3<L>(p, crc);
    return crc;
}

// Long blocks keep the join (about 15 cycles of latency that stalls stream
// 0) rare; the shorter ones serve the remainder and mid-sized inputs.
PHOTON_SSE42_CLMUL uint32_t update_3way(const uint8_t* p, size_t n, uint32_t crc) {
    crc = update_head(p, n, crc);
    crc = blocks3<4096>(p, n, crc);
    crc = blocks3<512>(p, n, crc);
    crc = blocks3<64>(p, n, crc);
    uint64_t c = crc;
    for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, load64(p));
    return update_tail(p, n, (uint32_t)c);
}

// Four short parts at once, one chain each, so the chains overlap.
template <uint32_t (*Update)(const uint8_t*, size_t, uint32_t)>
PHOTON_SSE42 void series(const uint8_t* buf, uint32_t part, uint32_t n_parts, uint32_t* out) {
    uint32_t i = 0;
    if (part < 1024) {
        for (; i + 4 <= n_parts; i += 4) {
            const uint8_t* p = buf + size_t(i) * part;
            uint64_t c[4] = {0, 0, 0, 0};
            size_t off = 0;
            for (; off + 8 <= part; off += 8)
                for (int k = 0; k < 4; k++) c[k] = _mm_crc32_u64(c[k], load64(p + k * part + off));
            for (int k = 0; k < 4; k++)
                out[i + k] = update_tail(p + k * part + off, part - off, (uint32_t)c[k]);
        }
    }
    for (; i < n_parts; i++) out[i] = Update(buf + size_t(i) * part, part, 0);
}

// a * b mod P: the 63-bit carry-less product, shifted to drop the extra x,
// is zH * x^32 + zL; crc32 of zH from 0 is exactly zH * x^32 mod P.
PHOTON_SSE42_CLMUL uint32_t mul(uint32_t a, uint32_t b) {
    __m128i p = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)a), _mm_cvtsi32_si128((int)b), 0);
    uint64_t z = (uint64_t)_mm_cvtsi128_si64(p) << 1;
    return _mm_crc32_u32(0, (uint32_t)z) ^ (uint32_t)(z >> 32);
}

}  // namespace

crc32c_isa crc32c_isa_probe() {
    __builtin_cpu_init();
    bool sse42 = __builtin_cpu_supports("sse4.2");
    bool clmul = __builtin_cpu_supports("pclmul");
    if (sse42 && clmul) return {&update_3way, &series<update_3way>, &mul};
    if (sse42) return {&update_1way, &series<update_1way>, nullptr};
    return {nullptr, nullptr, nullptr};
}

}  // namespace crc_detail
}  // namespace photon
