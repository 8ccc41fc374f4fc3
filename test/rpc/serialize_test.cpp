// Serialization without a network: every field type round-trips, through one
// buffer and through payloads cut into random pieces; hostile payloads fail
// cleanly.
#include <photon/rpc/serialize.h>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "rpc_messages.h"

using namespace rpc_test;
using photon::rpc::DeserializerIOV;
using photon::rpc::SerializerIOV;

namespace {

// The bytes a sender would put on the wire for m.
template <typename M>
std::string wire_of(M& m) {
    SerializerIOV ser;
    ser.serialize(m);
    EXPECT_FALSE(ser.iovfull);
    std::string out(ser.iov.sum(), '\0');
    ser.iov.memcpy_to(&out[0], out.size());
    return out;
}

// Fills every field of an All, pointing at storage that outlives it.
struct AllFixture {
    std::vector<uint64_t> a{1, 2, 3, 0xfeedfacecafebeefull};
    std::string b = "raw bytes\x01\x02";
    std::string ab = std::string(64, 'A');
    std::string p1 = "scattered ", p2 = "over ", p3 = "three";
    iovec iovs[3] = {{&p1[0], p1.size()}, {&p2[0], p2.size()}, {&p3[0], p3.size()}};
    Point pt{-7, 9};
    std::vector<uint32_t> nums{10, 20, 30};
    std::vector<uint32_t> nums2{40};
    std::vector<Inner> inners{2};
    All m;

    AllFixture() {
        m.pod = 42;
        m.d = 2.5;
        m.s = "hello, rpc";
        m.a.assign(a);
        m.b.assign(b.data(), b.size());
        m.ab.assign(ab.data(), ab.size());
        m.iov.assign(iovs, 3);
        m.fb.assign(&pt);
        m.inner.id = 7;
        m.inner.name = "inner";
        m.inner.nums.assign(nums);
        inners[0].id = 100;
        inners[0].name = "first";
        inners[0].nums.assign(nums);
        inners[1].id = 200;
        inners[1].name = "second";
        inners[1].nums.assign(nums2);
        m.inners.assign(inners);
    }
};

// Where a field of All sits in its bytes (All is not standard-layout).
template <typename F>
size_t field_off(F All::*mp) {
    static All probe;
    return (size_t)((char*)&(probe.*mp) - (char*)&probe);
}

std::string iov_content(rpc::iovec_array& v) {
    std::string s;
    for (auto& e : v) s.append((char*)e.iov_base, e.iov_len);
    return s;
}

void expect_all(const AllFixture& f, All* r) {
    ASSERT_NE(nullptr, r);
    EXPECT_EQ(42u, r->pod);
    EXPECT_EQ(2.5, r->d);
    EXPECT_EQ("hello, rpc", r->s.sv());
    ASSERT_EQ(4u, r->a.size());
    EXPECT_EQ(0xfeedfacecafebeefull, r->a[3]);
    EXPECT_EQ(f.b, std::string((char*)r->b.addr(), r->b.size()));
    EXPECT_EQ(f.ab, std::string((char*)r->ab.addr(), r->ab.size()));
    EXPECT_EQ("scattered over three", iov_content(r->iov));
    EXPECT_EQ(-7, r->fb.get()->x);
    EXPECT_EQ(9, r->fb.get()->y);
    EXPECT_EQ(7u, r->inner.id);
    EXPECT_EQ("inner", r->inner.name.sv());
    ASSERT_EQ(3u, r->inner.nums.size());
    EXPECT_EQ(30u, r->inner.nums[2]);
    ASSERT_EQ(2u, r->inners.size());
    EXPECT_EQ(200u, r->inners[1].id);
    EXPECT_EQ("second", r->inners[1].name.sv());
    ASSERT_EQ(1u, r->inners[1].nums.size());
    EXPECT_EQ(40u, r->inners[1].nums[0]);
    EXPECT_EQ("first", r->inners[0].name.sv());
}

TEST(Serialize, LayoutIsPhotons) {
    // The struct's own bytes travel: these sizes are the wire's.
    EXPECT_EQ(16u, sizeof(rpc::buffer));
    EXPECT_EQ(16u, sizeof(rpc::string));
    EXPECT_EQ(24u, sizeof(rpc::iovec_array));
    EXPECT_EQ(24u, sizeof(Echo::Request));
    EXPECT_EQ(24u, sizeof(Checked));
}

TEST(Serialize, AlignedFieldsFirstBodyLast) {
    AllFixture f;
    std::string w = wire_of(f.m);
    // The aligned buffer's 64 'A's lead; the struct's bytes close.
    EXPECT_EQ(f.ab, w.substr(0, 64));
    EXPECT_EQ(0, memcmp(w.data() + w.size() - sizeof(All), &f.m, sizeof(All)));
    // Then the others in declaration order: s, a, b, iov contents, fb, ...
    EXPECT_EQ(std::string("hello, rpc", 11), w.substr(64, 11));
}

TEST(Serialize, RoundTripInOneBuffer) {
    AllFixture f;
    std::string w = wire_of(f.m);
    IOVector iov;
    iov.push_back(&w[0], w.size());
    DeserializerIOV des;
    expect_all(f, des.deserialize<All>(&iov));
}

TEST(Serialize, RoundTripOverRandomPieces) {
    AllFixture f;
    std::string w = wire_of(f.m);
    std::mt19937 rng(7);
    for (int round = 0; round < 300; ++round) {
        std::string copy = w;  // deserializing edits in place
        auto iov = new_iovector(64, 0);
        size_t off = 0;
        while (off < copy.size()) {
            size_t n = std::min<size_t>(1 + rng() % 40, copy.size() - off);
            iov->push_back(&copy[off], n);
            off += n;
        }
        DeserializerIOV des;
        expect_all(f, des.deserialize<All>(iov));
        delete_iovector(iov);
    }
}

TEST(Serialize, EveryTruncationFailsCleanly) {
    AllFixture f;
    std::string w = wire_of(f.m);
    for (size_t n = 0; n < w.size(); ++n) {
        // Keep the body at the back, drop field bytes before it: lengths then
        // point past what is there.
        std::string cut = w.substr(0, n);
        IOVector iov;
        if (n) iov.push_back(&cut[0], n);
        DeserializerIOV des;
        EXPECT_EQ(nullptr, des.deserialize<All>(&iov)) << n;
    }
}

TEST(Serialize, HostileLengthsFail) {
    AllFixture f;
    std::string w = wire_of(f.m);
    auto body_at = w.size() - sizeof(All);
    auto mutate = [&](size_t field_offset, uint64_t len) {
        std::string bad = w;
        memcpy(&bad[body_at + field_offset + 8], &len, 8);  // the _len after _ptr
        IOVector iov;
        iov.push_back(&bad[0], bad.size());
        DeserializerIOV des;
        return des.deserialize<All>(&iov);
    };
    EXPECT_EQ(nullptr, mutate(field_off(&All::s), 1ull << 40));          // past the payload
    EXPECT_EQ(nullptr, mutate(field_off(&All::s), ~0ull));               // wraps
    EXPECT_EQ(nullptr, mutate(field_off(&All::a), 4 * 8 + 3));           // not whole elements
    EXPECT_EQ(nullptr, mutate(field_off(&All::fb), sizeof(Point) + 1));  // not one Point
    EXPECT_EQ(nullptr, mutate(field_off(&All::s), 5));                   // bytes left over
    // A summed size past the payload for the iovec array.
    std::string bad = w;
    uint64_t huge = 1ull << 33;
    memcpy(&bad[body_at + field_off(&All::iov) + 16], &huge, 8);
    IOVector iov;
    iov.push_back(&bad[0], bad.size());
    DeserializerIOV des;
    EXPECT_EQ(nullptr, des.deserialize<All>(&iov));
}

TEST(Serialize, RandomGarbageNeverCrashes) {
    std::mt19937 rng(11);
    for (int round = 0; round < 2000; ++round) {
        std::string g(rng() % 600, '\0');
        for (auto& c : g) c = (char)rng();
        IOVector iov;
        if (!g.empty()) iov.push_back(&g[0], g.size());
        DeserializerIOV des;
        auto r = des.deserialize<All>(&iov);
        if (r) {  // a lucky decode must still stay inside the payload
            EXPECT_LE(r->s.size(), g.size());
            EXPECT_LE(r->b.size(), g.size());
        }
    }
}

TEST(Serialize, ReceivedStringsEndInNul) {
    Echo::Response m;
    char raw[5] = {'a', 'b', 'c', 'd', 'e'};  // no terminator
    m.str.assign(raw, sizeof(raw));
    std::string w = wire_of(m);
    IOVector iov;
    iov.push_back(&w[0], w.size());
    DeserializerIOV des;
    auto r = des.deserialize<Echo::Response>(&iov);
    ASSERT_NE(nullptr, r);
    EXPECT_EQ(5u, r->str.size());
    EXPECT_EQ('\0', r->str.c_str()[4]);
    EXPECT_EQ("abcd", r->str.sv());
    rpc::string empty;
    EXPECT_TRUE(empty.sv().empty());
}

TEST(Serialize, MisalignedArraysAreRealigned) {
    All m;
    m.s = "odd";  // 4 bytes before the array: its elements land misaligned
    std::vector<uint64_t> a{1, 2, 3};
    m.a.assign(a);
    std::string w = wire_of(m);
    std::string shifted = "x" + w;  // and the whole payload at an odd address
    IOVector iov;
    iov.push_back(&shifted[1], w.size());
    DeserializerIOV des;
    auto r = des.deserialize<All>(&iov);
    ASSERT_NE(nullptr, r);
    EXPECT_EQ(0u, (uintptr_t)r % alignof(All));
    EXPECT_EQ(0u, (uintptr_t)r->a.begin() % alignof(uint64_t));
    EXPECT_EQ(3u, r->a[2]);
}

TEST(Serialize, CheckedMessageDetectsCorruption) {
    Checked m;
    m.n = 5;
    m.s = "checked payload";
    std::string w = wire_of(m);
    {
        std::string ok = w;
        IOVector iov;
        iov.push_back(&ok[0], ok.size());
        DeserializerIOV des;
        auto r = des.deserialize<Checked>(&iov);
        ASSERT_NE(nullptr, r);
        EXPECT_EQ("checked payload", r->s.sv());
    }
    for (size_t i = 0; i < w.size(); i += 3) {
        std::string bad = w;
        bad[i] ^= 0x40;
        IOVector iov;
        iov.push_back(&bad[0], bad.size());
        DeserializerIOV des;
        EXPECT_EQ(nullptr, des.deserialize<Checked>(&iov)) << i;
    }
}

struct Val : rpc::Message {
    uint32_t v = 0;
    rpc::string tag;
    PROCESS_FIELDS(tag);
};
struct MapMsg : rpc::Message {
    rpc::sorted_map<rpc::string, Val> map;
    PROCESS_FIELDS(map);
};

TEST(Serialize, SortedMap) {
    rpc::sorted_map_factory<rpc::string, Val> fac;
    const char* keys[] = {"pear", "apple", "fig"};
    Val vals[3];
    for (int i = 0; i < 3; ++i) {
        vals[i].v = i;
        vals[i].tag = std::string_view(keys[i]);
        fac.append(rpc::string(std::string_view(keys[i])), vals[i]);  // with its NUL
    }
    MapMsg m;
    fac.assign_to(&m.map);
    std::string w = wire_of(m);
    IOVector iov;
    iov.push_back(&w[0], w.size());
    DeserializerIOV des;
    auto r = des.deserialize<MapMsg>(&iov);
    ASSERT_NE(nullptr, r);
    std::vector<std::string> order;
    for (auto it = r->map.begin(); it != r->map.end(); ++it) order.emplace_back((*it).first.sv());
    ASSERT_EQ(3u, order.size());
    EXPECT_EQ("apple", order[0]);
    EXPECT_EQ("pear", order[2]);
    auto f = r->map.find(rpc::string("fig"));
    ASSERT_NE(r->map.end(), f);
    EXPECT_EQ(2u, f->second.v);
    EXPECT_EQ("fig", f->second.tag.sv());
    EXPECT_EQ(r->map.end(), r->map.find(rpc::string("kiwi")));
}

}  // namespace
