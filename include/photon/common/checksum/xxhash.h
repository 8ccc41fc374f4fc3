// xxHash32 (XXH32 of the xxHash specification), as PhotonLibOS declares it
// (global namespace): a fast non-cryptographic 32-bit hash with a seed.
// Reads any byte alignment, gives the same value on every platform (input is
// read little-endian), and is pure: any thread or coroutine may call it.
#pragma once

#include <cstddef>
#include <cstdint>

uint32_t xxhash32_sw(const uint8_t* data, size_t len, uint32_t seed = 0);
