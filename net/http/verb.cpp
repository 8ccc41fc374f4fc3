// Verb <-> method text.
#include <photon/net/http/verb.h>

namespace photon {
namespace net {
namespace http {

Verb string_to_verb(std::string_view method) {
    // Linear: 33 short strings, compared by length first.
    for (size_t i = 1; i < verbstr.size(); i++)
        if (verbstr[i] == method) return (Verb)i;
    return Verb::UNKNOWN;
}

}  // namespace http
}  // namespace net
}  // namespace photon
