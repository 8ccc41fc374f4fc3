// The object stores' XML answers, read with simple_dom (see xml.h).
#include "xml.h"

#include <cerrno>

#include <photon/common/alog.h>
#include <photon/ecosystem/simple_dom.h>

#include "sign.h"

namespace photon {
namespace objstore {
namespace detail {

namespace {

using photon::SimpleDOM::Node;

// The document's root element, or a null node (EIO) if body is no XML.
Node root_of(std::string& body, Node* doc) {
    if (body.empty()) return errno = EIO, Node();
    *doc = photon::SimpleDOM::parse_copy(body.data(), body.size(), photon::SimpleDOM::DOC_XML);
    if (!*doc || doc->num_children() == 0) return errno = EIO, Node();
    return doc->get(0);
}

std::string text(const Node& n) {
    auto v = n.value();
    return std::string(v.data(), v.size());
}

}  // namespace

int parse_list(std::string& body, bool v2, ListObjectsCallback cb, list_page* page) {
    Node doc, root = root_of(body, &doc);
    if (!root || root.key() != "ListBucketResult") return errno = EIO, -1;
    std::string last_key;
    for (size_t i = 0, n = root.num_children(); i < n; i++) {
        Node c = root.get(i);
        auto k = c.key();
        if (k == "Contents") {
            Node key = c["Key"], size = c["Size"];
            if (!key || !size) return errno = EIO, -1;
            auto lm = c["LastModified"].value();
            time_t mtime = lm.empty() ? 0 : parse_time(std::string_view(lm.data(), lm.size()));
            auto etag = c["ETag"].value();
            ListObjectsCBParameters p;
            p.key = std::string_view(key.value().data(), key.value().size());
            p.etag = std::string_view(etag.data(), etag.size());
            auto type = c["Type"].value();
            p.type = std::string_view(type.data(), type.size());
            p.size = (size_t)size.to_int64_t(0);
            p.mtime = mtime < 0 ? 0 : mtime;
            last_key.assign(p.key.data(), p.key.size());
            int r = cb.fire(p);
            if (r < 0) return r;
        } else if (k == "CommonPrefixes") {
            // One element may carry several <Prefix> children (some servers group them).
            for (size_t j = 0, m = c.num_children(); j < m; j++) {
                Node pfx = c.get(j);
                if (pfx.key() != "Prefix") continue;
                ListObjectsCBParameters p;
                p.key = std::string_view(pfx.value().data(), pfx.value().size());
                p.is_com_prefix = true;
                last_key.assign(p.key.data(), p.key.size());
                int r = cb.fire(p);
                if (r < 0) return r;
            }
        }
    }
    page->truncated = root["IsTruncated"].value() == "true";
    page->next.clear();
    if (page->truncated) {
        page->next = text(root[v2 ? "NextContinuationToken" : "NextMarker"]);
        if (page->next.empty() && !v2) page->next = last_key;
        if (page->next.empty()) return errno = EIO, -1;  // truncated, but no way on
    }
    return 0;
}

int parse_error(std::string& body, std::string* code, std::string* message, std::string* endpoint) {
    Node doc, root = root_of(body, &doc);
    if (!root || root.key() != "Error") return -1;
    *code = text(root["Code"]);
    *message = text(root["Message"]);
    *endpoint = text(root["Endpoint"]);
    if (endpoint->empty()) *endpoint = text(root["Region"]);
    return 0;
}

int parse_field(std::string& body, std::string_view field, std::string* out, std::string* root) {
    Node doc, r = root_of(body, &doc);
    if (!r) return -1;
    if (root) *root = std::string(r.key().data(), r.key().size());
    Node f = r[photon::SimpleDOM::str(field.data(), field.size())];
    if (!f) return errno = EIO, -1;
    *out = text(f);
    return 0;
}

int parse_delete_errors(std::string& body, std::string* first) {
    Node doc, root = root_of(body, &doc);
    if (!root || root.key() != "DeleteResult") return errno = EIO, -1;
    int n = 0;
    for (size_t i = 0, cnt = root.num_children(); i < cnt; i++) {
        Node c = root.get(i);
        if (c.key() != "Error") continue;
        if (n++ == 0) *first = text(c["Key"]) + ": " + text(c["Code"]);
    }
    return n;
}

}  // namespace detail
}  // namespace objstore
}  // namespace photon
