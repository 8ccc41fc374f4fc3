// CRC32C (Castagnoli, iSCSI polynomial 0x1EDC6F41), as PhotonLibOS declares
// it (global namespace). Pure functions: any thread or coroutine may call
// them; none yields.
//
// Convention (Photon's, also ISA-L's crc32_iscsi): the value is the raw CRC
// register with no pre- or post-inversion. crc32c(data) starts from 0, and
// crc32c_extend(data, n, crc) continues from a previous result, so
//     crc32c_extend(b, nb, crc32c(a, na)) == crc32c(a || b).
// The textbook CRC-32C (check value 0xE3069283 for "123456789") is
//     ~crc32c_extend(data, n, ~0u).
//
// crc32c() and friends pick the fastest path for this CPU once, at load time:
// SSE4.2 crc32 in three interleaved streams joined with PCLMULQDQ on x86-64,
// the ARMv8 CRC32 instructions (joined with PMULL) on AArch64, a
// slicing-by-8 table elsewhere. The *_hw functions are safe to call on any
// CPU: without the instructions they compute the same value in software.
//
// Differences from PhotonLibOS: doc/compat.md#commonchecksumcrc32ch
#pragma once

#include <cstddef>
#include <cstdint>

#include <photon/common/string_view.h>

uint32_t crc32c_sw(const uint8_t* buffer, size_t nbytes, uint32_t crc);

uint32_t crc32c_hw(const uint8_t* data, size_t nbytes, uint32_t crc);

// The dispatched update; prefer these to the _sw/_hw variants.
inline uint32_t crc32c_extend(const void* data, size_t nbytes, uint32_t crc) {
    extern uint32_t (*crc32c_auto)(const uint8_t* data, size_t nbytes, uint32_t crc);
    return crc32c_auto((const uint8_t*)data, nbytes, crc);
}

inline uint32_t crc32c(const void* data, size_t nbytes) { return crc32c_extend(data, nbytes, 0); }

inline uint32_t crc32c_extend(std::string_view text, uint32_t crc) {
    return crc32c_extend(text.data(), text.size(), crc);
}

inline uint32_t crc32c(std::string_view text) { return crc32c_extend(text, 0); }

// crc_parts[i] = crc32c(buffer + i * part_size, part_size) for i < n_parts;
// crc_parts holds n_parts values.
void crc32c_series_sw(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                      uint32_t* crc_parts);
void crc32c_series_hw(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                      uint32_t* crc_parts);
inline void crc32c_series(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                          uint32_t* crc_parts) {
    extern void (*crc32c_series_auto)(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                                      uint32_t* crc_parts);
    crc32c_series_auto(buffer, part_size, n_parts, crc_parts);
}

// crc32c(a || b) from crc1 = crc32c(a), crc2 = crc32c(b) and len2 = |b|.
uint32_t crc32c_combine_sw(uint32_t crc1, uint32_t crc2, uint32_t len2);
uint32_t crc32c_combine_hw(uint32_t crc1, uint32_t crc2, uint32_t len2);
inline uint32_t crc32c_combine(uint32_t crc1, uint32_t crc2, uint32_t len2) {
    extern uint32_t (*crc32c_combine_auto)(uint32_t crc1, uint32_t crc2, uint32_t len2);
    return crc32c_combine_auto(crc1, crc2, len2);
}

// crc32c of the concatenation of n_parts parts of part_size bytes each, from
// their values crc[0..n_parts) (as crc32c_series gives them); 0 if n_parts
// is 0. crc is only read.
uint32_t crc32c_combine_series_sw(uint32_t* crc, uint32_t part_size, uint32_t n_parts);
uint32_t crc32c_combine_series_hw(uint32_t* crc, uint32_t part_size, uint32_t n_parts);
inline uint32_t crc32c_combine_series(uint32_t* crc, uint32_t part_size, uint32_t n_parts) {
    extern uint32_t (*crc32c_combine_series_auto)(uint32_t * crc, uint32_t part_size,
                                                  uint32_t n_parts);
    return crc32c_combine_series_auto(crc, part_size, n_parts);
}

struct CRC32C_Component {
    uint32_t crc;
    uint32_t size;
};

// crc32c of the middle of a buffer, given the crc32c and size of the whole
// buffer, of a prefix and of a suffix of it. Returns 0 with errno = EINVAL
// (and logs) if prefix and suffix together are longer than the whole.
uint32_t crc32c_trim_sw(CRC32C_Component all, CRC32C_Component prefix, CRC32C_Component suffix);
uint32_t crc32c_trim_hw(CRC32C_Component all, CRC32C_Component prefix, CRC32C_Component suffix);
inline uint32_t crc32c_trim(CRC32C_Component all, CRC32C_Component prefix,
                            CRC32C_Component suffix) {
    extern uint32_t (*crc32c_trim_auto)(CRC32C_Component all, CRC32C_Component prefix,
                                        CRC32C_Component suffix);
    return crc32c_trim_auto(all, prefix, suffix);
}

// Whether crc32c() runs on CRC instructions on this CPU.
inline bool is_crc32c_hw_available() {
    extern uint32_t (*crc32c_auto)(const uint8_t* data, size_t nbytes, uint32_t crc);
    return crc32c_auto != crc32c_sw;
}
