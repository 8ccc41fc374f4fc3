// SimpleDOM: a read-only document object model over JSON, XML, YAML and INI text, with
// PhotonLibOS's names (photon::SimpleDOM::parse, Node, DOC_JSON ...). A document is parsed
// once into a flat array of nodes whose keys and values are views into the text (parsed in
// place where the backend allows: JSON always, XML when the text ends in a whitespace byte;
// YAML values are copied). Nodes are small handles that keep the whole document alive by a
// reference count.
//
// Any thread may parse; one document may be read from several threads at once (handles count
// references atomically). Nothing here yields. Parsing fails (a null Node, errno set) on
// malformed input, never crashes: EINVAL for malformed text, ENOTSUP for a format whose
// backend was not built (doc/simple_dom.md), E2BIG past the nesting or node-count limits.
//
// Differences from PhotonLibOS: doc/compat.md#ecosystemsimple_domh
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include <photon/common/enumerable.h>
#include <photon/common/estring.h>
#include <photon/common/stream.h>

namespace photon {

namespace fs {
class IFileSystem;
class IFile;
}  // namespace fs

namespace SimpleDOM {

using str = estring_view;

class NodeImpl;

namespace detail {
// What every node reaches through its root: the reference count and the text's base.
struct DocBase {
    mutable std::atomic<uint32_t> refs{0};
    const char* text = nullptr;
    virtual ~DocBase() = default;
};
class builder;
}  // namespace detail

// One node of a parsed document. Nodes are laid out in one array per document; the children
// of a node are adjacent, so next_sibling() is the next element.
class NodeImpl {
public:
    enum TYPE : uint8_t { STRING, NUMBER, null, BOOLEAN, OBJECT, ARRAY };

    size_t num_children() const { return nchildren_; }
    // The i-th child (array element or object member in document order), or nullptr.
    const NodeImpl* get(size_t i) const { return i < nchildren_ ? root_ + first_ + i : nullptr; }
    // The first child (in document order) named `key`, or nullptr. Arrays have no keys; an XML
    // element's attributes are the child "__attributes__".
    const NodeImpl* get(str key) const;
    bool is_root() const { return flags_ & FLAG_ROOT; }
    uint8_t get_type() const { return type_; }
    const NodeImpl* get_root() const { return root_; }
    str get_key() const { return is_root() ? str() : str(key_, klen_); }
    str get_value() const { return {value_, vlen_}; }
    // Photon's base-relative forms; our keys and values are absolute, the base is unused.
    str get_key(const char*) const { return get_key(); }
    str get_value(const char*) const { return get_value(); }
    bool has_next_sibling() const { return !(flags_ & FLAG_LAST); }
    const NodeImpl* next_sibling() const { return has_next_sibling() ? this + 1 : nullptr; }
    // Whether no later sibling has the same key.
    bool is_last_of_key() const { return flags_ & FLAG_EQUAL_KEY_LAST; }
    const char* text_begin() const { return root_->doc_->text; }

    void add_doc_ref() const { root_->doc_->refs.fetch_add(1, std::memory_order_relaxed); }
    void del_doc_ref() const {
        auto doc = root_->doc_;
        if (doc->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete doc;
    }

private:
    friend class detail::builder;
    static const uint8_t FLAG_ROOT = 1;
    static const uint8_t FLAG_LAST = 2;
    static const uint8_t FLAG_EQUAL_KEY_LAST = 4;
    static const uint8_t FLAG_INDEXED = 8;  // children are indexed by key

    union {
        const char* key_ = nullptr;   // non-root nodes
        const detail::DocBase* doc_;  // the root node
    };
    const char* value_ = nullptr;
    const NodeImpl* root_ = nullptr;  // nodes[0] of this document's array
    uint32_t klen_ = 0, vlen_ = 0;
    uint32_t nchildren_ = 0;
    uint32_t first_ = 0;      // index of the first child in the array
    uint32_t attrs_ = 0;      // index of the XML attributes node, 0 if none
    uint32_t index_off_ = 0;  // where the sorted-by-key child positions start (objects)
    uint8_t type_ = STRING;
    uint8_t flags_ = 0;
};

// A handle on a node; copies share the document, which is freed with the last handle.
class Node {
    const NodeImpl* _impl = nullptr;

public:
    using TYPE = NodeImpl::TYPE;
    Node() = default;
    Node(const NodeImpl* node) : _impl(node) {
        if (_impl) _impl->add_doc_ref();
    }
    Node(const Node& rhs) : Node(rhs._impl) {}
    Node(Node&& rhs) noexcept : _impl(rhs._impl) { rhs._impl = nullptr; }
    Node& operator=(const Node& rhs) {
        if (rhs._impl) rhs._impl->add_doc_ref();
        if (_impl) _impl->del_doc_ref();
        _impl = rhs._impl;
        return *this;
    }
    Node& operator=(Node&& rhs) noexcept {
        if (this != &rhs) {
            if (_impl) _impl->del_doc_ref();
            _impl = rhs._impl;
            rhs._impl = nullptr;
        }
        return *this;
    }
    ~Node() {
        if (_impl) _impl->del_doc_ref();
    }

    Node next() const { return _impl ? _impl->next_sibling() : nullptr; }
    bool is_root() const { return _impl && _impl->is_root(); }
    Node get_root() const { return root_impl(); }
    const NodeImpl* root_impl() const { return _impl ? _impl->get_root() : nullptr; }
    str key() const { return _impl ? _impl->get_key() : str(); }
    str value() const { return _impl ? _impl->get_value() : str(); }
    const char* text_begin() const { return _impl ? _impl->text_begin() : nullptr; }
    str key(const char* b) const { return _impl ? _impl->get_key(b) : str(); }
    str value(const char* b) const { return _impl ? _impl->get_value(b) : str(); }
    uint8_t type() const { return _impl ? _impl->get_type() : 0; }
    uint8_t get_type() const { return type(); }
    bool valid() const { return _impl; }
    operator bool() const { return _impl; }
    size_t num_children() const { return _impl ? _impl->num_children() : 0; }
    Node get(size_t i) const { return _impl ? _impl->get(i) : nullptr; }
    Node get(str key) const { return _impl ? _impl->get(key) : nullptr; }
    Node operator[](str key) const { return get(key); }
    Node operator[](const char* key) const { return get(str(key)); }
    Node operator[](size_t i) const { return get(i); }
    Node operator[](int i) const { return i < 0 ? Node() : get((size_t)i); }  // node[0]
    Node get_attributes() const { return get(str("__attributes__")); }
    str to_string_view() const { return value(); }
    int64_t to_int64_t(int64_t def_val = 0) const { return value().to_int64(def_val); }
    double to_double(double def_val = NAN) const { return value().to_double(def_val); }
    // True when the value starts with 't' or 'T' (Photon's reading of a BOOLEAN).
    bool to_bool() const {
        auto v = value();
        return !v.empty() && (v[0] == 't' || v[0] == 'T');
    }

    bool operator==(str rhs) const { return value() == rhs; }
    bool operator!=(str rhs) const { return value() != rhs; }
    bool operator<=(str rhs) const { return value() <= rhs; }
    bool operator<(str rhs) const { return value() < rhs; }
    bool operator>=(str rhs) const { return value() >= rhs; }
    bool operator>(str rhs) const { return value() > rhs; }
    bool operator==(const char* rhs) const { return value() == str(rhs); }
    bool operator!=(const char* rhs) const { return value() != str(rhs); }

    bool operator==(int64_t rhs) const { return to_int64_t() == rhs; }
    bool operator!=(int64_t rhs) const { return to_int64_t() != rhs; }
    bool operator<=(int64_t rhs) const { return to_int64_t() <= rhs; }
    bool operator<(int64_t rhs) const { return to_int64_t() < rhs; }
    bool operator>=(int64_t rhs) const { return to_int64_t() >= rhs; }
    bool operator>(int64_t rhs) const { return to_int64_t() > rhs; }

    bool operator==(double rhs) const { return to_double() == rhs; }
    bool operator!=(double rhs) const { return to_double() != rhs; }
    bool operator<=(double rhs) const { return to_double() <= rhs; }
    bool operator<(double rhs) const { return to_double() < rhs; }
    bool operator>=(double rhs) const { return to_double() >= rhs; }
    bool operator>(double rhs) const { return to_double() > rhs; }

    struct ChildrenEnumerator;
    struct SameKeyEnumerator;
    // This node and its later siblings with the same key.
    Enumerable_Holder<SameKeyEnumerator> enumerable_same_key_siblings() const;
    // The children in document order.
    Enumerable_Holder<ChildrenEnumerator> enumerable_children() const;
    // The children named `key`, in document order.
    Enumerable_Holder<SameKeyEnumerator> enumerable_children(str key) const;
};

struct Node::ChildrenEnumerator {
    Node node;
    explicit ChildrenEnumerator(Node n) : node(std::move(n)) {}
    bool valid() const { return node.valid(); }
    Node get() const { return node; }
    int next() {
        node = node.next();
        return node ? 0 : -1;
    }
};

struct Node::SameKeyEnumerator : Node::ChildrenEnumerator {
    using ChildrenEnumerator::ChildrenEnumerator;
    int next() {
        if (!node || node._impl->is_last_of_key()) {
            node = Node();
            return -1;
        }
        auto k = node.key();
        do {
            node = node.next();
        } while (node && node.key() != k);
        return node ? 0 : -1;
    }
};

inline Enumerable_Holder<Node::SameKeyEnumerator> Node::enumerable_same_key_siblings() const {
    return enumerable(SameKeyEnumerator(*this));
}
inline Enumerable_Holder<Node::ChildrenEnumerator> Node::enumerable_children() const {
    return enumerable(ChildrenEnumerator(get(size_t(0))));
}
inline Enumerable_Holder<Node::SameKeyEnumerator> Node::enumerable_children(str key) const {
    return get(key).enumerable_same_key_siblings();
}
// The lower 8 bits of `flags` select the format.
const int DOC_JSON = 0x00;
const int DOC_XML = 0x01;
const int DOC_YAML = 0x02;
const int DOC_INI = 0x03;
const int DOC_TYPE_MASK = 0xff;

const int DOC_FREE_TEXT_IF_PARSING_FAILED = 0x100;  // free(text) when parse() fails
const int DOC_FREE_TEXT_ON_DESTRUCTION = 0x200;     // free(text) with the document
const int DOC_OWN_TEXT = DOC_FREE_TEXT_IF_PARSING_FAILED | DOC_FREE_TEXT_ON_DESTRUCTION;

using Document = Node;

// Parses `size` bytes at `text` (which may be modified: strings are unescaped in place, so the
// text must stay alive and unchanged as long as the document). Returns the root, or a null Node
// with errno set (EINVAL malformed, ENOTSUP format not built, E2BIG too deep or too large).
// With DOC_OWN_TEXT, text is malloc()ed memory the document frees.
Node parse(char* text, size_t size, int flags);

// Takes the buffer over (it is released into the document on success).
inline Node parse(IStream::ReadAll&& buf, int flags) {
    if (!buf.ptr || buf.size <= 0) {
        errno = EINVAL;
        return nullptr;
    }
    auto size = (size_t)buf.size;
    buf.size = 0;
    return parse((char*)buf.ptr.release(), size, flags | DOC_OWN_TEXT);
}

// Parses a private copy of the text.
inline Node parse_copy(const char* text, size_t size, int flags) {
    auto copy = (char*)malloc(size ? size : 1);
    if (!copy) return nullptr;
    if (size) memcpy(copy, text, size);
    return parse(copy, size, flags | DOC_OWN_TEXT);
}

inline Node parse_copy(const IStream::ReadAll& buf, int flags) {
    if (!buf.ptr || buf.size <= 0) {
        errno = EINVAL;
        return nullptr;
    }
    return parse_copy((const char*)buf.ptr.get(), (size_t)buf.size, flags);
}

// Reads the whole file and parses it (the document owns the text). Implemented on the fs
// floor (fs/simple_dom_file.cpp), the rest of SimpleDOM on base (tools/floors.txt).
Node parse_file(fs::IFile* file, int flags);

// Opens `filename` on `fs` (the local file system when null) and parses it.
Node parse_file(const char* filename, int flags, fs::IFileSystem* fs = nullptr);

}  // namespace SimpleDOM
}  // namespace photon
