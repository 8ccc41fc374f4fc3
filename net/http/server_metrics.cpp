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

ServerMetrics::ServerMetrics(const std::string& name, const std::atomic<size_t>* live)
    : name_(name.empty() ? "http-" + std::to_string(g_unnamed.fetch_add(1) + 1) : name),
      live_(live) {
    id_ = metrics::register_collector(&collect, this);
}

ServerMetrics::~ServerMetrics() {
    if (id_ > 0) metrics::unregister_collector(id_);
}

void ServerMetrics::count_request(int status, uint64_t us) {
    int k = status >= 100 && status < 600 ? status / 100 : 0;
    by_class_[k].fetch_add(1, std::memory_order_relaxed);
    duration_us_.put_shared(us);
}

void ServerMetrics::collect(void* self, metrics::Exposition& out) {
    auto m = static_cast<ServerMetrics*>(self);
    using E = metrics::Exposition;
    metrics::Label l[2] = {{"server", m->name_}, {"", ""}};
    out.family("photon_http_server_connections", "Connections being served.", E::GAUGE);
    out.sample("photon_http_server_connections", (uint64_t)m->live_->load(), l, 1);
    out.family("photon_http_server_connections_total", "Connections served.", E::COUNTER);
    out.sample("photon_http_server_connections_total", m->connections_.load(), l, 1);
    out.family("photon_http_server_received_bytes_total",
               "Bytes read from the connections: request heads and bodies (HTTP/2: frames).",
               E::COUNTER);
    out.sample("photon_http_server_received_bytes_total", m->received_.load(), l, 1);
    out.family("photon_http_server_sent_bytes_total",
               "Bytes written to the connections: response heads and bodies (HTTP/2: frames).",
               E::COUNTER);
    out.sample("photon_http_server_sent_bytes_total", m->sent_.load(), l, 1);
    out.family("photon_http_server_requests_total",
               "Requests a handler answered, by the class of its status.", E::COUNTER);
    l[1].name = "code";
    for (int k = 0; k < 6; k++) {
        l[1].value = kClasses[k];
        out.sample("photon_http_server_requests_total", m->by_class_[k].load(), l, 2);
    }
    out.family("photon_http_server_errors_total",
               "Requests or connections that failed: bad heads (4xx), late heads (408), no "
               "room in the memory budget (503), failed handlers, failed sends.",
               E::COUNTER);
    l[1].name = "kind";
    for (int e = 0; e < kErrors; e++) {
        l[1].value = kErrorNames[e];
        out.sample("photon_http_server_errors_total", m->errors_[e].load(), l, 2);
    }
    out.family("photon_http_server_handler_seconds", "Time in the handler, per request.",
               E::HISTOGRAM);
    metrics::Log2Histogram h;
    m->duration_us_.snapshot(&h);
    out.histogram("photon_http_server_handler_seconds", h, 1e-6, l, 1);
}

}  // namespace http
}  // namespace net
}  // namespace photon
