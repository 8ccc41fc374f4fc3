#include "fuse_exit_hooks.h"

#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <photon/common/alog.h>
#include <photon/fs/fuse_adaptor.h>

extern char** environ;

namespace photon {
namespace fs {
namespace {

// The handler may run on any thread at any moment: it only reads atomics,
// sets the session's exit flag (a plain store in libfuse) and writes an
// eventfd, all async-signal-safe. `users` lets unregistering wait until no
// handler still holds the slot's session or fd.
struct exit_slot {
    std::atomic<fuse_session*> se{nullptr};
    std::atomic<int> wake_fd{-1};
    std::atomic<const char*> mountpoint{nullptr};
    std::atomic<int> users{0};
};
exit_slot g_slots[64];
std::mutex g_slots_mu;  // registration, and the dispositions below
int g_registered = 0;
struct handled_signal {
    int sig;
    bool ours;
};
handled_signal g_signals[] = {{SIGINT, false}, {SIGTERM, false}, {SIGHUP, false}};

void on_exit_signal(int sig) {
    int saved = errno;
    bool any = false;
    for (auto& s : g_slots) {
        s.users.fetch_add(1);
        if (fuse_session* se = s.se.load()) {
            any = true;
            fuse_session_exit(se);
            uint64_t one = 1;
            ssize_t r = write(s.wake_fd.load(), &one, sizeof(one));
            (void)r;
        }
        s.users.fetch_sub(1);
    }
    if (!any) {  // raced with the last unregistration: act as the default would
        signal(sig, SIG_DFL);
        raise(sig);
    }
    errno = saved;
}

void on_process_exit() {
    for (auto& s : g_slots) {
        const char* mnt = s.mountpoint.load();
        if (s.se.load() && mnt) fuse_detach_mountpoint(mnt);
    }
}

void install_signals_locked() {
    for (auto& h : g_signals) {
        struct sigaction old, sa;
        if (sigaction(h.sig, nullptr, &old) < 0 || old.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_exit_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        h.ours = sigaction(h.sig, &sa, nullptr) == 0;
    }
}

void restore_signals_locked() {
    for (auto& h : g_signals) {
        if (!h.ours) continue;
        struct sigaction cur;
        if (sigaction(h.sig, nullptr, &cur) == 0 && cur.sa_handler == on_exit_signal)
            signal(h.sig, SIG_DFL);
        h.ours = false;
    }
}

}  // namespace

int fuse_register_exit(fuse_session* se, int wake_fd, const char* mountpoint) {
    static std::once_flag at_exit;
    std::call_once(at_exit, [] { atexit(on_process_exit); });
    std::lock_guard<std::mutex> lock(g_slots_mu);
    for (int i = 0; i < (int)(sizeof(g_slots) / sizeof(g_slots[0])); i++) {
        auto& s = g_slots[i];
        if (s.se.load()) continue;
        s.wake_fd.store(wake_fd);
        s.mountpoint.store(mountpoint);
        s.se.store(se);
        if (g_registered++ == 0) install_signals_locked();
        return i;
    }
    LOG_WARN("fuse: more than 64 sessions: this one does not end on signals");
    return -1;
}

void fuse_unregister_exit(int i) {
    if (i < 0) return;
    std::lock_guard<std::mutex> lock(g_slots_mu);
    auto& s = g_slots[i];
    s.se.store(nullptr);
    while (s.users.load()) std::this_thread::yield();
    s.mountpoint.store(nullptr);
    s.wake_fd.store(-1);
    if (--g_registered == 0) restore_signals_locked();
}

void fuse_detach_mountpoint(const char* mountpoint) {
    if (!mountpoint) return;
    if (umount2(mountpoint, MNT_DETACH) == 0 || errno == EINVAL || errno == ENOENT) return;
    if (errno != EPERM) LOG_ERRNO_RETURN(0, , "fuse: cannot detach ", mountpoint);
    const char* argv[] = {"fusermount3", "-u", "-q", "-z", "--", mountpoint, nullptr};
    pid_t pid;
    if (posix_spawnp(&pid, "fusermount3", nullptr, nullptr, (char* const*)argv, environ) != 0)
        LOG_ERROR_RETURN(0, , "fuse: cannot run fusermount3 to detach ", mountpoint);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
}

}  // namespace fs
}  // namespace photon
