// The XML answers of the object stores (private to net/oss), read with
// simple_dom. Each takes the body as a string it may modify (parsing is in
// place) and returns -1 with errno EIO on a malformed document.
#pragma once

#include <string>

#include <photon/ecosystem/oss.h>

namespace photon {
namespace objstore {
namespace detail {

struct list_page {
    bool truncated = false;
    std::string next;  // NextContinuationToken (v2) / NextMarker or the last key (v1)
};
// Calls cb for each Contents and CommonPrefixes entry; cb's negative result
// stops the walk and is returned.
int parse_list(std::string& body, bool v2, ListObjectsCallback cb, list_page* page);

// <Error><Code>..</Code><Message>..</Message>...: 0 if body is one (fields
// absent are left empty), -1 otherwise. endpoint: <Endpoint> or <Region>.
int parse_error(std::string& body, std::string* code, std::string* message, std::string* endpoint);

// The text of the element at path below the root element (e.g. "UploadId" of
// InitiateMultipartUploadResult, "ETag" of CopyObjectResult); root, if not
// null, gets the root element's name.
int parse_field(std::string& body, std::string_view field, std::string* out,
                std::string* root = nullptr);

// <DeleteResult>: the number of <Error> entries (the first one's key and code
// in *first), or -1.
int parse_delete_errors(std::string& body, std::string* first);

}  // namespace detail
}  // namespace objstore
}  // namespace photon
