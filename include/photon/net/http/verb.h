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
// A class template's static member: one definition in every translation unit, in C++14 too
// (which has no inline variables).
template <typename = void>
struct verb_table {
    static constexpr std::string_view names[] = {
        "UNKNOWN",     "DELETE",     "GET",      "HEAD",       "POST",     "PUT",    "CONNECT",
        "OPTIONS",     "TRACE",      "COPY",     "LOCK",       "MKCOL",    "MOVE",   "PROPFIND",
        "PROPPATCH",   "SEARCH",     "UNLOCK",   "BIND",       "REBIND",   "UNBIND", "ACL",
        "REPORT",      "MKACTIVITY", "CHECKOUT", "MERGE",      "M-SEARCH", "NOTIFY", "SUBSCRIBE",
        "UNSUBSCRIBE", "PATCH",      "PURGE",    "MKCALENDAR", "LINK",     "UNLINK",
    };
};
#if __cplusplus < 201703L
template <typename T>
constexpr std::string_view verb_table<T>::names[];
#endif
static_assert(sizeof(verb_table<>::names) / sizeof(verb_table<>::names[0]) ==
                  (size_t)Verb::UNLINK + 1,
              "verbstr must list every Verb");
}  // namespace detail

// The method text of each verb: verbstr[Verb::GET] is "GET" (verbstr[0] /
// UNKNOWN is "UNKNOWN"; an index outside the enum gives ""). MOV is sent as
// "MOVE" and MSEARCH as "M-SEARCH", their registered names. Indexing by an
// integer works too.
// Differences from PhotonLibOS: doc/compat.md#nethttpverbh
struct VerbNames {
    static constexpr size_t size() { return (size_t)Verb::UNLINK + 1; }
    constexpr std::string_view operator[](Verb v) const { return at((size_t)(unsigned char)v); }
    template <typename I, typename = typename std::enable_if<std::is_integral<I>::value>::type>
    constexpr std::string_view operator[](I i) const {
        // (long long): i < 0 is false for an unsigned I, without a warning.
        return std::is_signed<I>::value && (long long)i < 0 ? std::string_view() : at((size_t)i);
    }

private:
    static constexpr std::string_view at(size_t i) {
        return i < size() ? detail::verb_table<>::names[i] : std::string_view();
    }
};
#if __cplusplus >= 201703L
inline constexpr VerbNames verbstr{};
#else
constexpr VerbNames verbstr{};  // no inline variables: one (empty) object per translation unit
#endif

// Case-sensitive (methods are, RFC 9110 9.1); Verb::UNKNOWN if not listed.
Verb string_to_verb(std::string_view method);

}  // namespace http
}  // namespace net
}  // namespace photon
