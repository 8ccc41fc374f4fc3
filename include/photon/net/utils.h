// Name resolution and address helpers (PhotonLibOS's names). gethostbyname
// and gethostbypeer block the whole vCPU (getaddrinfo / a UDP connect), as in
// Photon; gethostbyname_nb and Resolver block only the calling coroutine: the
// lookup runs on a helper OS thread. Any vCPU may call them. Lookup failures
// map getaddrinfo's EAI_* codes to errno: ENOENT (no such name), EAGAIN
// (temporary), ENOMEM, EINVAL, EIO (other). Also Base64 and
// zerocopy_available(), pure functions for any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include <photon/common/callback.h>
#include <photon/common/object.h>
#include <photon/common/string_view.h>
#include <photon/common/timeout.h>
#include <photon/net/socket.h>
#include <photon/thread/thread11.h>

namespace photon {
namespace net {

// Looks `name` up and calls append_op with each address in getaddrinfo's
// order until it returns < 0. Returns how many it took (the one refused
// is not counted), or -1 with errno (an empty name: EINVAL). Blocks the vCPU.
int _gethostbyname(std::string_view name, TempDelegate<int, IPAddr> append_op);

// The first address of `name` (numeric text works too); undefined() with
// errno on failure. Blocks the vCPU.
IPAddr gethostbyname(std::string_view name);
// Stores up to bufsize addresses of `name`; returns how many it stored, or
// -1 with errno. Blocks the vCPU.
int gethostbyname(std::string_view name, IPAddr* buf, size_t bufsize = 1);
// Replaces ret's content by every address of `name`; their count, or -1
// with errno (ret then empty). Blocks the vCPU.
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

// Standard Base64 (RFC 4648, '+' '/', '=' padding). Encode replaces out.
// Decode replaces out and returns true, or false (out unspecified) for an
// empty input (as Photon), a length not a multiple of 4, a byte outside the
// alphabet or misplaced padding.
void Base64Encode(std::string_view in, std::string& out);
bool Base64Decode(std::string_view in, std::string& out);

// Whether the kernel has MSG_ZEROCOPY for TCP (Linux >= 4.15).
bool zerocopy_available();

// A resolver with a cache: each name's addresses are kept cache_ttl us.
class Resolver : public Object {
public:
    // The first address of `host` (IPv4 preferred), from the cache or a
    // fresh lookup; undefined() with errno on failure. Blocks the coroutine.
    virtual IPAddr resolve(std::string_view host) = 0;
    IPAddr resolve(const char* host) { return resolve(std::string_view(host)); }
    // Calls func once with resolve(host) (undefined() on failure), as Photon.
    void resolve(std::string_view host, TempDelegate<void, IPAddr> func) { func(resolve(host)); }
    // The first address of `host` that filter accepts (IPv4 first); the
    // cache keeps them all. undefined() with errno (ENOENT: none accepted).
    // The default asks filter about resolve(host) only.
    virtual IPAddr resolve_filter(std::string_view host, Delegate<bool, IPAddr> filter);
    // Forgets `host` (only `ip` of it, if ip is defined), e.g. after a
    // connect to it failed.
    virtual void discard_cache(std::string_view host, IPAddr ip = IPAddr()) = 0;
};

// resolve_timeout bounds each lookup (us, -1: none).
Resolver* new_default_resolver(uint64_t cache_ttl = 3600ULL * 1000000,
                               uint64_t resolve_timeout = -1);

// Parses "a:1, [v6]:2" (entries separated by commas; blanks and semicolons
// are accepted too) into *addrs, which it first clears (as Photon); an entry
// without a port gets default_port. Returns 0 (as Photon), or -1 EINVAL if
// an entry is not an address (*addrs is then left empty).
// Differences from PhotonLibOS: doc/compat.md#netutilsh
int parse_address_list(std::string_view s, std::vector<EndPoint>* addrs, uint16_t default_port = 0);

}  // namespace net
}  // namespace photon
