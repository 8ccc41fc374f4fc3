// IMessage: a message (datagram) transport, as PhotonLibOS declares it
// (global namespace). Each send() is one message and each recv() takes one
// whole message; addresses are type-erased (`Addr`), each implementation
// says what an Addr is. Calls block the calling coroutine only and return
// like POSIX: bytes, or -1 with errno.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cinttypes>
#include <cstddef>
#include <cstdint>

#include <photon/common/object.h>

class IMessage : public Object {
public:
    // flags() bits.
    const static int Reliable = (1 << 0);
    const static int PreserveOrder = (1 << 1);
    virtual uint64_t flags() = 0;

    // The largest message the transport is meant to carry, in bytes.
    virtual uint64_t max_message_size() = 0;

    struct Addr;  // an implementation's address, behind a pointer

    // One message gathered from iov; to_addr nullptr: the connected peer.
    virtual ssize_t send(const struct iovec* iov, int iovcnt, const Addr* to_addr = nullptr,
                         size_t addr_len = 0, int flags = 0) = 0;

    ssize_t send(const void* buf, size_t count, const Addr* to_addr = nullptr, size_t addr_len = 0,
                 int flags = 0) {
        struct iovec v = {const_cast<void*>(buf), count};
        return send(&v, 1, to_addr, addr_len, flags);
    }

    // One message scattered into iov; from_addr (capacity in *addr_len)
    // receives the sender when both are given.
    virtual ssize_t recv(const struct iovec* iov, int iovcnt, Addr* from_addr = nullptr,
                         size_t* addr_len = nullptr, int flags = 0) = 0;

    ssize_t recv(void* buf, size_t count, Addr* from_addr = nullptr, size_t* addr_len = nullptr,
                 int flags = 0) {
        struct iovec v = {buf, count};
        return recv(&v, 1, from_addr, addr_len, flags);
    }
};
