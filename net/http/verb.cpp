// Verb <-> method text.
#include <photon/net/http/verb.h>

namespace photon {
namespace net {
namespace http {

const std::string_view verbstr[] = {
    "UNKNOWN",     "DELETE",     "GET",      "HEAD",       "POST",     "PUT",    "CONNECT",
    "OPTIONS",     "TRACE",      "COPY",     "LOCK",       "MKCOL",    "MOVE",   "PROPFIND",
    "PROPPATCH",   "SEARCH",     "UNLOCK",   "BIND",       "REBIND",   "UNBIND", "ACL",
    "REPORT",      "MKACTIVITY", "CHECKOUT", "MERGE",      "M-SEARCH", "NOTIFY", "SUBSCRIBE",
    "UNSUBSCRIBE", "PATCH",      "PURGE",    "MKCALENDAR", "LINK",     "UNLINK",
};
static_assert(sizeof(verbstr) / sizeof(verbstr[0]) == (size_t)Verb::UNLINK + 1,
              "verbstr must list every Verb");

Verb string_to_verb(std::string_view method) {
    // Linear: 33 short strings, compared by length first.
    for (size_t i = 1; i < sizeof(verbstr) / sizeof(verbstr[0]); i++)
        if (verbstr[i] == method) return (Verb)i;
    return Verb::UNKNOWN;
}

}  // namespace http
}  // namespace net
}  // namespace photon
