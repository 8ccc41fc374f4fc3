#include <photon/common/iovector.h>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

// An IOAlloc that counts, can hand out at most `piece` bytes at a time, and
// can be told to fail after `budget` allocations.
struct CountingAlloc {
    int allocs = 0, frees = 0;
    int piece = INT32_MAX;
    int budget = INT32_MAX;
    int allocate(IOAlloc::RangeSize r, void** p) {
        if (budget-- <= 0) return errno = ENOMEM, -1;
        int n = std::min(r.max, std::max(r.min, piece));
        *p = ::malloc(n);
        ++allocs;
        return n;
    }
    int deallocate(void* p) {
        ::free(p);
        ++frees;
        return 0;
    }
    IOAlloc io() {
        return IOAlloc({this, &CountingAlloc::allocate}, {this, &CountingAlloc::deallocate});
    }
};

std::string content(const iovector_view& v) {
    std::string s(v.sum(), '\0');
    EXPECT_EQ(s.size(), v.memcpy_to(&s[0], s.size()));
    return s;
}
std::string content(const iovector& v) { return content(v.view()); }

// "abcdefghij" in pieces of 3, 0, 4, 3 bytes (an empty element in the middle).
struct Pieces {
    char data[11] = "abcdefghij";
    iovec iov[4] = {{data, 3}, {data + 3, 0}, {data + 3, 4}, {data + 7, 3}};
    iovector_view view() { return iovector_view(iov); }
};

TEST(IovectorView, SumAndShrink) {
    Pieces p;
    auto v = p.view();
    EXPECT_EQ(10u, v.sum());
    EXPECT_EQ(4u, v.elements_count());
    EXPECT_EQ(7u, v.shrink_to(7));  // cut exactly at an element boundary
    EXPECT_EQ("abcdefg", content(v));
    EXPECT_EQ(7u, v.shrink_to(100));  // cannot grow
    EXPECT_EQ(5u, v.shrink_to(5));
    EXPECT_EQ("abcde", content(v));
    EXPECT_EQ(0u, v.shrink_to(0));
    EXPECT_TRUE(v.empty());

    Pieces q;
    auto w = q.view();
    EXPECT_EQ(2u, w.shrink_less_than(5));  // elements {3,0,4} hold 7 >= 5
    EXPECT_EQ(3, w.iovcnt);
    EXPECT_EQ(4u, w.iov[2].iov_len);  // the iovecs are untouched
    EXPECT_EQ(0u, w.shrink_less_than(100));
}

TEST(IovectorView, ExtractFrontAndBack) {
    Pieces p;
    auto v = p.view();
    char buf[16] = {};
    EXPECT_EQ(5u, v.extract_front(5, buf));
    EXPECT_EQ("abcde", std::string(buf, 5));
    EXPECT_EQ("fghij", content(v));
    EXPECT_EQ(2u, v.extract_back(2, buf));
    EXPECT_EQ("ij", std::string(buf, 2));
    EXPECT_EQ("fgh", content(v));
    EXPECT_EQ(3u, v.extract_front(100));  // more than there is
    EXPECT_TRUE(v.empty());

    // A short extract_back fills the end of buf, as Photon's does.
    Pieces q;
    auto w = q.view();
    memset(buf, '.', sizeof(buf));
    EXPECT_EQ(10u, w.extract_back(12, buf));
    EXPECT_EQ("..abcdefghij", std::string(buf, 12));
}

TEST(IovectorView, ExtractIntoViewNeedsRoom) {
    Pieces p;
    auto v = p.view();
    iovec out[2];
    iovector_view room(out, 1);
    errno = 0;
    EXPECT_EQ(-1, v.extract_front(6, &room));  // 6 bytes span {3,0,4}: 2 pieces, room 1
    EXPECT_EQ(ENOBUFS, errno);
    EXPECT_EQ("abcdefghij", content(v));  // nothing consumed
    room.assign(out, 2);
    EXPECT_EQ(6, v.extract_front(6, &room));
    EXPECT_EQ(2, room.iovcnt);
    EXPECT_EQ("abcdef", content(room));
    EXPECT_EQ("ghij", content(v));

    Pieces q;
    auto w = q.view();
    iovector_view back_room(out, 2);
    EXPECT_EQ(-1, w.extract_back(8, &back_room));  // {4,3}+1 of the first: 3 pieces
    EXPECT_EQ(10u, w.sum());
    back_room.assign(out, 2);
    EXPECT_EQ(5, w.extract_back(5, &back_room));
    EXPECT_EQ("fghij", content(back_room));
    EXPECT_EQ("abcde", content(w));
}

TEST(IovectorView, Continuous) {
    Pieces p;
    auto v = p.view();
    EXPECT_EQ(nullptr, v.extract_front_continuous(4));  // first element holds 3
    EXPECT_EQ(p.data, v.extract_front_continuous(3));
    EXPECT_EQ(p.data + 7, v.extract_back_continuous(3));
    EXPECT_EQ(nullptr, v.extract_back_continuous(5));
    EXPECT_EQ("defg", content(v));
}

TEST(IovectorView, CopyAndPipe) {
    Pieces p;
    auto v = p.view();
    char a[4], b[7];
    iovec dst[2] = {{a, 4}, {b, 7}};
    iovector_view d(dst);
    EXPECT_EQ(10u, v.memcpy_to(&d));
    EXPECT_EQ("abcd", std::string(a, 4));
    EXPECT_EQ("efghij", std::string(b, 6));
    EXPECT_EQ(10u, v.sum());  // memcpy leaves the source alone

    char src[] = "0123456789";
    EXPECT_EQ(4u, v.memcpy_from(src, 4));
    EXPECT_EQ("0123efghij", content(v));

    char out[6];
    EXPECT_EQ(6u, v.pipe_to(out, 6));  // consumes what it copied
    EXPECT_EQ("0123ef", std::string(out, 6));
    EXPECT_EQ("ghij", content(v));
}

TEST(IovectorView, Slice) {
    Pieces p;
    auto v = p.view();
    iovec out[4];
    iovector_view s(out, 4);
    EXPECT_EQ(5, v.slice(5, 2, &s));
    EXPECT_EQ("cdefg", content(s));
    s.assign(out, 1);  // room for one piece: fewer bytes, reported
    EXPECT_EQ(1, v.slice(5, 2, &s));
    EXPECT_EQ("c", content(s));
    s.assign(out, 4);
    EXPECT_EQ(0, v.slice(5, 10, &s));  // past the end
    EXPECT_EQ(0, s.iovcnt);
    s.assign(out, 4);
    EXPECT_EQ(3, v.slice(100, 7, &s));
    EXPECT_EQ("hij", content(s));
    iovector_view none;
    EXPECT_EQ(-1, v.slice(1, 0, &none));
    EXPECT_EQ(10u, v.sum());
}

TEST(Iovector, PushPastCapacityFailsIntact) {
    IOVector v;  // 32 slots, 4 reserved at the front
    EXPECT_EQ(4u, v.front_free_iovcnt());
    EXPECT_EQ(28u, v.back_free_iovcnt());
    char c[64];
    for (int i = 0; i < 28; ++i) ASSERT_EQ(2u, v.push_back(c + 2 * i, 2));
    errno = 0;
    EXPECT_EQ(0u, v.push_back(c, 2));
    EXPECT_EQ(ENOBUFS, errno);
    for (int i = 0; i < 4; ++i) ASSERT_EQ(1u, v.push_front(c, 1));
    EXPECT_EQ(0u, v.push_front(c, 1));
    EXPECT_EQ(32, v.iovcnt());
    EXPECT_EQ(60u, v.sum());
    EXPECT_EQ(-1, v.resize(33));
    EXPECT_EQ(32, v.iovcnt());
    EXPECT_EQ(2u, v.pop_back());
    EXPECT_EQ(1u, v.pop_front());
    EXPECT_EQ(57u, v.sum());
}

TEST(Iovector, AllocatedBuffersAreFreedWhateverTheEdits) {
    CountingAlloc ca;
    {
        IOVectorEntity<8, 2> v(ca.io());
        EXPECT_EQ(100u, v.push_back(100));
        EXPECT_EQ(50u, v.push_front(50));
        EXPECT_EQ(150u, v.sum());
        v.extract_front(120);  // the iovecs no longer name the buffers' starts
        v.clear();
        EXPECT_EQ(2, ca.allocs);
        EXPECT_EQ(0, ca.frees);
    }
    EXPECT_EQ(2, ca.frees);
}

TEST(Iovector, AllocationInPiecesIsAllOrNothing) {
    CountingAlloc ca;
    ca.piece = 100;
    IOVectorEntity<8, 2> v(ca.io());
    EXPECT_EQ(250u, v.push_back(250));  // 100 + 100 + 50
    EXPECT_EQ(3, v.iovcnt());
    // Five more slots, 600 bytes need six: refused, nothing kept.
    errno = 0;
    EXPECT_EQ(0u, v.push_back(600));
    EXPECT_EQ(ENOBUFS, errno);
    EXPECT_EQ(3, v.iovcnt());
    EXPECT_EQ(ca.allocs - 3, ca.frees);
    // An allocator that fails part way: same.
    ca.budget = 1;
    EXPECT_EQ(0u, v.push_front(150));
    EXPECT_EQ(ENOMEM, errno);
    EXPECT_EQ(2u, v.front_free_iovcnt());
    EXPECT_EQ(250u, v.sum());
    ca.budget = INT32_MAX;
    EXPECT_EQ(150u, v.push_front(150));
    EXPECT_EQ(400u, v.sum());
    v.clear_dispose();
    EXPECT_EQ(ca.allocs, ca.frees);
}

TEST(Iovector, TruncateAndShrink) {
    CountingAlloc ca;
    IOVectorEntity<8, 0> v(ca.io());
    char c[10];
    v.push_back(c, 10);
    EXPECT_EQ(4u, v.shrink_to(4));
    EXPECT_EQ(4u, v.sum());
    EXPECT_EQ(30u, v.truncate(30));  // grows by allocating
    EXPECT_EQ(2, v.iovcnt());
    EXPECT_EQ(30u, v.sum());
    EXPECT_EQ(0u, v.truncate(0));
    EXPECT_TRUE(v.empty());
}

TEST(Iovector, ExtractContinuousCopiesAcrossElements) {
    CountingAlloc ca;
    IOVectorEntity<8, 0> v(ca.io());
    Pieces p;
    ASSERT_EQ(0, v.assign(p.iov, 4));
    struct Hdr {
        char x[5];
    };
    auto h = v.extract_front<Hdr>();  // spans {3,0,4}: copied into an allocated buffer
    ASSERT_NE(nullptr, h);
    EXPECT_EQ("abcde", std::string(h->x, 5));
    EXPECT_EQ(1, ca.allocs);
    EXPECT_EQ("fghij", content(v));
    auto t = (char*)v.extract_back_continuous(3);
    EXPECT_EQ(p.data + 7, t);                          // in place, no copy
    EXPECT_EQ(nullptr, v.extract_back_continuous(3));  // only 2 left
    EXPECT_EQ("fg", content(v));
}

TEST(Iovector, ExtractIntoViewAndVector) {
    IOVector v;
    Pieces p;
    ASSERT_EQ(0, v.assign(p.iov, 4));
    iovector_view out;  // no room: the vector provides an array
    EXPECT_EQ(4, v.extract_front(4, &out));
    EXPECT_EQ("abcd", content(out));
    IOVectorEntity<4, 3> small;                // one free slot behind its reserve
    EXPECT_EQ(-1, v.extract_back(6, &small));  // needs two pieces
    EXPECT_EQ("efghij", content(v));
    EXPECT_EQ(3, v.extract_back(3, &small));
    EXPECT_EQ("hij", content(small));
    EXPECT_EQ("efg", content(v));
    EXPECT_EQ(-1, v.extract_back(1, (iovector*)nullptr));
}

TEST(Iovector, MoveTransfersBuffers) {
    CountingAlloc ca;
    {
        IOVectorEntity<8, 2> a(ca.io());
        a.push_back(10);
        a.push_back(20);
        IOVector b;
        b = std::move(a);
        EXPECT_TRUE(a.empty());
        EXPECT_EQ(30u, b.sum());
        EXPECT_EQ(4u, b.front_free_iovcnt());
        IOVector c(std::move(b));
        EXPECT_EQ(30u, c.sum());
        EXPECT_EQ(0, ca.frees);

        IOVectorEntity<2, 0> tiny;
        IOVector big;
        char x[40];
        for (int i = 0; i < 3; ++i) big.push_back(x, 1);
        errno = 0;
        tiny = std::move(big);
        EXPECT_EQ(ENOBUFS, errno);
        EXPECT_EQ(3u, big.sum());
        EXPECT_TRUE(tiny.empty());
    }
    EXPECT_EQ(2, ca.frees);
}

TEST(Iovector, EntityFromArrayThatDoesNotFit) {
    iovec many[40] = {};
    errno = 0;
    IOVector v(many, 40);
    EXPECT_EQ(ENOBUFS, errno);
    EXPECT_TRUE(v.empty());
    IOVector w(many, 30);  // fits only with a reserve of 2
    EXPECT_EQ(30, w.iovcnt());
    EXPECT_EQ(2u, w.front_free_iovcnt());
}

TEST(Iovector, HeapVector) {
    auto v = new_iovector(16, 3);
    ASSERT_NE(nullptr, v);
    EXPECT_EQ(3u, v->front_free_iovcnt());
    EXPECT_EQ(13u, v->back_free_iovcnt());
    CountingAlloc ca;
    *v->get_allocator() = ca.io();
    EXPECT_EQ(1000u, v->push_back(1000));
    EXPECT_EQ(24u, v->push_front(24));
    auto p = v->malloc(64);
    EXPECT_NE(nullptr, p);
    delete_iovector(v);
    EXPECT_EQ(3, ca.allocs);
    EXPECT_EQ(3, ca.frees);
}

TEST(Iovector, SmartCloneIOV) {
    Pieces p;
    SmartCloneIOV<2> big(p.iov, 4);
    EXPECT_NE(big.iov, big.ptr);
    EXPECT_EQ(p.iov[3], big.ptr[3]);
    SmartCloneIOV<8> small(p.iov, 4);
    EXPECT_EQ(small.iov, small.ptr);
    EXPECT_EQ(p.iov[2], small.ptr[2]);
}

// Random extracts from both ends against a std::string model.
TEST(Iovector, RandomAgainstModel) {
    std::mt19937 rng(42);
    for (int round = 0; round < 200; ++round) {
        std::string model;
        std::vector<std::string> store;
        IOVectorEntity<64, 8> v;
        int n = 1 + rng() % 40;
        store.reserve(n);
        for (int i = 0; i < n; ++i) {
            std::string s(rng() % 20, '\0');
            for (auto& ch : s) ch = 'a' + rng() % 26;
            store.push_back(s);
            model += s;
            v.push_back(&store.back()[0], s.size());
        }
        while (!model.empty()) {
            size_t k = rng() % (model.size() + 3);
            std::string buf(k, '\0');
            ASSERT_EQ(content(v), model);
            if (rng() % 2) {
                size_t got = v.extract_front(k, &buf[0]);
                ASSERT_EQ(std::min(k, model.size()), got);
                ASSERT_EQ(model.substr(0, got), buf.substr(0, got));
                model.erase(0, got);
            } else {
                iovec arr[64];
                iovector_view out(arr, 64);
                size_t m = std::min(k, model.size());
                ssize_t got = v.extract_back(k, &out);
                if (k == 0) continue;
                ASSERT_EQ((ssize_t)m, got);
                ASSERT_EQ(model.substr(model.size() - m), content(out));
                model.erase(model.size() - m);
            }
        }
        EXPECT_TRUE(v.sum() == 0);
    }
}

}  // namespace
