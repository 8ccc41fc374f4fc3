// Portable half of crc64ecma.h: slicing-by-8, combine / trim / series, and
// the choice of path made once at load. The carry-less multiply folding is
// in the ISA file (crc_isa.h). The public value is the register inverted
// before and after; combining works on it unchanged because the two
// inversions cancel in crc(a || b) = crc(a) * x^(8|b|) + crc(b).
#include <photon/common/checksum/crc64ecma.h>

#include <cerrno>

#include <photon/common/alog.h>

#include "crc_isa.h"
#include "crc_math.h"

using namespace photon::crc_detail;

namespace {

constexpr slice8_table<gf64> kSlice8;
constexpr shift_table<gf64> kShift;

const crc64_isa& isa() {
    static const crc64_isa chosen = crc64ecma_isa_probe();
    return chosen;
}

uint64_t mul_sw(uint64_t a, uint64_t b) { return gf64::mul(a, b); }

crc64_mul_fn mul_hw() { return isa().mul ? isa().mul : &mul_sw; }

uint64_t combine(uint64_t crc1, uint64_t crc2, uint64_t len2, crc64_mul_fn mul) {
    return shift_bytes(crc1, len2, kShift.left, mul) ^ crc2;
}

uint64_t combine_series(const uint64_t* crc, uint32_t part_size, uint32_t n_parts,
                        crc64_mul_fn mul) {
    if (n_parts == 0) return 0;
    uint64_t step = shift_bytes(gf64::one, part_size, kShift.left, mul);
    uint64_t res = crc[0];
    for (uint32_t i = 1; i < n_parts; i++) res = mul(res, step) ^ crc[i];
    return res;
}

uint64_t trim(CRC64ECMA_Component all, CRC64ECMA_Component prefix, CRC64ECMA_Component suffix,
              crc64_mul_fn mul) {
    if (prefix.size > all.size || suffix.size > all.size - prefix.size)
        LOG_ERROR_RETURN(EINVAL, 0, "crc64ecma_trim: prefix (`) + suffix (`) > total size (`)",
                         prefix.size, suffix.size, all.size);
    uint64_t crc = all.crc;
    if (prefix.size) crc ^= shift_bytes(prefix.crc, all.size - prefix.size, kShift.left, mul);
    if (suffix.size) crc = shift_bytes(crc ^ suffix.crc, suffix.size, kShift.right, mul);
    return crc;
}

}  // namespace

uint64_t photon::crc_detail::crc64ecma_reg_sw(const uint8_t* data, size_t nbytes, uint64_t crc) {
    return slice8_update(kSlice8.tab, data, nbytes, crc);
}

uint64_t crc64ecma_sw(const uint8_t* buffer, size_t nbytes, uint64_t crc) {
    return ~crc64ecma_reg_sw(buffer, nbytes, ~crc);
}

uint64_t crc64ecma_hw(const uint8_t* buffer, size_t nbytes, uint64_t crc) {
    auto update = isa().update;
    return ~(update ? update(buffer, nbytes, ~crc) : crc64ecma_reg_sw(buffer, nbytes, ~crc));
}

void crc64ecma_series_sw(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                         uint64_t* crc_parts) {
    for (uint32_t i = 0; i < n_parts; i++)
        crc_parts[i] = crc64ecma_sw(buffer + size_t(i) * part_size, part_size, 0);
}

void crc64ecma_series_hw(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                         uint64_t* crc_parts) {
    for (uint32_t i = 0; i < n_parts; i++)
        crc_parts[i] = crc64ecma_hw(buffer + size_t(i) * part_size, part_size, 0);
}

uint64_t crc64ecma_combine_sw(uint64_t crc1, uint64_t crc2, uint32_t len2) {
    return combine(crc1, crc2, len2, &mul_sw);
}

uint64_t crc64ecma_combine_hw(uint64_t crc1, uint64_t crc2, uint32_t len2) {
    return combine(crc1, crc2, len2, mul_hw());
}

uint64_t crc64ecma_combine_series_sw(uint64_t* crc, uint32_t part_size, uint32_t n_parts) {
    return combine_series(crc, part_size, n_parts, &mul_sw);
}

uint64_t crc64ecma_combine_series_hw(uint64_t* crc, uint32_t part_size, uint32_t n_parts) {
    return combine_series(crc, part_size, n_parts, mul_hw());
}

uint64_t crc64ecma_trim_sw(CRC64ECMA_Component all, CRC64ECMA_Component prefix,
                           CRC64ECMA_Component suffix) {
    return trim(all, prefix, suffix, &mul_sw);
}

uint64_t crc64ecma_trim_hw(CRC64ECMA_Component all, CRC64ECMA_Component prefix,
                           CRC64ECMA_Component suffix) {
    return trim(all, prefix, suffix, mul_hw());
}

// Dispatch pointers start at resolvers (see crc32c.cpp for why).
namespace {
void select_crc64ecma();
uint64_t resolve_update(const uint8_t* d, size_t n, uint64_t c);
void resolve_series(const uint8_t* b, uint32_t s, uint32_t n, uint64_t* out);
uint64_t resolve_combine(uint64_t a, uint64_t b, uint32_t len);
uint64_t resolve_combine_series(uint64_t* crc, uint32_t s, uint32_t n);
uint64_t resolve_trim(CRC64ECMA_Component a, CRC64ECMA_Component p, CRC64ECMA_Component s);
}  // namespace

uint64_t (*crc64ecma_auto)(const uint8_t*, size_t, uint64_t) = &resolve_update;
void (*crc64ecma_series_auto)(const uint8_t*, uint32_t, uint32_t, uint64_t*) = &resolve_series;
uint64_t (*crc64ecma_combine_auto)(uint64_t, uint64_t, uint32_t) = &resolve_combine;
uint64_t (*crc64ecma_combine_series_auto)(uint64_t*, uint32_t, uint32_t) = &resolve_combine_series;
uint64_t (*crc64ecma_trim_auto)(CRC64ECMA_Component, CRC64ECMA_Component,
                                CRC64ECMA_Component) = &resolve_trim;

namespace {

template <typename F>
void publish(F*& slot, F* fn) {
    __atomic_store_n(&slot, fn, __ATOMIC_RELAXED);
}

void select_crc64ecma() {
    bool hw = isa().update != nullptr;
    publish(crc64ecma_auto, hw ? &crc64ecma_hw : &crc64ecma_sw);
    publish(crc64ecma_series_auto, hw ? &crc64ecma_series_hw : &crc64ecma_series_sw);
    bool clmul = isa().mul != nullptr;
    publish(crc64ecma_combine_auto, clmul ? &crc64ecma_combine_hw : &crc64ecma_combine_sw);
    publish(crc64ecma_combine_series_auto,
            clmul ? &crc64ecma_combine_series_hw : &crc64ecma_combine_series_sw);
    publish(crc64ecma_trim_auto, clmul ? &crc64ecma_trim_hw : &crc64ecma_trim_sw);
}

uint64_t resolve_update(const uint8_t* d, size_t n, uint64_t c) {
    select_crc64ecma();
    return crc64ecma_auto(d, n, c);
}
void resolve_series(const uint8_t* b, uint32_t s, uint32_t n, uint64_t* out) {
    select_crc64ecma();
    crc64ecma_series_auto(b, s, n, out);
}
uint64_t resolve_combine(uint64_t a, uint64_t b, uint32_t len) {
    select_crc64ecma();
    return crc64ecma_combine_auto(a, b, len);
}
uint64_t resolve_combine_series(uint64_t* crc, uint32_t s, uint32_t n) {
    select_crc64ecma();
    return crc64ecma_combine_series_auto(crc, s, n);
}
uint64_t resolve_trim(CRC64ECMA_Component a, CRC64ECMA_Component p, CRC64ECMA_Component s) {
    select_crc64ecma();
    return crc64ecma_trim_auto(a, p, s);
}

__attribute__((constructor(101))) void select_crc64ecma_at_load() { select_crc64ecma(); }

}  // namespace
