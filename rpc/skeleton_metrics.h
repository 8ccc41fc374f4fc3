// A skeleton's counters in the metrics registry (photon/common/metric-meter/prometheus.h):
// connections, requests, bytes each way, refusals and failures by kind, and a sample of handler
// times, labelled with the skeleton's metrics name. Shared by the vCPUs that serve its
// connections: relaxed atomic adds, compiled away with metrics::kCounting false
// (PHOTON_METRICS=OFF). Private.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <photon/common/metric-meter/prometheus.h>

#include "../common/metric-meter/counting.h"

namespace photon {
namespace rpc {

class skeleton_metrics {
public:
    enum error_kind {
        NO_FUNCTION,     // answered ENOSYS
        NO_MEMORY,       // answered ENOMEM: no room in the memory budget, or the heap
        NO_COROUTINE,    // answered ENOMEM: no coroutine could be made
        BAD_FRAME,       // not a frame, or one past the size limit: the connection closed
        READ_FAILED,     // reading a frame failed (a timeout, a reset)
        HANDLER_FAILED,  // the function failed without replying: answered its errno
        kErrors
    };
    skeleton_metrics();
    ~skeleton_metrics();
    skeleton_metrics(const skeleton_metrics&) = delete;
    skeleton_metrics& operator=(const skeleton_metrics&) = delete;

    // Renames it ("rpc-N" until then): out of the registry while the name changes.
    void set_name(const char* name);
    void connection_opened() {
        add(connections_total_, 1);
        add(connections_, 1);
    }
    void connection_closed() {
        if (metrics::kCounting) connections_.fetch_sub(1, std::memory_order_relaxed);
    }
    void request(uint64_t bytes) {
        add(requests_, 1);
        add(bytes_in_, bytes);
    }
    void reply(uint64_t bytes) { add(bytes_out_, bytes); }
    void error(error_kind e) { add(errors_[e], 1); }
    void handler_time(uint64_t us) {
        if (metrics::kCounting) handler_us_.put_shared(us);
    }

private:
    static void add(std::atomic<uint64_t>& c, uint64_t n) {
        if (metrics::kCounting) c.fetch_add(n, std::memory_order_relaxed);
    }
    static void collect(void* self, metrics::Exposition& out);

    std::string name_;
    std::atomic<uint64_t> connections_{0}, connections_total_{0}, requests_{0};
    std::atomic<uint64_t> bytes_in_{0}, bytes_out_{0};
    std::atomic<uint64_t> errors_[kErrors] = {};
    metrics::Log2Histogram handler_us_;
    int id_ = -1;
};

}  // namespace rpc
}  // namespace photon
