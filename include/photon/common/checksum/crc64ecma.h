// CRC-64/ECMA-182 (polynomial 0x42F0E1EBA9EA3693, reflected), as PhotonLibOS
// declares it (global namespace). Pure functions: any thread or coroutine may
// call them; none yields.
//
// Convention (Photon's, also xz's CRC-64 and ISA-L's crc64_ecma_refl): the
// register is inverted before and after, and crc64ecma_extend(data, n, crc)
// continues from a previous result, so crc64ecma("123456789") is the
// CRC-64/XZ check value 0x995DC9BBDF1939FA and
//     crc64ecma_extend(b, nb, crc64ecma(a, na, 0)) == crc64ecma(a || b).
//
// The dispatched functions pick carry-less multiply folding (VPCLMULQDQ on
// AVX-512 or PCLMULQDQ on x86-64, PMULL on AArch64) or a slicing-by-8 table,
// once at load time. The *_hw functions are safe on any CPU (software when
// the instructions are missing).
//
// Differences from PhotonLibOS: doc/compat.md#commonchecksumcrc64ecmah
#pragma once

#include <cstddef>
#include <cstdint>

#include <photon/common/string_view.h>

uint64_t crc64ecma_sw(const uint8_t* buffer, size_t nbytes, uint64_t crc);
uint64_t crc64ecma_hw(const uint8_t* buffer, size_t nbytes, uint64_t crc);

inline uint64_t crc64ecma_extend(const void* data, size_t nbytes, uint64_t crc) {
    extern uint64_t (*crc64ecma_auto)(const uint8_t* data, size_t nbytes, uint64_t crc);
    return crc64ecma_auto((const uint8_t*)data, nbytes, crc);
}

inline uint64_t crc64ecma_extend(std::string_view text, uint64_t crc) {
    return crc64ecma_extend(text.data(), text.size(), crc);
}

inline uint64_t crc64ecma(std::string_view text) { return crc64ecma_extend(text, 0); }

inline uint64_t crc64ecma(const void* buffer, size_t nbytes, uint64_t crc) {
    return crc64ecma_extend(buffer, nbytes, crc);
}

// Whether crc64ecma() runs on carry-less multiply instructions on this CPU.
inline bool is_crc64ecma_hw_available() {
    extern uint64_t (*crc64ecma_auto)(const uint8_t* data, size_t nbytes, uint64_t crc);
    return crc64ecma_auto != crc64ecma_sw;
}

// crc_parts[i] = crc64ecma(buffer + i * part_size, part_size, 0) for i < n_parts.
void crc64ecma_series_sw(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                         uint64_t* crc_parts);
void crc64ecma_series_hw(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                         uint64_t* crc_parts);
inline void crc64ecma_series(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                             uint64_t* crc_parts) {
    extern void (*crc64ecma_series_auto)(const uint8_t* buffer, uint32_t part_size,
                                         uint32_t n_parts, uint64_t* crc_parts);
    crc64ecma_series_auto(buffer, part_size, n_parts, crc_parts);
}

// crc64ecma(a || b) from crc1 = crc64ecma(a), crc2 = crc64ecma(b), len2 = |b|.
uint64_t crc64ecma_combine_sw(uint64_t crc1, uint64_t crc2, uint32_t len2);
uint64_t crc64ecma_combine_hw(uint64_t crc1, uint64_t crc2, uint32_t len2);
inline uint64_t crc64ecma_combine(uint64_t crc1, uint64_t crc2, uint32_t len2) {
    extern uint64_t (*crc64ecma_combine_auto)(uint64_t crc1, uint64_t crc2, uint32_t len2);
    return crc64ecma_combine_auto(crc1, crc2, len2);
}

// crc64ecma of n_parts concatenated parts of part_size bytes, from their
// values crc[0..n_parts); 0 if n_parts is 0. crc is only read.
uint64_t crc64ecma_combine_series_sw(uint64_t* crc, uint32_t part_size, uint32_t n_parts);
uint64_t crc64ecma_combine_series_hw(uint64_t* crc, uint32_t part_size, uint32_t n_parts);
inline uint64_t crc64ecma_combine_series(uint64_t* crc, uint32_t part_size, uint32_t n_parts) {
    extern uint64_t (*crc64ecma_combine_series_auto)(uint64_t * crc, uint32_t part_size,
                                                     uint32_t n_parts);
    return crc64ecma_combine_series_auto(crc, part_size, n_parts);
}

struct CRC64ECMA_Component {
    uint64_t crc;
    uint64_t size;
};

// crc64ecma of the middle of a buffer from the values and sizes of the whole,
// a prefix and a suffix. Returns 0 with errno = EINVAL (and logs) if prefix
// and suffix together are longer than the whole.
uint64_t crc64ecma_trim_hw(CRC64ECMA_Component all, CRC64ECMA_Component prefix,
                           CRC64ECMA_Component suffix);
uint64_t crc64ecma_trim_sw(CRC64ECMA_Component all, CRC64ECMA_Component prefix,
                           CRC64ECMA_Component suffix);
inline uint64_t crc64ecma_trim(CRC64ECMA_Component all, CRC64ECMA_Component prefix,
                               CRC64ECMA_Component suffix) {
    extern uint64_t (*crc64ecma_trim_auto)(CRC64ECMA_Component all, CRC64ECMA_Component prefix,
                                           CRC64ECMA_Component suffix);
    return crc64ecma_trim_auto(all, prefix, suffix);
}
