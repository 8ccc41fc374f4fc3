// Code written the way PhotonLibOS and its users write the meta-programming
// helpers compiles and runs here: an HTTP verb enum with DEFINE_ENUM_STR and a
// status table with make_compact_str_array (net/http), signed query
// parameters in an appendable ordered_string_kv (ecosystem/oss), a coroutine
// started on a member function through get_member_function_address
// (thread11), saved constructor arguments replayed with tuple_assistance
// (thread-local, workerpool), a stack-allocator facade over Delegates
// (thread/stack-allocator), and tcb::span views of buffers.
// The functions above the gtest include see only what the photon headers included.
#include <photon/photon.h>
#include <photon/common/PMF.h>
#include <photon/common/conststr.h>
#include <photon/common/delegates.h>
#include <photon/common/ordered_span.h>
#include <photon/common/span.h>
#include <photon/common/tuple-assistance.h>
#include <photon/thread/thread.h>

#include <cstdlib>
#include <cstring>
#include <string>

#ifdef DELETE
#undef DELETE
#endif

// Photon's own code, under an application namespace so that nothing here
// collides with what the library defines.
namespace app {
using namespace photon;

namespace http {

DEFINE_ENUM_STR(Verb, verbstr, UNKNOWN, DELETE, GET, HEAD, POST, PUT, CONNECT, OPTIONS, TRACE, COPY,
                LOCK, MKCOL, MOV, PROPFIND, PROPPATCH, SEARCH, UNLOCK, BIND, REBIND, UNBIND, ACL,
                REPORT, MKACTIVITY, CHECKOUT, MERGE, MSEARCH, NOTIFY, SUBSCRIBE, UNSUBSCRIBE, PATCH,
                PURGE, MKCALENDAR, LINK, UNLINK);

Verb string_to_verb(std::string_view v) {
    for (auto i = Verb::DELETE; i <= Verb::UNLINK; i = Verb((int)i + 1)) {
        if (verbstr[i] == v) return i;
    }
    return Verb::UNKNOWN;
}

const static auto code_str = ConstString::make_compact_str_array<uint16_t>(
    /*200*/ TSTRING("OK"),
    /*201*/ TSTRING("Created"),
    /*202*/ TSTRING("Accepted"),
    /*203*/ TSTRING(""),
    /*204*/ TSTRING("No Content"));

std::string_view reason_phrase(int code) { return code_str.at(code - 200); }

}  // namespace http

namespace objstore {

using StringKV = ordered_string_kv;

// Parameters must appear in dictionary order; optional ones are inserted.
std::string build_query(bool with_delimiter, std::string_view marker) {
    std::string max_keys = std::to_string(100);
    // must appear in dictionary order!
    DEFINE_APPENDABLE_ORDERED_STRING_KV(query_params, 2,
                                        {
                                            {"list-type", "2"},
                                            {"max-keys", max_keys},
                                            {"prefix", "dir/"},
                                        });
    if (with_delimiter) query_params.insert({"delimiter", "/"});
    if (!marker.empty()) query_params.insert({"continuation-token", marker});
    std::string q;
    for (auto& kv : StringKV(query_params.begin(), query_params.end())) {
        if (!q.empty()) q += '&';
        q.append(kv.first.data(), kv.first.size())
            .append("=")
            .append(kv.second.data(), kv.second.size());
    }
    return q;
}

DEFINE_CONST_STATIC_ORDERED_STRING_KV(MIME_TYPE_MAP, {{"css", "text/css"},
                                                      {"html", "text/html"},
                                                      {"json", "application/json"}});

}  // namespace objstore

// The stack-allocator facade Photon builds on Delegates.
struct StackPoolStats {
    size_t pooled_bytes = 0;
};

DEFINE_DELEGATE_FUNCTION(DStackAlloc, alloc);
DEFINE_DELEGATE_FUNCTION(DStackDealloc, dealloc);
DEFINE_DELEGATE_FUNCTION(DStackTrim, trim);
DEFINE_DELEGATE_FUNCTION(DStackStats, stats);

using StackAllocator = Delegates<DFeature::Feature<DStackAlloc, void*(size_t)>,
                                 DFeature::Feature<DStackDealloc, void(void*, size_t)>,
                                 DFeature::Feature<DStackTrim, size_t(size_t)>,
                                 DFeature::Feature<DStackStats, StackPoolStats()>>;

}  // namespace app

namespace {

struct CountingAllocator {
    size_t live = 0;
    void* alloc(size_t n) {
        live += n;
        return malloc(n);
    }
    void dealloc(void* p, size_t n) {
        live -= n;
        free(p);
    }
    app::StackPoolStats stats() { return {live}; }
};

size_t allocator_round() {
    CountingAllocator impl;
    app::StackAllocator a(impl);
    void* p = a.alloc(4096);
    size_t during = a.stats().pooled_bytes;
    a.dealloc(p, 4096);
    return during + a.trim(0) + a.stats().pooled_bytes;  // trim is not provided: 0
}

// A coroutine started on a member function, the way thread11 does it.
struct Worker {
    int runs = 0;
    void* run() {
        ++runs;
        photon::thread_yield();
        return this;
    }
};

int member_coroutine_round() {
    Worker w;
    auto pmf = ::get_member_function_address(&w, &Worker::run);
    auto th = photon::thread_create((photon::thread_entry)pmf.f, pmf.obj);
    auto jh = photon::thread_enable_join(th);
    void* ret = photon::thread_join(jh);
    return ret == &w ? w.runs : -1;
}

// Saved constructor arguments replayed later, as thread-local and workerpool do.
struct Session {
    std::string host;
    int port;
    Session(std::string h, int p) : host(std::move(h)), port(p) {}
};

std::string replay_round() {
    std::tuple<std::string, int> saved{"example.com", 443};
    auto make = [](std::string h, int p) { return new Session(std::move(h), p); };
    Session* a = tuple_assistance::apply(make, saved);
    Session* b = tuple_assistance::apply(make, saved);  // the saved host is still there
    std::string r = a->host + ":" + std::to_string(a->port) + "," + b->host;
    delete a;
    delete b;
    return r;
}

int span_round() {
    char buf[64] = "GET /index.html HTTP/1.1";
    tcb::span<char> whole(buf, strlen(buf));
    auto method = whole.first(3);
    auto path = whole.subspan(4, 11);
    auto bytes = tcb::as_bytes(path);
    return (int)(method.size() + path.size() + bytes.size_bytes());
}

}  // namespace

#include <gtest/gtest.h>

namespace {

class CommonMetaStyle : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_NONE, photon::INIT_IO_NONE));
    }
    void TearDown() override { EXPECT_EQ(0, photon::fini()); }
};

TEST_F(CommonMetaStyle, HttpVerbNamesAndStatusReasons) {
    using namespace app::http;
    EXPECT_EQ(Verb::PATCH, string_to_verb("PATCH"));
    EXPECT_EQ(Verb::UNKNOWN, string_to_verb("FETCH"));
    EXPECT_EQ("MKCALENDAR", verbstr[Verb::MKCALENDAR]);
    EXPECT_EQ("Accepted", reason_phrase(202));
    EXPECT_EQ("", reason_phrase(203));
    EXPECT_EQ("", reason_phrase(299));
}

TEST_F(CommonMetaStyle, OssQueryParametersStayOrdered) {
    EXPECT_EQ("continuation-token=m1&delimiter=/&list-type=2&max-keys=100&prefix=dir/",
              app::objstore::build_query(true, "m1"));
    EXPECT_EQ("list-type=2&max-keys=100&prefix=dir/", app::objstore::build_query(false, ""));
    EXPECT_EQ("application/json", app::objstore::MIME_TYPE_MAP["json"]);
}

TEST_F(CommonMetaStyle, StackAllocatorFacade) { EXPECT_EQ(4096u, allocator_round()); }

TEST_F(CommonMetaStyle, CoroutineOnAMemberFunction) { EXPECT_EQ(1, member_coroutine_round()); }

TEST_F(CommonMetaStyle, SavedArgumentsReplayTwice) {
    EXPECT_EQ("example.com:443,example.com", replay_round());
}

TEST_F(CommonMetaStyle, SpanViewsOfARequestLine) { EXPECT_EQ(3 + 11 + 11, span_round()); }

}  // namespace
