// SimpleDOM's INI reader (no package needed), with PhotonLibOS's rules: "[section]" lines,
// "key = value" or "key: value" (the first '=' or ':' splits), whole-line comments starting with
// '#' or ';', inline comments starting at the last " ;". Sections of the same name merge; the
// root's children are the sections, sorted by name. A line that is none of these is skipped;
// a text with no key-value pair and a skipped line fails. Keys and values are views into the
// text, which is not modified.
#include <algorithm>
#include <vector>

#include <photon/common/alog.h>

#include "builder.h"

namespace photon {
namespace SimpleDOM {
namespace detail {
namespace {

struct Item {
    str section, key, value;
};

str trim(str s) {
    size_t b = 0, e = s.size();
    while (b < e && isspace((unsigned char)s[b])) ++b;
    while (e > b && isspace((unsigned char)s[e - 1])) --e;
    return s.substr(b, e - b);
}

}  // namespace

const NodeImpl* parse_ini(Document* doc, char* text, size_t size) {
    std::vector<Item> items;
    size_t bad = 0;
    str section;
    str all(text, size);
    for (size_t pos = 0; pos < size;) {
        size_t nl = all.find_first_of("\r\n", pos);
        if (nl == str::npos) nl = size;
        str line = all.substr(pos, nl - pos);
        pos = nl + 1;
        auto comment = line.rfind(" ;");
        if (comment != str::npos) line = line.substr(0, comment);
        line = trim(line);
        if (line.empty() || line[0] == '#' || line[0] == ';') continue;
        if (line[0] == '[') {
            if (line.back() == ']')
                section = trim(line.substr(1, line.size() - 2));
            else
                ++bad;
            continue;
        }
        auto eq = line.find_first_of("=:");
        if (eq == 0 || eq == str::npos || eq + 1 >= line.size()) {
            ++bad;
            continue;
        }
        items.push_back({section, trim(line.substr(0, eq)), trim(line.substr(eq + 1))});
    }
    if (items.empty() && bad) {
        LOG_EVERY_T(1, LOG_WARN("simple_dom: INI text has ` malformed lines and no key", bad));
        errno = EINVAL;
        return nullptr;
    }
    std::stable_sort(items.begin(), items.end(),
                     [](const Item& a, const Item& b) { return a.section < b.section; });
    builder b(doc);
    b.open(str(), str(), NodeImpl::OBJECT);
    for (size_t i = 0; i < items.size();) {
        b.open(items[i].section, str(), NodeImpl::OBJECT);
        size_t j = i;
        for (; j < items.size() && items[j].section == items[i].section; ++j)
            b.leaf(items[j].key, items[j].value, NodeImpl::STRING);
        b.close(true);
        i = j;
    }
    b.close(true);
    return b.finish();
}

}  // namespace detail
}  // namespace SimpleDOM
}  // namespace photon
