// Portable half of crc32c.h: the slicing-by-8 software path, combine / trim /
// series on top of GF(2) multiplication, and the choice of path made once at
// load. The instruction-level routines live in the ISA file (crc_isa.h).
#include <photon/common/checksum/crc32c.h>

#include <cerrno>

#include <photon/common/alog.h>

#include "crc_isa.h"
#include "crc_math.h"

using namespace photon::crc_detail;

namespace {

constexpr slice8_table<gf32> kSlice8;
constexpr shift_table<gf32> kShift;

const crc32c_isa& isa() {
    static const crc32c_isa chosen = crc32c_isa_probe();
    return chosen;
}

uint32_t mul_sw(uint32_t a, uint32_t b) { return gf32::mul(a, b); }

crc32c_mul_fn mul_hw() { return isa().mul ? isa().mul : &mul_sw; }

uint32_t combine(uint32_t crc1, uint32_t crc2, uint64_t len2, crc32c_mul_fn mul) {
    return shift_bytes(crc1, len2, kShift.left, mul) ^ crc2;
}

uint32_t combine_series(const uint32_t* crc, uint32_t part_size, uint32_t n_parts,
                        crc32c_mul_fn mul) {
    if (n_parts == 0) return 0;
    // One multiply per part by x^(8 * part_size), computed once.
    uint32_t step = shift_bytes(gf32::one, part_size, kShift.left, mul);
    uint32_t res = crc[0];
    for (uint32_t i = 1; i < n_parts; i++) res = mul(res, step) ^ crc[i];
    return res;
}

// all = prefix * x^(8 (|all| - |prefix|)) + mid * x^(8 |suffix|) + suffix,
// solved for mid. Sizes are checked in 64 bits so they cannot wrap.
uint32_t trim(CRC32C_Component all, CRC32C_Component prefix, CRC32C_Component suffix,
              crc32c_mul_fn mul) {
    if (uint64_t(prefix.size) + suffix.size > all.size)
        LOG_ERROR_RETURN(EINVAL, 0, "crc32c_trim: prefix (`) + suffix (`) > total size (`)",
                         prefix.size, suffix.size, all.size);
    uint32_t crc = all.crc;
    if (prefix.size) crc ^= shift_bytes(prefix.crc, all.size - prefix.size, kShift.left, mul);
    if (suffix.size) crc = shift_bytes(crc ^ suffix.crc, suffix.size, kShift.right, mul);
    return crc;
}

}  // namespace

uint32_t photon::crc_detail::crc32c_reg_sw(const uint8_t* data, size_t nbytes, uint32_t crc) {
    return slice8_update(kSlice8.tab, data, nbytes, crc);
}

uint32_t crc32c_sw(const uint8_t* buffer, size_t nbytes, uint32_t crc) {
    return crc32c_reg_sw(buffer, nbytes, crc);
}

uint32_t crc32c_hw(const uint8_t* data, size_t nbytes, uint32_t crc) {
    auto update = isa().update;
    return update ? update(data, nbytes, crc) : crc32c_reg_sw(data, nbytes, crc);
}

void crc32c_series_sw(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                      uint32_t* crc_parts) {
    for (uint32_t i = 0; i < n_parts; i++)
        crc_parts[i] = crc32c_reg_sw(buffer + size_t(i) * part_size, part_size, 0);
}

void crc32c_series_hw(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                      uint32_t* crc_parts) {
    if (isa().series) return isa().series(buffer, part_size, n_parts, crc_parts);
    for (uint32_t i = 0; i < n_parts; i++)
        crc_parts[i] = crc32c_hw(buffer + size_t(i) * part_size, part_size, 0);
}

uint32_t crc32c_combine_sw(uint32_t crc1, uint32_t crc2, uint32_t len2) {
    return combine(crc1, crc2, len2, &mul_sw);
}

uint32_t crc32c_combine_hw(uint32_t crc1, uint32_t crc2, uint32_t len2) {
    return combine(crc1, crc2, len2, mul_hw());
}

uint32_t crc32c_combine_series_sw(uint32_t* crc, uint32_t part_size, uint32_t n_parts) {
    return combine_series(crc, part_size, n_parts, &mul_sw);
}

uint32_t crc32c_combine_series_hw(uint32_t* crc, uint32_t part_size, uint32_t n_parts) {
    return combine_series(crc, part_size, n_parts, mul_hw());
}

uint32_t crc32c_trim_sw(CRC32C_Component all, CRC32C_Component prefix, CRC32C_Component suffix) {
    return trim(all, prefix, suffix, &mul_sw);
}

uint32_t crc32c_trim_hw(CRC32C_Component all, CRC32C_Component prefix, CRC32C_Component suffix) {
    return trim(all, prefix, suffix, mul_hw());
}

// The dispatch pointers start at resolvers, so a call made before the load
// time constructor below (from another constructor) still works: it selects
// then, and forwards.
namespace {
void select_crc32c();
uint32_t resolve_update(const uint8_t* d, size_t n, uint32_t c);
void resolve_series(const uint8_t* b, uint32_t s, uint32_t n, uint32_t* out);
uint32_t resolve_combine(uint32_t a, uint32_t b, uint32_t len);
uint32_t resolve_combine_series(uint32_t* crc, uint32_t s, uint32_t n);
uint32_t resolve_trim(CRC32C_Component a, CRC32C_Component p, CRC32C_Component s);
}  // namespace

uint32_t (*crc32c_auto)(const uint8_t*, size_t, uint32_t) = &resolve_update;
void (*crc32c_series_auto)(const uint8_t*, uint32_t, uint32_t, uint32_t*) = &resolve_series;
uint32_t (*crc32c_combine_auto)(uint32_t, uint32_t, uint32_t) = &resolve_combine;
uint32_t (*crc32c_combine_series_auto)(uint32_t*, uint32_t, uint32_t) = &resolve_combine_series;
uint32_t (*crc32c_trim_auto)(CRC32C_Component, CRC32C_Component, CRC32C_Component) = &resolve_trim;

namespace {

template <typename F>
void publish(F*& slot, F* fn) {
    // Racing resolvers store the same value; relaxed is enough for a pointer
    // to code that exists from load on.
    __atomic_store_n(&slot, fn, __ATOMIC_RELAXED);
}

void select_crc32c() {
    bool hw = isa().update != nullptr;
    publish(crc32c_auto, hw ? isa().update : &crc32c_sw);
    publish(crc32c_series_auto, hw ? &crc32c_series_hw : &crc32c_series_sw);
    bool clmul = isa().mul != nullptr;
    publish(crc32c_combine_auto, clmul ? &crc32c_combine_hw : &crc32c_combine_sw);
    publish(crc32c_combine_series_auto,
            clmul ? &crc32c_combine_series_hw : &crc32c_combine_series_sw);
    publish(crc32c_trim_auto, clmul ? &crc32c_trim_hw : &crc32c_trim_sw);
}

uint32_t resolve_update(const uint8_t* d, size_t n, uint32_t c) {
    select_crc32c();
    return crc32c_auto(d, n, c);
}
void resolve_series(const uint8_t* b, uint32_t s, uint32_t n, uint32_t* out) {
    select_crc32c();
    crc32c_series_auto(b, s, n, out);
}
uint32_t resolve_combine(uint32_t a, uint32_t b, uint32_t len) {
    select_crc32c();
    return crc32c_combine_auto(a, b, len);
}
uint32_t resolve_combine_series(uint32_t* crc, uint32_t s, uint32_t n) {
    select_crc32c();
    return crc32c_combine_series_auto(crc, s, n);
}
uint32_t resolve_trim(CRC32C_Component a, CRC32C_Component p, CRC32C_Component s) {
    select_crc32c();
    return crc32c_trim_auto(a, p, s);
}

// Priority 101 runs before ordinary static constructors of the program, so
// is_crc32c_hw_available() is accurate by the time user code runs.
__attribute__((constructor(101))) void select_crc32c_at_load() { select_crc32c(); }

}  // namespace
