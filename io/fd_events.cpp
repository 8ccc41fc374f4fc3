// Picking and installing a vCPU's master event engine.
#include <photon/io/fd-events.h>

#include <atomic>

#include <photon/common/alog.h>

namespace photon {

namespace {
std::atomic<bool> g_choice_logged{false};

void log_choice_once(const char* name) {
    if (!g_choice_logged.exchange(true)) LOG_INFO("photon: master event engine is `", name);
}
}  // namespace

MasterEventEngine* new_master_event_engine(uint64_t event_engine, const PhotonOptions& options) {
    if (event_engine & INIT_EVENT_IOURING) {
        iouring_args args;
        args.setup_sqpoll = event_engine & INIT_EVENT_IOURING_SQPOLL;
        args.setup_sq_aff = event_engine & INIT_EVENT_IOURING_SQ_AFF;
        args.setup_iopoll = event_engine & INIT_EVENT_IOURING_IOPOLL;
        args.sq_thread_cpu = options.iouring_sq_thread_cpu;
        args.sq_thread_idle_ms = options.iouring_sq_thread_idle_ms;
        if (auto e = new_iouring_master_engine(args)) {
            log_choice_once("io_uring");
            return e;
        }
        if (!(event_engine & (INIT_EVENT_EPOLL | INIT_EVENT_EPOLL_NG)))
            LOG_ERRNO_RETURN(0, nullptr, "photon: io_uring was asked for and cannot be had");
        if (!g_choice_logged.load())
            LOG_INFO("photon: io_uring unavailable (`), trying epoll", ERRNO());
    }
    if (event_engine & (INIT_EVENT_EPOLL | INIT_EVENT_EPOLL_NG)) {
        if (auto e = new_epoll_master_engine()) {
            log_choice_once("epoll");
            return e;
        }
        return nullptr;  // logged by the engine
    }
    LOG_ERROR_RETURN(ENOSYS, nullptr, "photon: no event engine of the kinds asked for (flags `)",
                     HEX(event_engine));
}

int fd_events_init(MasterEventEngine* engine) {
    vcpu_base* v = get_vcpu();
    if (!v) LOG_ERROR_RETURN(ENOSYS, -1, "fd_events_init: not a vCPU");
    if (!engine) LOG_ERROR_RETURN(EINVAL, -1, "fd_events_init: no engine");
    if (v->master_event_engine) LOG_ERROR_RETURN(EALREADY, -1, "fd_events_init: has an engine");
    v->master_event_engine = engine;
    set_vcpu_idle_wait(v, engine);
    return 0;
}

int fd_events_init(uint64_t event_engine, const PhotonOptions& options) {
    vcpu_base* v = get_vcpu();
    if (!v) LOG_ERROR_RETURN(ENOSYS, -1, "fd_events_init: not a vCPU");
    if (v->master_event_engine) LOG_ERROR_RETURN(EALREADY, -1, "fd_events_init: has an engine");
    MasterEventEngine* e = new_master_event_engine(event_engine, options);
    return e ? fd_events_init(e) : -1;
}

int fd_events_fini() {
    vcpu_base* v = get_vcpu();
    if (!v || !v->master_event_engine) return 0;
    MasterEventEngine* e = v->master_event_engine;
    set_vcpu_idle_wait(v, nullptr);  // no notifier may reach it from now on
    v->master_event_engine = nullptr;
    delete e;
    return 0;
}

}  // namespace photon
