// photon/common/generator.h: both ways to define a generator yield exactly
// their elements (Photon's yielded one past the end), empty ones yield none,
// and iterators compare by position.
#include <photon/common/generator.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

class upto : public Generator<upto, int> {
public:
    int n;
    explicit upto(int n) : n(n) {}
    bool has_next(const Iterator* it) const { return it->i < n; }
    void next(Iterator*) const {}
    int get(const Iterator* it) const { return it->i * 10; }
};

class words;
struct cursor {
    size_t pos = 0, len = 0;
    cursor(const words* w);
    cursor() {}
};

// The words of a string, by payload.
class words : public Generator<words, std::string, cursor> {
public:
    std::string text;
    explicit words(std::string t) : text(std::move(t)) {}
    size_t word_end(size_t from) const {
        auto e = text.find(' ', from);
        return e == std::string::npos ? text.size() : e;
    }
    size_t skip_spaces(size_t from) const {
        while (from < text.size() && text[from] == ' ') from++;
        return from;
    }
    bool payload_has_next(const cursor& c) const { return c.pos < text.size(); }
    void payload_next(cursor& c) const {
        c.pos = skip_spaces(c.pos + c.len);
        c.len = word_end(c.pos) - c.pos;
    }
    std::string payload_get(const cursor& c) const { return text.substr(c.pos, c.len); }
};

cursor::cursor(const words* w) : pos(w->skip_spaces(0)), len(w->word_end(pos) - pos) {}

TEST(Generator, TheCounterFormYieldsExactlyItsElements) {
    std::vector<int> got;
    for (int x : upto(4)) got.push_back(x);
    EXPECT_EQ((std::vector<int>{0, 10, 20, 30}), got);
    got.clear();
    for (int x : upto(0)) got.push_back(x);
    EXPECT_TRUE(got.empty());
    got.clear();
    for (int x : upto(1)) got.push_back(x);
    EXPECT_EQ((std::vector<int>{0}), got);
}

TEST(Generator, ThePayloadFormYieldsExactlyItsElements) {
    std::vector<std::string> got;
    for (auto w : words("  the quick  brown fox ")) got.push_back(w);
    EXPECT_EQ((std::vector<std::string>{"the", "quick", "brown", "fox"}), got);
    got.clear();
    for (auto w : words("   ")) got.push_back(w);
    EXPECT_TRUE(got.empty());
}

TEST(Generator, IteratorsCompareByPosition) {
    upto g(3);
    auto a = g.begin(), b = g.begin();
    EXPECT_TRUE(a == b);
    ++a;
    EXPECT_TRUE(a != b);
    b++;
    EXPECT_TRUE(a == b);
    EXPECT_EQ(10, *a);
    ++a;
    ++a;
    EXPECT_TRUE(a == g.end());
    EXPECT_TRUE(g.end() == upto(0).begin());
}

TEST(Generator, PhotonsExampleRuns) { ___example_of_generator____(); }

}  // namespace
