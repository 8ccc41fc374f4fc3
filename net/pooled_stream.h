// The stream a socket pool lends out: it forwards every call to a pooled
// connection and, when deleted, gives the connection back to its home if it
// is still fit for reuse (no error, EOF, short transfer, shutdown or close
// seen), else deletes it. Private header of net/.
#pragma once

#include <string>

#include <photon/net/socket.h>

namespace photon {
namespace net {

// Where lent connections go back; it must outlive its pooled streams.
class stream_home {
public:
    virtual void give_back(const std::string& key, ISocketStream* conn) = 0;

protected:
    ~stream_home() = default;
};

ISocketStream* new_pooled_stream(stream_home* home, std::string key, ISocketStream* conn);

}  // namespace net
}  // namespace photon
