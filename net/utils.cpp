// Name resolution (utils.h): getaddrinfo in the caller (blocking the vCPU)
// or on a helper OS thread (blocking only the coroutine); gethostbypeer;
// address lists. The cached Resolver is in resolver.cpp.
#include <photon/net/utils.h>

#include <netdb.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
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

int gethostbyname(std::string_view name, std::vector<IPAddr>& ret) {
    int n = lookup(std::string(name), ret);
    if (n < 0) LOG_ERRNO_RETURN(0, -1, "cannot resolve `", name);
    return n;
}

int gethostbyname(std::string_view name, IPAddr* buf, size_t bufsize) {
    std::vector<IPAddr> all;
    int n = gethostbyname(name, all);
    for (size_t i = 0; n > 0 && i < bufsize && i < all.size(); i++) buf[i] = all[i];
    return n;
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
    if (job->done.wait_interruptible(1, timeout) < 0)
        LOG_ERRNO_RETURN(0, -1, "resolving ` given up", name);
    if (job->result < 0) LOG_ERROR_RETURN(job->err, -1, "cannot resolve `", name);
    ret.insert(ret.end(), job->addrs.begin(), job->addrs.end());
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
    std::vector<EndPoint> found;
    constexpr std::string_view kSeparators = ",; \t\r\n";
    while (!s.empty()) {
        size_t start = s.find_first_not_of(kSeparators);
        if (start == s.npos) break;
        s.remove_prefix(start);
        size_t end = s.find_first_of(kSeparators);
        std::string_view item = s.substr(0, end);
        EndPoint ep = EndPoint::parse(item, default_port);
        if (ep.addr.undefined() && item.substr(0, 7) != "0.0.0.0")
            LOG_ERROR_RETURN(EINVAL, -1, "not an address: `", item);
        found.push_back(ep);
        s.remove_prefix(item.size());
    }
    addrs->insert(addrs->end(), found.begin(), found.end());
    return (int)found.size();
}

}  // namespace net
}  // namespace photon
