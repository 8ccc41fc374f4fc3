// Datagram sockets with PhotonLibOS's names: UDP (UDPSocket, addressed by
// EndPoint) and unix-domain datagrams (UDS_DatagramSocket, addressed by
// path). A socket belongs to the vCPU that made it; its calls block the
// calling coroutine only, each bounded by timeout() (us, default: none),
// and return like POSIX: bytes, or -1 with errno (ETIMEDOUT, an
// interrupter's errno, or the kernel's: ECONNREFUSED from a closed peer,
// EMSGSIZE for a datagram the transport cannot carry ...). No call raises
// SIGPIPE. Both engines (epoll, io_uring) are served by readiness waits.
//
// Messages are whole: recv() takes one datagram and never cuts it. One
// longer than the buffer gives -1 EMSGSIZE and stays queued, so a retry with
// a larger buffer gets it; to take a datagram in part, pass MSG_TRUNC (the
// kernel's meaning: returns the full length, copies what fits), and
// MSG_PEEK likewise keeps the kernel's meaning. MSG_DONTWAIT gives EAGAIN
// instead of waiting. A socket's queue should have one reader at a time.
//
// Differences from PhotonLibOS: doc/compat.md#netdatagram_socketh
#pragma once

#include <photon/common/message.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {

class IDatagramSocket : public IMessage, public ISocketBase, public ISocketName {
protected:
    // Addr and addr_len as the derived class defines them; 0 or -1 + errno.
    virtual int connect(const Addr* addr, size_t addr_len) = 0;
    virtual int bind(const Addr* addr, size_t addr_len) = 0;

    IMessage* cast() { return this; }

    template <typename B, typename S>
    ssize_t sendto(B* buf, S count, const Addr* to_addr, size_t addr_len, int flags = 0) {
        return cast()->send(buf, count, to_addr, addr_len, flags);
    }
    template <typename B, typename S>
    ssize_t recvfrom(B* buf, S count, Addr* from_addr, size_t* addr_len, int flags = 0) {
        return cast()->recv(buf, count, from_addr, addr_len, flags);
    }
    // To / from the connected peer. B may be an iovec (count: iovcnt).
    template <typename B, typename S>
    ssize_t send(B* buf, S count, int flags = 0) {
        return cast()->send(buf, count, nullptr, 0, flags);
    }
    template <typename B, typename S>
    ssize_t recv(B* buf, S count, int flags = 0) {
        return cast()->recv(buf, count, nullptr, nullptr, flags);
    }
    using IMessage::recv;
    using IMessage::send;

    // Per-call timeout in us; -1: none.
    virtual uint64_t timeout() const = 0;
    virtual void timeout(uint64_t tm) = 0;
};

class UDPSocket : public IDatagramSocket {
protected:
    using base = IDatagramSocket;
    using base::bind;
    using base::connect;

public:
    using base::recv;
    using base::send;
    using base::timeout;

    int connect(const EndPoint& ep) { return connect((const Addr*)&ep, sizeof(ep)); }
    int bind(const EndPoint& ep) { return bind((const Addr*)&ep, sizeof(ep)); }
    int bind(uint16_t port = 0) { return bind_v4any(port); }
    int bind(uint16_t port, IPAddr a) { return bind(EndPoint(a, port)); }
    int bind_v4any(uint16_t port = 0) { return bind(EndPoint(IPAddr::V4Any(), port)); }
    int bind_v6any(uint16_t port = 0) { return bind(EndPoint(IPAddr::V6Any(), port)); }
    int bind_v4localhost(uint16_t port = 0) { return bind(EndPoint(IPAddr::V4Loopback(), port)); }
    int bind_v6localhost(uint16_t port = 0) { return bind(EndPoint(IPAddr::V6Loopback(), port)); }

    template <typename B, typename S>
    ssize_t sendto(B* buf, S count, const EndPoint& ep, int flags = 0) {
        return base::sendto(buf, count, (const Addr*)&ep, sizeof(ep), flags);
    }
    // *from (if not nullptr) receives the sender.
    template <typename B, typename S>
    ssize_t recvfrom(B* buf, S count, EndPoint* from, int flags = 0) {
        size_t addr_len = sizeof(*from);
        return base::recvfrom(buf, count, (Addr*)from, &addr_len, flags);
    }
};

class UDS_DatagramSocket : public IDatagramSocket {
protected:
    using base = IDatagramSocket;
    using base::bind;
    using base::connect;

public:
    using base::recv;
    using base::send;
    using base::timeout;

    // Filesystem paths; an empty one is ENOENT, a long one ENAMETOOLONG.
    int connect(const char* path) { return connect((const Addr*)path, 0); }
    int bind(const char* path) { return bind((const Addr*)path, 0); }
    template <typename B, typename S>
    ssize_t sendto(B* buf, S count, const char* path, int flags = 0) {
        return base::sendto(buf, count, (const Addr*)path, 0, flags);
    }
    // from[len] (if from and len) receives the sender's path, NUL-terminated
    // and cut to fit; "" if the sender is not bound.
    template <typename B, typename S>
    ssize_t recvfrom(B* buf, S count, char* from, size_t len, int flags = 0) {
        return base::recvfrom(buf, count, (Addr*)from, &len, flags);
    }
};

// A new IPv4 UDP socket, or one adopting fd (an AF_INET or AF_INET6
// SOCK_DGRAM socket; on an AF_INET6 one, IPv4 endpoints go v4-mapped). The
// caller deletes it, which closes the fd. nullptr with errno on failure, when
// an adopted fd stays the caller's.
UDPSocket* new_udp_socket(int fd = -1);

// The same for unix-domain datagrams (an adopted fd must be AF_UNIX).
UDS_DatagramSocket* new_uds_datagram_socket(int fd = -1);

}  // namespace net
}  // namespace photon
