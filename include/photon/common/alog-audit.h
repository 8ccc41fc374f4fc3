// Audit logging helpers over alog's LOG_AUDIT (default_audit_logger; its
// output is log_output_null until the program sets one), as PhotonLibOS
// declares them:
//   SCOPE_AUDIT(args...)  at scope exit, LOG_AUDIT(args..., [latency=us]);
//   SCOPE_AUDIT_THRESHOLD(us, args...)  the same, only if the scope took at
//                         least `us` microseconds;
//   AU_FILEOP(path, offset, size), AU_SOCKETOP(endpoint)  named values for
//                         the arguments.
// Latency is measured on photon::now, which only the vCPUs refresh: off a
// vCPU it may read 0. At most one SCOPE_AUDIT* per source line. Defining
// DISABLE_AUDIT before the include turns the scope macros into nothing.
#pragma once
#include <utility>

#include <photon/common/alog.h>
#include <photon/common/timeout.h>
#include <photon/common/utility.h>

#define AU_FILEOP(pathname, offset, size)                                       \
    make_named_value("pathname", pathname), make_named_value("offset", offset), \
        make_named_value("size", size)

#define AU_SOCKETOP(ep) make_named_value("endpoint", ep)

#ifndef DISABLE_AUDIT
#define SCOPE_AUDIT(...)                                        \
    auto _CONCAT(__audit_start_time__, __LINE__) = photon::now; \
    DEFER(LOG_AUDIT(                                            \
        __VA_ARGS__,                                            \
        make_named_value("latency", photon::now - _CONCAT(__audit_start_time__, __LINE__))));

#define SCOPE_AUDIT_THRESHOLD(threshold, ...)                                 \
    auto _CONCAT(__audit_start_time__, __LINE__) = photon::now;               \
    DEFER({                                                                   \
        auto latency = photon::now - _CONCAT(__audit_start_time__, __LINE__); \
        if (latency >= (threshold)) {                                         \
            LOG_AUDIT(__VA_ARGS__, make_named_value("latency", latency));     \
        }                                                                     \
    });

#else
#define SCOPE_AUDIT(...)
#define SCOPE_AUDIT_THRESHOLD(...)
#endif
