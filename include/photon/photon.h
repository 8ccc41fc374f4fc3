// Library-wide initialization: photon::init() makes the calling OS thread a
// vCPU with its event engine and I/O engines; photon::fini() undoes it.
// Call both on the same OS thread, outside any coroutine but its main one.
//
// As PhotonLibOS's photon.h, with fini_hook_late() added. STACK_ALLOCATOR_*
// come from stack-allocator.h (included); every value selects the built-in
// pooled stack allocator there.
//
// Differences from PhotonLibOS: doc/compat.md#photonh
#pragma once

#include <inttypes.h>
#include <cstdint>

#include <photon/common/callback.h>
#include <photon/thread/stack-allocator.h>

namespace photon {

const uint64_t INIT_EVENT_NONE = 0;
const uint64_t INIT_EVENT_EPOLL = 1 << 0;
const uint64_t INIT_EVENT_IOURING = 1 << 1;
const uint64_t INIT_EVENT_SELECT = 1 << 2;
const uint64_t INIT_EVENT_KQUEUE = 1 << 3;
const uint64_t INIT_EVENT_IOCP = 1 << 4;
const uint64_t INIT_EVENT_EPOLL_NG = 1 << 5;
const uint64_t INIT_EVENT_IOURING_SQPOLL = 1 << 6;
const uint64_t INIT_EVENT_IOURING_SQ_AFF = 1 << 7;
const uint64_t INIT_EVENT_IOURING_IOPOLL = 1 << 8;
const uint64_t INIT_EVENT_SIGNAL = 1 << 10;
const uint64_t INIT_EVENT_DEFAULT =
    INIT_EVENT_IOURING | INIT_EVENT_EPOLL | INIT_EVENT_SELECT | INIT_EVENT_SIGNAL;

const uint64_t INIT_IO_NONE = 0;
const uint64_t INIT_IO_LIBAIO = 1 << 0;
const uint64_t INIT_IO_LIBCURL = 1 << 1;
const uint64_t INIT_IO_SOCKET_EDGE_TRIGGER = 1 << 2;
const uint64_t INIT_IO_EXPORTFS = 1 << 10;
const uint64_t INIT_IO_FSTACK_DPDK = 1 << 20;
const uint64_t INIT_IO_DEFAULT = INIT_IO_LIBAIO | INIT_IO_LIBCURL;

struct PhotonOptions {
    int libaio_queue_depth = 32;
    uint32_t iouring_sq_thread_cpu = 0;
    uint32_t iouring_sq_thread_idle_ms = 1000;
    uint8_t use_pooled_stack_allocator = STACK_ALLOCATOR_DEFAULT;  // see stack-allocator.h
    bool bypass_threadpool = false;
    // Photon extension: the vCPU's VCPU_ENABLE_*_WORK_STEALING flags (thread.h), which
    // PhotonLibOS passes only to vcpu_init().
    uint64_t vcpu_flags = 0;
    // Photon extension: set_default_stack_size() for the vCPU (thread.h); 0 keeps
    // DEFAULT_STACK_SIZE.
    uint64_t default_stack_size = 0;
};

// Makes the calling OS thread a vCPU and starts the requested engines.
// Returns 0, or -1 with errno (EALREADY if it is a vCPU already); a failed
// init is undone.
int init(uint64_t event_engine = INIT_EVENT_DEFAULT, uint64_t io_engine = INIT_IO_DEFAULT,
         const PhotonOptions& options = {});

// Runs this OS thread's fini hooks (last registered first), waits until every
// other coroutine of the vCPU has ended, stops the engines and destroys the
// vCPU. -1 (ENOSYS) if not initialized.
int fini();

// Registers a callback for fini() on this OS thread.
void fini_hook(Delegate<void> handler);

// Photon extension: a callback that fini() runs after every other coroutine
// of this vCPU has ended, before the event engine goes: for resources those
// coroutines may use until their end (io_uring sidecar rings, libaio
// contexts). Callbacks registered meanwhile run too.
void fini_hook_late(Delegate<void> handler);

}  // namespace photon
