// Pieces the perf programs share: choosing the event engine from a flag,
// and running a body on several vCPUs (OS threads).
#pragma once

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <photon/io/fd-events.h>
#include <photon/photon.h>

namespace perf {

// -event_engine epoll | io_uring | default (io_uring, else epoll).
inline uint64_t engine_flag(const std::string& name) {
    if (name == "epoll") return photon::INIT_EVENT_EPOLL;
    if (name == "io_uring") return photon::INIT_EVENT_IOURING;
    return photon::INIT_EVENT_EPOLL | photon::INIT_EVENT_IOURING;
}

inline const char* engine_name() {
    return photon::master_event_engine_kind() == photon::INIT_EVENT_IOURING ? "io_uring" : "epoll";
}

// Runs body(i) on vcpus vCPUs, i = 0 on this thread: photon::init with the
// engine and options, body, photon::fini. -1 if any init or body failed.
template <typename Body>
int on_vcpus(const char* prog, int vcpus, uint64_t engine, Body body,
             const photon::PhotonOptions& options = {}) {
    std::vector<std::thread> others;
    std::atomic<int> failed{0};
    auto vcpu = [&](int i) {
        if (photon::init(engine, photon::INIT_IO_NONE, options) < 0) {
            fprintf(stderr, "%s: photon::init failed\n", prog);
            failed++;
            return;
        }
        if (i == 0) fprintf(stderr, "%s: event engine %s\n", prog, engine_name());
        if (body(i) < 0) failed++;
        photon::fini();
    };
    for (int i = 1; i < vcpus; i++) others.emplace_back(vcpu, i);
    vcpu(0);
    for (auto& t : others) t.join();
    return failed ? -1 : 0;
}

}  // namespace perf
