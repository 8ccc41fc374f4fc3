// CRC32C on AArch64: the ARMv8 CRC32 extension (crc32cx and friends), in
// three interleaved streams for large inputs, as on x86-64 (see
// crc32c_x86_64.cpp for the joining algebra): the instruction's latency is
// 2-3 cycles at one per cycle on most cores. The partial CRCs are joined
// with PMULL when the core has it (the crypto extension); cores with CRC32
// but no PMULL (e.g. Cortex-A72 in a Raspberry Pi 4) join them with the
// portable GF(2) multiply instead, a few hundred cycles per 12 KiB block.
// Functions carry target attributes, so the library needs no -march flags.
#include <arm_acle.h>
#include <arm_neon.h>

#include <cstring>

#if defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#ifndef HWCAP_PMULL
#define HWCAP_PMULL (1 << 4)
#endif
#endif

#include "crc_isa.h"
#include "crc_math.h"

// GCC spells target features "+crc", clang "crc"; clang before 16 also
// hides the ACLE CRC intrinsics unless the whole file is built with +crc, so
// clang gets its builtins directly.
#if defined(__clang__)
#define PHOTON_CRC __attribute__((target("crc")))
#define PHOTON_CRC_PMULL __attribute__((target("crc,crypto")))
#define PHOTON_CRC32CB __builtin_arm_crc32cb
#define PHOTON_CRC32CH __builtin_arm_crc32ch
#define PHOTON_CRC32CW __builtin_arm_crc32cw
#define PHOTON_CRC32CD __builtin_arm_crc32cd
#else
#define PHOTON_CRC __attribute__((target("+crc")))
#define PHOTON_CRC_PMULL __attribute__((target("+crc+crypto")))
#define PHOTON_CRC32CB __crc32cb
#define PHOTON_CRC32CH __crc32ch
#define PHOTON_CRC32CW __crc32cw
#define PHOTON_CRC32CD __crc32cd
#endif

namespace photon {
namespace crc_detail {
namespace {

inline uint64_t load64(const uint8_t* p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

PHOTON_CRC inline uint32_t update_tail(const uint8_t* p, size_t n, uint32_t crc) {
    if (n & 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        crc = PHOTON_CRC32CW(crc, v), p += 4;
    }
    if (n & 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        crc = PHOTON_CRC32CH(crc, v), p += 2;
    }
    if (n & 1) crc = PHOTON_CRC32CB(crc, *p);
    return crc;
}

PHOTON_CRC inline uint32_t update_head(const uint8_t*& p, size_t& n, uint32_t crc) {
    size_t head = (0 - (uintptr_t)p) & 7;
    if (head > n) head = n;
    crc = update_tail(p, head, crc);
    p += head, n -= head;
    return crc;
}

// With PMULL: as on x86-64, clmul adds a factor x and crc32cx of the folded
// qword another x^32. Without: plain x^(8 * distance) for gf32::mul.
template <size_t L>
struct join3 {
    static_assert(L % 8 == 0 && L >= 16, "stream length");
    static constexpr uint64_t k0 = gf32::x_pow(8 * 2 * L - 33);
    static constexpr uint64_t k1 = gf32::x_pow(8 * L - 33);
    static constexpr uint32_t m0 = gf32::x_pow(8 * 2 * L);
    static constexpr uint32_t m1 = gf32::x_pow(8 * L);
};

// Three streams of L bytes from p, all but stream 2's last qword.
template <size_t L>
PHOTON_CRC inline void streams3(const uint8_t* p, uint32_t crc, uint32_t (&c)[3]) {
    constexpr size_t Q = L / 8;
    uint32_t c0 = crc, c1 = 0, c2 = 0;
#pragma GCC unroll 8
    for (size_t i = 0; i < Q - 1; i++) {
        c0 = PHOTON_CRC32CD(c0, load64(p + 8 * i));
        c1 = PHOTON_CRC32CD(c1, load64(p + L + 8 * i));
        c2 = PHOTON_CRC32CD(c2, load64(p + 2 * L + 8 * i));
    }
    c[0] = PHOTON_CRC32CD(c0, load64(p + L - 8));
    c[1] = PHOTON_CRC32CD(c1, load64(p + 2 * L - 8));
    c[2] = c2;
}

PHOTON_CRC_PMULL inline uint64_t clmul_lo64(uint64_t a, uint64_t b) {
    return vgetq_lane_u64(vreinterpretq_u64_p128(vmull_p64((poly64_t)a, (poly64_t)b)), 0);
}

template <size_t L>
PHOTON_CRC_PMULL inline uint32_t block3_pmull(const uint8_t* p, uint32_t crc) {
    uint32_t c[3];
    streams3<L>(p, crc, c);
    uint64_t t = clmul_lo64(c[0], join3<L>::k0) ^ clmul_lo64(c[1], join3<L>::k1);
    return PHOTON_CRC32CD(c[2], load64(p + 3 * L - 8) ^ t);
}

template <size_t L>
PHOTON_CRC inline uint32_t block3_soft(const uint8_t* p, uint32_t crc) {
    uint32_t c[3];
    streams3<L>(p, crc, c);
    uint32_t last = PHOTON_CRC32CD(c[2], load64(p + 3 * L - 8));
    return gf32::mul(c[0], join3<L>::m0) ^ gf32::mul(c[1], join3<L>::m1) ^ last;
}

PHOTON_CRC inline uint32_t update_rest(const uint8_t* p, size_t n, uint32_t crc) {
    for (; n >= 8; n -= 8, p += 8) crc = PHOTON_CRC32CD(crc, load64(p));
    return update_tail(p, n, crc);
}

PHOTON_CRC_PMULL uint32_t update_3way_pmull(const uint8_t* p, size_t n, uint32_t crc) {
    crc = update_head(p, n, crc);
    for (; n >= 3 * 4096; n -= 3 * 4096, p += 3 * 4096) crc = block3_pmull<4096>(p, crc);
    for (; n >= 3 * 512; n -= 3 * 512, p += 3 * 512) crc = block3_pmull<512>(p, crc);
    for (; n >= 3 * 64; n -= 3 * 64, p += 3 * 64) crc = block3_pmull<64>(p, crc);
    return update_rest(p, n, crc);
}

// The software join costs about as much as 100 crc32cx, so only long
// blocks are worth splitting.
PHOTON_CRC uint32_t update_3way_soft(const uint8_t* p, size_t n, uint32_t crc) {
    crc = update_head(p, n, crc);
    for (; n >= 3 * 4096; n -= 3 * 4096, p += 3 * 4096) crc = block3_soft<4096>(p, crc);
    for (; n >= 3 * 1024; n -= 3 * 1024, p += 3 * 1024) crc = block3_soft<1024>(p, crc);
    return update_rest(p, n, crc);
}

// Four short parts at once, one chain each.
template <uint32_t (*Update)(const uint8_t*, size_t, uint32_t)>
PHOTON_CRC void series(const uint8_t* buf, uint32_t part, uint32_t n_parts, uint32_t* out) {
    uint32_t i = 0;
    if (part < 1024) {
        for (; i + 4 <= n_parts; i += 4) {
            const uint8_t* p = buf + size_t(i) * part;
            uint32_t c[4] = {0, 0, 0, 0};
            size_t off = 0;
            for (; off + 8 <= part; off += 8)
                for (int k = 0; k < 4; k++) c[k] = PHOTON_CRC32CD(c[k], load64(p + k * part + off));
            for (int k = 0; k < 4; k++)
                out[i + k] = update_tail(p + k * part + off, part - off, c[k]);
        }
    }
    for (; i < n_parts; i++) out[i] = Update(buf + size_t(i) * part, part, 0);
}

// a * b mod P, as on x86-64: the carry-less product shifted to drop the
// extra x is zH * x^32 + zL, and crc32cw(0, zH) = zH * x^32 mod P.
PHOTON_CRC_PMULL uint32_t mul(uint32_t a, uint32_t b) {
    uint64_t z = clmul_lo64(a, b) << 1;
    return PHOTON_CRC32CW(0, (uint32_t)z) ^ (uint32_t)(z >> 32);
}

struct features {
    bool crc, pmull;
};

features cpu_features() {
#if defined(__linux__)
    unsigned long caps = getauxval(AT_HWCAP);
    return {(caps & HWCAP_CRC32) != 0, (caps & HWCAP_PMULL) != 0};
#elif defined(__APPLE__)
    return {true, true};  // every Apple silicon core has both
#else
    return {false, false};
#endif
}

}  // namespace

crc32c_isa crc32c_isa_probe() {
    features f = cpu_features();
    if (f.crc && f.pmull) return {&update_3way_pmull, &series<update_3way_pmull>, &mul};
    if (f.crc) return {&update_3way_soft, &series<update_3way_soft>, nullptr};
    return {nullptr, nullptr, nullptr};
}

}  // namespace crc_detail
}  // namespace photon
