// SimpleDOM's XML backend on rapidxml, which parses in place (entities are decoded where they
// stand) but needs a terminated text: the last byte is overwritten with '\0' when it is
// whitespace (XML files end with a newline), otherwise the text is copied once. rapidxml
// recurses once per nesting level, so the nesting is measured before it runs.
#include <rapidxml/rapidxml.hpp>

#include <memory>

#include <photon/common/alog.h>

#include "builder.h"

namespace photon {
namespace SimpleDOM {
namespace detail {
namespace {

const char* skip_past(const char* p, const char* end, const char* stop) {
    size_t n = strlen(stop);
    for (; p + n <= end; ++p)
        if (memcmp(p, stop, n) == 0) return p + n;
    return end;
}

// An upper bound of the element nesting rapidxml will recurse through: start tags that are not
// self-closing count up, end tags down; comments, CDATA, processing instructions and
// declarations are skipped the way rapidxml skips them.
bool nesting_within(const char* p, const char* end, size_t limit) {
    size_t depth = 0;
    while (p < end && (p = (const char*)memchr(p, '<', end - p)) != nullptr) {
        if (++p == end) break;
        if (*p == '/') {
            if (depth) --depth;
            continue;
        }
        if (*p == '?') {
            p = skip_past(p, end, "?>");
            continue;
        }
        if (*p == '!') {
            if (end - p >= 3 && memcmp(p, "!--", 3) == 0)
                p = skip_past(p, end, "-->");
            else if (end - p >= 8 && memcmp(p, "![CDATA[", 8) == 0)
                p = skip_past(p, end, "]]>");
            else
                p = skip_past(p, end, ">");
            continue;
        }
        const char* t = p;
        char quote = 0;
        for (; t < end; ++t) {
            if (quote) {
                if (*t == quote) quote = 0;
            } else if (*t == '"' || *t == '\'') {
                quote = *t;
            } else if (*t == '>') {
                break;
            }
        }
        if (t == end) break;  // unterminated: rapidxml fails there
        if (t[-1] != '/' && ++depth > limit) return false;
        p = t + 1;
    }
    return true;
}

bool has_element_child(rapidxml::xml_node<char>* x) {
    for (auto c = x->first_node(); c; c = c->next_sibling())
        if (c->type() == rapidxml::node_element) return true;
    return false;
}

void build(builder* b, rapidxml::xml_node<char>* parent) {
    for (auto x = parent->first_node(); x && !b->too_big(); x = x->next_sibling()) {
        if (x->type() != rapidxml::node_element || x->name_size() == 0) continue;
        str key(x->name(), x->name_size());
        str value(x->value(), x->value_size());
        bool children = has_element_child(x);
        if (!children && !x->first_attribute()) {
            b->leaf(key, value, NodeImpl::STRING);
            continue;
        }
        b->open(key, value, children ? NodeImpl::OBJECT : NodeImpl::STRING);
        if (auto a = x->first_attribute()) {
            b->open_attributes();
            for (; a; a = a->next_attribute())
                b->leaf(str(a->name(), a->name_size()), str(a->value(), a->value_size()),
                        NodeImpl::STRING);
            b->close_attributes();
        }
        if (b->depth() <= MAX_DEPTH) build(b, x);
        b->close(true);
    }
}

}  // namespace

const NodeImpl* parse_xml(Document* doc, char* text, size_t size) {
    char* last = text + size - 1;
    if (memchr(text, '\0', size - 1)) {
        LOG_EVERY_T(1, LOG_WARN("simple_dom: XML text holds a '\\0' byte"));
        errno = EINVAL;
        return nullptr;
    }
    if (!nesting_within(text, text + size, MAX_DEPTH)) {
        LOG_EVERY_T(1, LOG_WARN("simple_dom: XML nests deeper than `", MAX_DEPTH));
        errno = E2BIG;
        return nullptr;
    }
    char* input = text;
    if (*last == ' ' || *last == '\t' || *last == '\n' || *last == '\r' || *last == '\0') {
        *last = '\0';
    } else {
        doc->text_copy.reset(new char[size + 1]);
        input = doc->text_copy.get();
        memcpy(input, text, size);
        input[size] = '\0';
        doc->text = input;
    }
    // The parser object holds a 64 KiB pool: on the heap, not on a coroutine's stack.
    std::unique_ptr<rapidxml::xml_document<char>> x(new rapidxml::xml_document<char>);
    try {
        x->parse<rapidxml::parse_validate_closing_tags>(input);
    } catch (const rapidxml::parse_error& e) {
        LOG_EVERY_T(1, LOG_WARN("simple_dom: malformed XML: ` at offset `", e.what(),
                                e.where<char>() - input));
        errno = EINVAL;
        return nullptr;
    }
    if (!x->first_node(nullptr, 0) || !has_element_child(x.get())) {
        LOG_EVERY_T(1, LOG_WARN("simple_dom: XML text has no element"));
        errno = EINVAL;
        return nullptr;
    }
    builder b(doc);
    b.open(str(), str(), NodeImpl::OBJECT);
    build(&b, x.get());
    b.close(true);
    return b.finish();
}

}  // namespace detail
}  // namespace SimpleDOM
}  // namespace photon
