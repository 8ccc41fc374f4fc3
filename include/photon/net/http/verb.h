// HTTP request methods with PhotonLibOS's names. Pure functions: any vCPU,
// never yield.
#pragma once

#include <cstddef>
#include <string_view>
#include <type_traits>

#include <photon/common/string_view.h>

#ifdef DELETE  // a macro of some platforms' headers
#undef DELETE
#endif

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

namespace detail {
inline constexpr std::string_view verb_names[] = {
    "UNKNOWN",     "DELETE",     "GET",      "HEAD",       "POST",     "PUT",    "CONNECT",
    "OPTIONS",     "TRACE",      "COPY",     "LOCK",       "MKCOL",    "MOVE",   "PROPFIND",
    "PROPPATCH",   "SEARCH",     "UNLOCK",   "BIND",       "REBIND",   "UNBIND", "ACL",
    "REPORT",      "MKACTIVITY", "CHECKOUT", "MERGE",      "M-SEARCH", "NOTIFY", "SUBSCRIBE",
    "UNSUBSCRIBE", "PATCH",      "PURGE",    "MKCALENDAR", "LINK",     "UNLINK",
};
static_assert(sizeof(verb_names) / sizeof(verb_names[0]) == (size_t)Verb::UNLINK + 1,
              "verbstr must list every Verb");
}  // namespace detail

// The method text of each verb: verbstr[Verb::GET] is "GET" (verbstr[0] /
// UNKNOWN is "UNKNOWN"; an index outside the enum gives ""). MOV is sent as
// "MOVE" and MSEARCH as "M-SEARCH", their registered names (Photon sent the
// enumerator names, which no server knows). Indexing by an integer works too.
struct VerbNames {
    static constexpr size_t size() { return (size_t)Verb::UNLINK + 1; }
    constexpr std::string_view operator[](Verb v) const { return at((size_t)(unsigned char)v); }
    template <typename I, typename = typename std::enable_if<std::is_integral<I>::value>::type>
    constexpr std::string_view operator[](I i) const {
        if constexpr (std::is_signed<I>::value) {
            if (i < 0) return {};
        }
        return at((size_t)i);
    }

private:
    static constexpr std::string_view at(size_t i) {
        return i < size() ? detail::verb_names[i] : std::string_view();
    }
};
inline constexpr VerbNames verbstr{};

// Case-sensitive (methods are, RFC 9110 9.1); Verb::UNKNOWN if not listed.
Verb string_to_verb(std::string_view method);

}  // namespace http
}  // namespace net
}  // namespace photon
