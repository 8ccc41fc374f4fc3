// Signals as coroutine events: the handled signals are blocked and read from
// a signalfd by one coroutine, which runs their handlers in turn.
#include <photon/io/signal.h>

#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <new>

#include <photon/common/alog.h>
#include <photon/io/fd-events.h>
#include <photon/thread/thread.h>

#include "init_hooks.h"

namespace photon {
namespace {

struct signal_state {
    int sfd = -1;
    sigset_t mask;
    struct sigaction actions[_NSIG];  // what sync_sigaction installed
    vcpu_base* vcpu = nullptr;
    thread* th = nullptr;
    join_handle* jh = nullptr;
    bool stop = false;
};

std::mutex g_lock;  // guards g_state's mask and actions; never held across a wait
signal_state* g_state = nullptr;

bool is_handler(const struct sigaction* a) {
    return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

void fill_siginfo(const signalfd_siginfo& s, siginfo_t* info) {
    memset(info, 0, sizeof(*info));
    info->si_signo = (int)s.ssi_signo;
    info->si_errno = s.ssi_errno;
    info->si_code = s.ssi_code;
    info->si_pid = (pid_t)s.ssi_pid;
    info->si_uid = (uid_t)s.ssi_uid;
    info->si_status = s.ssi_status;
    info->si_value.sival_ptr = (void*)(uintptr_t)s.ssi_ptr;
}

void dispatch(signal_state* st, const signalfd_siginfo& s) {
    int sig = (int)s.ssi_signo;
    struct sigaction act;
    {
        std::lock_guard<std::mutex> guard(g_lock);
        if (sig <= 0 || sig >= _NSIG) return;
        act = st->actions[sig];
        if (is_handler(&act) && (act.sa_flags & SA_RESETHAND)) {
            st->actions[sig].sa_handler = SIG_DFL;
            st->actions[sig].sa_flags = 0;
        }
    }
    if (!is_handler(&act)) return;  // reset to default after it was queued
    if (act.sa_flags & SA_SIGINFO) {
        siginfo_t info;
        fill_siginfo(s, &info);
        act.sa_sigaction(sig, &info, nullptr);
    } else {
        act.sa_handler(sig);
    }
}

void* signal_loop(void* arg) {
    auto st = static_cast<signal_state*>(arg);
    while (!st->stop) {
        signalfd_siginfo si[8];
        ssize_t n = read(st->sfd, si, sizeof(si));
        if (n > 0) {
            for (ssize_t i = 0; i < n / (ssize_t)sizeof(si[0]); i++) dispatch(st, si[i]);
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
            LOG_ERRNO_RETURN(0, nullptr, "sync_signal: reading the signalfd failed");
        } else if (wait_for_fd_readable(st->sfd) < 0 && errno != EINTR && errno != ECANCELED &&
                   errno != EOK) {
            LOG_ERRNO_RETURN(0, nullptr, "sync_signal: waiting for signals failed");
        }
    }
    return nullptr;
}

void set_blocked(int signum, bool blocked) {
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signum);
    pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &one, nullptr);
}

}  // namespace

void sync_signal_after_fork() {
    // The child has only this OS thread: a lock another thread held at the
    // fork stays held, so the lock starts afresh.
    new (&g_lock) std::mutex;
    signal_state* old = g_state;
    if (!old || old->vcpu != get_vcpu()) return;
    auto st = new signal_state;
    st->mask = old->mask;
    memcpy(st->actions, old->actions, sizeof(st->actions));
    st->vcpu = old->vcpu;
    st->sfd = signalfd(-1, &st->mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (st->sfd >= 0) st->th = thread_create(&signal_loop, st, 64 * 1024, 0, THREAD_DAEMON);
    if (!st->th) {
        LOG_ERROR("sync_signal: cannot restart signal handling in a forked child: ", ERRNO());
        if (st->sfd >= 0) close(st->sfd);
        delete st;
        return;
    }
    st->jh = thread_enable_join(st->th);
    // The old coroutine stays parked on the parent's engine, which this
    // process never waits on again: it is left, with its state, not freed.
    old->stop = true;
    close(old->sfd);
    g_state = st;
}

extern "C" int sync_signal_init() {
    if (!get_vcpu()) LOG_ERROR_RETURN(ENOSYS, -1, "sync_signal_init: not a vCPU");
    if (!get_vcpu()->master_event_engine)
        LOG_ERROR_RETURN(ENOSYS, -1, "sync_signal_init: the vCPU has no event engine");
    std::lock_guard<std::mutex> guard(g_lock);
    if (g_state) {
        errno = EALREADY;  // normal for every vCPU but the first: not logged
        return -1;
    }
    auto st = new signal_state;
    sigemptyset(&st->mask);
    memset(st->actions, 0, sizeof(st->actions));
    st->sfd = signalfd(-1, &st->mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (st->sfd < 0) {
        delete st;
        LOG_ERRNO_RETURN(0, -1, "sync_signal_init: signalfd failed");
    }
    st->vcpu = get_vcpu();
    st->th = thread_create(&signal_loop, st, 64 * 1024, 0, THREAD_DAEMON);
    if (!st->th) {
        close(st->sfd);
        delete st;
        return -1;
    }
    st->jh = thread_enable_join(st->th);
    g_state = st;
    return 0;
}

extern "C" int block_all_signal() {
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    return pthread_sigmask(SIG_BLOCK, &all, nullptr) == 0 ? 0 : -1;
}

extern "C" int sync_sigaction(int signum, const struct sigaction* act, struct sigaction* oldact) {
    if (signum <= 0 || signum >= _NSIG || signum == SIGKILL || signum == SIGSTOP)
        LOG_ERROR_RETURN(EINVAL, -1, "sync_sigaction: bad signal `", signum);
    std::lock_guard<std::mutex> guard(g_lock);
    signal_state* st = g_state;
    if (!st) LOG_ERROR_RETURN(ENOSYS, -1, "sync_sigaction: sync_signal_init() has not run");
    if (oldact) *oldact = st->actions[signum];
    if (!act) return 0;
    st->actions[signum] = *act;
    if (is_handler(act)) {
        sigaddset(&st->mask, signum);
        set_blocked(signum, true);  // before the signalfd takes it: none goes astray
    } else {
        sigdelset(&st->mask, signum);
        if (sigaction(signum, act, nullptr) < 0)
            LOG_ERRNO_RETURN(0, -1, "sync_sigaction: sigaction(`) failed", signum);
    }
    if (signalfd(st->sfd, &st->mask, 0) < 0)
        LOG_ERRNO_RETURN(0, -1, "sync_sigaction: updating the signalfd failed");
    if (!is_handler(act)) set_blocked(signum, false);
    return 0;
}

extern "C" sighandler_t sync_signal(int signum, sighandler_t handler) {
    struct sigaction act, old;
    memset(&act, 0, sizeof(act));
    act.sa_handler = handler;
    if (sync_sigaction(signum, &act, &old) < 0) return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? SIG_DFL : old.sa_handler;
}

extern "C" int sync_signal_fini() {
    signal_state* st;
    {
        std::lock_guard<std::mutex> guard(g_lock);
        st = g_state;
        if (!st) LOG_ERROR_RETURN(ENOSYS, -1, "sync_signal_fini: sync_signal_init() has not run");
        if (st->vcpu != get_vcpu())
            LOG_ERROR_RETURN(EPERM, -1, "sync_signal_fini: call it on the vCPU that ran init");
        g_state = nullptr;
    }
    st->stop = true;
    thread_interrupt(st->th, ECANCELED);
    thread_join(st->jh);
    for (int sig = 1; sig < _NSIG; sig++)
        if (sigismember(&st->mask, sig) == 1) set_blocked(sig, false);
    close(st->sfd);
    delete st;
    return 0;
}

}  // namespace photon
