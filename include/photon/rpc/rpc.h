// RPC stubs (clients), skeletons (servers) and stub pools, as PhotonLibOS
// declares them, speaking its wire format (doc/rpc.md): a 40-byte Header,
// then the serialized message (serialize.h).
//
// A Stub is safe to call from many coroutines of its vCPU at once: requests
// are written as they come, replies come back in any order and each wakes its
// own caller (matched by tag). A call's timeout bounds sending the request and
// waiting for the reply's header, and then reading its body; a caller that
// times out or is interrupted leaves without disturbing the others, and a
// late reply for it is read and dropped. A Stub belongs to one vCPU.
//
// A Skeleton serves each connection given to serve() until the peer closes
// it, running each request in a pooled coroutine, so many requests of one
// connection run at once and their replies go out as they finish.
//
// Differences from PhotonLibOS: doc/compat.md#rpcrpch
// An unknown function gets an error reply that the caller sees as -1 ENOSYS;
// a frame whose header or body stalls is cut after the frame
// timeout; sizes past the configured limit (64 MiB by default) close the
// connection; shutdown(no_more_requests, timeout) bounds the wait for running
// calls; set_max_message_size and set_frame_timeout on both ends; a server
// closes connections idle between frames for set_idle_timeout (300 s), cuts
// one whose reply cannot be written within the frame timeout, and runs at
// most set_max_inflight (1024) requests of a connection at once.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>

#include <photon/common/callback.h>
#include <photon/common/iovector.h>
#include <photon/common/object.h>
#include <photon/common/stream.h>
#include <photon/common/timeout.h>
#include <photon/net/socket.h>
#include <photon/rpc/serialize.h>

namespace photon {
class MemoryBudget;
namespace rpc {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
union FunctionID {
    struct {
        uint32_t interface;  // the service
        uint32_t method;     // the operation within it
    };
    uint64_t function;  // both, as one number (interface in the low half)

    FunctionID() {}
    FunctionID(uint64_t F) : function(F) {}
    FunctionID(uint32_t I, uint32_t M) : interface(I), method(M) {}
    operator uint64_t() { return function; }
};
#pragma GCC diagnostic pop

// The frame header, in host byte order (little-endian on every platform
// Photon runs on), as PhotonLibOS lays it out.
struct Header {
    const static uint64_t MAGIC = 0x87de5d02e6ab95c7;
    const static uint32_t VERSION = 0;

    uint64_t magic = MAGIC;
    uint32_t version = VERSION;
    uint32_t size;          // payload bytes after the header
    FunctionID function;    // the request's; a reply repeats it
    uint64_t tag;           // chosen by the caller; a reply repeats it
    uint64_t reserved = 0;  // 0; our servers put an error code in a reply here
};
static_assert(sizeof(Header) == 40, "the wire header is 40 bytes");

// The largest payload accepted by default.
constexpr uint32_t DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024;

class Stub : public Object {
public:
    // Sends req and decodes the reply into resp. Variable-size fields of resp
    // must point at the caller's buffers, which receive the reply's contents
    // (zero-copy); the reply may be shorter. Returns the reply's payload
    // bytes, or -1 with errno (ETIMEDOUT, EINTR, ECONNRESET, ENOSYS for an
    // unknown function, EBADMSG for a reply that does not decode, ENOBUFS if
    // a message has more fields than an IOVector holds).
    template <typename Operation>
    int call(typename Operation::Request& req, typename Operation::Response& resp,
             Timeout timeout = {}) {
        SerializerIOV reqmsg;
        reqmsg.zero_pointers = true;  // no address of ours on the wire
        reqmsg.serialize(req);
        SerializerIOV respmsg;  // where the reply lands: resp itself
        respmsg.serialize(resp);
        if (reqmsg.iovfull || respmsg.iovfull) return errno = ENOBUFS, -1;
        FunctionID fid(Operation::IID, Operation::FID);
        int ret = do_call(fid, &reqmsg.iov, &respmsg.iov, timeout);
        if (ret < 0) return -1;
        respmsg.iov.shrink_to(ret);
        using P = typename Operation::Response;
        DeserializerIOV des;
        auto re = des.deserialize<P>(&respmsg.iov);
        if (!re) return errno = EBADMSG, -1;
        if (re != &resp) memcpy((void*)&resp, (void*)re, sizeof(P));
        return ret;
    }

    // Sends req; the reply is received into resp_iov (its allocator provides
    // the memory) and decoded there. nullptr with errno on failure.
    template <typename Operation>
    typename Operation::Response* call(typename Operation::Request& req, iovector& resp_iov,
                                       Timeout timeout = {}) {
        SerializerIOV reqmsg;
        reqmsg.zero_pointers = true;
        reqmsg.serialize(req);
        if (reqmsg.iovfull) return errno = ENOBUFS, nullptr;
        resp_iov.clear();
        FunctionID fid(Operation::IID, Operation::FID);
        int ret = do_call(fid, &reqmsg.iov, &resp_iov, timeout);
        if (ret < 0) return nullptr;
        DeserializerIOV des;
        auto re = des.deserialize<typename Operation::Response>(&resp_iov);
        if (!re) errno = EBADMSG;
        return re;
    }

    virtual IStream* get_stream() = 0;
    virtual int set_stream(IStream*) = 0;
    // Calls in flight.
    virtual int get_queue_count() = 0;

    // Ours: the largest reply payload accepted (a larger one closes the
    // connection), and how long a started reply may take to arrive whole.
    virtual void set_max_message_size(uint32_t) {}
    virtual void set_frame_timeout(uint64_t) {}

protected:
    // Sends `request` (room at its front is used for the header) and
    // receives the reply's payload into `response`, which grows with its
    // allocator as needed. Returns the payload bytes or -1.
    virtual int do_call(FunctionID function, iovector* request, iovector* response,
                        Timeout timeout) = 0;
};

class Skeleton : public Object {
public:
    // Sends a reply: int(iovector* response).
    typedef ::Callback<iovector*> ResponseSender;
    // Serves a request: int(iovector* request, ResponseSender, IStream*).
    typedef ::Callback<iovector*, ResponseSender, IStream*> Function;
    typedef ::Callback<IStream*> Notifier;

    // -1 if the function is already there / not there.
    virtual int add_function(FunctionID func_id, Function func) = 0;
    virtual int remove_function(FunctionID func_id) = 0;

    virtual int set_accept_notify(Notifier notifier) = 0;
    virtual int set_close_notify(Notifier notifier) = 0;

    // Serves one connection until the peer closes it, it breaks the
    // protocol, or the skeleton shuts down; returns when every request it
    // started has replied. Call it from a socket server's handler; many
    // connections may be served at once. 0 on a clean end, -1 otherwise.
    virtual int serve(IStream* stream) = 0;

    __attribute__((deprecated)) int serve(IStream* stream, bool /*ownership_stream*/) {
        return serve(stream);
    }

    // The allocator of request buffers.
    virtual void set_allocator(IOAlloc allocation) = 0;

    // Stops serving and waits for every connection's serve() to return.
    // no_more_requests: connections stop reading at once (their running
    // requests finish); otherwise they end when their peers close them. Not
    // from inside a request.
    virtual int shutdown(bool no_more_requests = true) = 0;
    virtual int shutdown_no_wait() = 0;

    // Ours: as shutdown(no_more_requests), waiting at most timeout_us for the
    // running requests; then they are interrupted, the connections closed,
    // and -1 ETIMEDOUT returned once they have all gone.
    virtual int shutdown(bool no_more_requests, uint64_t /*timeout_us*/) {
        return shutdown(no_more_requests);
    }
    virtual void set_max_message_size(uint32_t) {}
    virtual void set_frame_timeout(uint64_t) {}
    // Ours: a connection that sends no byte of a new frame for this long (us;
    // -1: no limit) is closed, as if its peer had: 300 s by default.
    virtual void set_idle_timeout(uint64_t) {}
    // Ours: at most this many requests of one connection run at once (1024
    // by default); further frames wait unread until one has replied.
    virtual void set_max_inflight(uint32_t) {}
    // Ours: the budget of the bytes this skeleton's requests and replies hold
    // (MemoryBudget::process() by default; nullptr: none), for the
    // connections served from now on. doc/rpc.md says what it bounds and
    // what a client sees past it (-1 ENOMEM).
    virtual void set_memory_budget(MemoryBudget*) {}
    // Ours: the skeleton's label (skeleton="...") in the metrics registry
    // (photon/common/metric-meter/prometheus.h: photon_rpc_server_*); "rpc-N" until set, N
    // counting the skeletons made in this process.
    virtual void set_metrics_name(const char* /*name*/) {}

    template <class ServerClass>
    int register_service(ServerClass* obj) {
        return obj == nullptr ? -1 : 0;
    }

    // Registers Operation (and Operations...) as served by
    // obj->do_rpc_service(Request*, Response*, IOVector*, IStream*).
    template <typename Operation, typename... Operations, class ServerClass>
    int register_service(ServerClass* obj) {
        int ret = register_service<Operations...>(obj);
        if (ret < 0) return ret;
        FunctionID fid(Operation::IID, Operation::FID);
        Function func((void*)obj, &rpc_service<Operation, ServerClass>);
        return add_function(fid, func);
    }

protected:
    template <typename Operation, class ServerClass>
    static int rpc_service(void* obj, iovector* req, ResponseSender rs, IStream* stream) {
        using Request = typename Operation::Request;
        using Response = typename Operation::Response;
        DeserializerIOV reqmsg;
        auto request = reqmsg.deserialize<Request>(req);
        if (!request) return errno = EINVAL, -1;
        IOVector iov;
        iov.allocator = *req->get_allocator();
        Response response;
        // The result lives until the reply is sent, so it may own what the
        // reply points at.
        auto fini =
            static_cast<ServerClass*>(obj)->do_rpc_service(request, &response, &iov, stream);
        (void)fini;
        SerializerIOV respmsg;
        respmsg.zero_pointers = true;  // no address of ours on the wire
        respmsg.serialize(response);
        if (respmsg.iovfull) return errno = ENOBUFS, -1;
        return rs(&respmsg.iov);
    }
};

// Stubs by endpoint, shared by the callers of one vCPU. A stub nobody used for
// `expiration` us is closed; connecting times out after `timeout` us.
class StubPool : public Object {
public:
    // The endpoint's stub, connecting if there is none; nullptr if the
    // connection fails. Pair with put_stub.
    virtual Stub* get_stub(const net::EndPoint& endpoint, bool tls) = 0;
    // Done with the stub; immediately: close it now (e.g. after an error).
    virtual int put_stub(const net::EndPoint& endpoint, bool immediately) = 0;
    // The endpoint's stub if there is one (pair with put_stub), else nullptr.
    virtual Stub* acquire(const net::EndPoint& endpoint) = 0;
    virtual uint64_t get_timeout() const = 0;
};

extern "C" Stub* new_rpc_stub(IStream* stream, bool ownership = false);

extern "C" StubPool* new_stub_pool(uint64_t expiration, uint64_t timeout,
                                   std::shared_ptr<net::ISocketClient> socket_client = nullptr);

extern "C" StubPool* new_uds_stub_pool(const char* path, uint64_t expiration, uint64_t timeout);

extern "C" Skeleton* new_skeleton(uint32_t pool_size = 128);

__attribute__((deprecated)) inline Skeleton* new_skeleton(bool /*concurrent*/, uint32_t pool_size) {
    return new_skeleton(pool_size);
}

}  // namespace rpc
}  // namespace photon
