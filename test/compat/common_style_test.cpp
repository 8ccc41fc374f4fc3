// Code written the way PhotonLibOS users write it, against the common/
// headers of expiring containers, object caches, memory streams, UUIDs,
// generators, perf counters and the alog extensions: Photon's includes,
// names and call shapes, compiled unchanged. The functions above the gtest
// include see only what the photon headers included.
#include <photon/photon.h>
#include <photon/common/alog.h>
#include <photon/common/alog-audit.h>
#include <photon/common/alog-functionptr.h>
#include <photon/common/expirecontainer.h>
#include <photon/common/generator.h>
#include <photon/common/memory-stream/memory-stream.h>
#include <photon/common/objectcachev2.h>
#include <photon/common/perf_counter.h>
#include <photon/common/uuid.h>
#include <photon/thread/thread11.h>

REGISTER_PERF(compat_requests, TOTAL)  // without -DPERF: compiles to nothing

namespace {

struct Conn {
    int id;
    explicit Conn(int i = 0) : id(i) {}
};

// ObjectCache as Photon code uses it: acquire with a lambda, release by key,
// borrow with a constructor; and the key of a cached entry.
int object_cache_round(int* made) {
    ObjectCache<std::string, Conn*> cache(1000UL * 1000 * 10);
    auto ctor = [&]() {
        (*made)++;
        return new Conn(42);
    };
    Conn* c = cache.acquire("host:80", ctor);
    if (!c || cache.acquire("host:80", ctor) != c) return -1;
    cache.release("host:80");
    cache.release("host:80");
    {
        auto b = cache.borrow("host:80", ctor);
        if (!b || b->id != 42) return -1;
    }
    auto it = cache.find("host:80");
    if (it == cache.end() || (*it)->key() != "host:80") return -1;
    return (int)cache.size();
}

// ExpireContainer / ExpireList with string keys from char buffers.
int expire_container_round() {
    char key[16] = "session-1";
    ExpireContainer<std::string, int, bool> sessions(1000UL * 1000);
    sessions.insert(key, 7, false);
    memset(key, 0, sizeof(key));
    auto it = sessions.find("session-1");
    if (it == sessions.end()) return -1;
    auto ref = *it;
    if (strcmp(ref->get_payload<0>().data(), "session-1") != 0) return -1;
    ref->get_payload<2>() = true;
    sessions.refresh(ref);
    ExpireList<std::string> seen(1000UL * 1000);
    if (!seen.keep_alive("peer", true) || !seen.keep_alive("peer", false)) return -1;
    return ref->get_payload<1>() + (int)seen.size();
}

int object_cache_v2_round() {
    ObjectCacheV2<int, Conn*> cache(1000UL * 1000 * 10);
    auto b = cache.borrow(1, [] { return new Conn(5); });
    auto b2 = cache.borrow(1);  // shares the object made above
    return b && b2 && &*b == &*b2 ? b->id : -1;
}

const char STR[] = "the quick brown fox";

void* writer(void* arg) {
    auto s = (IStream*)arg;
    s->write(STR, LEN(STR) - 1);
    return nullptr;
}

// A memory stream between two coroutines, the way Photon's tests use it.
std::string memory_stream_round() {
    std::unique_ptr<DuplexMemoryStream> d(new_duplex_memory_stream(8));
    photon::thread_create(&writer, d->endpoint_a);
    char buf[64] = {};
    ssize_t n = d->endpoint_b->read(buf, LEN(STR) - 1);
    d->close();
    return n < 0 ? "" : std::string(buf, n);
}

class evens : public Generator<evens, int> {
public:
    int n;
    evens(int N) : n(N) {}
    bool has_next(const Iterator* it) const { return it->i < n; }
    void next(Iterator*) const {}
    int get(const Iterator* it) const { return it->i * 2; }
};

int generator_sum() {
    int sum = 0;
    for (auto x : evens(4)) sum += x;
    return sum;
}

struct Handler {
    int on_event(int) { return 0; }
};

int audited_read() {
    SCOPE_AUDIT("file:read", AU_FILEOP("/tmp/x", 0, 4096));
    REPORT_PERF(compat_requests, 1)
    LOG_DEBUG("handler: `", &Handler::on_event);
    return 0;
}

}  // namespace

#include <gtest/gtest.h>

namespace {

class CommonStyle : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    }
    void TearDown() override { EXPECT_EQ(0, photon::fini()); }
};

TEST_F(CommonStyle, ObjectCacheAcquireReleaseAndBorrow) {
    int made = 0;
    EXPECT_EQ(1, object_cache_round(&made));
    EXPECT_EQ(1, made);
}

TEST_F(CommonStyle, ExpireContainerAndExpireList) { EXPECT_EQ(8, expire_container_round()); }

TEST_F(CommonStyle, ObjectCacheV2Borrow) { EXPECT_EQ(5, object_cache_v2_round()); }

TEST_F(CommonStyle, MemoryStreamBetweenCoroutines) {
    EXPECT_EQ("the quick brown fox", memory_stream_round());
}

TEST_F(CommonStyle, UuidGenerateFormatAndParse) {
    UUID u;
    u.generate();
    UUID::String s = u;
    EXPECT_TRUE(UUID::String::is_valid(s.c_str()));
    UUID v;
    EXPECT_EQ(0, v.parse(s));
    EXPECT_TRUE(u == v);
    EXPECT_EQ(-1, v.parse("not-a-uuid", 10));
    LOG_DEBUG("uuid ", u);
}

TEST_F(CommonStyle, GeneratorAuditAndPerf) {
    EXPECT_EQ(0 + 2 + 4 + 6, generator_sum());
    EXPECT_EQ(0, audited_read());
    ___example_of_generator____();
}

}  // namespace
