// thread.h's is_master_event_engine_default() and
// reset_master_event_engine_default(): Photon's names for "the vCPU has no
// event engine of its own" and fd_events_fini(). They live in io/ because
// destroying an engine needs its type, which thread/ must not include.
#include <photon/io/fd-events.h>
#include <photon/thread/thread.h>

namespace photon {

bool is_master_event_engine_default() {
    vcpu_base* v = get_vcpu();
    return !v || !v->master_event_engine;
}

void reset_master_event_engine_default() { fd_events_fini(); }

}  // namespace photon
