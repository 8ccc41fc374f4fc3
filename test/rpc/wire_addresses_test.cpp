// No address of the sender's memory on the wire: the serializer's
// zero_pointers copies, and the bytes a stub's request and a skeleton's reply
// carry through an in-memory socket pair; what goes out still decodes as
// PhotonLibOS decodes it, and the caller's structures are left untouched.
#include <photon/rpc/rpc.h>

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <photon/common/memory-stream/memory-stream.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "rpc_messages.h"

using namespace photon;
using namespace rpc_test;
using photon::rpc::DeserializerIOV;
using photon::rpc::SerializerIOV;
using photon_test::spawn;

namespace {

// Every field type, pointing at storage that outlives the message.
struct Filled {
    std::vector<uint64_t> a{1, 2, 3};
    std::string b = "raw bytes";
    std::string ab = std::string(32, 'A');
    std::string p1 = "scattered ", p2 = "bytes";
    iovec iovs[2] = {{&p1[0], p1.size()}, {&p2[0], p2.size()}};
    Point pt{-7, 9};
    std::vector<uint32_t> nums{10, 20, 30};
    std::vector<Inner> inners{2};
    All m;

    Filled() {
        m.pod = 42;
        m.s = "hello, rpc";
        m.a.assign(a);
        m.b.assign(b.data(), b.size());
        m.ab.assign(ab.data(), ab.size());
        m.iov.assign(iovs, 2);
        m.fb.assign(&pt);
        m.inner.id = 7;
        m.inner.name = "inner";
        m.inner.nums.assign(nums);
        inners[0].name = "first";
        inners[0].nums.assign(nums);
        inners[1].id = 200;
        inners[1].name = "second";
        m.inners.assign(inners);
    }
};

// The pointer values reachable from an All: its fields' and its nested
// messages' (the arrays' elements' too), and the iovecs' bases.
std::set<uint64_t> addresses_of(const All& m) {
    std::set<uint64_t> out;
    auto add = [&](const void* p) {
        if (p) out.insert((uint64_t)(uintptr_t)p);
    };
    add(&m);
    for (const rpc::buffer* b :
         {(const rpc::buffer*)&m.s, (const rpc::buffer*)&m.a, &m.b, (const rpc::buffer*)&m.ab,
          (const rpc::buffer*)&m.iov, (const rpc::buffer*)&m.fb, (const rpc::buffer*)&m.inner.name,
          (const rpc::buffer*)&m.inner.nums, (const rpc::buffer*)&m.inners})
        add(b->addr());
    for (auto& v : m.iov) add(v.iov_base);
    for (auto& in : m.inners) {
        add(in.name.addr());
        add(in.nums.addr());
    }
    return out;
}

// How many of bytes' 8-byte windows (at any offset) hold one of addrs.
size_t leaks(const std::string& bytes, const std::set<uint64_t>& addrs) {
    size_t n = 0;
    for (size_t i = 0; i + 8 <= bytes.size(); i++) {
        uint64_t v;
        memcpy(&v, bytes.data() + i, 8);
        n += addrs.count(v);
    }
    return n;
}

template <typename M>
std::string wire_of(M& m, bool zero) {
    SerializerIOV ser;
    ser.zero_pointers = zero;
    ser.serialize(m);
    EXPECT_FALSE(ser.iovfull);
    std::string out(ser.iov.sum(), '\0');
    ser.iov.memcpy_to(&out[0], out.size());
    return out;
}

void expect_filled(All* r) {
    ASSERT_NE(nullptr, r);
    EXPECT_EQ(42u, r->pod);
    EXPECT_EQ("hello, rpc", r->s.sv());
    ASSERT_EQ(3u, r->a.size());
    EXPECT_EQ(3u, r->a[2]);
    EXPECT_EQ("raw bytes", std::string((char*)r->b.addr(), r->b.size()));
    EXPECT_EQ(std::string(32, 'A'), std::string((char*)r->ab.addr(), r->ab.size()));
    std::string iov;
    for (auto& v : r->iov) iov.append((char*)v.iov_base, v.iov_len);
    EXPECT_EQ("scattered bytes", iov);
    EXPECT_EQ(9, r->fb.get()->y);
    EXPECT_EQ("inner", r->inner.name.sv());
    EXPECT_EQ(30u, r->inner.nums[2]);
    ASSERT_EQ(2u, r->inners.size());
    EXPECT_EQ("first", r->inners[0].name.sv());
    EXPECT_EQ(20u, r->inners[0].nums[1]);
    EXPECT_EQ(200u, r->inners[1].id);
    EXPECT_EQ("second", r->inners[1].name.sv());
}

TEST(WireAddresses, SerializerSendsNoAddressAndLeavesTheMessageAlone) {
    Filled f;
    auto addrs = addresses_of(f.m);
    ASSERT_GE(addrs.size(), 12u);
    std::string plain = wire_of(f.m, false);
    // Photon's way carries them (the check below can see them)...
    EXPECT_GE(leaks(plain, addrs), 10u);
    std::vector<char> before((char*)&f.m, (char*)&f.m + sizeof(f.m));
    std::vector<char> inners_before((char*)f.inners.data(),
                                    (char*)(f.inners.data() + f.inners.size()));
    std::string zeroed = wire_of(f.m, true);
    // ...ours none, at any offset.
    EXPECT_EQ(0u, leaks(zeroed, addrs));
    EXPECT_EQ(plain.size(), zeroed.size());
    EXPECT_EQ(0, memcmp(before.data(), &f.m, sizeof(f.m)));
    EXPECT_EQ(0, memcmp(inners_before.data(), f.inners.data(), inners_before.size()));
    // It decodes as before, into the same contents.
    IOVector iov;
    iov.push_back(&zeroed[0], zeroed.size());
    DeserializerIOV des;
    expect_filled(des.deserialize<All>(&iov));
}

TEST(WireAddresses, ChecksumOfTheZeroedCopyVerifies) {
    Checked c;
    c.n = 5;
    std::string text = "checked";
    c.s = std::string_view(text);
    std::string w = wire_of(c, true);
    EXPECT_EQ(0u, leaks(w, {(uint64_t)(uintptr_t)text.data()}));
    IOVector iov;
    iov.push_back(&w[0], w.size());
    DeserializerIOV des;
    auto r = des.deserialize<Checked>(&iov);
    ASSERT_NE(nullptr, r);
    EXPECT_EQ("checked", r->s.sv());
    // A flipped byte still fails it.
    w[0] ^= 1;
    IOVector bad;
    bad.push_back(&w[0], w.size());
    EXPECT_EQ(nullptr, DeserializerIOV().deserialize<Checked>(&bad));
}

TEST(WireAddresses, ManyArraysOfMessagesGoToTheHeap) {
    // More copies than the serializer's inline area: the rest from the heap.
    std::vector<Inner> many(64);
    for (size_t i = 0; i < many.size(); i++) many[i].id = i;
    All m;
    m.inners.assign(many);
    std::set<uint64_t> addrs{(uint64_t)(uintptr_t)many.data()};
    std::string w = wire_of(m, true);
    EXPECT_EQ(0u, leaks(w, addrs));
    IOVector iov;
    iov.push_back(&w[0], w.size());
    auto r = DeserializerIOV().deserialize<All>(&iov);
    ASSERT_NE(nullptr, r);
    ASSERT_EQ(64u, r->inners.size());
    EXPECT_EQ(63u, r->inners[63].id);
}

TEST(WireAddresses, AMovedSerializerKeepsItsCopies) {
    Filled f;
    std::string want = wire_of(f.m, true);
    alignas(SerializerIOV) char storage[sizeof(SerializerIOV)];
    auto first = new (storage) SerializerIOV;
    first->zero_pointers = true;
    first->serialize(f.m);
    SerializerIOV moved(std::move(*first));
    first->~SerializerIOV();
    memset(storage, 0xee, sizeof(storage));  // nothing of it may be used now
    std::string got(moved.iov.sum(), '\0');
    moved.iov.memcpy_to(&got[0], got.size());
    EXPECT_EQ(want, got);
}

// ---- through a stub and a skeleton -----------------------------------------

struct Header40 {
    rpc::Header h;
    std::string payload;
};

// Reads one frame from s.
bool read_frame(IStream* s, Header40* f) {
    if (s->read(&f->h, sizeof(f->h)) != (ssize_t)sizeof(f->h)) return false;
    f->payload.resize(f->h.size);
    return f->h.size == 0 || s->read(&f->payload[0], f->h.size) == (ssize_t)f->h.size;
}

class WireAddressesRpc : public photon_test::VcpuTest {};

struct EchoAll {
    std::set<uint64_t> reply_addrs;  // of the server's reply, seen by the handler
    int do_rpc_service(All* req, All* resp, IOVector*, IStream*) {
        *resp = *req;  // points at the request's received memory: server heap
        reply_addrs = addresses_of(*resp);
        return 0;
    }
};

TEST_F(WireAddressesRpc, StubRequestCarriesNoAddress) {
    std::unique_ptr<DuplexMemoryStream> pair(new_duplex_memory_stream(1 << 20));
    ASSERT_TRUE(pair);
    std::unique_ptr<rpc::Stub> stub(rpc::new_rpc_stub(pair->endpoint_a));
    Filled f;
    auto addrs = addresses_of(f.m);
    Header40 frame;
    bool got = false;
    auto peer = spawn([&] {
        got = read_frame(pair->endpoint_b, &frame);
        pair->close();  // the call fails; the bytes are what we wanted
    });
    All resp;
    EXPECT_LT(stub->call<Everything>(f.m, resp, 5 * 1000 * 1000), 0);
    peer.join();
    ASSERT_TRUE(got);
    EXPECT_EQ(0u, leaks(frame.payload, addrs));
    IOVector iov;
    iov.push_back(&frame.payload[0], frame.payload.size());
    expect_filled(DeserializerIOV().deserialize<All>(&iov));
    stub.reset();
}

TEST_F(WireAddressesRpc, SkeletonReplyCarriesNoAddress) {
    std::unique_ptr<DuplexMemoryStream> pair(new_duplex_memory_stream(1 << 20));
    ASSERT_TRUE(pair);
    std::unique_ptr<rpc::Skeleton> sk(rpc::new_skeleton());
    EchoAll svc;
    ASSERT_EQ(0, sk->register_service<Everything>(&svc));
    auto server = spawn([&] { sk->serve(pair->endpoint_a); });
    // The request, as a stub would send it.
    Filled f;
    std::string req = wire_of(f.m, true);
    rpc::Header h;
    h.size = (uint32_t)req.size();
    h.function = rpc::FunctionID(Everything::IID, Everything::FID);
    h.tag = 9;
    ASSERT_EQ((ssize_t)sizeof(h), pair->endpoint_b->write(&h, sizeof(h)));
    ASSERT_EQ((ssize_t)req.size(), pair->endpoint_b->write(req.data(), req.size()));
    Header40 reply;
    ASSERT_TRUE(read_frame(pair->endpoint_b, &reply));
    EXPECT_EQ(9u, reply.h.tag);
    EXPECT_EQ(0u, reply.h.reserved);  // not an error
    ASSERT_GE(svc.reply_addrs.size(), 10u);
    EXPECT_EQ(0u, leaks(reply.payload, svc.reply_addrs));
    // The reply is the request's contents (its iovec_array now one iovec).
    EXPECT_EQ(req.size(), reply.payload.size());
    IOVector iov;
    iov.push_back(&reply.payload[0], reply.payload.size());
    expect_filled(DeserializerIOV().deserialize<All>(&iov));
    pair->close();
    server.join();
    sk.reset();
}

}  // namespace
