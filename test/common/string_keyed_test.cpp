// photon/common/string-keyed.h: string-keyed maps and sets looked up by view without
// allocating, keys stored as owned copies, case-insensitive flavours, and the kv maps whose
// values are written through MutableValue.
#include <photon/common/string-keyed.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

// Counts operator new, to show that lookups build no std::string or node. GCC cannot see that
// these new and delete pair up through malloc and free.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
static std::atomic<long> g_news{0};
void* operator new(size_t n) {
    g_news++;
    if (void* p = malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
#pragma GCC diagnostic pop

namespace {

TEST(StringKey, CopiesOwnTheirCharactersAndEndInNul) {
    char buf[] = "hello";
    std::string_view sv(buf, 3);  // "hel", not NUL-terminated in place
    unordered_map_string_key<int> m;
    m[sv] = 1;
    buf[0] = 'X';  // the caller's memory changes; the stored key does not
    auto it = m.find("hel");
    ASSERT_NE(m.end(), it);
    EXPECT_EQ("hel", it->first);
    EXPECT_EQ('\0', it->first.data()[3]);
    EXPECT_NE((const void*)buf, (const void*)it->first.data());
    EXPECT_EQ(0u, m.count(std::string_view(buf, 3)));
    string_key empty;
    EXPECT_TRUE(empty.empty());
    string_key copy(it->first);
    EXPECT_EQ("hel", copy);
    EXPECT_NE(copy.data(), it->first.data());
    string_key moved(std::move(copy));
    EXPECT_EQ("hel", moved);
    EXPECT_TRUE(copy.empty());
}

TEST(MapStringKey, LooksUpByViewWithoutAllocating) {
    unordered_map_string_key<int> um;
    map_string_key<int> om;
    for (int i = 0; i < 100; i++) {
        um.emplace(std::to_string(i), i);
        om.emplace(std::to_string(i), i);
    }
    {
        long b = g_news;
        auto* counted = new std::string(100, 'x');  // the counter works
        delete counted;
        ASSERT_LT(b, g_news.load());
    }
    const char* probe = "42 and more";
    std::string_view key(probe, 2);
    long before = g_news;
    EXPECT_EQ(42, um.find(key)->second);
    EXPECT_EQ(1u, um.count(key));
    EXPECT_EQ(42, um.at(key));
    EXPECT_EQ(42, um[key]);
    EXPECT_EQ(42, om.find(key)->second);
    EXPECT_EQ(42, om[key]);
    EXPECT_EQ("42", om.lower_bound(key)->first);
    EXPECT_EQ(um.end(), um.find("missing"));
    EXPECT_FALSE(um.emplace(key, 0).second);  // present: nothing is built
    EXPECT_EQ(before, g_news.load());
    EXPECT_EQ(1u, um.erase(key));
    EXPECT_EQ(0u, um.erase(key));
    EXPECT_EQ(99u, um.size());
}

TEST(MapStringKey, InsertsFromEveryStringKind) {
    unordered_map_string_key<int> m;
    const std::pair<std::string, int> x{"a", 1};
    EXPECT_TRUE(m.insert(x).second);
    EXPECT_TRUE(m.insert({"b", 2}).second);
    EXPECT_FALSE(m.insert({"b", 3}).second);
    char chars[8] = "c";
    EXPECT_TRUE(m.insert({chars, 3}).second);
    m.insert({{"d", 4}, {"e", 5}});
    std::vector<std::pair<std::string, int>> v{{"f", 6}, {"g", 7}};
    m.insert(v.begin(), v.end());
    m.emplace_hint(m.begin(), std::string_view("h"), 8);
    m.insert(m.begin(), {"i", 9});
    EXPECT_EQ(9u, m.size());
    EXPECT_EQ(2, m.at("b"));
    EXPECT_THROW(m.at("zz"), std::out_of_range);
    EXPECT_EQ(0, m["new"]);  // operator[] default-constructs
    EXPECT_EQ(10u, m.size());
    auto r = m.equal_range("e");
    ASSERT_NE(r.first, r.second);
    EXPECT_EQ(5, r.first->second);
    const auto& cm = m;
    EXPECT_EQ(7, cm.at("g"));
    EXPECT_EQ(cm.end(), cm.find("nope"));
    unordered_map_string_key<int> il{{"x", 1}, {"y", 2}};
    EXPECT_EQ(2, il["y"]);
}

TEST(MapStringKey, EmptyKeysAndNullViewsAreTheSameKey) {
    map_string_key<int> m;
    m[""] = 5;
    EXPECT_EQ(5, m[std::string_view()]);
    EXPECT_EQ(1u, m.size());
    EXPECT_EQ('\0', *m.begin()->first.data());
}

TEST(MapStringKey, InsertMovesOnlyFromRvalues) {
    unordered_map_string_key<std::string> m;
    std::pair<std::string, std::string> p{"k", std::string(100, 'v')};
    m.insert(p);
    EXPECT_EQ(100u, p.second.size());  // an lvalue is copied (Photon moved from it)
    std::pair<std::string, std::string> q{"q", std::string(100, 'w')};
    m.insert(std::move(q));
    EXPECT_EQ(std::string(100, 'w'), m["q"]);
    map_string_key<std::unique_ptr<int>> up;
    up.emplace("sss", std::make_unique<int>(10));
    auto second = std::make_unique<int>(20);
    EXPECT_FALSE(up.emplace("sss", std::move(second)).second);
    EXPECT_NE(nullptr, second);  // not consumed when the key exists
    EXPECT_EQ(10, *up["sss"]);
}

TEST(MapStringKey, OrderedMapsBoundByView) {
    map_string_key<int> m;
    std::string prefix = "pre";
    for (int i = 0; i < 30; i += 2) m.emplace(prefix + std::to_string(i), i);
    EXPECT_EQ(m.find(prefix + "2"), m.lower_bound(prefix + "2"));
    EXPECT_EQ(m.find(prefix + "10"), m.lower_bound(prefix + "1"));  // "pre10" < "pre2"
    EXPECT_EQ(m.find(prefix + "24"), m.upper_bound(prefix + "22"));
    EXPECT_EQ(m.end(), m.lower_bound(prefix + "9"));
    const auto& cm = m;
    EXPECT_EQ(cm.find(prefix + "24"), cm.upper_bound(prefix + "22"));
    EXPECT_EQ(cm.end(), cm.upper_bound("zzz"));
    std::string last;
    for (auto& kv : m) {
        EXPECT_LT(last, std::string(kv.first));
        last = std::string(kv.first);
    }
}

TEST(CaseInsensitive, MapsAndSetsFoldAsciiCase) {
    unordered_map_string_key_case_insensitive<int> um;
    map_string_key_case_insensitive<int> om;
    unordered_set_string_key_case_insensitive<> us;
    set_string_key_case_insensitive<> os;
    um.emplace("Content-Length", 1);
    om.emplace("Content-Length", 1);
    us.insert("Content-Length");
    os.insert("Content-Length");
    for (auto k : {"content-length", "CONTENT-LENGTH", "Content-Length"}) {
        EXPECT_EQ(1u, um.count(k)) << k;
        EXPECT_EQ(1u, om.count(k)) << k;
        EXPECT_EQ(1u, us.count(k)) << k;
        EXPECT_EQ(1u, os.count(k)) << k;
    }
    EXPECT_FALSE(um.emplace("CONTENT-length", 2).second);
    EXPECT_EQ(0u, um.count("Content-Type"));
    EXPECT_EQ("Content-Length", *os.find("content-LENGTH"));
}

TEST(CaseInsensitive, HashesEveryChunkLengthAndAgreesWithEquality) {
    Hasher_CaseInsensitive h;
    Equal_CaseInsensitive eq;
    for (size_t n : {0, 1, 63, 64, 65, 128, 200}) {  // 64 and 128: Photon wrote past its buffer
        std::string lower(n, 'a'), upper(n, 'A');
        EXPECT_EQ(h(lower), h(upper)) << n;
        EXPECT_TRUE(eq(lower, upper)) << n;
        if (n) {
            EXPECT_NE(h(lower), h(std::string(n, 'b'))) << n;
        }
    }
    EXPECT_FALSE(eq("ab", "abc"));
}

TEST(CaseInsensitive, OrderKeepsKeysWithNulsApart) {
    using namespace std::string_literals;
    map_string_key_case_insensitive<int> m;
    m.emplace("a\0b"s, 1);
    m.emplace("A\0C"s, 2);  // strncasecmp stopped at the NUL and called these equal
    EXPECT_EQ(2u, m.size());
    EXPECT_EQ(2, m.at("a\0c"s));
    Less_CaseInsensitive lt;
    EXPECT_TRUE(lt("B", "c"));
    EXPECT_TRUE(lt("abc", "ABCD"));
    EXPECT_FALSE(lt("ABC", "abc"));
    EXPECT_FALSE(lt("abc", "ABC"));
}

template <typename S>
void exercise_set(S& set) {
    const auto& cset = set;
    std::string prefix = "seggwrg90if908234j5rlkmx";
    for (int i = 0; i < 100; i++) EXPECT_TRUE(set.insert(prefix + std::to_string(i)).second);
    EXPECT_FALSE(set.insert(prefix + "7").second);
    EXPECT_EQ(100u, set.size());
    for (int i = 0; i < 200; i++) {
        auto s = prefix + std::to_string(i);
        EXPECT_EQ(i < 100 ? 1u : 0u, set.count(s));
        EXPECT_EQ(i < 100, cset.find(s) != cset.end());
    }
    auto hint = set.insert(set.begin(), prefix + "x");
    EXPECT_EQ(prefix + "x", *hint);
    EXPECT_EQ(hint, set.insert(set.end(), prefix + "x"));
    EXPECT_EQ(1u, set.erase(prefix + "50"));
    EXPECT_EQ(0u, set.count(prefix + "50"));
    EXPECT_EQ(100u, set.size());
    set.clear();
    EXPECT_TRUE(set.empty());
}

TEST(SetStringKey, InsertsFindsAndErasesByView) {
    unordered_set_string_key<> us;
    exercise_set(us);
    set_string_key<> os;
    exercise_set(os);
    set_string_key<> s{"b", "a", "c", "a"};
    EXPECT_EQ(3u, s.size());
    EXPECT_EQ("a", *s.begin());
    EXPECT_EQ(s.find("b"), s.lower_bound("b"));
    EXPECT_EQ(s.find("c"), s.upper_bound("b"));
    const auto& cs = s;
    EXPECT_EQ(cs.find("b"), cs.lower_bound("az"));
    auto r = s.equal_range("c");
    EXPECT_EQ(1, std::distance(r.first, r.second));
}

TEST(Skvm, StoresKeyAndValueTogetherAndReplacesTheValue) {
    skvm s{"asdf", "jkl"};
    EXPECT_STREQ("asdf", s.data());
    EXPECT_EQ(4u, s.size());
    EXPECT_STREQ("jkl", s.get_value());
    EXPECT_EQ(s.end() + 1, s.get_value());  // one allocation: the value follows the key
    const char* key = s.data();
    s.replace_value("ab");  // shorter: in place
    EXPECT_STREQ("ab", s.get_value());
    s.replace_value(std::string(1000, 'z'));  // longer: the value moves, the key stays
    EXPECT_EQ(std::string(1000, 'z'), s.get_value());
    EXPECT_EQ(key, s.data());
    s.replace_value(std::string_view(s.get_value() + 10, 20));  // from a view of itself
    EXPECT_EQ(std::string(20, 'z'), s.get_value());
    skvm t(std::move(s));
    EXPECT_STREQ("asdf", t.data());
    EXPECT_TRUE(s.empty());
    static_assert(!std::is_copy_constructible<skvm>::value, "a copy would lose the value");
}

TEST(MapStringKv, BehavesAsPhotonsDoes) {
    const static char asdf[] = "asdf", jkl[] = "jkl";
    unordered_map_string_kv m;
    auto emr = m.emplace(asdf, jkl);
    EXPECT_TRUE(emr.second);
    EXPECT_NE(m.end(), emr.first);
    m.insert({{"zxcv", "nm,./"}, {"qwer", "tongyi"}, {"1234", "7890"}});
    EXPECT_EQ(4u, m.size());
    auto it = m.find("asdf");
    EXPECT_EQ(emr.first, it);
    EXPECT_EQ("jkl", it->second);
    m.erase(it);
    EXPECT_EQ(3u, m.size());
    for (auto& x : m) EXPECT_EQ(x.first.end() + 1, x.second.begin());
    m["qwer"] = "1111";
    EXPECT_EQ("1111", m["qwer"]);
    EXPECT_FALSE(m.emplace("qwer", "2222").second);  // emplace leaves an existing value
    EXPECT_EQ("1111", m["qwer"]);
    m.insert("two", "strings");
    EXPECT_EQ("strings", m.at("two"));
}

TEST(MapStringKv, AssignsThroughMutableValueAtOnce) {
    unordered_map_string_kv m;
    auto v = m["k"];  // absent: reading does not insert
    EXPECT_TRUE(v.empty());
    EXPECT_EQ(0u, m.size());
    v = "first";
    EXPECT_EQ(1u, m.size());  // stored at the assignment, not when v dies
    EXPECT_EQ("first", m["k"]);
    v = "a much longer second value";
    EXPECT_EQ("a much longer second value", m["k"]);
    EXPECT_EQ("a much longer second value", v);
    m["other"] = "x";
    m["k"] = m["other"];  // copies the value (Photon rebound the proxy and stored nothing)
    EXPECT_EQ("x", m["k"]);
    EXPECT_EQ("x", m["other"]);
    m["k"] = m["k"];
    EXPECT_EQ("x", m["k"]);
    auto w = m.at("other");
    w = "through at";
    EXPECT_EQ("through at", m["other"]);
    EXPECT_THROW(m.at("missing"), std::out_of_range);
    const auto& cm = m;
    EXPECT_EQ("", cm["missing"]);  // const: an empty view, no insertion
    EXPECT_THROW(cm.at("missing"), std::out_of_range);
    EXPECT_EQ(2u, m.size());
    std::string with_nul("a\0b", 3);
    m["nul"] = with_nul;
    EXPECT_EQ(with_nul, m["nul"]);
}

TEST(MapStringKv, AssignmentsThroughIteratorsPersistForEveryElement) {
    unordered_map_string_kv m;
    for (int i = 0; i < 50; i++) m[std::to_string(i)] = "old";
    for (auto& kv : m) kv.second = std::string(kv.first) + "-new-and-longer";
    for (auto it = m.begin(); it != m.end(); ++it)
        EXPECT_EQ(std::string(it->first) + "-new-and-longer", it->second);
    map_string_kv o;
    o["a"] = "1";
    o["b"] = "2";
    for (auto it = o.begin(); it != o.end(); it++) it->second = "z";
    EXPECT_EQ("z", o["a"]);
    EXPECT_EQ("z", o["b"]);
}

TEST(MapStringKv, CopiesAndMovesKeepEveryValue) {
    unordered_map_string_kv m{{"a", "1"}, {"b", std::string(500, 'b')}};
    m["a"] = std::string(300, 'a');  // a value moved to its own buffer
    unordered_map_string_kv copy{m};
    EXPECT_EQ(2u, copy.size());
    EXPECT_EQ(std::string(300, 'a'), copy["a"]);
    copy.clear();
    copy["2xxx"] = "2";
    copy = m;
    EXPECT_EQ(2u, copy.size());
    EXPECT_EQ(0u, copy.count("2xxx"));
    unordered_map_string_kv moved{std::move(copy)};
    EXPECT_EQ(std::string(500, 'b'), moved["b"]);
    copy = unordered_map_string_kv{m};
    EXPECT_EQ(2u, copy.size());
    m["a"] = "changed";
    EXPECT_EQ(std::string(300, 'a'), copy["a"]);  // deep copies
}

TEST(MapStringKv, OrderedAndCaseInsensitiveFlavours) {
    map_string_kv m{{"b", "2"}, {"a", "1"}, {"d", "4"}};
    std::string order;
    for (auto& kv : m) order += std::string(kv.first) + "=" + std::string(kv.second) + ";";
    EXPECT_EQ("a=1;b=2;d=4;", order);
    EXPECT_EQ("d", m.lower_bound("c")->first);
    EXPECT_EQ("d", m.upper_bound("b")->first);
    const auto& cm = m;
    EXPECT_EQ(cm.end(), cm.upper_bound("d"));
    EXPECT_EQ("b", cm.lower_bound("b")->first);
    auto r = cm.equal_range("b");
    EXPECT_EQ("2", r.first->second);
    map_string_kv::const_iterator ci = m.find("a");  // an iterator converts to const_iterator
    EXPECT_EQ("1", ci->second);
    EXPECT_EQ(m.find("a"), ci);
    EXPECT_EQ(m.end(), m.erase(m.find("d")));
    EXPECT_EQ(1u, m.erase("a"));
    EXPECT_EQ(1u, m.size());

    unordered_map_string_kv_case_insensitive ui;
    map_string_kv_case_insensitive oi;
    ui.emplace("asdf", "jkl;");
    oi.emplace("asdf", "jkl;");
    EXPECT_EQ("jkl;", ui.find("ASDF")->second);
    EXPECT_EQ("jkl;", oi.find("AsDf")->second);
    EXPECT_EQ(0u, ui.count("kuherqf"));
    EXPECT_EQ(0u, oi.count("kuherqf"));
}

TEST(MapStringKv, HandlesManyKeysAndRepeatedGrowth) {
    unordered_map_string_kv m;
    for (int i = 0; i < 20000; i++) m.emplace("key" + std::to_string(i), std::to_string(i));
    std::string grow;
    for (int i = 0; i < 200; i++) {
        grow += 'g';
        m["key7"] = grow;
    }
    EXPECT_EQ(grow, m["key7"]);
    for (int i = 0; i < 20000; i += 2) EXPECT_EQ(1u, m.erase("key" + std::to_string(i)));
    EXPECT_EQ(10000u, m.size());
    EXPECT_EQ("19999", m["key19999"]);
}

}  // namespace
