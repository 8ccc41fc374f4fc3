// Code written the way PhotonLibOS users write string handling compiles and runs here: headers
// parsed with estring_view splits into a case-insensitive string-keyed map, numbers checked
// with to_uint64_check, URLs built with appends() and addressed with rstring_view, results
// passed back as retval, a cursor walked with enumerable(), and all of it logged with alog.
// The functions above the gtest include see only what the photon headers included.
#include <photon/common/alog.h>
#include <photon/common/alog-stdstring.h>
#include <photon/common/enumerable.h>
#include <photon/common/estring.h>
#include <photon/common/retval.h>
#include <photon/common/string-keyed.h>

namespace {

using namespace photon;

// "Name: value" lines, up to the blank line, into a case-insensitive map.
int parse_headers(std::string_view block, unordered_map_string_kv_case_insensitive& headers) {
    for (auto line : estring_view(block).split_lines()) {
        auto colon = line.find(':');
        if (colon == line.npos) LOG_ERROR_RETURN(EINVAL, -1, "no colon in header line: ", line);
        headers[line.substr(0, colon).trim()] = line.substr(colon + 1).trim();
    }
    return 0;
}

// The whole value as a number, or EINVAL: no digits, trailing garbage, or overflow.
retval<uint64_t> content_length(const unordered_map_string_kv_case_insensitive& headers) {
    auto it = headers.find("content-length");
    if (it == headers.end()) return reterr{ENOENT};
    estring_view v = it->second;
    uint64_t n = 0;
    if (v.to_uint64_check(&n) != v.size()) LOG_ERROR_RETVAL(EINVAL, "bad Content-Length: ", v);
    return {n, 0};
}

struct Url {
    estring full;
    rstring_view16 host, path;
};

Url make_url(std::string_view host, uint16_t port, std::string_view path, std::string_view query) {
    Url u;
    u.full.appends("http://", host, ":", port);
    u.host = {7, host.size()};
    auto path_at = u.full.size();
    u.full.appends(path, estring::make_conditional_cat_list(!query.empty(), "?", query));
    u.path = {path_at, path.size()};
    return u;
}

// Walks the words of a sentence: valid() / get() / next(), as enumerable() wants.
struct WordCursor {
    estring_view::_split<charset> words;
    estring_view::_split<charset>::iterator it;
    WordCursor(std::string_view text) : words(estring_view(text).split(charset(" \t"))) {
        it = words.begin();
    }
    WordCursor(const WordCursor&) = delete;
    bool valid() { return it != words.end(); }
    int next() { return ++it != words.end() ? 0 : -1; }
    estring_view get() { return *it; }
};

// Counts distinct words, case-insensitively, and the longest one.
size_t distinct_words(std::string_view text, estring* longest) {
    set_string_key_case_insensitive<> seen;
    WordCursor cursor(text);
    for (auto w : enumerable(cursor)) {
        if (seen.insert(w).second && w.size() > longest->size()) *longest = w;
    }
    return seen.size();
}

// Config as ordered key/value strings; values edited in place.
estring render_config(map_string_kv& cfg) {
    for (auto& kv : cfg)
        if (kv.second.empty()) kv.second = "<unset>";
    estring out;
    for (auto& kv : cfg) out.appends(kv.first, "=", kv.second, "\n");
    LOG_DEBUG("config:\n", out);
    return out;
}

}  // namespace

#include <gtest/gtest.h>

namespace {

TEST(StringsStyle, HeadersParseIntoACaseInsensitiveMap) {
    unordered_map_string_kv_case_insensitive headers;
    ASSERT_EQ(0, parse_headers("Host: example.com\r\nContent-Length:  42 \r\n\r\n", headers));
    EXPECT_EQ("example.com", headers["HOST"]);
    auto n = content_length(headers);
    ASSERT_TRUE(n.succeeded());
    EXPECT_EQ(42u, n.get());

    headers["content-length"] = "99999999999999999999999";  // overflow
    EXPECT_EQ(EINVAL, content_length(headers).error());
    headers["Content-Length"] = "12abc";  // trailing garbage
    EXPECT_EQ(EINVAL, content_length(headers).error());
    headers.erase("CONTENT-LENGTH");
    EXPECT_EQ(ENOENT, content_length(headers).error());

    errno = 0;
    EXPECT_EQ(-1, parse_headers("no colon here", headers));
    EXPECT_EQ(EINVAL, errno);
}

TEST(StringsStyle, UrlsAreBuiltWithAppendsAndAddressedByRstringView) {
    auto u = make_url("example.com", 8080, "/a/b", "x=1");
    EXPECT_EQ("http://example.com:8080/a/b?x=1", u.full);
    EXPECT_EQ("example.com", u.full | u.host);
    EXPECT_EQ("/a/b", u.full | u.path);
    auto port = estring_view(u.full).substr(u.host.offset() + u.host.size() + 1);
    uint64_t p = 0;
    EXPECT_EQ(4u, port.to_uint64_check(&p));
    EXPECT_EQ(8080u, p);
    EXPECT_EQ("http://h:1/", make_url("h", 1, "/", "").full);
    std::vector<std::string> segs;
    for (auto s : (u.full | u.path).split('/')) segs.emplace_back(s);
    EXPECT_EQ((std::vector<std::string>{"a", "b"}), segs);
}

TEST(StringsStyle, EnumerableWalksACursorIntoAStringKeyedSet) {
    estring longest;
    EXPECT_EQ(4u, distinct_words("the Quick  brown the\tTHE quick fox", &longest));
    EXPECT_EQ("Quick", longest);
    EXPECT_EQ(0u, distinct_words("   ", &longest));
}

TEST(StringsStyle, ConfigValuesAreEditedThroughTheMap) {
    map_string_kv cfg{{"port", "80"}, {"host", ""}, {"root", "/srv"}};
    cfg["log"] = "";
    EXPECT_EQ("host=<unset>\nlog=<unset>\nport=80\nroot=/srv\n", render_config(cfg));
    EXPECT_EQ(80, estring_view(cfg["port"]).to_int64());
    unordered_map_string_key<int> counts;
    for (auto w : estring_view("a b a c a").split(' ')) counts[w]++;
    EXPECT_EQ(3, counts["a"]);
    EXPECT_EQ(0u, counts.count("z"));
}

TEST(StringsStyle, EstringSnprintfAndCaseHelpers) {
    auto s = estring::snprintf("%s-%d", "id", 7);
    EXPECT_EQ("id-7", s);
    EXPECT_TRUE(s.view().istarts_with("ID"));
    EXPECT_EQ("ID-7", s.view().toupper_fast());
    EXPECT_EQ(0, stricmp_fast("Keep-Alive", "keep-alive"));
    string_key key;
    LOG_DEBUG("logged: ", s, ' ', s.view(), ' ', key);
}

}  // namespace
