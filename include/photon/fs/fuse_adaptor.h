// Mounting a photon::fs::IFileSystem through libfuse3 (3.x; built and tested
// on 3.14), as PhotonLibOS declares it. The /dev/fuse channel is served by
// coroutines: each request runs in a coroutine of its own and replies when
// it is done, so one that waits on photon I/O holds up no other; no OS
// thread per request. FUSE_INTERRUPT (the caller got a signal) interrupts
// the request's coroutine: its blocked call fails with EINTR.
//
// Each call takes fuse_main's command line (argv[0], a mount point, -f, -s,
// -d, -h, -V, -o opt,...) and blocks until the file system is unmounted
// (umount, fusermount3 -u) or the process gets SIGINT, SIGTERM or SIGHUP
// (handled while their disposition is the default); it then unmounts and
// returns 0, or nonzero on failure (-1 with errno for bad arguments). A
// process that calls exit() while serving detaches its mount points. Called
// from a vCPU, a call serves on it; from a plain thread, it makes the thread
// a vCPU for the duration. Without -f the process forks into the background
// first (fuse_daemonize); refused (EINVAL) once the process has a vCPU, as
// fork keeps neither photon's helper threads nor its libaio contexts.
//
// A killed process leaves its mount point dead ("Transport endpoint is not
// connected") until `fusermount3 -u MOUNTPOINT` (or `umount -l`); mount with
// -o auto_unmount to have fusermount3 do that when the process dies.
//
// -o options of every call:
//   threads=N          serve on N vCPUs (default 1). With
//                      N > 1 the file system is called from several
//                      vCPUs at once and must allow that.
//   max_inflight=N     requests in progress at once, per vCPU (1024)
//   memory_budget=SIZE bytes (K, M, G) that requests in progress and their
//                      replies (reads, directory listings) may hold; default:
//                      the process-wide MemoryBudget (memory_budget.h). Past
//                      it, /dev/fuse is not read until requests finish; a
//                      request that cannot fit within 30 s (or ever) is
//                      answered ENOMEM.
//   looptype=..., force_splice_read=N   Photon's; accepted, ignored
// and fuser_go's also:
//   entry_timeout=S, attr_timeout=S (1.0), negative_timeout=S (0)
//   direct_io          bypass the kernel's page cache
//   kernel_cache       keep the page cache across opens
//   max_read=N         largest read request (a mount option)
//   libfuse's connection options: max_write=N, max_readahead=N,
//   max_background=N (128 here; the kernel's 12 caps async reads and
//   O_DIRECT), writeback_cache (off unless asked for), splice_write (reads
//   of 32-512 KiB from local files are then spliced from the file's
//   descriptor: one copy less, but the vCPU blocks while the kernel reads),
//   splice_move, no_async_dio, readdirplus=no, ...
//
// Differences from PhotonLibOS: doc/compat.md#fsfuse_adaptorh
//
// run_fuse: libfuse keeps fuse_get_context() per OS thread, so an operation
// must read it (uid, gid, pid) before its first yield; afterwards it may be
// another request's.
#pragma once

#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 317
#endif

#include <fuse3/fuse.h>
#include <fuse3/fuse_lowlevel.h>

namespace photon {
namespace fs {

class IFileSystem;

// Mounts fs (any IFileSystem; not owned) and serves it until unmounted.
int fuser_go(IFileSystem* fs, int argc, char* argv[]);

// As fuser_go, on a vCPU it makes of the calling thread and ends afterwards:
// -1 with EALREADY if the thread is a vCPU already.
int fuser_go_exportfs(IFileSystem* fs, int argc, char* argv[]);

// The file system behind get_fuse_xmp_oper()'s operations (not owned).
void set_fuse_fs(IFileSystem* fs);

// Path-based operations over set_fuse_fs's file system, for run_fuse or
// libfuse's own fuse_main.
fuse_operations* get_fuse_xmp_oper();

// As fuse_main / a low-level fuse_session loop, served by coroutines.
int run_fuse(int argc, char* argv[], const struct fuse_operations* op, void* user_data);
int run_fuse_ll(int argc, char* argv[], const struct fuse_lowlevel_ops* llops, void* user_data);

}  // namespace fs
}  // namespace photon
