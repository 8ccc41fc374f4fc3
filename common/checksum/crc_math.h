// Arithmetic on bit-reflected CRC polynomials, shared by the portable and the
// ISA-specific checksum files. All of it is constexpr, so every constant the
// hardware paths need (fold distances, Barrett quotients, shift tables) is
// derived here at compile time from the polynomial alone.
//
// Representation: a T-bit value v stands for the polynomial whose x^(T-1-i)
// coefficient is bit i of v (bit 0 is the highest degree), the order in which
// reflected CRCs (CRC32C, CRC-64/ECMA-182 as in xz) consume message bits.
// The CRC register after bytes M, starting from c, is then
//     reg(c, M) = c * x^(8|M|) + M * x^T   (mod P)
// so appending n zero bytes multiplies by x^(8n), and two parts combine as
//     reg(c, A || B) = reg(c, A) * x^(8|B|) + reg(0, B).
// See crc.md in PhotonLibOS for the derivations this file relies on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace photon {
namespace crc_detail {

constexpr uint32_t CRC32C_POLY = 0x82f63b78;             // 0x1EDC6F41 reflected
constexpr uint64_t CRC64ECMA_POLY = 0xc96c5795d7870f42;  // 0x42F0E1EBA9EA3693 reflected

// GF(2)[x] / P for a reflected polynomial Poly of width T = 8 * sizeof(U).
template <typename U, U Poly>
struct gf {
    using value_type = U;
    static constexpr int T = 8 * sizeof(U);
    static constexpr U one = U(1) << (T - 1);  // x^0

    static constexpr U mul_x(U a) { return (a >> 1) ^ ((a & 1) ? Poly : U(0)); }
    // P's constant term is 1, so x is invertible: add P when a has an x^0
    // term, then every term moves down one degree (x^T becomes x^(T-1)).
    static constexpr U div_x(U a) { return (a & one) ? U(((a ^ Poly) << 1) | 1) : U(a << 1); }

    // a * b mod P, Horner over b from its highest-degree coefficient down.
    static constexpr U mul(U a, U b) {
        U r = 0;
        for (int i = 0; i < T; i++) {
            r = mul_x(r);
            r ^= a & (U(0) - ((b >> i) & 1));
        }
        return r;
    }
    static constexpr U pow(U base, uint64_t n) {
        U r = one;
        for (; n; n >>= 1, base = mul(base, base))
            if (n & 1) r = mul(r, base);
        return r;
    }
    static constexpr U x_pow(uint64_t n) { return pow(one >> 1, n); }
    static constexpr U x_pow_neg(uint64_t n) { return pow(div_x(one), n); }

    // floor(x^n / P) for T <= n < 2T, as a (n - T + 1)-coefficient value in
    // reflected order of width T (coefficient x^j at bit T-1-j).
    static constexpr U quotient(int n) {
        // Long division by walking x^k mod P from k = 0 to n: whenever the
        // step to x^(k+1) pushes a term up to x^T, P is subtracted once, and
        // that subtraction, carried along by the n-1-k later steps, is a
        // quotient term x^(n-1-k).
        U rem = one;
        U q = 0;
        for (int k = 0; k < n; k++) {
            bool overflow = rem & 1;  // the x^(T-1) term becomes x^T
            rem = mul_x(rem);
            if (overflow && n - 1 - k < T) q |= U(1) << (T - 1 - (n - 1 - k));
        }
        return q;
    }
};

// Little-endian 64-bit value of bytes already loaded natively.
inline uint64_t le64(uint64_t x) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
}

using gf32 = gf<uint32_t, CRC32C_POLY>;
using gf64 = gf<uint64_t, CRC64ECMA_POLY>;

// tab[i] = x^(+-8 * 2^i) mod P: shifting a CRC over 2^i bytes, for any
// 64-bit byte count.
template <typename G>
struct shift_table {
    typename G::value_type left[64], right[64];
    constexpr shift_table() : left(), right() {
        auto l = G::x_pow(8), r = G::x_pow_neg(8);
        for (int i = 0; i < 64; i++) {
            left[i] = l, right[i] = r;
            l = G::mul(l, l), r = G::mul(r, r);
        }
    }
};

// Slicing-by-8 tables: tab[k][b] is byte b followed by k zero bytes.
template <typename G>
struct slice8_table {
    typename G::value_type tab[8][256];
    constexpr slice8_table() : tab() {
        for (int b = 0; b < 256; b++) {
            auto c = typename G::value_type(b);
            for (int j = 0; j < 8; j++) c = G::mul_x(c);
            tab[0][b] = c;
        }
        for (int k = 1; k < 8; k++)
            for (int b = 0; b < 256; b++)
                tab[k][b] = (tab[k - 1][b] >> 8) ^ tab[0][tab[k - 1][b] & 0xff];
    }
};

// reg(crc, data) eight bytes per step; the byte loops cover the unaligned
// head (so the 8-byte loads are aligned) and the tail.
template <typename U>
inline U slice8_update(const U (&tab)[8][256], const uint8_t* p, size_t n, U crc) {
    auto step1 = [&](uint8_t b) { crc = tab[0][(crc ^ b) & 0xff] ^ (crc >> 8); };
    for (; n && ((uintptr_t)p & 7); n--) step1(*p++);
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        x = le64(x) ^ crc;
        crc = tab[7][x & 0xff] ^ tab[6][(x >> 8) & 0xff] ^ tab[5][(x >> 16) & 0xff] ^
              tab[4][(x >> 24) & 0xff] ^ tab[3][(x >> 32) & 0xff] ^ tab[2][(x >> 40) & 0xff] ^
              tab[1][(x >> 48) & 0xff] ^ tab[0][x >> 56];
    }
    for (; n; n--) step1(*p++);
    return crc;
}

// Shifts crc over n bytes: tab is shift_table::left (append n zero bytes)
// or ::right (remove n trailing zero bytes). One multiply per set bit of n.
template <typename U, typename Mul>
inline U shift_bytes(U crc, uint64_t n, const U (&tab)[64], Mul mul) {
    for (; n && crc; n &= n - 1) crc = mul(crc, tab[__builtin_ctzll(n)]);
    return crc;
}

}  // namespace crc_detail
}  // namespace photon
