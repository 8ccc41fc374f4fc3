// The default Resolver: a TTL cache in front of gethostbyname_nb. Entries
// belong to the resolver; a miss looks the name up in the calling coroutine
// (the vCPU keeps running), so two coroutines may look up one name at once
// and the later answer wins.
#include <photon/net/utils.h>

#include <string>
#include <unordered_map>
#include <vector>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/thread/thread.h>

namespace photon {
namespace net {

namespace {
class DefaultResolver : public Resolver {
public:
    DefaultResolver(uint64_t ttl, uint64_t timeout) : ttl_(ttl), timeout_(timeout) {}

    IPAddr resolve(std::string_view host) override {
        const std::vector<IPAddr>* addrs = lookup(host);
        if (!addrs) return IPAddr();
        for (auto& ip : *addrs)
            if (ip.is_ipv4()) return ip;
        return addrs->front();
    }

    void resolve(std::string_view host, Delegate<void, IPAddr> func) override {
        const std::vector<IPAddr>* addrs = lookup(host);
        if (!addrs) return;
        std::vector<IPAddr> copy(*addrs);  // func may call back into us
        for (auto& ip : copy) func(ip);
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

    // The cached or freshly found addresses; nullptr with errno.
    const std::vector<IPAddr>* lookup(std::string_view host) {
        std::string key(host);
        auto it = cache_.find(key);
        if (it != cache_.end() && it->second.expiry > __update_now()) return &it->second.addrs;
        std::vector<IPAddr> addrs;
        int n = gethostbyname_nb(host, addrs, Timeout(timeout_));
        if (n < 0) return nullptr;  // logged there
        if (addrs.empty()) LOG_ERROR_RETURN(ENOENT, nullptr, "` has no address", host);
        auto& e = cache_[key];  // re-find: others may have changed the map meanwhile
        e.addrs = std::move(addrs);
        uint64_t t = __update_now();
        e.expiry = ttl_ > UINT64_MAX - t ? UINT64_MAX : t + ttl_;
        return &e.addrs;
    }

    uint64_t ttl_, timeout_;
    std::unordered_map<std::string, entry> cache_;
};
}  // namespace

Resolver* new_default_resolver(uint64_t cache_ttl, uint64_t resolve_timeout) {
    return new DefaultResolver(cache_ttl, resolve_timeout);
}

}  // namespace net
}  // namespace photon
