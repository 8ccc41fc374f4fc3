// XXH32, written from the xxHash specification: four lanes over 16-byte
// stripes, then 4-byte and 1-byte tail steps, then an avalanche.
#include <photon/common/checksum/xxhash.h>

#include <cstring>

namespace {

constexpr uint32_t P1 = 0x9E3779B1u, P2 = 0x85EBCA77u, P3 = 0xC2B2AE3Du, P4 = 0x27D4EB2Fu,
                   P5 = 0x165667B1u;

inline uint32_t rotl(uint32_t v, int s) { return (v << s) | (v >> (32 - s)); }

inline uint32_t read_le32(const uint8_t* p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

inline uint32_t lane_round(uint32_t acc, uint32_t input) { return rotl(acc + input * P2, 13) * P1; }

}  // namespace

uint32_t xxhash32_sw(const uint8_t* data, size_t len, uint32_t seed) {
    const uint8_t* p = data;
    const uint8_t* end = data + len;
    uint32_t h;
    if (len >= 16) {
        uint32_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        for (; end - p >= 16; p += 16) {
            v1 = lane_round(v1, read_le32(p));
            v2 = lane_round(v2, read_le32(p + 4));
            v3 = lane_round(v3, read_le32(p + 8));
            v4 = lane_round(v4, read_le32(p + 12));
        }
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    } else {
        h = seed + P5;
    }
    h += uint32_t(len);  // the specification adds the length modulo 2^32
    for (; end - p >= 4; p += 4) h = rotl(h + read_le32(p) * P3, 17) * P4;
    for (; p < end; p++) h = rotl(h + *p * P5, 11) * P1;
    h ^= h >> 15;
    h *= P2;
    h ^= h >> 13;
    h *= P3;
    h ^= h >> 16;
    return h;
}
