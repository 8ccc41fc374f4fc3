// What the hostile-peer servers share: stop on SIGTERM/SIGINT, and photon
// initialised on the event engine HOSTILE_ENGINE names (epoll|iouring;
// photon's default otherwise).
#pragma once

#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <photon/common/alog.h>
#include <photon/photon.h>

namespace hostile {

inline std::atomic<bool> g_stop{false};

inline void on_signal(int) { g_stop = true; }

// Logs to stderr (stdout carries "listening" and "fds" only), handles the
// stop signals and initialises photon. 0; 77 if io_uring was asked for and
// is refused; 1 on another failure.
inline int start(const char* prog) {
    set_log_output(log_output_stderr);
    signal(SIGTERM, &on_signal);
    signal(SIGINT, &on_signal);
    signal(SIGPIPE, SIG_IGN);
    const char* engine = getenv("HOSTILE_ENGINE");
    uint64_t ev = photon::INIT_EVENT_DEFAULT;
    if (engine && strcmp(engine, "epoll") == 0) ev = photon::INIT_EVENT_EPOLL;
    if (engine && strcmp(engine, "iouring") == 0) ev = photon::INIT_EVENT_IOURING;
    if (photon::init(ev, photon::INIT_IO_NONE) == 0) return 0;
    if (ev != photon::INIT_EVENT_IOURING)
        return fprintf(stderr, "%s: photon::init: %s\n", prog, strerror(errno)), 1;
    printf("io_uring not available: %s\n", strerror(errno));
    return 77;
}

}  // namespace hostile
