// libFuzzer target: SimpleDOM's parsers (common/simple_dom/*.cpp) on hostile text.
// Input: a byte choosing the format (JSON, XML, YAML, INI: its value mod 4), then the text.
// The text is parsed from a malloc()ed buffer of exactly its size (so reads past the end are
// caught), with and without the text being handed over. A document that parses is walked
// whole: every key, value, lookup by key and attribute node is touched; a node's children
// must number what num_children() says, and get(key) must find a child with that key.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <photon/ecosystem/simple_dom.h>

using namespace photon::SimpleDOM;

namespace {

void check(bool ok) {
    if (!ok) abort();
}

void walk(Node doc) {
    std::vector<Node> stack{doc};
    size_t budget = 1 << 20;
    while (!stack.empty() && budget--) {
        Node n = stack.back();
        stack.pop_back();
        auto k = n.key();
        auto v = n.value();
        volatile char sink = 0;
        for (char c : k) sink ^= c;
        for (char c : v) sink ^= c;
        (void)sink;  // read too: clang 14 takes a volatile only written as unused
        size_t count = 0;
        for (auto c = n.get(size_t(0)); c; c = c.next()) {
            ++count;
            auto found = n.get(c.key());
            if (n.type() == Node::TYPE::OBJECT) check(found && found.key() == c.key());
            stack.push_back(c);
        }
        check(count == n.num_children());
        if (auto a = n.get_attributes()) stack.push_back(a);
        (void)n.to_int64_t(), (void)n.to_double(), (void)n.to_bool();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    int fmt = data[0] % 4;
    size_t n = size - 1;
    char* text = (char*)malloc(n);
    memcpy(text, data + 1, n);
    auto doc = parse(text, n, fmt | DOC_OWN_TEXT);
    if (doc) walk(doc);
    doc = Node();
    char* kept = (char*)malloc(n);  // not handed over: parse must not free it
    memcpy(kept, data + 1, n);
    auto again = parse(kept, n, fmt);
    if (again) walk(again);
    again = Node();
    free(kept);
    return 0;
}
