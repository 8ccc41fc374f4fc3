// Private to photon: the default Resolver (resolver.cpp) with a per-call
// bound on its lookups and a replaceable lookup function, for callers that
// must keep to a deadline (the HTTP client's socket_dialer) and their tests.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <photon/common/timeout.h>
#include <photon/net/socket.h>
#include <photon/net/utils.h>

namespace photon {
namespace net {

// How a resolver looks a name up on a cache miss, with gethostbyname_nb's
// contract: appends the addresses and returns their count, or -1 with errno
// (ETIMEDOUT once `timeout` passed); only the calling coroutine waits, and
// an answer that comes after the caller gave up is dropped by the lookup.
using lookup_fn = int (*)(std::string_view name, std::vector<IPAddr>& ret, Timeout timeout);

class timed_resolver : public Resolver {
public:
    // As resolve(host), with a lookup bounded by `timeout` too (as well as
    // by the resolver's own resolve_timeout): undefined() with ETIMEDOUT
    // when it ran out. Blocks the coroutine, never the vCPU.
    virtual IPAddr resolve_within(std::string_view host, Timeout timeout) = 0;
};

// new_default_resolver's resolver, looking names up with `lookup`
// (gethostbyname_nb when null).
timed_resolver* new_timed_resolver(uint64_t cache_ttl, uint64_t resolve_timeout,
                                   lookup_fn lookup = nullptr);

}  // namespace net
}  // namespace photon
