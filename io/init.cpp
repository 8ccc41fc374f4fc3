// photon::init / photon::fini: a vCPU, its master event engine and the
// process-wide signal coroutine. The I/O engine bits that need no setup of
// their own (edge-triggered sockets are built into the epoll engine) are
// accepted as they are.
#include <photon/photon.h>

#include <pthread.h>

#include <mutex>
#include <vector>

#include <photon/common/alog.h>
#include <photon/common/fault_injection.h>
#include <photon/io/fd-events.h>
#include <photon/io/signal.h>
#include <photon/thread/detail/idle-wait.h>
#include <photon/thread/detail/work_stealing.h>
#include <photon/thread/thread.h>

#include "init_hooks.h"

namespace photon {

namespace {
struct io_part {
    uint64_t io_bit;
    int (*init)();
};
// Filled by static initializers (before main), read by init(): a plain
// array, zero-initialized before any of them runs.
io_part g_io_parts[8];
int g_io_part_count = 0;

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
thread_local uint64_t t_event_engine = 0;  // what init() was asked, for a forked child
thread_local PhotonOptions t_options;

// In a forked child, as PhotonLibOS resets its engines: the vCPU that forked
// gets an event engine of its own, since the one it had (an epoll set, an
// io_uring's shared memory) is still the parent's, whose events the child
// would race for or corrupt. The old engine is left as it is, never freed or
// waited on (freeing an io_uring would cancel the parent's requests):
// coroutines parked on it stay parked. Then the signal coroutine restarts.
void after_fork_in_child() {
    vcpu_base* v = get_vcpu();
    if (!v || !v->master_event_engine) return;
    uint64_t kind = t_event_engine ? t_event_engine : v->master_event_engine->engine_kind();
    MasterEventEngine* e = new_master_event_engine(kind, t_options);
    if (!e) {
        LOG_ERROR("photon: no event engine for the forked child: ", ERRNO());
        return;
    }
    set_vcpu_idle_wait(v, e);
    v->master_event_engine = e;
    sync_signal_after_fork();
}

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
    // PHOTON_FAULTS, read once: a malformed one fails every init (logged).
    if (fault::init_from_env() < 0) return -1;
    if (vcpu_init(options.vcpu_flags) < 0) return -1;
    if (options.default_stack_size && set_default_stack_size(options.default_stack_size) < 0) {
        int e = errno;
        vcpu_fini();
        errno = e;
        return -1;
    }
    if ((event_engine & kEngineBits) && fd_events_init(event_engine, options) < 0) {
        undo_init();
        return -1;
    }
    t_event_engine = event_engine;
    t_options = options;
    static std::once_flag atfork_once;
    std::call_once(atfork_once, [] { pthread_atfork(nullptr, nullptr, &after_fork_in_child); });
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
    // The registered parts (libcurl) need fd events: skipped without an engine.
    for (int i = 0; i < g_io_part_count && (event_engine & kEngineBits); i++) {
        if ((io_engine & g_io_parts[i].io_bit) && g_io_parts[i].init() < 0) {
            undo_init();
            return -1;
        }
    }
    return 0;
}

bool register_io_part(uint64_t io_bit, int (*init)()) {
    if (g_io_part_count == (int)(sizeof(g_io_parts) / sizeof(g_io_parts[0]))) return false;
    g_io_parts[g_io_part_count++] = {io_bit, init};
    return true;
}

void fini_hook(Delegate<void> handler) { add_hook(t_fini_hooks, handler); }

void fini_hook_late(Delegate<void> handler) { add_hook(t_late_hooks, handler); }

int fini() {
    if (!CURRENT) LOG_ERROR_RETURN(ENOSYS, -1, "photon::fini: not initialized");
    // No stolen work may land while the engines and what hangs off them go away.
    detail::vcpu_stop_taking_work();
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
