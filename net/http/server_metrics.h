// An HTTP server's counters in the metrics registry (photon/common/metric-meter/prometheus.h):
// connections, requests by status class, errors by kind and handler durations, labelled with
// ServerOptions::metrics_name. Shared by the server's vCPUs: relaxed atomic adds, compiled
// away with metrics::kCounting false (PHOTON_METRICS=OFF). Private.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <photon/common/metric-meter/prometheus.h>

#include "../../common/metric-meter/counting.h"

namespace photon {
namespace net {
namespace http {

class server_metrics {
public:
    // What ended a connection or a request without a handler's answer.
    enum error_kind { BAD_REQUEST, HEAD_TIMEOUT, NO_MEMORY, HANDLER_FAILED, SEND_FAILED, kErrors };

    // `name` labels the samples ("" picks "http-N"); `live` is the server's count of
    // connections being served.
    server_metrics(const std::string& name, const std::atomic<size_t>* live);
    ~server_metrics();
    server_metrics(const server_metrics&) = delete;
    server_metrics& operator=(const server_metrics&) = delete;

    void connection() { add(connections_, 1); }
    // A handler answered with `status`; one of them took `us` microseconds (a sample).
    void request(int status) {
        if (metrics::kCounting) count_request(status);
    }
    void handler_time(uint64_t us) {
        if (metrics::kCounting) duration_us_.put_shared(us);
    }
    void error(error_kind e) { add(errors_[e], 1); }
    // Bytes read from / written to a connection, by one socket call.
    void received(uint64_t n) { add(received_, n); }
    void sent(uint64_t n) { add(sent_, n); }
    // The counters of bytes, for HTTP/2's connection to count into (nullptr: not counting).
    std::atomic<uint64_t>* received_counter() { return metrics::kCounting ? &received_ : nullptr; }
    std::atomic<uint64_t>* sent_counter() { return metrics::kCounting ? &sent_ : nullptr; }

private:
    static void add(std::atomic<uint64_t>& c, uint64_t n) {
        if (metrics::kCounting) c.fetch_add(n, std::memory_order_relaxed);
    }
    void count_request(int status);
    static void collect(void* self, metrics::Exposition& out);

    std::string name_;
    const std::atomic<size_t>* live_;
    std::atomic<uint64_t> connections_{0};
    std::atomic<uint64_t> received_{0}, sent_{0};
    std::atomic<uint64_t> by_class_[6] = {};  // 1xx .. 5xx, [0] anything else
    std::atomic<uint64_t> errors_[kErrors] = {};
    metrics::Log2Histogram duration_us_;
    int id_ = -1;
};

}  // namespace http
}  // namespace net
}  // namespace photon
