// The seam between the portable checksum code (crc32c.cpp, crc64ecma.cpp)
// and the one ISA file CMake picks for the target: crc32c_x86_64.cpp and
// crc64ecma_x86_64.cpp, crc32c_aarch64.cpp and crc64ecma_aarch64.cpp, or
// crc_generic.cpp elsewhere. A probe inspects the CPU once and returns the
// hardware routines it can run; a null member means "use software".
#pragma once

#include <cstddef>
#include <cstdint>

namespace photon {
namespace crc_detail {

// Raw register updates: reg(crc, data) with no pre/post inversion.
using crc32c_update_fn = uint32_t (*)(const uint8_t* data, size_t nbytes, uint32_t crc);
using crc64_update_fn = uint64_t (*)(const uint8_t* data, size_t nbytes, uint64_t crc);
// a * b mod P, both operands and the result in reflected form.
using crc32c_mul_fn = uint32_t (*)(uint32_t a, uint32_t b);
using crc64_mul_fn = uint64_t (*)(uint64_t a, uint64_t b);
// reg(0, part i) for n_parts consecutive parts of part_size bytes.
using crc32c_series_fn = void (*)(const uint8_t* buffer, uint32_t part_size, uint32_t n_parts,
                                  uint32_t* crc_parts);

struct crc32c_isa {
    crc32c_update_fn update;
    crc32c_series_fn series;
    crc32c_mul_fn mul;
};

struct crc64_isa {
    crc64_update_fn update;
    crc64_mul_fn mul;
};

// Provided by the ISA file; cheap enough to call once per process.
crc32c_isa crc32c_isa_probe();
crc64_isa crc64ecma_isa_probe();

// Provided by the portable files, for ISA code that finishes short tails in
// software.
uint32_t crc32c_reg_sw(const uint8_t* data, size_t nbytes, uint32_t crc);
uint64_t crc64ecma_reg_sw(const uint8_t* data, size_t nbytes, uint64_t crc);

}  // namespace crc_detail
}  // namespace photon
