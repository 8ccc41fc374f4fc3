// What our peers add to PhotonLibOS's frame: an error code in a reply
// header's `reserved` field (Photon sends 0 there and ignores it), under a
// mark so that no other value is mistaken for one.
#pragma once

#include <cstdint>

#include <photon/rpc/rpc.h>

namespace photon {
namespace rpc {
namespace wire {

constexpr uint64_t kErrorMark = 0x5045525200000000ull;  // "PERR" in the high half

inline int error_of(const Header& h) {
    return (h.reserved & 0xffffffff00000000ull) == kErrorMark ? (int)(uint32_t)h.reserved : 0;
}

inline void set_error(Header& h, int err) { h.reserved = kErrorMark | (uint32_t)err; }

}  // namespace wire
}  // namespace rpc
}  // namespace photon
