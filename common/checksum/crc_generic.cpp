// ISA file for targets without a hardware checksum path (neither x86-64 nor
// AArch64): every checksum runs on the portable slicing-by-8 tables.
#include "crc_isa.h"

namespace photon {
namespace crc_detail {

crc32c_isa crc32c_isa_probe() { return {nullptr, nullptr, nullptr}; }
crc64_isa crc64ecma_isa_probe() { return {nullptr, nullptr}; }

}  // namespace crc_detail
}  // namespace photon
