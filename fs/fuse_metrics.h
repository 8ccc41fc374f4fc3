// A mounted FUSE session's counters in the metrics registry
// (photon/common/metric-meter/prometheus.h): requests by operation and their time in the file
// system, replies with an errno by kind, and the bytes read and written through the mount,
// labelled "fuse-N". The session server counts requests and times them (every run_* call);
// the bytes and most errors are counted where fuser_go's operations reply (fuse_ll_fs), so
// run_fuse and run_fuse_ll count only the server's own error replies. Shared by the lanes:
// relaxed atomic adds, compiled away with metrics::kCounting false (PHOTON_METRICS=OFF). Private.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <photon/common/metric-meter/prometheus.h>

#include "../common/metric-meter/counting.h"

namespace photon {
namespace fs {

class fuse_metrics {
public:
    enum fuse_op {
        LOOKUP,
        GETATTR,
        SETATTR,
        OPEN,
        CREATE,
        READ,
        WRITE,
        FLUSH,
        RELEASE,
        OPENDIR,
        READDIR,
        RELEASEDIR,
        STATFS,
        FORGET,
        OTHER,
        kOps
    };
    enum error_kind { NOENT, ACCESS, NOSYS, NOMEM, INTR, OTHER_ERROR, kErrors };

    fuse_metrics();
    ~fuse_metrics();
    fuse_metrics(const fuse_metrics&) = delete;
    fuse_metrics& operator=(const fuse_metrics&) = delete;

    // A request read from /dev/fuse, by its FUSE opcode.
    void request(uint32_t opcode) { add(requests_[op_of(opcode)], 1); }
    // A request served in `us` microseconds (its handler ran and replied).
    void served(uint64_t us) {
        if (metrics::kCounting) served_us_.put_shared(us);
    }
    // A reply with errno `err` (> 0).
    void error(int err) { add(errors_[error_of(err)], 1); }
    void read_bytes(uint64_t n) { add(read_, n); }
    void written_bytes(uint64_t n) { add(written_, n); }

    static fuse_op op_of(uint32_t opcode);
    static error_kind error_of(int err);

private:
    static void add(std::atomic<uint64_t>& c, uint64_t n) {
        if (metrics::kCounting) c.fetch_add(n, std::memory_order_relaxed);
    }
    static void collect(void* self, metrics::Exposition& out);

    std::string name_;
    std::atomic<uint64_t> requests_[kOps] = {};
    std::atomic<uint64_t> errors_[kErrors] = {};
    std::atomic<uint64_t> read_{0}, written_{0};
    metrics::Log2Histogram served_us_;
    int id_ = -1;
};

}  // namespace fs
}  // namespace photon
