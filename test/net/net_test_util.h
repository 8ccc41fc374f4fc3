// Helpers shared by the socket tests of test/net/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace photon_test {

// n pseudo-random bytes, the same for the same seed.
inline std::string pattern(size_t n, uint32_t seed = 1) {
    std::string s(n, 0);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245 + 12345;
        s[i] = (char)(seed >> 16);
    }
    return s;
}

}  // namespace photon_test
