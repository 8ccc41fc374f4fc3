// Name resolution and address helpers (PhotonLibOS's names). gethostbyname
// and gethostbypeer block the whole vCPU (getaddrinfo / a UDP connect), as in
// Photon; gethostbyname_nb and Resolver block only the calling coroutine: the
// lookup runs on a helper OS thread. Any vCPU may call them. Lookup failures
// map getaddrinfo's EAI_* codes to errno: ENOENT (no such name), EAGAIN
// (temporary), ENOMEM, EINVAL, EIO (other).
#pragma once

#include <cstdint>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include <photon/common/callback.h>
#include <photon/common/object.h>
#include <photon/common/timeout.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {

// The first address of `name` (numeric text works too); undefined() with
// errno on failure. Blocks the vCPU.
IPAddr gethostbyname(std::string_view name);
// Stores up to bufsize addresses of `name`; returns how many it found (may
// exceed bufsize), or -1 with errno. Blocks the vCPU.
int gethostbyname(std::string_view name, IPAddr* buf, size_t bufsize = 1);
// Appends every address of `name`; their count, or -1 with errno. Blocks the vCPU.
int gethostbyname(std::string_view name, std::vector<IPAddr>& ret);

// As above, but only the calling coroutine waits (the lookup runs on a
// helper OS thread); -1 ETIMEDOUT after `timeout`, or the interrupter's
// errno. A lookup given up on finishes on its own and is discarded.
int gethostbyname_nb(std::string_view name, std::vector<IPAddr>& ret, Timeout timeout);
inline int gethostbyname_nb(std::string_view name, std::vector<IPAddr>& ret) {
    return gethostbyname_nb(name, ret, Timeout());
}

// The local address this host uses to reach `remote` (a UDP connect: no
// packet is sent); undefined() with errno on failure.
IPAddr gethostbypeer(IPAddr remote);
IPAddr gethostbypeer(std::string_view domain);

// A resolver with a cache: each name's addresses are kept cache_ttl us.
class Resolver : public Object {
public:
    // The first address of `host` (IPv4 preferred), from the cache or a
    // fresh lookup; undefined() with errno on failure. Blocks the coroutine.
    virtual IPAddr resolve(std::string_view host) = 0;
    IPAddr resolve(const char* host) { return resolve(std::string_view(host)); }
    // Calls func for each address of `host`, as resolve() finds them.
    virtual void resolve(std::string_view host, Delegate<void, IPAddr> func) = 0;
    // Forgets `host` (only `ip` of it, if ip is defined), e.g. after a
    // connect to it failed.
    virtual void discard_cache(std::string_view host, IPAddr ip = IPAddr()) = 0;
};

// resolve_timeout bounds each lookup (us, -1: none).
Resolver* new_default_resolver(uint64_t cache_ttl = 3600ULL * 1000000,
                               uint64_t resolve_timeout = -1);

// Parses "a:1, [v6]:2;b" (separated by commas, semicolons or blanks) into
// addrs; an entry without a port gets default_port. Returns the number
// added, or -1 EINVAL (nothing added) if an entry is not an address.
int parse_address_list(std::string_view s, std::vector<EndPoint>* addrs, uint16_t default_port = 0);

}  // namespace net
}  // namespace photon
