// The document every SimpleDOM backend produces, and the builder they feed: a backend reports
// leaves and containers in document order (open ... close), the builder lays each container's
// children out adjacently in one array and indexes object members by key.
#pragma once
#include <photon/ecosystem/simple_dom.h>

#include <memory>
#include <vector>

namespace photon {
namespace SimpleDOM {
namespace detail {

// Limits that keep a hostile document from exhausting the stack or memory.
const size_t MAX_DEPTH = 512;
const size_t MAX_NODES = UINT32_MAX / 2;

class Document : public DocBase {
public:
    std::vector<NodeImpl> nodes;  // nodes[0] is the root
    std::vector<uint32_t> index;  // per object: child positions sorted by (key, position)
    std::vector<std::unique_ptr<char[]>> arena;  // copies of keys and values
    std::unique_ptr<char[]> text_copy;           // a terminated copy of the text, if made
    char* owned_text = nullptr;                  // free()d with the document
    ~Document() override { free(owned_text); }

    // A copy of s that lives as long as the document.
    str copy(const char* s, size_t n);

private:
    char* arena_next_ = nullptr;
    size_t arena_left_ = 0;
};

class builder {
public:
    // At most max_nodes nodes (a bound on what aliases may expand to).
    explicit builder(Document* doc, size_t max_nodes = MAX_NODES);
    // A leaf (string, number ...) in the container open now, or the root if none is.
    void leaf(str key, str value, uint8_t type);
    // A container; what follows until close() are its children.
    void open(str key, str value, uint8_t type);
    // Ends the innermost container; its children are indexed by key when `indexed`.
    void close(bool indexed);
    // Starts the attributes of the innermost container (XML): leaves until close_attributes().
    void open_attributes();
    void close_attributes();
    size_t depth() const { return depth_; }
    // Whether the limits were passed (then the result is incomplete: fail with E2BIG).
    bool too_big() const { return too_big_; }
    // Lays the root out; returns it (owned by the document), nullptr if nothing was built.
    const NodeImpl* finish();

private:
    NodeImpl make(str key, str value, uint8_t type);
    void add(NodeImpl&& n);
    void flush_level(NodeImpl& parent, bool indexed);

    Document* doc_;
    // levels_[0] holds the top-level values; levels_[d] the children of the container opened at
    // depth d (the last node of levels_[d - 1]). Vectors are reused, not freed, between levels.
    std::vector<std::vector<NodeImpl>> levels_;
    size_t depth_ = 0;
    size_t max_nodes_;
    size_t count_ = 0;
    bool too_big_ = false;
};

// The backends: each returns the root (in doc) or nullptr with errno set.
const NodeImpl* parse_json(Document* doc, char* text, size_t size);
const NodeImpl* parse_xml(Document* doc, char* text, size_t size);
const NodeImpl* parse_yaml(Document* doc, char* text, size_t size);
const NodeImpl* parse_ini(Document* doc, char* text, size_t size);

}  // namespace detail
}  // namespace SimpleDOM
}  // namespace photon
