// SimpleDOM's YAML backend on yaml-cpp, which builds its own tree of std::strings: keys and
// values are copied into the document (not in place). Aliases are expanded, bounded by the
// nesting limit and a node budget proportional to the text (an alias may name its own
// ancestor, and nested aliases grow exponentially).
#include <yaml-cpp/yaml.h>

#include <string>

#include <photon/common/alog.h>

#include "builder.h"

namespace photon {
namespace SimpleDOM {
namespace detail {
namespace {

str scalar_of(Document* doc, const YAML::Node& n) {
    if (!n.IsScalar()) return str();
    auto& s = n.Scalar();
    return doc->copy(s.data(), s.size());
}

void add(Document* doc, builder* b, str key, const YAML::Node& n) {
    if (b->too_big()) return;
    switch (n.Type()) {
        case YAML::NodeType::Map:
            b->open(key, str(), NodeImpl::OBJECT);
            if (b->depth() <= MAX_DEPTH) {
                for (auto it = n.begin(); it != n.end() && !b->too_big(); ++it)
                    add(doc, b, scalar_of(doc, it->first), it->second);
            }
            b->close(true);
            break;
        case YAML::NodeType::Sequence:
            b->open(key, str(), NodeImpl::ARRAY);
            if (b->depth() <= MAX_DEPTH) {
                for (auto it = n.begin(); it != n.end() && !b->too_big(); ++it)
                    add(doc, b, str(), *it);
            }
            b->close(false);
            break;
        case YAML::NodeType::Scalar:
            b->leaf(key, scalar_of(doc, n), NodeImpl::STRING);
            break;
        default:  // Null, Undefined
            b->leaf(key, str(), NodeImpl::null);
            break;
    }
}

}  // namespace

const NodeImpl* parse_yaml(Document* doc, char* text, size_t size) {
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text, size));
    } catch (const YAML::Exception& e) {
        LOG_EVERY_T(1, LOG_WARN("simple_dom: malformed YAML: `", e.what()));
        errno = EINVAL;
        return nullptr;
    }
    builder b(doc, 4 * size + 1024);
    add(doc, &b, str(), root);
    if (b.too_big()) {
        LOG_EVERY_T(1, LOG_WARN("simple_dom: YAML nests deeper than ` or expands past ` nodes",
                                MAX_DEPTH, 4 * size + 1024));
        errno = E2BIG;
        return nullptr;
    }
    return b.finish();
}

}  // namespace detail
}  // namespace SimpleDOM
}  // namespace photon
