#include "reset_streams.h"

namespace photon {
namespace net {
namespace http2 {

size_t reset_streams::slot_of(uint32_t id) const {
    size_t mask = table_.size() - 1;
    for (size_t i = table_.empty() ? 0 : home(id), n = 0; n < table_.size();
         i = (i + 1) & mask, n++) {
        if (table_[i] == id) return i;
        if (table_[i] == 0) return kNone;
    }
    return kNone;  // (never full: kept at most half full)
}

// Backward-shift deletion: the entries after the hole that would not find
// themselves past it move into it, so that no lookup stops short.
void reset_streams::erase(uint32_t id) {
    size_t hole = slot_of(id), mask = table_.size() - 1;
    if (hole == kNone) return;
    for (size_t i = (hole + 1) & mask, n = 1; table_[i] && n < table_.size();
         i = (i + 1) & mask, n++) {
        size_t h = home(table_[i]);
        // Movable if its home is not in (hole, i], going round.
        if (((i - h) & mask) >= ((i - hole) & mask)) {
            table_[hole] = table_[i];
            hole = i;
        }
    }
    table_[hole] = 0;
}

void reset_streams::grow() {
    std::vector<uint32_t> old(table_.empty() ? 16 : table_.size() * 2);
    old.swap(table_);
    for (uint32_t id : old) {
        if (!id) continue;
        size_t i = home(id);
        while (table_[i]) i = (i + 1) & (table_.size() - 1);
        table_[i] = id;
    }
}

void reset_streams::insert(uint32_t id) {
    if (slot_of(id) != kNone) return;
    if (order_.size() < limit_) {
        order_.push_back(id);
    } else {
        erase(order_[next_]);
        order_[next_] = id;
        next_ = (next_ + 1) % limit_;
    }
    if (order_.size() * 2 > table_.size()) grow();  // at most half full
    size_t mask = table_.size() - 1, i = home(id);
    while (table_[i]) i = (i + 1) & mask;  // a free slot: the table is at most half full
    table_[i] = id;
}

}  // namespace http2
}  // namespace net
}  // namespace photon
