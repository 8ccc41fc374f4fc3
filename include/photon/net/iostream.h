// new_iostream: a std::iostream over an ISocketStream, as PhotonLibOS
// declares it. Reads and writes go through buffers of their own (large
// ones bypass them); output goes out on flush (std::flush, std::endl), when
// its buffer fills, and when the iostream is deleted: flush a request before
// waiting for its reply. One coroutine may read while another writes. The
// iostream belongs to the socket's vCPU; its calls block the calling
// coroutine only. A failed socket call sets the stream's state (eof/fail
// on a read, bad on a write) with errno left as the socket set it (EOF:
// errno untouched); clear() and retry after a timeout loses nothing.
//
// A write cut short keeps its unsent bytes for the next flush; a null socket
// is refused.
// Differences from PhotonLibOS: doc/compat.md#netiostreamh
#pragma once

#include <iostream>

#include <photon/net/socket.h>

namespace photon {
namespace net {

// The caller deletes the result (which flushes it). With owner_ship, that
// also deletes sock; otherwise sock must outlive it. nullptr with EINVAL if
// sock is nullptr.
std::iostream* new_iostream(ISocketStream* sock, bool owner_ship = false);

}  // namespace net
}  // namespace photon
