// photon::init / photon::fini: a vCPU, its master event engine and the
// process-wide signal coroutine. The I/O engine bits that need no setup of
// their own (edge-triggered sockets are built into the epoll engine) are
// accepted as they are.
#include <photon/photon.h>

#include <vector>

#include <photon/common/alog.h>
#include <photon/io/fd-events.h>
#include <photon/io/signal.h>
#include <photon/thread/thread.h>

namespace photon {

#if PHOTON_HAVE_CURL
namespace net {
// net/curl.cpp (<photon/net/curl.h>); it registers its own fini hook.
int libcurl_init(long flags, long pipelining, long maxconn);
}  // namespace net
#endif

namespace {
thread_local std::vector<Delegate<void>>* t_fini_hooks = nullptr;
thread_local std::vector<Delegate<void>>* t_late_hooks = nullptr;

void add_hook(std::vector<Delegate<void>>*& list, Delegate<void> handler) {
    if (!list) list = new std::vector<Delegate<void>>;
    list->push_back(handler);
}

// Runs the hooks of `list`, last registered first, including any they add.
void run_hooks(std::vector<Delegate<void>>*& list) {
    while (auto hooks = list) {
        list = nullptr;
        for (auto it = hooks->rbegin(); it != hooks->rend(); ++it) (*it)();
        delete hooks;
    }
}
thread_local bool t_owns_signal = false;

constexpr uint64_t kEngineBits = INIT_EVENT_EPOLL | INIT_EVENT_IOURING | INIT_EVENT_EPOLL_NG |
                                 INIT_EVENT_SELECT | INIT_EVENT_KQUEUE | INIT_EVENT_IOCP;

void undo_init() {
    int e = errno;
    if (t_owns_signal) {
        sync_signal_fini();
        t_owns_signal = false;
    }
    fd_events_fini();
    vcpu_fini();
    errno = e;
}
}  // namespace

int init(uint64_t event_engine, uint64_t io_engine, const PhotonOptions& options) {
    if (CURRENT) LOG_ERROR_RETURN(EALREADY, -1, "photon::init: this OS thread is a vCPU already");
    if (vcpu_init() < 0) return -1;
    if ((event_engine & kEngineBits) && fd_events_init(event_engine, options) < 0) {
        undo_init();
        return -1;
    }
    // One signal coroutine per process: the first vCPU with an engine that
    // asks runs it.
    if ((event_engine & INIT_EVENT_SIGNAL) && (event_engine & kEngineBits)) {
        int r = sync_signal_init();
        if (r == 0) {
            t_owns_signal = true;
        } else if (errno != EALREADY) {
            undo_init();
            return -1;
        }
    }
#if PHOTON_HAVE_CURL
    // Transfers need fd events: skipped without an engine. 3 = CURL_GLOBAL_ALL.
    if ((io_engine & INIT_IO_LIBCURL) && (event_engine & kEngineBits) &&
        net::libcurl_init(3, 0, 32) < 0) {
        undo_init();
        return -1;
    }
#endif
    return 0;
}

void fini_hook(Delegate<void> handler) { add_hook(t_fini_hooks, handler); }

void fini_hook_late(Delegate<void> handler) { add_hook(t_late_hooks, handler); }

int fini() {
    if (!CURRENT) LOG_ERROR_RETURN(ENOSYS, -1, "photon::fini: not initialized");
    run_hooks(t_fini_hooks);
    if (t_owns_signal) {
        sync_signal_fini();
        t_owns_signal = false;
    }
    // Coroutines still waiting on fds need the engine and what hangs off it:
    // those go last.
    wait_all();
    run_hooks(t_late_hooks);
    fd_events_fini();
    return vcpu_fini();
}

}  // namespace photon
