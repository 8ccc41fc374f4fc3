// SimpleDOM's document, builder and format dispatch (parse_file: fs/simple_dom_file.cpp).
#include <errno.h>

#include <algorithm>
#include <exception>
#include <memory>

#include <photon/common/alog.h>

#include "builder.h"

namespace photon {
namespace SimpleDOM {

const NodeImpl* NodeImpl::get(str key) const {
    if (attrs_ && key == str("__attributes__")) return root_ + attrs_;
    if (!(flags_ & FLAG_INDEXED) || nchildren_ == 0) return nullptr;
    auto doc = static_cast<const detail::Document*>(root_->doc_);
    const uint32_t* b = doc->index.data() + index_off_;
    const uint32_t* e = b + nchildren_;
    const NodeImpl* kids = root_ + first_;
    auto it =
        std::lower_bound(b, e, key, [kids](uint32_t i, str k) { return kids[i].get_key() < k; });
    if (it == e || kids[*it].get_key() != key) return nullptr;
    return kids + *it;
}

namespace detail {

str Document::copy(const char* s, size_t n) {
    const size_t CHUNK = 64 * 1024;
    if (n > CHUNK / 4) {  // a big string gets a chunk of its own
        arena.emplace_back(new char[n]);
        memcpy(arena.back().get(), s, n);
        return {arena.back().get(), n};
    }
    if (n > arena_left_) {
        arena.emplace_back(new char[CHUNK]);
        arena_next_ = arena.back().get();
        arena_left_ = CHUNK;
    }
    char* p = arena_next_;
    if (n) memcpy(p, s, n);
    arena_next_ += n;
    arena_left_ -= n;
    return {p, n};
}

builder::builder(Document* doc, size_t max_nodes) : doc_(doc), max_nodes_(max_nodes) {
    doc_->nodes.emplace_back();  // the root's place
    levels_.resize(8);
}

NodeImpl builder::make(str key, str value, uint8_t type) {
    NodeImpl n;
    n.key_ = key.data();
    n.klen_ = (uint32_t)key.size();
    n.value_ = value.data();
    n.vlen_ = (uint32_t)value.size();
    n.type_ = type;
    return n;
}

void builder::add(NodeImpl&& n) {
    if (++count_ > max_nodes_) too_big_ = true;
    levels_[depth_].push_back(std::move(n));
}

void builder::leaf(str key, str value, uint8_t type) {
    if (key.size() > UINT32_MAX || value.size() > UINT32_MAX) {
        too_big_ = true;
        return;
    }
    add(make(key, value, type));
}

void builder::open(str key, str value, uint8_t type) {
    leaf(key, value, type);
    if (++depth_ > MAX_DEPTH) too_big_ = true;
    if (levels_.size() <= depth_) levels_.resize(depth_ * 2);
    levels_[depth_].clear();
}

// Appends the children collected at depth_ to the array and links them to `parent`.
void builder::flush_level(NodeImpl& parent, bool indexed) {
    auto& kids = levels_[depth_];
    auto& nodes = doc_->nodes;
    parent.first_ = (uint32_t)nodes.size();
    parent.nchildren_ = (uint32_t)kids.size();
    if (kids.empty()) return;
    kids.back().flags_ |= NodeImpl::FLAG_LAST;
    nodes.insert(nodes.end(), kids.begin(), kids.end());
    kids.clear();
    if (!indexed) return;
    parent.flags_ |= NodeImpl::FLAG_INDEXED;
    auto& index = doc_->index;
    parent.index_off_ = (uint32_t)index.size();
    NodeImpl* first = &nodes[parent.first_];
    size_t n = parent.nchildren_;
    for (size_t i = 0; i < n; ++i) index.push_back((uint32_t)i);
    auto b = index.begin() + parent.index_off_;
    // Stable: among equal keys, document order, so get(key) finds the first.
    std::stable_sort(b, index.end(), [first](uint32_t i, uint32_t j) {
        return str(first[i].key_, first[i].klen_) < str(first[j].key_, first[j].klen_);
    });
    for (size_t i = 0; i < n; ++i) {
        NodeImpl& a = first[b[i]];
        if (i + 1 == n || str(a.key_, a.klen_) != str(first[b[i + 1]].key_, first[b[i + 1]].klen_))
            a.flags_ |= NodeImpl::FLAG_EQUAL_KEY_LAST;
    }
}

void builder::close(bool indexed) {
    if (depth_ == 0) return;
    if (doc_->nodes.size() + levels_[depth_].size() > max_nodes_ + 1) too_big_ = true;
    if (too_big_) {  // the result is discarded; just unwind
        --depth_;
        return;
    }
    NodeImpl& parent = levels_[depth_ - 1].back();
    flush_level(parent, indexed);
    --depth_;
}

void builder::open_attributes() {
    if (++depth_ > MAX_DEPTH) too_big_ = true;
    if (levels_.size() <= depth_) levels_.resize(depth_ * 2);
    levels_[depth_].clear();
}

void builder::close_attributes() {
    if (depth_ < 2) return;  // the attributes' level and their element's children's
    if (too_big_) {
        --depth_;
        return;
    }
    NodeImpl attrs = make(str("__attributes__"), str(), NodeImpl::OBJECT);
    flush_level(attrs, true);
    --depth_;
    attrs.flags_ |= NodeImpl::FLAG_LAST;
    levels_[depth_ - 1].back().attrs_ = (uint32_t)doc_->nodes.size();  // the element
    doc_->nodes.push_back(attrs);
}

const NodeImpl* builder::finish() {
    if (too_big_) {
        errno = E2BIG;
        return nullptr;
    }
    if (depth_ != 0 || levels_[0].size() != 1) {
        errno = EINVAL;
        return nullptr;
    }
    doc_->nodes.shrink_to_fit();  // before the pointers into it are taken
    doc_->index.shrink_to_fit();
    NodeImpl& root = doc_->nodes[0];
    root = levels_[0][0];
    root.doc_ = doc_;
    root.klen_ = 0;
    root.flags_ |= NodeImpl::FLAG_ROOT | NodeImpl::FLAG_LAST;
    for (auto& n : doc_->nodes) n.root_ = &root;
    return &doc_->nodes[0];
}

#ifndef PHOTON_SIMPLE_DOM_JSON
const NodeImpl* parse_json(Document*, char*, size_t) {
    LOG_ERROR_RETURN(ENOTSUP, nullptr, "simple_dom: JSON support not built (rapidjson-dev)");
}
#endif
#ifndef PHOTON_SIMPLE_DOM_XML
const NodeImpl* parse_xml(Document*, char*, size_t) {
    LOG_ERROR_RETURN(ENOTSUP, nullptr, "simple_dom: XML support not built (librapidxml-dev)");
}
#endif
#ifndef PHOTON_SIMPLE_DOM_YAML
const NodeImpl* parse_yaml(Document*, char*, size_t) {
    LOG_ERROR_RETURN(ENOTSUP, nullptr, "simple_dom: YAML support not built (libyaml-cpp-dev)");
}
#endif

}  // namespace detail

Node parse(char* text, size_t size, int flags) {
    using Parser = const NodeImpl* (*)(detail::Document*, char*, size_t);
    static const Parser parsers[] = {detail::parse_json, detail::parse_xml, detail::parse_yaml,
                                     detail::parse_ini};
    auto fail = [&](int err) {
        if (text && (flags & DOC_FREE_TEXT_IF_PARSING_FAILED)) free(text);
        errno = err;
        return Node();
    };
    if (!text || !size) return fail(EINVAL);
    size_t type = flags & DOC_TYPE_MASK;
    if (type >= sizeof(parsers) / sizeof(parsers[0])) return fail(EINVAL);
    std::unique_ptr<detail::Document> doc(new (std::nothrow) detail::Document);
    if (!doc) return fail(ENOMEM);
    doc->text = text;
    const NodeImpl* root = nullptr;
    int err = EINVAL;
    try {
        errno = 0;
        root = parsers[type](doc.get(), text, size);
        if (!root) err = errno ? errno : EINVAL;
    } catch (const std::bad_alloc&) {
        root = nullptr;
        err = ENOMEM;
    } catch (const std::exception& e) {  // yaml-cpp and rapidxml report errors by throwing
        LOG_EVERY_T(1, LOG_WARN("simple_dom: parsing failed: `", e.what()));
        root = nullptr;
    } catch (...) {
        root = nullptr;
    }
    if (!root) return fail(err);
    if (flags & DOC_FREE_TEXT_ON_DESTRUCTION) doc->owned_text = text;
    doc.release();
    return root;  // the Node holds the document's first reference
}

}  // namespace SimpleDOM
}  // namespace photon
