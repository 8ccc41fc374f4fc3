// An HTTP client's counters in the metrics registry (client_metrics.h).
#include "client_metrics.h"

#include <cerrno>

namespace photon {
namespace net {
namespace http {

namespace {

std::atomic<int> g_unnamed{0};

const char* const kErrorNames[] = {"invalid", "connect",      "timeout",   "send",
                                   "receive", "bad_response", "redirects", "other"};
const char* const kClasses[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};

}  // namespace

client_metrics::client_metrics() : name_("client-" + std::to_string(g_unnamed.fetch_add(1) + 1)) {
    id_ = metrics::register_collector(&collect, this);
}

client_metrics::~client_metrics() {
    if (id_ > 0) metrics::unregister_collector(id_);
}

client_metrics::error_kind client_metrics::kind_of(call_stage s, int err) {
    if (err == ETIMEDOUT) return TIMEOUT;
    if (err == ELOOP) return REDIRECTS;
    switch (s) {
        case CONNECTING:
            return CONNECT;
        case SENDING:
            return SEND;
        case RECEIVING:
            return err == EPROTO ? BAD_RESPONSE : RECEIVE;
        default:
            return err == EINVAL ? INVALID : OTHER;
    }
}

void client_metrics::count_response(int status, uint64_t us) {
    int k = status >= 100 && status < 600 ? status / 100 : 0;
    by_class_[k].fetch_add(1, std::memory_order_relaxed);
    head_us_.put_shared(us);
}

void client_metrics::collect(void* self, metrics::Exposition& out) {
    auto m = static_cast<client_metrics*>(self);
    using E = metrics::Exposition;
    metrics::Label l{"client", m->name_};
    uint64_t classes[6], errors[kErrors];
    metrics::load_all(m->by_class_, classes);
    metrics::load_all(m->errors_, errors);
    out.metric("photon_http_client_requests_total",
               "Calls made (a call's redirects and retries are one request).", E::COUNTER,
               m->requests_.load(), &l, 1);
    out.metric_by("photon_http_client_responses_total",
                  "Calls answered, by the class of the final status.", E::COUNTER, "code", kClasses,
                  classes, 6, &l, 1);
    out.metric_by("photon_http_client_errors_total",
                  "Calls that failed, by kind: a bad request, no connection, the timeout, a "
                  "failed send, no response head, a malformed one, too many redirects.",
                  E::COUNTER, "kind", kErrorNames, errors, kErrors, &l, 1);
    out.metric("photon_http_client_retries_total",
               "Requests sent again on a new connection after a pooled one turned out dead.",
               E::COUNTER, m->retries_.load(), &l, 1);
    const char* const how[] = {"new", "reused"};
    const uint64_t conns[] = {m->dialed_.load(), m->reused_.load()};
    out.metric_by("photon_http_client_connections_total",
                  "Connections requests went over: dialed for them, or reused from the pool "
                  "(HTTP/2: a connection's first stream, or a later one).",
                  E::COUNTER, "how", how, conns, 2, &l, 1);
    out.metric("photon_http_client_sent_bytes_total",
               "Bytes written: request heads and bodies (HTTP/2: frames; TLS: before encryption).",
               E::COUNTER, m->sent_.load(), &l, 1);
    out.metric("photon_http_client_received_bytes_total",
               "Bytes read: response heads and bodies (HTTP/2: frames; TLS: decrypted).",
               E::COUNTER, m->received_.load(), &l, 1);
    out.histogram_metric("photon_http_client_request_seconds",
                         "Time from a call's start to its final response head (redirects "
                         "included).",
                         m->head_us_, 1e-6, &l, 1);
}

}  // namespace http
}  // namespace net
}  // namespace photon
