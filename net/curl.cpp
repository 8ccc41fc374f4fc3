// libcurl on photon's event engines.
//
// Each vCPU has one curl multi handle, used through curl's socket API:
// curl tells on_socket() which fds to watch and on_timer() when to call it
// back; a driver coroutine waits for both on a cascading event engine and
// hands what happened to curl_multi_socket_action(). A transfer adds its
// easy handle and parks on a semaphore; the driver signals it when curl
// reports the handle done. The driver exists only while transfers do.
//
// Curl calls user callbacks (writers, readers) from inside
// curl_multi_socket_action(), in the driver, and they may yield. While one
// does, curl refuses any other call on the multi handle, so every call on
// it is made under the vCPU's mutex.
#include <photon/net/curl.h>

#include <mutex>
#include <unordered_map>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/io/fd-events.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include "../io/init_hooks.h"

namespace photon {
namespace net {

namespace {

constexpr size_t kEventBatch = 32;
constexpr int kKick = EAGAIN;  // errno the driver is woken with to re-read its state

struct transfer {
    semaphore done_sem;
    CURLcode result = CURLE_OK;
    int err = 0;
    bool done = false;
};

struct curl_vcpu {
    CURLM* multi = nullptr;
    CascadingEventEngine* poller = nullptr;
    mutex lock{0};  // held for every call on `multi`
    std::unordered_map<CURL*, transfer*> transfers;
    std::unordered_map<curl_socket_t, uint32_t> watched;  // fd -> EVENT_READ | EVENT_WRITE
    uint64_t deadline = UINT64_MAX;                       // curl's timer, on photon::now
    thread* driver = nullptr;
    bool parked = false;  // the driver waits in poller->wait_for_events()
    bool stopping = false;
    int refs = 1;  // t_curl, the driver, each curl_perform() in progress

    ~curl_vcpu() {
        // May call on_socket() (CURL_POLL_REMOVE) for cached connections.
        if (multi) curl_multi_cleanup(multi);
        delete poller;
    }

    // Makes a parked driver look at its state again.
    void kick() {
        if (parked) {
            parked = false;
            thread_interrupt(driver, kKick);
        }
    }
};

thread_local curl_vcpu* t_curl = nullptr;
thread_local bool t_fini_hooked = false;

void unref(curl_vcpu* c) {
    if (--c->refs == 0) delete c;
}

void* tag(curl_socket_t fd, uint32_t kind) { return (void*)(((uintptr_t)fd << 2) | kind); }

// CURLMOPT_SOCKETFUNCTION: watch fd for what curl wants, level-triggered.
int on_socket(CURL*, curl_socket_t fd, int what, void* userp, void*) {
    auto c = static_cast<curl_vcpu*>(userp);
    uint32_t want = 0;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) want |= EVENT_READ;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) want |= EVENT_WRITE;
    auto it = c->watched.find(fd);
    uint32_t have = it == c->watched.end() ? 0 : it->second;
    for (uint32_t kind : {EVENT_READ, EVENT_WRITE}) {
        CascadingEventEngine::Event e{fd, kind, tag(fd, kind)};
        // Failing here would stall the transfer until its timeout, but -1
        // would make curl fail every transfer of the vCPU.
        if ((have & kind) && !(want & kind) && c->poller->rm_interest(e) < 0 && errno != ENOENT)
            LOG_EVERY_T(1, LOG_ERROR("curl: cannot stop watching fd `: ", fd, ERRNO()));
        if (!(have & kind) && (want & kind) && c->poller->add_interest(e) < 0)
            LOG_EVERY_T(1, LOG_ERROR("curl: cannot watch fd `: ", fd, ERRNO()));
    }
    if (want)
        c->watched[fd] = want;
    else if (it != c->watched.end())
        c->watched.erase(it);
    return 0;
}

// CURLMOPT_TIMERFUNCTION: -1 cancels the timer, 0 asks for a call at once.
int on_timer(CURLM*, long timeout_ms, void* userp) {
    auto c = static_cast<curl_vcpu*>(userp);
    c->deadline = timeout_ms < 0 ? UINT64_MAX : Timeout((uint64_t)timeout_ms * 1000).expiration();
    c->kick();
    return 0;
}

int os_errno(CURL* e, CURLcode r) {
    if (r == CURLE_OPERATION_TIMEDOUT) return ETIMEDOUT;
    long os = 0;
    if (curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os) == CURLE_OK && os > 0) return (int)os;
    return EIO;
}

// Takes `e` out of the multi handle and wakes its transfer. Under c->lock.
void finish(curl_vcpu* c, CURL* e, CURLcode result, int err) {
    curl_multi_remove_handle(c->multi, e);
    auto it = c->transfers.find(e);
    if (it == c->transfers.end()) return;
    transfer* t = it->second;
    c->transfers.erase(it);
    t->result = result;
    t->err = err;
    t->done = true;
    t->done_sem.signal(1);
}

// Under c->lock.
void act(curl_vcpu* c, curl_socket_t fd, int events) {
    int running;
    CURLMcode r = curl_multi_socket_action(c->multi, fd, events, &running);
    if (r != CURLM_OK)
        LOG_EVERY_T(1, LOG_ERROR("curl_multi_socket_action failed: ", curl_multi_strerror(r)));
    CURLMsg* m;
    int left;
    while ((m = curl_multi_info_read(c->multi, &left))) {
        if (m->msg != CURLMSG_DONE) continue;
        CURL* e = m->easy_handle;  // `m` dies with the handle's removal
        CURLcode result = m->data.result;
        finish(c, e, result, result == CURLE_OK ? 0 : os_errno(e, result));
    }
}

void* drive(void* arg) {
    auto c = static_cast<curl_vcpu*>(arg);
    void* tags[kEventBatch];
    while (!c->stopping && !c->transfers.empty()) {
        Timeout timer;
        timer.expiration(c->deadline);
        c->parked = true;
        ssize_t n = c->poller->wait_for_events(tags, kEventBatch, timer);
        int err = errno;
        c->parked = false;
        if (n < 0 && err != kKick) {
            LOG_EVERY_T(1, LOG_ERROR("curl: waiting for events failed: ", ERRNO(err)));
            thread_usleep(1000);  // don't spin on a persistent error
        }
        scoped_lock l(c->lock);  // a transfer's callback may hold it
        if (c->stopping) break;
        for (ssize_t i = 0; i < n; i++) {
            auto t = (uintptr_t)tags[i];
            act(c, (curl_socket_t)(t >> 2), (t & EVENT_READ) ? CURL_CSELECT_IN : CURL_CSELECT_OUT);
        }
        timer.expiration(c->deadline);
        if (timer.expired()) {
            c->deadline = UINT64_MAX;  // curl sets the next one from inside
            act(c, CURL_SOCKET_TIMEOUT, 0);
        }
    }
    c->driver = nullptr;
    unref(c);
    return nullptr;
}

void fini_on_photon_fini() {
    t_fini_hooked = false;
    libcurl_fini();
}

int fail(int err, int code) {
    errno = err;
    return code;
}

}  // namespace

// photon::init(..., INIT_IO_LIBCURL) sets up libcurl on the new vCPU.
[[maybe_unused]] static const bool registered_with_init =
    register_io_part(INIT_IO_LIBCURL, [] { return libcurl_init(CURL_GLOBAL_ALL, 0, 32); });

int libcurl_init(long flags, long pipelining, long maxconn) {
    if (t_curl) return 0;
    auto vcpu = get_vcpu();
    if (!vcpu || !vcpu->master_event_engine)
        LOG_ERROR_RETURN(ENOSYS, -1, "libcurl_init: not a vCPU with an event engine");
    static std::once_flag once;
    static CURLcode global = CURLE_OK;
    std::call_once(once, [flags] { global = curl_global_init(flags); });
    if (global != CURLE_OK)
        LOG_ERROR_RETURN(EIO, -1,
                         "libcurl_init: curl_global_init failed: ", curl_easy_strerror(global));

    auto c = new curl_vcpu;
    c->poller = new_default_cascading_engine();
    if (!c->poller) {
        int e = errno;
        delete c;
        LOG_ERROR_RETURN(e, -1, "libcurl_init: no cascading event engine: ", ERRNO(e));
    }
    c->multi = curl_multi_init();
    if (!c->multi) {
        delete c;
        LOG_ERROR_RETURN(EIO, -1, "libcurl_init: curl_multi_init failed");
    }
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, &on_socket);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, &on_timer);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    if (curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, pipelining) != CURLM_OK)
        LOG_WARN("libcurl_init: pipelining=` refused", pipelining);
    if (curl_multi_setopt(c->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxconn) != CURLM_OK)
        LOG_WARN("libcurl_init: maxconn=` refused", maxconn);
    t_curl = c;
    // Before wait_all(): the transfers must end for the coroutines to end.
    if (!t_fini_hooked) {
        t_fini_hooked = true;
        fini_hook(Delegate<void>(&fini_on_photon_fini));
    }
    return 0;
}

void libcurl_fini() {
    auto c = t_curl;
    if (!c) return;
    if (CURRENT == c->driver) {
        LOG_ERROR("libcurl_fini: not from inside a curl callback");
        return;
    }
    t_curl = nullptr;
    {
        scoped_lock l(c->lock);
        c->stopping = true;
        while (!c->transfers.empty())
            finish(c, c->transfers.begin()->first, CURLE_ABORTED_BY_CALLBACK, ESHUTDOWN);
        c->kick();
    }
    unref(c);  // the last one out (the driver, a woken transfer) frees it
}

static int multi_setopt(CURLMoption option, long val) {
    auto c = t_curl;
    if (!c) LOG_ERROR_RETURN(ENOSYS, -1, "libcurl: not initialized on this vCPU");
    scoped_lock l(c->lock);
    CURLMcode r = curl_multi_setopt(c->multi, option, val);
    if (r != CURLM_OK) LOG_ERROR_RETURN(EINVAL, -1, "curl_multi_setopt: ", curl_multi_strerror(r));
    return 0;
}

int libcurl_set_pipelining(long val) { return multi_setopt(CURLMOPT_PIPELINING, val); }

int libcurl_set_maxconnects(long val) { return multi_setopt(CURLMOPT_MAX_TOTAL_CONNECTIONS, val); }

int curl_perform(CURL* curl, uint64_t timeout) {
    auto c = t_curl;
    if (!c)
        LOG_ERROR_RETURN(ENOSYS, CURLE_FAILED_INIT,
                         "curl_perform: libcurl_init() not called on this vCPU");
    if (!curl) return fail(EINVAL, CURLE_BAD_FUNCTION_ARGUMENT);
    if (CURRENT == c->driver)
        LOG_ERROR_RETURN(EDEADLK, CURLE_RECURSIVE_API_CALL,
                         "curl_perform: called from a curl callback");
    Timeout tmo(timeout);
    c->refs++;
    DEFER(unref(c));
    transfer t;
    if (c->lock.lock(tmo) < 0) {
        int e = errno;
        return e == ETIMEDOUT ? fail(e, CURLE_OPERATION_TIMEDOUT)
                              : fail(e, CURLE_ABORTED_BY_CALLBACK);
    }
    {
        DEFER(c->lock.unlock());
        if (c->stopping) return fail(ESHUTDOWN, CURLE_ABORTED_BY_CALLBACK);
        CURLMcode r = curl_multi_add_handle(c->multi, curl);
        if (r != CURLM_OK) {
            int e = r == CURLM_ADDED_ALREADY ? EBUSY : r == CURLM_OUT_OF_MEMORY ? ENOMEM : EINVAL;
            LOG_ERROR_RETURN(e, CURLE_FAILED_INIT,
                             "curl_multi_add_handle: ", curl_multi_strerror(r));
        }
        c->transfers[curl] = &t;
        if (!c->driver) {
            c->driver = thread_create(&drive, c);
            if (!c->driver) {
                int e = errno;
                curl_multi_remove_handle(c->multi, curl);
                c->transfers.erase(curl);
                LOG_ERROR_RETURN(e, CURLE_OUT_OF_MEMORY,
                                 "curl_perform: no driver coroutine: ", ERRNO(e));
            }
            c->refs++;
        }
    }
    if (t.done_sem.wait_interruptible(1, tmo) < 0 && !t.done) {
        int e = errno;
        scoped_lock l(c->lock);  // retries through interrupts
        if (!t.done) {           // else it ended meanwhile: keep its result
            curl_multi_remove_handle(c->multi, curl);
            c->transfers.erase(curl);
            c->kick();  // it may have been the driver's last transfer
            t.result = e == ETIMEDOUT ? CURLE_OPERATION_TIMEDOUT : CURLE_ABORTED_BY_CALLBACK;
            t.err = e;
        }
    }
    if (t.result != CURLE_OK) errno = t.err;
    return t.result;
}

// ---- cURL ------------------------------------------------------------------

namespace {

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

size_t no_body(char*, size_t, size_t, void*) { return 0; }

int trace(CURL*, curl_infotype type, char* data, size_t size, void*) {
    const char* dir = type == CURLINFO_TEXT         ? "*"
                      : type == CURLINFO_HEADER_IN  ? "<"
                      : type == CURLINFO_HEADER_OUT ? ">"
                                                    : nullptr;
    if (!dir) return 0;  // bodies and TLS records: not logged
    while (size && (data[size - 1] == '\n' || data[size - 1] == '\r')) size--;
    LOG_INFO("curl ` `", dir, std::string_view(data, size));
    return 0;
}

}  // namespace

cURL::cURL() {
    m_errmsg[0] = '\0';
    m_curl = curl_easy_init();
    if (!m_curl) {
        ret = opt_error_ = CURLE_FAILED_INIT;
        snprintf(m_errmsg, sizeof(m_errmsg), "curl_easy_init failed");
        return;
    }
    set_defaults();
}

cURL::~cURL() { curl_easy_cleanup(m_curl); }

void cURL::set_defaults() {
    setopt(CURLOPT_ERRORBUFFER, (void*)m_errmsg);
    setopt(CURLOPT_NOSIGNAL, 1L);
    setopt(CURLOPT_TCP_NODELAY, 1L);
    // Never curl's defaults, fwrite to stdout / fread from stdin.
    setopt(CURLOPT_WRITEFUNCTION, &discard);
    setopt(CURLOPT_READFUNCTION, &no_body);
}

cURL& cURL::reset() {
    if (m_curl) curl_easy_reset(m_curl);
    reset_error();
    postfields_set_ = custom_verb_ = false;
    if (m_curl) set_defaults();
    return *this;
}

static bool is_off_t_option(CURLoption option) {
    return option >= CURLOPTTYPE_OFF_T && option < CURLOPTTYPE_OFF_T + 10000;
}

cURL& cURL::setopt_integer(CURLoption option, curl_off_t arg) {
    CURLcode r = !m_curl                   ? CURLE_FAILED_INIT
                 : is_off_t_option(option) ? curl_easy_setopt(m_curl, option, arg)
                                           : curl_easy_setopt(m_curl, option, (long)arg);
    if (r != CURLE_OK) {
        LOG_WARN("curl_easy_setopt(option=`, `) failed: `", (int)option, (long long)arg,
                 curl_easy_strerror(r));
        if (opt_error_ == CURLE_OK) opt_error_ = r;
    }
    return *this;
}

cURL& cURL::setopt_pointer(CURLoption option, const void* arg) {
    CURLcode r = m_curl ? curl_easy_setopt(m_curl, option, arg) : CURLE_FAILED_INIT;
    if (r != CURLE_OK) {
        LOG_WARN("curl_easy_setopt(option=`) failed: `", (int)option, curl_easy_strerror(r));
        if (opt_error_ == CURLE_OK) opt_error_ = r;
    }
    return *this;
}

cURL& cURL::setopt_function(CURLoption option, void (*arg)()) {
    // curl reads it back as its own callback type: function pointers share
    // one representation on every ABI photon targets.
    CURLcode r = m_curl ? curl_easy_setopt(m_curl, option, arg) : CURLE_FAILED_INIT;
    if (r != CURLE_OK) {
        LOG_WARN("curl_easy_setopt(option=`) failed: `", (int)option, curl_easy_strerror(r));
        if (opt_error_ == CURLE_OK) opt_error_ = r;
    }
    return *this;
}

cURL& cURL::set_verbose(bool on) {
    if (on) setopt(CURLOPT_DEBUGFUNCTION, &trace);
    return setopt(CURLOPT_VERBOSE, on ? 1L : 0L);
}

CURLcode cURL::getinfo_raw(CURLINFO info, void* out) {
    return m_curl ? curl_easy_getinfo(m_curl, info, out) : CURLE_FAILED_INIT;
}

void cURL::prepare(const char* url, verb v) {
    m_errmsg[0] = '\0';
    if (custom_verb_) {
        setopt(CURLOPT_CUSTOMREQUEST, nullptr);
        custom_verb_ = false;
    }
    setopt(CURLOPT_HTTPGET, 1L);  // GET, no upload, a body: what the others start from
    switch (v) {
        case verb::get:
            break;
        case verb::head:
            setopt(CURLOPT_NOBODY, 1L);
            break;
        case verb::post:
            setopt(CURLOPT_POST, 1L);
            break;
        case verb::put:
            setopt(CURLOPT_UPLOAD, 1L);
            break;
        case verb::del:
            setopt(CURLOPT_CUSTOMREQUEST, "DELETE");
            custom_verb_ = true;
            break;
    }
    setopt(CURLOPT_URL, url);
    setopt(CURLOPT_HTTPHEADER, (void*)headers.list);
    setopt(CURLOPT_PROXYHEADER, (void*)proxy_headers.list);
}

long cURL::perform(uint64_t timeout) {
    if (opt_error_ != CURLE_OK) {
        ret = opt_error_;
        errno_ = m_curl ? EINVAL : ENOMEM;
    } else {
        ret = (CURLcode)curl_perform(m_curl, timeout);
        errno_ = ret == CURLE_OK ? 0 : errno;
    }
    opt_error_ = CURLE_OK;
    // This call's writer, reader and post fields may not outlive it.
    setopt(CURLOPT_WRITEFUNCTION, &discard);
    setopt(CURLOPT_WRITEDATA, nullptr);
    setopt(CURLOPT_READFUNCTION, &no_body);
    setopt(CURLOPT_READDATA, nullptr);
    if (postfields_set_) {
        setopt(CURLOPT_POSTFIELDS, nullptr);
        setopt(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)-1);
        postfields_set_ = false;
    }
    if (ret != CURLE_OK && !m_errmsg[0])
        snprintf(m_errmsg, sizeof(m_errmsg), "%s", curl_easy_strerror(ret));
    return get_response_code();
}

void cURL::slist::append(const char* h) {
    if (auto l = curl_slist_append(list, h)) list = l;
}

void cURL::slist::clear() {
    curl_slist_free_all(list);
    list = nullptr;
}

}  // namespace net
}  // namespace photon
