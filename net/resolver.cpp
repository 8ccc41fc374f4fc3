// The default Resolver: a TTL cache in front of gethostbyname_nb (or the
// lookup_fn of resolver_internal.h). Entries belong to the resolver; a miss
// looks the name up in the calling coroutine (the vCPU keeps running), so two
// coroutines may look up one name at once and the later answer wins. A
// lookup is bounded by the resolver's resolve_timeout and, through
// resolve_within, by the caller's deadline.
#include <photon/net/utils.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/thread/thread.h>

#include "resolver_internal.h"

namespace photon {
namespace net {

namespace {
class default_resolver : public timed_resolver {
public:
    default_resolver(uint64_t ttl, uint64_t timeout, lookup_fn fn)
        : ttl_(ttl), timeout_(timeout), lookup_(fn ? fn : &default_lookup) {}

    IPAddr resolve(std::string_view host) override { return resolve_within(host, Timeout()); }

    IPAddr resolve_within(std::string_view host, Timeout timeout) override {
        const std::vector<IPAddr>* addrs = lookup(host, timeout);
        if (!addrs) return IPAddr();
        for (auto& ip : *addrs)
            if (ip.is_ipv4()) return ip;
        return addrs->front();
    }

    // Filters the cached addresses at each call (Photon filtered only the
    // lookup that filled the cache, so a cached answer ignored the filter).
    IPAddr resolve_filter(std::string_view host, Delegate<bool, IPAddr> filter) override {
        const std::vector<IPAddr>* addrs = lookup(host, Timeout());
        if (!addrs) return IPAddr();
        std::vector<IPAddr> copy(*addrs);  // filter may call back into us
        std::stable_partition(copy.begin(), copy.end(),
                              [](const IPAddr& ip) { return ip.is_ipv4(); });
        for (auto& ip : copy)
            if (!filter || filter(ip)) return ip;
        LOG_ERROR_RETURN(ENOENT, IPAddr(), "no address of ` passes the filter", host);
    }

    void discard_cache(std::string_view host, IPAddr ip) override {
        auto it = cache_.find(std::string(host));
        if (it == cache_.end()) return;
        auto& v = it->second.addrs;
        if (!ip.undefined()) {
            for (size_t i = 0; i < v.size(); i++)
                if (v[i] == ip) v.erase(v.begin() + i--);
        }
        if (ip.undefined() || v.empty()) cache_.erase(it);
    }

private:
    struct entry {
        std::vector<IPAddr> addrs;  // never empty
        uint64_t expiry;            // in photon::now's clock
    };

    static int default_lookup(std::string_view name, std::vector<IPAddr>& ret, Timeout timeout) {
        return gethostbyname_nb(name, ret, timeout);
    }

    // The cached or freshly found addresses (the lookup bounded by `timeout`
    // and timeout_, whichever ends first); nullptr with errno.
    const std::vector<IPAddr>* lookup(std::string_view host, Timeout timeout) {
        std::string key(host);
        auto it = cache_.find(key);
        if (it != cache_.end() && it->second.expiry > __update_now()) return &it->second.addrs;
        std::vector<IPAddr> addrs;
        int n = lookup_(host, addrs, timeout.timeout_at_most(timeout_));
        if (n < 0) return nullptr;  // logged there
        if (addrs.empty()) LOG_ERROR_RETURN(ENOENT, nullptr, "` has no address", host);
        auto& e = cache_[key];  // re-find: others may have changed the map meanwhile
        e.addrs = std::move(addrs);
        uint64_t t = __update_now();
        e.expiry = ttl_ > UINT64_MAX - t ? UINT64_MAX : t + ttl_;
        return &e.addrs;
    }

    uint64_t ttl_, timeout_;
    lookup_fn lookup_;
    std::unordered_map<std::string, entry> cache_;
};
}  // namespace

Resolver* new_default_resolver(uint64_t cache_ttl, uint64_t resolve_timeout) {
    return new default_resolver(cache_ttl, resolve_timeout, nullptr);
}

timed_resolver* new_timed_resolver(uint64_t cache_ttl, uint64_t resolve_timeout, lookup_fn lookup) {
    return new default_resolver(cache_ttl, resolve_timeout, lookup);
}

}  // namespace net
}  // namespace photon
