// An HTTP client's counters in the metrics registry (photon/common/metric-meter/prometheus.h):
// calls, responses by status class, failed calls by kind, retries, connections (dialed or
// reused), bytes each way and the time to a response head, labelled "client-N". A client may
// be called from several vCPUs: relaxed atomic adds, compiled away with metrics::kCounting
// false (PHOTON_METRICS=OFF). Private.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <photon/common/metric-meter/prometheus.h>

#include "../../common/metric-meter/counting.h"

namespace photon {
namespace net {
namespace http {

class client_metrics {
public:
    // Why a call failed.
    enum error_kind {
        INVALID,       // refused before anything was sent (EINVAL: a bad URL, bad headers)
        CONNECT,       // no connection: refused, unreachable, unknown host, TLS
        TIMEOUT,       // the call's timeout passed, at any step
        SEND,          // writing the request failed (a reset, a broken pipe)
        RECEIVE,       // the connection ended before a response head
        BAD_RESPONSE,  // a malformed response (EPROTO)
        REDIRECTS,     // more redirects than op->follow (ELOOP)
        OTHER,
        kErrors
    };
    // Where a call was when it failed, for error().
    enum call_stage { BEFORE, CONNECTING, SENDING, RECEIVING };

    client_metrics();
    ~client_metrics();
    client_metrics(const client_metrics&) = delete;
    client_metrics& operator=(const client_metrics&) = delete;

    void request() { add(requests_, 1); }
    // A final response with `status`, its head `us` microseconds after the call began.
    void response(int status, uint64_t us) {
        if (metrics::kCounting) count_response(status, us);
    }
    // A failed call: its kind from where it was and errno.
    void error(call_stage s, int err) { add(errors_[kind_of(s, err)], 1); }
    void retry() { add(retries_, 1); }
    void connection(bool reused) { add(reused ? reused_ : dialed_, 1); }
    void bytes(uint64_t sent, uint64_t received) {
        add(sent_, sent);
        add(received_, received);
    }
    // The counters of bytes, for HTTP/2 connections to count into (nullptr: not counting).
    std::atomic<uint64_t>* received_counter() { return metrics::kCounting ? &received_ : nullptr; }
    std::atomic<uint64_t>* sent_counter() { return metrics::kCounting ? &sent_ : nullptr; }

    static error_kind kind_of(call_stage s, int err);

private:
    static void add(std::atomic<uint64_t>& c, uint64_t n) {
        if (metrics::kCounting) c.fetch_add(n, std::memory_order_relaxed);
    }
    void count_response(int status, uint64_t us);
    static void collect(void* self, metrics::Exposition& out);

    std::string name_;
    std::atomic<uint64_t> requests_{0}, retries_{0}, dialed_{0}, reused_{0};
    std::atomic<uint64_t> sent_{0}, received_{0};
    std::atomic<uint64_t> by_class_[6] = {};  // 1xx .. 5xx, [0] anything else
    std::atomic<uint64_t> errors_[kErrors] = {};
    metrics::Log2Histogram head_us_;
    int id_ = -1;
};

}  // namespace http
}  // namespace net
}  // namespace photon
