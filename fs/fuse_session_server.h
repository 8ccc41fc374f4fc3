// Private: serves a mounted fuse_session with photon coroutines.
//
// Each lane is a vCPU that reads /dev/fuse without blocking (waiting for
// readability on its event engine) and hands every request to a coroutine
// of its own, which runs libfuse's dispatcher (fuse_session_process_buf)
// and so the file system's handler; the handler replies when it is done.
// Requests are read into buffers laid out so that a WRITE's payload starts
// on a 4 KiB boundary (O_DIRECT can take it as is).
//
// The session ends on an unmount, fuse_session_exit() (then write to
// opt.wake_fd, as fuse_exit_hooks.h's signal handler does) or a read error.
#pragma once

#include <cstddef>
#include <cstdint>

struct fuse_session;

namespace photon {
class MemoryBudget;
namespace fs {

class fuse_metrics;

struct fuse_server_options {
    int lanes = 1;                   // vCPUs serving; lanes past the first are new OS threads
    uint32_t max_inflight = 1024;    // requests in progress at once, per lane
    bool serialize_writers = false;  // see fuse_serve_session
    int wake_fd = -1;  // an eventfd: readable ends the session (fuse_exit_hooks.h's signals)
    // Bytes of requests in progress and of their replies (reads, directory
    // listings) are taken from it, an account per lane; nullptr: the
    // process-wide one.
    MemoryBudget* budget = nullptr;
    // Counts the requests, their times and the server's own error replies; nullptr: none.
    fuse_metrics* metrics = nullptr;
};

// Serves se until the session ends; call from a
// vCPU, which is the first lane. serialize_writers runs UNLINK, RMDIR,
// RENAME, RENAME2, FORGET and BATCH_FORGET with no other request in
// progress: libfuse's path-based layer takes pthread locks on paths there,
// which a coroutine holding one across a yield would otherwise deadlock.
// Returns 0 when ended by an unmount, fuse_session_exit() or a signal, -1
// with errno on failure; in-progress requests have finished either way.
int fuse_serve_session(fuse_session* se, const fuse_server_options& opt);

// Buffers of the calling OS thread's cache, 4 KiB aligned: at least n
// bytes (n <= fuse_buffer_max). Give back with the n asked for.
constexpr size_t fuse_buffer_max = (256 + 2) * 4096;
void* fuse_buffer_get(size_t n);
void fuse_buffer_put(void* p, size_t n);

}  // namespace fs
}  // namespace photon
