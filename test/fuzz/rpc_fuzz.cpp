// libFuzzer target: the RPC frame reader and message decoder, on both ends.
// Input: byte 0 picks the end (0: a skeleton serving the rest as a client's
// byte stream; 1: a stub reading the rest as a server's replies to its call;
// 2: the message decoder alone over the rest, cut in pieces), byte 1 the
// largest piece a read returns. ASan/UBSan catch reads outside the input.
#include <cstdint>
#include <cstring>
#include <string>

#include <photon/common/alog.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/rpc/rpc.h>

#include "../rpc/rpc_messages.h"
#include "socket_stub.h"

using namespace photon;
using namespace rpc_test;

namespace {

// A socket whose reads hand out the input in pieces and whose writes vanish.
class FuzzSock : public photon_test::SocketStub {
public:
    FuzzSock(const uint8_t* p, size_t n, size_t piece) : m_p(p), m_n(n), m_piece(piece) {}
    ssize_t recv(void* b, size_t n, int = 0) override {
        n = std::min({n, m_n, m_piece});
        memcpy(b, m_p, n);
        m_p += n;
        m_n -= n;
        return (ssize_t)n;
    }
    ssize_t recv(const iovec* v, int n, int f = 0) override {
        return n ? recv(v[0].iov_base, v[0].iov_len, f) : 0;
    }
    ssize_t read(void* b, size_t n) override {
        size_t got = 0;
        while (got < n) {
            ssize_t r = recv((char*)b + got, n - got);
            if (r <= 0) break;
            got += r;
        }
        return (ssize_t)got;
    }
    ssize_t readv(const iovec* v, int n) override {
        ssize_t total = 0;
        for (int i = 0; i < n; ++i) {
            ssize_t r = read(v[i].iov_base, v[i].iov_len);
            total += r;
            if ((size_t)r < v[i].iov_len) break;
        }
        return total;
    }
    ssize_t write(const void*, size_t n) override { return (ssize_t)n; }
    ssize_t writev(const iovec* v, int n) override {
        ssize_t t = 0;
        for (int i = 0; i < n; ++i) t += v[i].iov_len;
        return t;
    }

private:
    const uint8_t* m_p;
    size_t m_n, m_piece;
};

struct Service {
    int do_rpc_service(Echo::Request* req, Echo::Response* resp, IOVector*, IStream*) {
        resp->str = req->str;
        return 0;
    }
    int do_rpc_service(All* req, All* resp, IOVector*, IStream*) {
        // Touch every decoded field so that a bad pointer shows.
        volatile size_t sum = req->s.size() + req->b.size() + req->a.size();
        for (auto& v : req->iov)
            sum = sum + ((const char*)v.iov_base)[v.iov_len ? v.iov_len - 1 : 0] * 0;
        for (auto& x : req->inners) sum = sum + x.name.size() + x.nums.size();
        (void)sum;
        *resp = *req;
        return 0;
    }
};

rpc::Skeleton* g_sk;
Service g_svc;

void init_once() {
    if (g_sk) return;
    set_log_output_level(ALOG_FATAL);
    photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE);
    g_sk = rpc::new_skeleton();
    g_sk->register_service<Echo, Everything>(&g_svc);
}

void decode_in_pieces(const uint8_t* p, size_t n, size_t piece) {
    std::string copy((const char*)p, n);
    auto iov = new_iovector(256, 0);
    for (size_t off = 0; off < n && iov->back_free_iovcnt();) {
        size_t k = std::min(piece, n - off);
        iov->push_back(&copy[off], k);
        off += k;
    }
    rpc::DeserializerIOV des;
    auto r = des.deserialize<All>(iov);
    if (r) {
        volatile size_t sum = r->s.sv().size() + r->b.size();
        for (auto& v : r->iov) sum = sum + v.iov_len;
        (void)sum;
    }
    delete_iovector(iov);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    init_once();
    int mode = data[0] % 3;
    size_t piece = 1 + data[1];
    data += 2;
    size = 2 <= size ? size - 2 : 0;
    if (mode == 0) {
        FuzzSock s(data, size, piece);
        g_sk->serve(&s);
    } else if (mode == 1) {
        auto s = new FuzzSock(data, size, piece);
        std::unique_ptr<rpc::Stub> stub(rpc::new_rpc_stub(s, true));
        All req;
        req.s = "fuzz";
        IOVector resp;
        stub->call<Everything>(req, resp, 1000 * 1000);
    } else {
        decode_in_pieces(data, size, piece);
    }
    return 0;
}
