// photon::hash_combine(h1, h2, ...): one hash of several, folded left to
// right as PhotonLibOS folds them (the same values for the same inputs).
// Pure functions: any thread.
#pragma once

#include <cstddef>
#include <unordered_set>

namespace photon {

inline size_t hash_combine(size_t a) { return a; }

template <typename... Ts>
inline size_t hash_combine(size_t a, size_t b, Ts... xs) {
    return hash_combine((a << 6) + (a >> 2) + 0x9e3779b9 + b, xs...);
}

}  // namespace photon
