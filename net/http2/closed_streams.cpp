#include "closed_streams.h"

namespace photon {
namespace net {
namespace http2 {

size_t closed_streams::slot_of(uint32_t id) const {
    size_t mask = table_.size() - 1;
    for (size_t i = table_.empty() ? 0 : home(id), n = 0; n < table_.size();
         i = (i + 1) & mask, n++) {
        if (table_[i].id == id) return i;
        if (table_[i].id == 0) return kNone;
    }
    return kNone;  // (never full: kept at most half full)
}

// Backward-shift deletion: the entries after the hole that would not find
// themselves past it move into it, so that no lookup stops short.
void closed_streams::erase(uint32_t id) {
    size_t hole = slot_of(id), mask = table_.size() - 1;
    if (hole == kNone) return;
    for (size_t i = (hole + 1) & mask, n = 1; table_[i].id && n < table_.size();
         i = (i + 1) & mask, n++) {
        size_t h = home(table_[i].id);
        // Movable if its home is not in (hole, i], going round.
        if (((i - h) & mask) >= ((i - hole) & mask)) {
            table_[hole] = table_[i];
            hole = i;
        }
    }
    table_[hole] = Slot();
}

void closed_streams::grow() {
    std::vector<Slot> old(table_.empty() ? 16 : table_.size() * 2);
    old.swap(table_);
    for (auto& e : old) {
        if (!e.id) continue;
        size_t i = home(e.id);
        while (table_[i].id) i = (i + 1) & (table_.size() - 1);
        table_[i] = e;
    }
}

bool& closed_streams::operator[](uint32_t id) {
    size_t at = slot_of(id);
    if (at != kNone) return table_[at].reset;
    if (order_.size() < limit_) {
        order_.push_back(id);
    } else {
        erase(order_[next_]);
        order_[next_] = id;
        next_ = (next_ + 1) % limit_;
    }
    if (order_.size() * 2 > table_.size()) grow();  // at most half full
    for (;;) {
        size_t mask = table_.size() - 1, i = home(id);
        for (size_t n = 0; n < table_.size(); i = (i + 1) & mask, n++) {
            if (table_[i].id) continue;
            table_[i] = Slot{id, false};
            return table_[i].reset;
        }
        grow();  // (not reached while the table is at most half full)
    }
}

bool closed_streams::find(uint32_t id, bool* reset) const {
    size_t at = slot_of(id);
    if (at == kNone) return false;
    *reset = table_[at].reset;
    return true;
}

}  // namespace http2
}  // namespace net
}  // namespace photon
