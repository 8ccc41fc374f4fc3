// An HTTP server's counters in the metrics registry (server_metrics.h).
#include "server_metrics.h"

namespace photon {
namespace net {
namespace http {

namespace {

std::atomic<int> g_unnamed{0};

const char* const kErrorNames[] = {"bad_request", "head_timeout", "no_memory", "handler_failed",
                                   "send_failed"};
const char* const kClasses[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};

}  // namespace

server_metrics::server_metrics(const std::string& name, const std::atomic<size_t>* live)
    : name_(name.empty() ? "http-" + std::to_string(g_unnamed.fetch_add(1) + 1) : name),
      live_(live) {
    id_ = metrics::register_collector(&collect, this);
}

server_metrics::~server_metrics() {
    if (id_ > 0) metrics::unregister_collector(id_);
}

void server_metrics::count_request(int status) {
    int k = status >= 100 && status < 600 ? status / 100 : 0;
    by_class_[k].fetch_add(1, std::memory_order_relaxed);
}

void server_metrics::collect(void* self, metrics::Exposition& out) {
    auto m = static_cast<server_metrics*>(self);
    using E = metrics::Exposition;
    metrics::Label l{"server", m->name_};
    uint64_t classes[6], errors[kErrors];
    metrics::load_all(m->by_class_, classes);
    metrics::load_all(m->errors_, errors);
    out.metric("photon_http_server_connections", "Connections being served.", E::GAUGE,
               m->live_->load(), &l, 1);
    out.metric("photon_http_server_connections_total", "Connections served.", E::COUNTER,
               m->connections_.load(), &l, 1);
    out.metric("photon_http_server_received_bytes_total",
               "Bytes read from the connections: request heads and bodies (HTTP/2: frames).",
               E::COUNTER, m->received_.load(), &l, 1);
    out.metric("photon_http_server_sent_bytes_total",
               "Bytes written to the connections: response heads and bodies (HTTP/2: frames).",
               E::COUNTER, m->sent_.load(), &l, 1);
    out.metric_by("photon_http_server_requests_total",
                  "Requests a handler answered, by the class of its status.", E::COUNTER, "code",
                  kClasses, classes, 6, &l, 1);
    out.metric_by("photon_http_server_errors_total",
                  "Requests or connections that failed: bad heads (4xx), late heads (408), no "
                  "room in the memory budget (503), failed handlers, failed sends.",
                  E::COUNTER, "kind", kErrorNames, errors, kErrors, &l, 1);
    out.histogram_metric("photon_http_server_handler_seconds",
                         "Time in the handler, for one request in 16.", m->duration_us_, 1e-6, &l,
                         1);
}

}  // namespace http
}  // namespace net
}  // namespace photon
