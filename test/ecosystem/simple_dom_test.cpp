// photon/ecosystem/simple_dom.h: JSON, XML, YAML and INI documents navigated by key, index and
// sibling; in-place parsing; ownership flags; malformed, hostile and large inputs.
#include <photon/ecosystem/simple_dom.h>

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace photon::SimpleDOM;

namespace {

// Skips the test when the format's backend was not built.
#define SKIP_UNLESS_BUILT(fmt, sample)                                                     \
    do {                                                                                   \
        std::string s_ = sample;                                                           \
        errno = 0;                                                                         \
        if (!parse_copy(s_.data(), s_.size(), fmt) && errno == ENOTSUP)                    \
            GTEST_SKIP() << "format " << fmt << " not built (its Debian package missing)"; \
    } while (0)

const char oss_listing[] = R"(
<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult category = "flowers">
  <Name>examplebucket</Name>
  <Prefix></Prefix>
  <Marker>test1.txt</Marker>
  <MaxKeys>2</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <NextMarker>test100.txt</NextMarker>
  <Contents>
    <Key>test10.txt</Key>
    <ETag>"C4CA4238A0B923820DCC509A6F75****"</ETag>
    <Size>1</Size>
    <Owner>
      <ID>1305433xxx</ID>
    </Owner>
  </Contents>
  <asdf>asdf</asdf>
  <Contents>
    <Key>test100.txt</Key>
    <Size>12345</Size>
  </Contents>
  <CommonPrefixes><Prefix>dir/</Prefix></CommonPrefixes>
</ListBucketResult>
)";

TEST(SimpleDomXml, ListingIsNavigatedByKeyAttributesAndSameKeySiblings) {
    SKIP_UNLESS_BUILT(DOC_XML, "<a/>\n");
    std::string text = oss_listing;
    auto doc = parse(&text[0], text.size(), DOC_XML);
    ASSERT_TRUE(doc);
    EXPECT_TRUE(doc.is_root());
    auto r = doc["ListBucketResult"];
    ASSERT_TRUE(r);
    EXPECT_EQ(r.type(), Node::TYPE::OBJECT);
    auto attr = r.get_attributes();
    EXPECT_EQ(attr.num_children(), 1u);
    EXPECT_EQ(attr["category"], "flowers");
    EXPECT_EQ(r["Name"], "examplebucket");
    EXPECT_EQ(r["MaxKeys"].to_int64_t(), 2);
    EXPECT_TRUE(r["Prefix"]);
    EXPECT_EQ(r["Prefix"].value(), "");
    EXPECT_EQ(r["NextMarker"].to_string_view(), "test100.txt");
    EXPECT_FALSE(r["NoSuchKey"]);
    std::vector<std::pair<std::string, int64_t>> got;
    for (auto c : r.enumerable_children("Contents"))
        got.emplace_back(std::string(c["Key"].value()), c["Size"].to_int64_t());
    std::vector<std::pair<std::string, int64_t>> want = {{"test10.txt", 1}, {"test100.txt", 12345}};
    EXPECT_EQ(got, want);
    EXPECT_EQ(r["Contents"]["ETag"], "\"C4CA4238A0B923820DCC509A6F75****\"");
    EXPECT_EQ(r["Contents"]["Owner"]["ID"], "1305433xxx");
    EXPECT_EQ(r["CommonPrefixes"]["Prefix"], "dir/");
    // Children in document order, by index and by next().
    std::vector<std::string> keys;
    for (auto c = r.get(size_t(0)); c; c = c.next()) keys.emplace_back(c.key());
    std::vector<std::string> want_keys = {"Name",        "Prefix",        "Marker",   "MaxKeys",
                                          "IsTruncated", "NextMarker",    "Contents", "asdf",
                                          "Contents",    "CommonPrefixes"};
    EXPECT_EQ(keys, want_keys);
    ASSERT_EQ(r.num_children(), want_keys.size());
    for (size_t i = 0; i < r.num_children(); ++i) EXPECT_EQ(r[i].key(), want_keys[i]);
    EXPECT_FALSE(r[r.num_children()]);
    size_t n = 0;
    for (auto c : r.enumerable_children()) n += c.valid();
    EXPECT_EQ(n, want_keys.size());
}

TEST(SimpleDomXml, EntitiesAreDecodedAndTextWithoutTrailingWhitespaceIsCopied) {
    SKIP_UNLESS_BUILT(DOC_XML, "<a/>\n");
    std::string text = "<a x='1 &amp; 2'><b>&lt;tag&gt;</b><c/></a>";  // no trailing byte
    std::string before = text;
    auto doc = parse(&text[0], text.size(), DOC_XML);
    ASSERT_TRUE(doc);
    EXPECT_EQ(text, before);  // parsed from a copy
    EXPECT_EQ(doc["a"]["b"], "<tag>");
    EXPECT_EQ(doc["a"].get_attributes()["x"], "1 & 2");
    EXPECT_TRUE(doc["a"]["c"]);
    EXPECT_FALSE(doc["a"]["__attributes__"]["y"]);
}

TEST(SimpleDomXml, MalformedTextFailsWithEinval) {
    SKIP_UNLESS_BUILT(DOC_XML, "<a/>\n");
    for (std::string s : std::vector<std::string>{
             "xml1", "<<xml2>>", "4<xml>", "<a>", "<a></b>", "<a><b></a>\n", "<a x='1></a>", "  \n",
             "<!-- only a comment -->\n", std::string("<a>\0</a>\n", 9), "<a>&#xFFFFFFFFFF;</a>"}) {
        errno = 0;
        auto doc = parse_copy(s.data(), s.size(), DOC_XML);
        EXPECT_FALSE(doc) << s;
        if (!doc) {
            EXPECT_EQ(errno, EINVAL) << s;
        }
    }
}

TEST(SimpleDomXml, DeepNestingFailsWithE2bigInsteadOfOverflowingTheStack) {
    SKIP_UNLESS_BUILT(DOC_XML, "<a/>\n");
    std::string s;
    for (int i = 0; i < 100000; ++i) s += "<a>";
    for (int i = 0; i < 100000; ++i) s += "</a>";
    errno = 0;
    EXPECT_FALSE(parse_copy(s.data(), s.size(), DOC_XML));
    EXPECT_EQ(errno, E2BIG);
    std::string ok;  // 100 levels are fine
    for (int i = 0; i < 100; ++i) ok += "<a x='>'>";
    for (int i = 0; i < 100; ++i) ok += "</a>";
    auto doc = parse_copy(ok.data(), ok.size(), DOC_XML);
    ASSERT_TRUE(doc);
    auto n = doc["a"];
    int depth = 0;
    while (n["a"]) n = n["a"], ++depth;
    EXPECT_EQ(depth, 99);
}

const char json0[] = R"({
    "hello": "world",
    "t": true ,
    "f": false,
    "n": null,
    "i": -123,
    "pi": 3.1416,
    "a": [1, 2, 3, 4],   // comments and trailing commas are accepted
    "o": {"x": {"y": "z"}, "e": "a\"b\\c\u00e9\n"},
})";

TEST(SimpleDomJson, ValuesTypesAndArraysAreRead) {
    SKIP_UNLESS_BUILT(DOC_JSON, "{}");
    std::string text = json0;
    auto doc = parse(&text[0], text.size(), DOC_JSON);
    ASSERT_TRUE(doc);
    using T = Node::TYPE;
    EXPECT_EQ(doc.type(), T::OBJECT);
    EXPECT_EQ(doc["hello"], "world");
    EXPECT_EQ(doc["t"], "true");
    EXPECT_TRUE(doc["t"].to_bool());
    EXPECT_FALSE(doc["f"].to_bool());
    EXPECT_EQ(doc["i"], "-123");
    EXPECT_EQ(doc["i"].to_int64_t(), -123);
    EXPECT_NEAR(doc["pi"].to_double(), 3.1416, 1e-9);
    EXPECT_EQ(doc["hello"].type(), T::STRING);
    EXPECT_EQ(doc["t"].type(), T::BOOLEAN);
    EXPECT_EQ(doc["f"].type(), T::BOOLEAN);
    EXPECT_EQ(doc["n"].type(), T::null);
    EXPECT_EQ(doc["i"].type(), T::NUMBER);
    EXPECT_EQ(doc["pi"].type(), T::NUMBER);
    EXPECT_EQ(doc["a"].type(), T::ARRAY);
    auto a = doc["a"];
    ASSERT_EQ(a.num_children(), 4u);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(a[i].to_int64_t(), i + 1);
    EXPECT_FALSE(a["0"]);  // arrays have no keys
    EXPECT_EQ(doc["o"]["x"]["y"], "z");
    EXPECT_EQ(doc["o"]["e"], "a\"b\\c\xc3\xa9\n");
    EXPECT_EQ(doc.num_children(), 8u);
}

TEST(SimpleDomJson, StringsAreParsedInPlace) {
    SKIP_UNLESS_BUILT(DOC_JSON, "{}");
    std::string text = R"({"key": "a\tb", "k2": "plain"})";
    auto doc = parse(&text[0], text.size(), DOC_JSON);
    ASSERT_TRUE(doc);
    for (auto v : {doc["key"].value(), doc["k2"].value(), doc["k2"].key()}) {
        EXPECT_GE(v.data(), text.data());
        EXPECT_LE(v.data() + v.size(), text.data() + text.size());
    }
    EXPECT_EQ(doc["key"], "a\tb");
}

TEST(SimpleDomJson, TrailingBytesUnbalancedBracesAndNulBytesFail) {
    SKIP_UNLESS_BUILT(DOC_JSON, "{}");
    std::vector<std::pair<std::string, bool>> cases = {
        {R"({"a":"b"}})", false},
        {R"({"a":"b")", false},
        {"{\"a\":\"b\"} \t  \n", true},
        {std::string("{\"a\":\0\"b\"}", 10), false},
        {std::string("{\"a\":\"b\"}\0", 10), false},
        {"json1", false},
        {"33{{json22}}22", false},
        {"{3{json}}", false},
        {"{\"a\": \"unterminated", false},
        {"{\"a\": \"\\u12\"}", false},
        {"[1, 2", false},
        {"[1, 2]", true},
        {"\"top-level string\"", true},
    };
    for (auto& c : cases) {
        errno = 0;
        auto doc = parse_copy(c.first.data(), c.first.size(), DOC_JSON);
        EXPECT_EQ(!!doc, c.second) << c.first;
        if (!c.second) {
            EXPECT_EQ(errno, EINVAL) << c.first;
        }
    }
    auto s = parse_copy("\"top\"", 5, DOC_JSON);
    EXPECT_EQ(s.value(), "top");
}

TEST(SimpleDomJson, DeepNestingFailsWithE2big) {
    SKIP_UNLESS_BUILT(DOC_JSON, "{}");
    std::string s(200000, '[');
    s += std::string(200000, ']');
    errno = 0;
    EXPECT_FALSE(parse_copy(s.data(), s.size(), DOC_JSON));
    EXPECT_EQ(errno, E2BIG);
}

TEST(SimpleDomJson, SameKeysAreAdjacentToGetAndEnumerateInDocumentOrder) {
    SKIP_UNLESS_BUILT(DOC_JSON, "{}");
    std::string text = R"({"k": 1, "z": 0, "k": 2, "a": 9, "k": 3})";
    auto doc = parse(&text[0], text.size(), DOC_JSON);
    ASSERT_TRUE(doc);
    EXPECT_EQ(doc["k"].to_int64_t(), 1);
    std::vector<int64_t> ks;
    for (auto k : doc.enumerable_children("k")) ks.push_back(k.to_int64_t());
    EXPECT_EQ(ks, (std::vector<int64_t>{1, 2, 3}));
    std::vector<int64_t> zs;
    for (auto z : doc.enumerable_children("z")) zs.push_back(z.to_int64_t());
    EXPECT_EQ(zs, std::vector<int64_t>{0});
    size_t none = 0;
    for (auto x : doc.enumerable_children("missing")) none += x.valid();
    EXPECT_EQ(none, 0u);
}

TEST(SimpleDomJson, AChildKeepsTheDocumentAliveAfterTheRootIsGone) {
    SKIP_UNLESS_BUILT(DOC_JSON, "{}");
    Node leaf;
    {
        auto doc = parse_copy(json0, sizeof(json0) - 1, DOC_JSON);
        ASSERT_TRUE(doc);
        leaf = doc["o"]["x"]["y"];
        Node copy = doc;
        copy = leaf;  // reassignment moves the reference, the document stays
    }
    EXPECT_EQ(leaf, "z");
    EXPECT_EQ(leaf.get_root()["hello"], "world");
    Node moved = std::move(leaf);
    EXPECT_FALSE(leaf);
    EXPECT_EQ(moved, "z");
}

TEST(SimpleDomYaml, FlowAndBlockDocumentsAreRead) {
    SKIP_UNLESS_BUILT(DOC_YAML, "a: 1");
    std::string y0 = "{foo: 1, bar: [2, 3], john: doe}";
    auto doc = parse(&y0[0], y0.size(), DOC_YAML);
    ASSERT_TRUE(doc);
    EXPECT_EQ(doc["foo"], "1");
    EXPECT_EQ(doc["john"], "doe");
    EXPECT_EQ(doc["bar"].type(), Node::TYPE::ARRAY);
    EXPECT_EQ(doc["bar"][0], "2");
    EXPECT_EQ(doc["bar"][1], "3");
    std::string y1 = R"(
foo: says who
bar:
- 20
- 30
- oh so nice
john: in_scope
float: 2.4
digits: 2.400000
nothing: ~
newseq: []
newmap: {}
nested:
  deeper:
    key: "quoted: value"
I am something: indeed
)";
    doc = parse(&y1[0], y1.size(), DOC_YAML);
    ASSERT_TRUE(doc);
    EXPECT_EQ(doc["foo"], "says who");
    EXPECT_EQ(doc["john"], "in_scope");
    EXPECT_EQ(doc["float"].to_double(), 2.4);
    EXPECT_EQ(doc["digits"], "2.400000");
    EXPECT_EQ(doc["I am something"], "indeed");
    EXPECT_EQ(doc["nothing"].type(), Node::TYPE::null);
    EXPECT_EQ(doc["newseq"].num_children(), 0u);
    EXPECT_EQ(doc["newmap"].type(), Node::TYPE::OBJECT);
    EXPECT_EQ(doc["nested"]["deeper"]["key"], "quoted: value");
    ASSERT_EQ(doc["bar"].num_children(), 3u);
    EXPECT_EQ(doc["bar"][2], "oh so nice");
}

TEST(SimpleDomYaml, MalformedAndSelfReferentialDocumentsFail) {
    SKIP_UNLESS_BUILT(DOC_YAML, "a: 1");
    for (std::string s : {"[1,2,3,4,5", "{{a:1,b:}", "{yaml3}}", "a: [1, 2\nb: 3", "\"open"}) {
        errno = 0;
        EXPECT_FALSE(parse_copy(s.data(), s.size(), DOC_YAML)) << s;
        EXPECT_EQ(errno, EINVAL) << s;
    }
    // An alias inside its own anchor is a cycle; nested aliases expand exponentially.
    std::string cycle = "&a [*a]";
    errno = 0;
    EXPECT_FALSE(parse_copy(cycle.data(), cycle.size(), DOC_YAML));
    std::string laughs = "a: &a [x,x,x,x,x,x,x,x,x,x]\n";
    for (char c = 'b'; c <= 'j'; ++c) {
        laughs += std::string(1, c) + ": &" + c + " [";
        for (int i = 0; i < 10; ++i) laughs += std::string(i ? ",*" : "*") + char(c - 1);
        laughs += "]\n";
    }
    errno = 0;
    EXPECT_FALSE(parse_copy(laughs.data(), laughs.size(), DOC_YAML));
    EXPECT_EQ(errno, E2BIG);
    std::string alias = "a: &x {k: v}\nb: *x\n";  // an ordinary alias is fine
    auto doc = parse_copy(alias.data(), alias.size(), DOC_YAML);
    ASSERT_TRUE(doc);
    EXPECT_EQ(doc["b"]["k"], "v");
}

char example_ini[] = R"(
[protocol]               ; Protocol configuration
version=6                ; IPv6

[user]
name = Bob Smith         ; Spaces around '=' are stripped
email = bob@smith.com    ; And comments (like this) ignored
trillion = 1000000000000 ; Test 64-bit integers

[protocol]               ; merged with the first
  ver  =   4                ; IPv4

[comment_test]
test1 = 1;2;3 ; only this will be a comment
test2 = 2;3;4;not a comment, needs whitespace before ';'
test;3 = 345 ; key should be "test;3"
#test5 = 567 ; entire line commented
test8 =; not a comment

[colon_tests]
Content-Type: text/html
funny1 : with = equals
funny2 = with : colons
)";

TEST(SimpleDomIni, SectionsMergeAndCommentsAndSeparatorsFollowPhotonsRules) {
    std::string text = example_ini;
    auto doc = parse(&text[0], text.size(), DOC_INI);
    ASSERT_TRUE(doc);
    EXPECT_EQ(doc.num_children(), 4u);
    EXPECT_EQ(doc["protocol"]["version"], "6");
    EXPECT_EQ(doc["protocol"]["ver"], "4");
    EXPECT_EQ(doc["user"]["name"], "Bob Smith");
    EXPECT_EQ(doc["user"]["email"], "bob@smith.com");
    EXPECT_EQ(doc["user"]["trillion"].to_int64_t(), 1000000000000);
    EXPECT_EQ(doc["comment_test"]["test1"], "1;2;3");
    EXPECT_EQ(doc["comment_test"]["test2"], "2;3;4;not a comment, needs whitespace before ';'");
    EXPECT_EQ(doc["comment_test"]["test;3"], "345");
    EXPECT_FALSE(doc["comment_test"]["#test5"]);
    EXPECT_EQ(doc["comment_test"]["test8"], "; not a comment");
    EXPECT_EQ(doc["colon_tests"]["Content-Type"], "text/html");
    EXPECT_EQ(doc["colon_tests"]["funny1"], "with = equals");
    EXPECT_EQ(doc["colon_tests"]["funny2"], "with : colons");
    for (std::string s : {"ini1:", ":ini2", "ini3", "[open"}) {
        EXPECT_FALSE(parse_copy(s.data(), s.size(), DOC_INI)) << s;
    }
}

TEST(SimpleDom, BadArgumentsAndOwnershipFlags) {
    errno = 0;
    EXPECT_FALSE(parse(nullptr, 0, DOC_JSON));
    EXPECT_EQ(errno, EINVAL);
    char c = '{';
    errno = 0;
    EXPECT_FALSE(parse(&c, 1, 0x42));  // no such format
    EXPECT_EQ(errno, EINVAL);
    // On failure with DOC_FREE_TEXT_IF_PARSING_FAILED the text is freed (ASan reports a leak
    // otherwise); on success with DOC_OWN_TEXT, with the document.
    auto bad = strdup("[1,");
    EXPECT_FALSE(parse(bad, 3, DOC_INI | DOC_FREE_TEXT_IF_PARSING_FAILED));
    auto good = strdup("[s]\nk=v\n");
    auto doc = parse(good, strlen(good), DOC_INI | DOC_OWN_TEXT);
    ASSERT_TRUE(doc);
    EXPECT_EQ(doc["s"]["k"], "v");
    EXPECT_EQ(doc.text_begin(), good);
    // A null Node answers everything with nothing.
    Node none;
    EXPECT_FALSE(none["x"][3].next());
    EXPECT_EQ(none.value(), "");
    EXPECT_EQ(none.num_children(), 0u);
    EXPECT_EQ(none.to_int64_t(7), 7);
}

TEST(SimpleDom, ParseFileReadsLocalFilesAndFailsOnMissingOnes) {
    char path[] = "/tmp/simple_dom_test_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    std::string body = "[a]\nb = c\n";
    ASSERT_EQ(write(fd, body.data(), body.size()), (ssize_t)body.size());
    close(fd);
    auto doc = parse_file(path, DOC_INI);
    unlink(path);
    ASSERT_TRUE(doc);
    EXPECT_EQ(doc["a"]["b"], "c");
    errno = 0;
    EXPECT_FALSE(parse_file("/nonexistent/simple_dom.json", DOC_JSON));
    EXPECT_EQ(errno, ENOENT);
}

TEST(SimpleDom, LargeDocumentsInEveryFormat) {
    const int N = 100000;
    std::string json = "{\"items\": [";
    std::string xml = "<list>";
    std::string yaml = "items:\n";
    for (int i = 0; i < N; ++i) {
        auto k = std::to_string(i);
        json += (i ? "," : "") + std::string("{\"id\":") + k + ",\"name\":\"n" + k + "\"}";
        xml += "<item id='" + k + "'><name>n" + k + "</name></item>";
        if (i < N / 5) yaml += "  - {id: " + k + ", name: n" + k + "}\n";
    }
    json += "]}";
    xml += "</list>\n";
    struct Case {
        int fmt;
        std::string* text;
        int n;
    } cases[] = {{DOC_JSON, &json, N}, {DOC_XML, &xml, N}, {DOC_YAML, &yaml, N / 5}};
    for (auto& c : cases) {
        errno = 0;
        auto doc = parse(&(*c.text)[0], c.text->size(), c.fmt);
        if (!doc && errno == ENOTSUP) continue;
        ASSERT_TRUE(doc) << c.fmt;
        auto list = c.fmt == DOC_XML ? doc["list"] : doc["items"];
        ASSERT_EQ(list.num_children(), (size_t)c.n) << c.fmt;
        int64_t sum = 0, i = 0;
        for (auto item : list.enumerable_children()) {
            auto id = c.fmt == DOC_XML ? item.get_attributes()["id"] : item["id"];
            sum += id.to_int64_t();
            if (i % 997 == 0) {
                EXPECT_EQ(item["name"].value(), "n" + std::to_string(i));
            }
            ++i;
        }
        EXPECT_EQ(sum, (int64_t)c.n * (c.n - 1) / 2) << c.fmt;
    }
}

// Random damage to valid documents: every result is a document or an error, never a crash.
TEST(SimpleDom, DamagedDocumentsParseOrFailCleanly) {
    std::string seeds[] = {json0, oss_listing, "a: [1, {b: c}]\nd: &x e\nf: *x\n", example_ini};
    int fmts[] = {DOC_JSON, DOC_XML, DOC_YAML, DOC_INI};
    std::mt19937 rng(33);
    const char junk[] = "{}[]<>/\"'&;:=,-?!*\\\n \0x";
    for (int round = 0; round < 3000; ++round) {
        int f = round % 4;
        std::string s = seeds[f];
        int edits = 1 + rng() % 4;
        for (int e = 0; e < edits && !s.empty(); ++e) {
            size_t pos = rng() % s.size();
            switch (rng() % 3) {
                case 0:
                    s[pos] = junk[rng() % (sizeof(junk) - 1)];
                    break;
                case 1:
                    s.erase(pos, 1 + rng() % 8);
                    break;
                default:
                    s.resize(pos);
                    break;
            }
        }
        if (s.empty()) continue;
        auto doc = parse_copy(s.data(), s.size(), fmts[f]);
        if (doc) {  // walk it all
            size_t seen = 0;
            std::vector<Node> stack{doc};
            while (!stack.empty() && seen < 100000) {
                auto n = stack.back();
                stack.pop_back();
                ++seen;
                (void)n.key(), (void)n.value(), (void)n.get(n.key());
                for (auto c = n.get(size_t(0)); c; c = c.next()) stack.push_back(c);
                if (auto a = n.get_attributes()) stack.push_back(a);
            }
            EXPECT_GT(seen, 0u);
        }
    }
}

}  // namespace
