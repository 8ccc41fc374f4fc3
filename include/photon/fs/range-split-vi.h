// range_split_vi: range splitting (range-split.h) over blocks of variable
// size, as PhotonLibOS declares it. The blocks are given by n ascending key
// points (offsets): key_points[0] == 0, key_points[n-1] == UINT64_MAX, block
// i is [key_points[i], key_points[i+1]). The caller keeps key_points alive
// while the split is used. Plain data: any thread, never yields.
//
// Differences from PhotonLibOS: doc/compat.md#fsrange-split-vih
#pragma once

#include <algorithm>
#include <cassert>
#include <cinttypes>
#include <cstdint>

#include <photon/fs/range-split.h>

namespace photon {
namespace fs {

struct range_split_vi : public basic_range_split<range_split_vi> {
    const uint64_t* key_points;
    uint64_t n;

    range_split_vi(uint64_t offset, uint64_t length, const uint64_t* key_points, uint64_t n)
        : key_points(key_points), n(n) {
        bool valid = key_points && n >= 2 && key_points[0] == 0 &&
                     key_points[n - 1] == UINT64_MAX && ascending(key_points, n);
        assert(valid);
        if (!valid) {
            static const uint64_t one_block[] = {0, UINT64_MAX};
            this->key_points = one_block;
            this->n = 2;
            length = 0;
        }
        init(offset, length);
    }
    // Whether the n points strictly ascend.
    bool ascending(const uint64_t* key_points, uint64_t n) const {
        for (uint64_t i = 1; i < n; ++i)
            if (key_points[i] <= key_points[i - 1]) return false;
        return true;
    }
    void divide(uint64_t x, uint64_t& round_down, uint64_t& remainder, uint64_t& round_up) const {
        auto ptr = std::upper_bound(key_points, key_points + n, x);
        if (ptr == key_points + n) {  // x == UINT64_MAX, the last point
            round_down = round_up = n - 1;
            remainder = 0;
            return;
        }
        uint64_t i = ptr - key_points;  // >= 1, as key_points[0] == 0 <= x
        round_down = i - 1;
        remainder = x - key_points[i - 1];
        round_up = remainder ? i : round_down;
    }
    uint64_t multiply(uint64_t i, uint64_t x = 0) const {
        return (i < n ? key_points[i] : UINT64_MAX) + x;
    }
    uint64_t get_length(uint64_t i) const {
        return i + 1 < n ? key_points[i + 1] - key_points[i] : 0;
    }
};

}  // namespace fs
}  // namespace photon
