// A mounted FUSE session's counters in the metrics registry (fuse_metrics.h).
#include "fuse_metrics.h"

#include <linux/fuse.h>

#include <cerrno>

namespace photon {
namespace fs {

namespace {

std::atomic<int> g_sessions{0};

const char* const kOpNames[] = {"lookup",  "getattr",    "setattr", "open",    "create",
                                "read",    "write",      "flush",   "release", "opendir",
                                "readdir", "releasedir", "statfs",  "forget",  "other"};
const char* const kErrorNames[] = {"enoent", "eacces", "enosys", "enomem", "eintr", "other"};

}  // namespace

fuse_metrics::fuse_metrics() : name_("fuse-" + std::to_string(g_sessions.fetch_add(1) + 1)) {
    id_ = metrics::register_collector(&collect, this);
}

fuse_metrics::~fuse_metrics() {
    if (id_ > 0) metrics::unregister_collector(id_);
}

fuse_metrics::fuse_op fuse_metrics::op_of(uint32_t opcode) {
    switch (opcode) {
        case FUSE_LOOKUP:
            return LOOKUP;
        case FUSE_GETATTR:
            return GETATTR;
        case FUSE_SETATTR:
            return SETATTR;
        case FUSE_OPEN:
            return OPEN;
        case FUSE_CREATE:
            return CREATE;
        case FUSE_READ:
            return READ;
        case FUSE_WRITE:
            return WRITE;
        case FUSE_FLUSH:
            return FLUSH;
        case FUSE_RELEASE:
            return RELEASE;
        case FUSE_OPENDIR:
            return OPENDIR;
        case FUSE_READDIR:
        case FUSE_READDIRPLUS:
            return READDIR;
        case FUSE_RELEASEDIR:
            return RELEASEDIR;
        case FUSE_STATFS:
            return STATFS;
        case FUSE_FORGET:
        case FUSE_BATCH_FORGET:
            return FORGET;
        default:
            return OTHER;
    }
}

fuse_metrics::error_kind fuse_metrics::error_of(int err) {
    switch (err) {
        case ENOENT:
            return NOENT;
        case EACCES:
        case EPERM:
            return ACCESS;
        case ENOSYS:
        case EOPNOTSUPP:
            return NOSYS;
        case ENOMEM:
            return NOMEM;
        case EINTR:
            return INTR;
        default:
            return OTHER_ERROR;
    }
}

void fuse_metrics::collect(void* self, metrics::Exposition& out) {
    auto m = static_cast<fuse_metrics*>(self);
    using E = metrics::Exposition;
    metrics::Label l{"fuse", m->name_};
    uint64_t requests[kOps], errors[kErrors];
    metrics::load_all(m->requests_, requests);
    metrics::load_all(m->errors_, errors);
    out.metric_by("photon_fuse_requests_total", "Requests read from /dev/fuse, by operation.",
                  E::COUNTER, "op", kOpNames, requests, kOps, &l, 1);
    out.metric_by("photon_fuse_errors_total",
                  "Replies with an errno, by errno (ENOENT is mostly lookups of absent names).",
                  E::COUNTER, "errno", kErrorNames, errors, kErrors, &l, 1);
    out.metric("photon_fuse_read_bytes_total",
               "Bytes of read replies (a spliced read counts the bytes asked for).", E::COUNTER,
               m->read_.load(), &l, 1);
    out.metric("photon_fuse_written_bytes_total", "Bytes that writes wrote.", E::COUNTER,
               m->written_.load(), &l, 1);
    out.histogram_metric("photon_fuse_request_seconds",
                         "Time from a request's dispatch to the end of its handler (its reply "
                         "sent); what runs in the reader (INTERRUPT, INIT, DESTROY, most "
                         "FORGETs) is not timed.",
                         m->served_us_, 1e-6, &l, 1);
}

}  // namespace fs
}  // namespace photon
