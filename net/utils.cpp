// Name resolution (utils.h): getaddrinfo in the caller (blocking the vCPU)
// or on a helper OS thread (blocking only the coroutine); gethostbypeer;
// address lists. The cached Resolver is in resolver.cpp.
#include <photon/net/utils.h>

#include <netdb.h>
#include <pthread.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/net/basic_socket.h>
#include <photon/thread/thread.h>

namespace photon {
namespace net {

namespace {
int eai_to_errno(int eai) {
    switch (eai) {
        case EAI_NONAME:
        case EAI_NODATA:
        case EAI_ADDRFAMILY:
            return ENOENT;
        case EAI_AGAIN:
            return EAGAIN;
        case EAI_MEMORY:
            return ENOMEM;
        case EAI_SYSTEM:
            return errno ? errno : EIO;
        case EAI_BADFLAGS:
        case EAI_FAMILY:
        case EAI_SERVICE:
        case EAI_SOCKTYPE:
            return EINVAL;
        default:
            return EIO;
    }
}

// getaddrinfo for TCP (one entry per address); count, or -1 with errno.
// Logs nothing: the callers decide (the _nb form runs off-vCPU).
int lookup(const std::string& name, std::vector<IPAddr>& out) {
    struct addrinfo hints = {};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo* res = nullptr;
    errno = 0;
    int r = getaddrinfo(name.c_str(), nullptr, &hints, &res);
    if (r != 0) {
        errno = eai_to_errno(r);
        return -1;
    }
    int n = 0;
    for (auto p = res; p; p = p->ai_next, n++) {
        if (p->ai_family == AF_INET)
            out.emplace_back(((sockaddr_in*)p->ai_addr)->sin_addr);
        else if (p->ai_family == AF_INET6)
            out.emplace_back(((sockaddr_in6*)p->ai_addr)->sin6_addr);
        else
            n--;
    }
    freeaddrinfo(res);
    return n;
}

// One background lookup, shared by the waiting coroutine and the helper
// thread: whichever lets go last frees it, so a waiter that gave up (timeout,
// interrupt) leaves nothing for the helper to scribble on.
struct nb_lookup {
    std::string name;
    std::vector<IPAddr> addrs;
    int result = -1;
    int err = 0;
    semaphore done;
};

void* nb_lookup_run(void* arg) {
    std::unique_ptr<std::shared_ptr<nb_lookup>> ref((std::shared_ptr<nb_lookup>*)arg);
    nb_lookup& job = **ref;
    job.result = lookup(job.name, job.addrs);
    job.err = errno;
    job.done.signal(1);  // publishes result, err and addrs to the waiter
    return nullptr;
}
}  // namespace

int _gethostbyname(std::string_view name, TempDelegate<int, IPAddr> append_op) {
    if (name.empty()) LOG_ERROR_RETURN(EINVAL, -1, "cannot resolve an empty name");
    std::vector<IPAddr> all;
    if (lookup(std::string(name), all) < 0) LOG_ERRNO_RETURN(0, -1, "cannot resolve `", name);
    int n = 0;
    for (auto& ip : all) {
        if (append_op(ip) < 0) break;
        n++;
    }
    return n;
}

int gethostbyname(std::string_view name, std::vector<IPAddr>& ret) {
    ret.clear();
    return _gethostbyname(name, [&](IPAddr ip) {
        ret.push_back(ip);
        return 0;
    });
}

int gethostbyname(std::string_view name, IPAddr* buf, size_t bufsize) {
    size_t i = 0;
    return _gethostbyname(name, [&](IPAddr ip) {
        if (i >= bufsize) return -1;
        buf[i++] = ip;
        return 0;
    });
}

IPAddr gethostbyname(std::string_view name) {
    IPAddr ip;
    if (gethostbyname(name, &ip, 1) == 0) errno = ENOENT;  // a name without addresses
    return ip;
}

int gethostbyname_nb(std::string_view name, std::vector<IPAddr>& ret, Timeout timeout) {
    auto job = std::make_shared<nb_lookup>();
    job->name.assign(name.data(), name.size());
    auto arg = new std::shared_ptr<nb_lookup>(job);
    pthread_t tid;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int e = pthread_create(&tid, &attr, &nb_lookup_run, arg);
    pthread_attr_destroy(&attr);
    if (e != 0) {
        delete arg;
        LOG_ERROR_RETURN(e, -1, "no helper thread to resolve `", name);
    }
    ret.clear();
    if (job->done.wait_interruptible(1, timeout) < 0)
        LOG_ERRNO_RETURN(0, -1, "resolving ` given up", name);
    if (job->result < 0) LOG_ERROR_RETURN(job->err, -1, "cannot resolve `", name);
    ret.swap(job->addrs);
    return job->result;
}

IPAddr gethostbypeer(IPAddr remote) {
    IPAddr local;
    int fd = ::socket(remote.is_ipv4() ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) LOG_ERRNO_RETURN(0, local, "socket(SOCK_DGRAM) failed");
    sockaddr_storage peer(EndPoint(remote, 53));  // any port: UDP connect sends nothing
    if (::connect(fd, peer.get_sockaddr(), peer.get_socklen()) < 0) {
        int e = errno;
        ::close(fd);
        LOG_ERROR_RETURN(e, local, "no route to `", remote);
    }
    EndPoint ep;
    if (get_socket_name(fd, ep) == 0) local = ep.addr;
    ::close(fd);
    return local;
}

IPAddr gethostbypeer(std::string_view domain) {
    IPAddr remote = gethostbyname(domain);
    if (remote.undefined()) return remote;
    return gethostbypeer(remote);
}

int parse_address_list(std::string_view s, std::vector<EndPoint>* addrs, uint16_t default_port) {
    if (!addrs) LOG_ERROR_RETURN(EINVAL, -1, "parse_address_list: no output vector");
    addrs->clear();
    constexpr std::string_view kSeparators = ",; \t\r\n";
    while (!s.empty()) {
        size_t start = s.find_first_not_of(kSeparators);
        if (start == s.npos) break;
        s.remove_prefix(start);
        size_t end = s.find_first_of(kSeparators);
        std::string_view item = s.substr(0, end);
        EndPoint ep = EndPoint::parse(item, default_port);
        if (ep.addr.undefined() && item.substr(0, 7) != "0.0.0.0") {
            addrs->clear();
            LOG_ERROR_RETURN(EINVAL, -1, "not an address: `", item);
        }
        addrs->push_back(ep);
        s.remove_prefix(item.size());
    }
    return 0;
}

// ---- Base64 ----------------------------------------------------------------

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The 6-bit value of a Base64 character, -1 for others ('=' included).
int b64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}
}  // namespace

void Base64Encode(std::string_view in, std::string& out) {
    out.clear();
    out.reserve((in.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= in.size(); i += 3) {
        uint32_t v = (uint8_t)in[i] << 16 | (uint8_t)in[i + 1] << 8 | (uint8_t)in[i + 2];
        out += kB64[v >> 18];
        out += kB64[(v >> 12) & 63];
        out += kB64[(v >> 6) & 63];
        out += kB64[v & 63];
    }
    size_t rest = in.size() - i;  // 0, 1 or 2 bytes: 2 or 3 characters and padding
    if (rest == 0) return;
    uint32_t v = (uint8_t)in[i] << 16 | (rest == 2 ? (uint8_t)in[i + 1] << 8 : 0);
    out += kB64[v >> 18];
    out += kB64[(v >> 12) & 63];
    out += rest == 2 ? kB64[(v >> 6) & 63] : '=';
    out += '=';
}

bool Base64Decode(std::string_view in, std::string& out) {
    out.clear();
    if (in.empty() || in.size() % 4 != 0) return false;
    size_t pad = in.back() == '=' ? (in[in.size() - 2] == '=' ? 2 : 1) : 0;
    out.reserve(in.size() / 4 * 3);
    for (size_t i = 0; i < in.size(); i += 4) {
        bool last = i + 4 == in.size();
        uint32_t v = 0;
        for (size_t k = 0; k < 4; k++) {
            int d = (last && k >= 4 - pad) ? 0 : b64_value(in[i + k]);
            if (d < 0) return false;  // also '=' anywhere but the end
            v = v << 6 | (uint32_t)d;
        }
        out += (char)(v >> 16);
        if (!last || pad < 2) out += (char)(v >> 8);
        if (!last || pad < 1) out += (char)v;
    }
    return true;
}

bool zerocopy_available() {
    static const bool ok = [] {
        struct utsname u;
        unsigned major = 0, minor = 0;
        if (uname(&u) != 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2) return false;
        return major > 4 || (major == 4 && minor >= 15);
    }();
    return ok;
}

// ---- Resolver --------------------------------------------------------------

IPAddr Resolver::resolve_filter(std::string_view host, Delegate<bool, IPAddr> filter) {
    IPAddr ip = resolve(host);
    if (ip.undefined() || !filter || filter(ip)) return ip;
    LOG_ERROR_RETURN(ENOENT, IPAddr(), "no address of ` passes the filter", host);
}

}  // namespace net
}  // namespace photon
