// photon::init / photon::fini. The event and I/O engines (io/, net/) attach
// to the vCPU through its idle_engine seam when they land.
#include <photon/photon.h>

#include <vector>

#include <photon/common/alog.h>
#include <photon/thread/thread.h>

namespace photon {

namespace {
thread_local std::vector<Delegate<void>>* t_fini_hooks = nullptr;
}

int init(uint64_t event_engine, uint64_t io_engine, const PhotonOptions& options) {
    if (CURRENT) LOG_ERROR_RETURN(EALREADY, -1, "photon::init: this OS thread is a vCPU already");
    if (vcpu_init() < 0) return -1;
    return 0;
}

void fini_hook(Delegate<void> handler) {
    if (!t_fini_hooks) t_fini_hooks = new std::vector<Delegate<void>>;
    t_fini_hooks->push_back(handler);
}

int fini() {
    if (!CURRENT) LOG_ERROR_RETURN(ENOSYS, -1, "photon::fini: not initialized");
    if (auto hooks = t_fini_hooks) {
        t_fini_hooks = nullptr;
        for (auto it = hooks->rbegin(); it != hooks->rend(); ++it) (*it)();
        delete hooks;
    }
    return vcpu_fini();
}

}  // namespace photon
