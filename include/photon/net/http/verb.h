// HTTP request methods with PhotonLibOS's names. Pure functions: any vCPU,
// never yield.
#pragma once

#include <string_view>

namespace photon {
namespace net {
namespace http {

enum class Verb : char {
    UNKNOWN = 0,
    DELETE,
    GET,
    HEAD,
    POST,
    PUT,
    CONNECT,
    OPTIONS,
    TRACE,
    COPY,
    LOCK,
    MKCOL,
    MOV,
    PROPFIND,
    PROPPATCH,
    SEARCH,
    UNLOCK,
    BIND,
    REBIND,
    UNBIND,
    ACL,
    REPORT,
    MKACTIVITY,
    CHECKOUT,
    MERGE,
    MSEARCH,
    NOTIFY,
    SUBSCRIBE,
    UNSUBSCRIBE,
    PATCH,
    PURGE,
    MKCALENDAR,
    LINK,
    UNLINK,
};

// The method text of each verb, indexed by (int)Verb; verbstr[0] is "UNKNOWN".
// MOV is sent as "MOVE" and MSEARCH as "M-SEARCH", their registered names.
extern const std::string_view verbstr[];

// Case-sensitive (methods are, RFC 9110 9.1); Verb::UNKNOWN if not listed.
Verb string_to_verb(std::string_view method);

}  // namespace http
}  // namespace net
}  // namespace photon
