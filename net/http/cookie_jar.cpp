// new_simple_cookie_jar (client.h): name=value pairs per host, nothing more.
#include <cctype>
#include <map>
#include <string>
#include <unordered_map>

#include <photon/net/http/client.h>

namespace photon {
namespace net {
namespace http {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = (char)tolower((unsigned char)c);
    return r;
}

// Whether the attributes after name=value delete the cookie (Max-Age <= 0).
bool expires_now(std::string_view attrs) {
    while (!attrs.empty()) {
        size_t semi = attrs.find(';');
        std::string_view a = trim(attrs.substr(0, semi));
        attrs = semi == attrs.npos ? std::string_view() : attrs.substr(semi + 1);
        size_t eq = a.find('=');
        if (eq == a.npos || !iequals(trim(a.substr(0, eq)), "Max-Age")) continue;
        std::string_view v = trim(a.substr(eq + 1));
        if (!v.empty() && (v[0] == '-' || v.find_first_not_of('0') == v.npos)) return true;
    }
    return false;
}

class simple_cookie_jar : public ICookieJar {
public:
    int get_cookies_from_headers(std::string_view host, Message* message) override {
        auto& cookies = jar_[lower(host)];
        for (std::string_view line : message->headers.get_all("Set-Cookie")) {
            size_t semi = line.find(';');
            std::string_view pair = line.substr(0, semi);
            size_t eq = pair.find('=');
            if (eq == pair.npos) continue;
            std::string_view name = trim(pair.substr(0, eq)), value = trim(pair.substr(eq + 1));
            if (!is_token(name) || !is_field_value(value)) continue;
            bool gone = value.empty() || (semi != line.npos && expires_now(line.substr(semi + 1)));
            if (gone)
                cookies.erase(std::string(name));
            else
                cookies[std::string(name)] = std::string(value);
        }
        return 0;
    }

    int set_cookies_to_headers(Request* request) override {
        std::string host(request->url().host());
        if (host.empty()) {  // no URL: the Host field without its port
            std::string_view h = request->host();
            size_t colon = h.rfind(':');
            host = colon != h.npos && h.find(']', colon) == h.npos ? h.substr(0, colon) : h;
            if (!host.empty() && host[0] == '[') host = host.substr(1, host.size() - 2);
        }
        auto it = jar_.find(lower(host));
        if (it == jar_.end() || it->second.empty()) return 0;
        std::string cookie(request->headers["Cookie"]);
        for (auto& kv : it->second) {
            if (!cookie.empty()) cookie += "; ";
            cookie.append(kv.first).append("=").append(kv.second);
        }
        return request->headers.set("Cookie", cookie);
    }

private:
    std::unordered_map<std::string, std::map<std::string, std::string>> jar_;
};

}  // namespace

ICookieJar* new_simple_cookie_jar() { return new simple_cookie_jar(); }

}  // namespace http
}  // namespace net
}  // namespace photon
