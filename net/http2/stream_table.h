// stream_table: a connection's open streams by id.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace photon {
namespace net {
namespace http2 {

struct stream_core;

// A vector of (id, stream) sorted by id. Each side's ids only grow, so a new stream is
// appended; a few hundred at most are open, so an erase's move costs less than a tree's
// node allocation and pointer chasing per stream. Iterating while erasing is not allowed.
class stream_table {
public:
    using entry = std::pair<uint32_t, stream_core*>;

    stream_core* find(uint32_t id) const {
        auto it = lower(id);
        return it != v_.end() && it->first == id ? it->second : nullptr;
    }
    // The entry of id, added (null) if absent.
    stream_core*& operator[](uint32_t id) {
        if (v_.empty() || v_.back().first < id) return v_.emplace_back(id, nullptr).second;
        auto it = lower(id);
        if (it == v_.end() || it->first != id) it = v_.insert(it, entry(id, nullptr));
        return it->second;
    }
    size_t erase(uint32_t id) {
        auto it = lower(id);
        if (it == v_.end() || it->first != id) return 0;
        v_.erase(it);
        return 1;
    }
    size_t size() const { return v_.size(); }
    bool empty() const { return v_.empty(); }
    void clear() { v_.clear(); }
    std::vector<entry>::iterator begin() { return v_.begin(); }
    std::vector<entry>::iterator end() { return v_.end(); }

private:
    std::vector<entry> v_;

    std::vector<entry>::const_iterator lower(uint32_t id) const {
        return std::lower_bound(v_.begin(), v_.end(), id,
                                [](const entry& e, uint32_t k) { return e.first < k; });
    }
    std::vector<entry>::iterator lower(uint32_t id) {
        return std::lower_bound(v_.begin(), v_.end(), id,
                                [](const entry& e, uint32_t k) { return e.first < k; });
    }
};

}  // namespace http2
}  // namespace net
}  // namespace photon
