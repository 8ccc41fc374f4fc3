// The ISA-specific half of checksum-perf (checksum_perf_<isa>.cpp): loops
// that show what the core itself can do, to hold the library's numbers
// against.
#pragma once

#include <cstddef>
#include <cstdint>

namespace perf {

// The CRC32C instruction's ceiling: `chains` independent crc32 chains over
// the n bytes at p (n a multiple of 8 * chains), with no joining at all.
// Returns a value depending on every chain so the work is not optimised
// away; 0 if this CPU lacks the instruction.
uint64_t crc32c_ideal(const uint8_t* p, size_t n);
constexpr int kIdealChains = 6;
bool crc32c_ideal_available();

// Runs `n` dependent one-cycle integer adds (plus loop overhead that issues
// alongside), to estimate the core clock from wall time without a PMU.
void dependent_adds(uint64_t n);

}  // namespace perf
