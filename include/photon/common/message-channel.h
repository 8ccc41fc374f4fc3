// IMessageChannel: an interface for channels that move whole messages (not
// byte streams): each send() is delivered as one unit by one recv(). What
// else a channel guarantees (ordering, duplication, loss, round trips) it
// states through flags(). Whether calls yield or block is the implementation's
// to say.
//
// Differences from PhotonLibOS: doc/compat.md#commonmessage-channelh
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <sys/types.h>

#include <photon/common/iovector.h>

class IMessageChannel {
public:
    virtual ~IMessageChannel() {}

    // Sends msg as one message; returns the bytes sent, or < 0 with errno.
    virtual ssize_t send(iovector& msg) = 0;
    ssize_t send(const void* buf, uint64_t size) {
        IOVector msg;
        msg.push_back((void*)buf, size);
        return send(msg);
    }

    // Receives one message into msg; returns its bytes, or < 0 with errno.
    // ENOBUFS: msg is too small; the return value is minus the bytes needed,
    // and the message can be received again with a larger buffer.
    virtual ssize_t recv(iovector& msg) = 0;
    ssize_t recv(void* buf, uint64_t size) {
        IOVector msg;
        msg.push_back(buf, size);
        return recv(msg);
    }

    static constexpr uint64_t OUT_OF_ORDER = 1 << 0;  // may arrive in another order
    static constexpr uint64_t DUPLICATION = 1 << 1;   // may arrive more than once
    static constexpr uint64_t LOSSY = 1 << 2;         // may be lost
    static constexpr uint64_t ROUND_TRIP = 1 << 3;    // each message sent brings a response
    static constexpr uint64_t ALLOCATION = 1 << 4;    // the channel allocates recv buffers

    // Many coroutines may send requests and receive responses at once; with
    // OUT_OF_ORDER too, responses may come in another order than requests.
    static constexpr uint64_t CONCURRENT_RT = 1 << 5;

    // The next request may be sent before the previous response arrived.
    static constexpr uint64_t PIPELINING = 1 << 6;

    // A round trip: sends request, then receives into response. Returns the
    // response's bytes, or the failed step's result.
    virtual ssize_t send_recv(iovector& request, iovector& response) {
        auto ret = send(request);
        return (ret < 0) ? ret : recv(response);
    }

    // The flags in effect, OR-ed.
    virtual uint64_t flags() = 0;

    // Sets flags (OR-ed); returns 0, or the flags that could not be set.
    virtual uint64_t flags(uint64_t f) = 0;
};
