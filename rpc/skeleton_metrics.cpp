// A skeleton's counters in the metrics registry (skeleton_metrics.h).
#include "skeleton_metrics.h"

namespace photon {
namespace rpc {

namespace {

std::atomic<int> g_skeletons{0};

const char* const kErrorNames[] = {"no_function", "no_memory",   "no_coroutine",
                                   "bad_frame",   "read_failed", "handler_failed"};

}  // namespace

skeleton_metrics::skeleton_metrics()
    : name_("rpc-" + std::to_string(g_skeletons.fetch_add(1) + 1)) {
    id_ = metrics::register_collector(&collect, this);
}

skeleton_metrics::~skeleton_metrics() {
    if (id_ > 0) metrics::unregister_collector(id_);
}

void skeleton_metrics::set_name(const char* name) {
    if (!name || !*name) return;
    if (id_ > 0) metrics::unregister_collector(id_);  // waits for a render that reads name_
    name_ = name;
    id_ = metrics::register_collector(&collect, this);
}

void skeleton_metrics::collect(void* self, metrics::Exposition& out) {
    auto m = static_cast<skeleton_metrics*>(self);
    using E = metrics::Exposition;
    metrics::Label l{"skeleton", m->name_};
    uint64_t errors[kErrors];
    metrics::load_all(m->errors_, errors);
    out.metric("photon_rpc_server_connections", "Connections being served.", E::GAUGE,
               m->connections_.load(), &l, 1);
    out.metric("photon_rpc_server_connections_total", "Connections served.", E::COUNTER,
               m->connections_total_.load(), &l, 1);
    out.metric("photon_rpc_server_requests_total", "Request frames read.", E::COUNTER,
               m->requests_.load(), &l, 1);
    out.metric("photon_rpc_server_received_bytes_total", "Request body bytes.", E::COUNTER,
               m->bytes_in_.load(), &l, 1);
    out.metric("photon_rpc_server_sent_bytes_total", "Reply body bytes.", E::COUNTER,
               m->bytes_out_.load(), &l, 1);
    out.metric_by("photon_rpc_server_errors_total",
                  "Requests refused or failed, and connections closed on a bad or failed read.",
                  E::COUNTER, "kind", kErrorNames, errors, kErrors, &l, 1);
    out.histogram_metric("photon_rpc_server_handler_seconds",
                         "Time in the function, for one request in 16.", m->handler_us_, 1e-6, &l,
                         1);
}

}  // namespace rpc
}  // namespace photon
