// What a coroutine is about to wait on, told to dumps (dump.cpp) by whoever
// parks it: the kind in the top byte, the detail below. Private header of
// thread/ and io/.
#pragma once

#include <cstdint>

#include "thread_control.h"

namespace photon {

enum : uint64_t {
    kWaitNoteFd = 1,  // detail: events << 32 | fd
};

inline uint64_t wait_note(uint64_t kind, uint32_t high, uint32_t low) {
    return kind << 56 | (uint64_t)(high & 0xffffff) << 32 | low;
}

// Sets CURRENT's note for the wait it is about to start; 0 clears it.
inline void set_wait_note(uint64_t note) {
    if (CURRENT) CURRENT->wait_note = note;
}

}  // namespace photon
