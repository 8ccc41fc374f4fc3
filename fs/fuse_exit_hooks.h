// Private: how FUSE sessions end when the process is told to, or ends.
//
// While a session is registered, SIGINT, SIGTERM and SIGHUP (those whose
// disposition was the default when the first session registered) make every
// registered session exit and write to its wake fd; the last unregistration
// restores the defaults. A process that calls exit() while sessions are
// registered detaches their mount points on the way out.
#pragma once

struct fuse_session;

namespace photon {
namespace fs {

// Registers se (mounted on mountpoint; both must outlive the registration)
// with an eventfd to wake its server. Returns a slot for unregistering, or
// -1 when 64 sessions are registered already (then signals do not end it).
int fuse_register_exit(fuse_session* se, int wake_fd, const char* mountpoint);
// Undoes it; once it returns, no signal handler uses se or wake_fd.
void fuse_unregister_exit(int slot);

// Detaches a FUSE mount point without the session's help (the process is
// ending): umount2(MNT_DETACH) as root, else fusermount3 -u -z.
void fuse_detach_mountpoint(const char* mountpoint);

}  // namespace fs
}  // namespace photon
