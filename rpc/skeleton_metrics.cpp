// A skeleton's counters in the metrics registry (skeleton_metrics.h).
#include "skeleton_metrics.h"

namespace photon {
namespace rpc {

namespace {

std::atomic<int> g_skeletons{0};

const char* const kErrorNames[] = {"no_function", "no_memory",   "no_coroutine",
                                   "bad_frame",   "read_failed", "handler_failed"};

}  // namespace

SkeletonMetrics::SkeletonMetrics() : name_("rpc-" + std::to_string(g_skeletons.fetch_add(1) + 1)) {
    id_ = metrics::register_collector(&collect, this);
}

SkeletonMetrics::~SkeletonMetrics() {
    if (id_ > 0) metrics::unregister_collector(id_);
}

void SkeletonMetrics::set_name(const char* name) {
    if (!name || !*name) return;
    if (id_ > 0) metrics::unregister_collector(id_);  // waits for a render that reads name_
    name_ = name;
    id_ = metrics::register_collector(&collect, this);
}

void SkeletonMetrics::collect(void* self, metrics::Exposition& out) {
    auto m = static_cast<SkeletonMetrics*>(self);
    using E = metrics::Exposition;
    metrics::Label l[2] = {{"skeleton", m->name_}, {"kind", ""}};
    auto counter = [&](const char* name, const char* help, const std::atomic<uint64_t>& v) {
        out.family(name, help, E::COUNTER);
        out.sample(name, v.load(std::memory_order_relaxed), l, 1);
    };
    out.family("photon_rpc_server_connections", "Connections being served.", E::GAUGE);
    out.sample("photon_rpc_server_connections", m->connections_.load(), l, 1);
    counter("photon_rpc_server_connections_total", "Connections served.", m->connections_total_);
    counter("photon_rpc_server_requests_total", "Request frames read.", m->requests_);
    counter("photon_rpc_server_received_bytes_total", "Request body bytes.", m->bytes_in_);
    counter("photon_rpc_server_sent_bytes_total", "Reply body bytes.", m->bytes_out_);
    out.family("photon_rpc_server_errors_total",
               "Requests refused or failed, and connections closed on a bad or failed read.",
               E::COUNTER);
    for (int e = 0; e < kErrors; e++) {
        l[1].value = kErrorNames[e];
        out.sample("photon_rpc_server_errors_total", m->errors_[e].load(), l, 2);
    }
    out.family("photon_rpc_server_handler_seconds", "Time in the function, for one request in 16.",
               E::HISTOGRAM);
    metrics::Log2Histogram h;
    m->handler_us_.snapshot(&h);
    out.histogram("photon_rpc_server_handler_seconds", h, 1e-6, l, 1);
}

}  // namespace rpc
}  // namespace photon
