// The slow-turn detector (include/photon/thread/slow_turn.h). One thread per process, running
// while vCPUs do, looks at each vCPU every threshold/2: a vCPU whose switch count has not moved
// and that is not idle is in one long turn. Past the threshold it is reported once per turn.
// If its OS thread is running (/proc: state R), a signal asks the thread itself to record
// where it is (a frame-pointer walk from the signal's context, async-signal-safe); the next
// check names and reports it. If it is blocked in a system call, the report says which, and
// no signal is sent.
#include <photon/thread/slow_turn.h>

#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <photon/common/alog.h>

#include "symbols.h"
#include "vcpu.h"

namespace photon {

namespace {

std::mutex g_mu;  // the options, the vCPU count and the detector's start and stop
std::condition_variable g_cv;
SlowTurnOptions g_opt;
bool g_loaded = false;  // g_opt read from the environment
int g_vcpus = 0;
int g_handled_signo = 0;    // the signal our handler is installed for
bool g_can_signal = false;  // else the program handles that signal itself: no samples

struct detector {
    std::thread th;
    bool stop = false;  // under g_mu
};
detector* g_detector = nullptr;

uint64_t mono_us() { return monotonic_ns() / 1000; }

// How many turns v has ended: switches, and yields with nothing else to run.
uint64_t turns(vcpu_t* v) {
    return __atomic_load_n(&v->switch_count, __ATOMIC_RELAXED) +
           __atomic_load_n(&v->lone_yields, __ATOMIC_RELAXED);
}

// Where the interrupted code was: its frame pointer and pc.
void interrupted_at(void* ucv, uintptr_t* fp, void** pc) {
    auto uc = static_cast<ucontext_t*>(ucv);
#if defined(__x86_64__)
    *fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    *pc = (void*)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    *fp = (uintptr_t)uc->uc_mcontext.regs[29];
    *pc = (void*)uc->uc_mcontext.pc;
#else
    *fp = 0;
    *pc = nullptr;
#endif
}

// On the vCPU's OS thread: records where it runs, if the detector asked.
void on_signal(int, siginfo_t*, void* ucv) {
    int saved = errno;
    thread* th = CURRENT;
    vcpu_t* v = th ? th->vcpu : nullptr;
    if (v && v->slow.state.load(std::memory_order_acquire) == 1) {
        slow_sample& s = v->slow;
        uintptr_t fp;
        void* pc;
        interrupted_at(ucv, &fp, &pc);
        s.th = th;
        s.entry = th->start;
        s.main = th->flags & TF_MAIN;
        s.count = turns(v);
        // The frame-pointer walk only: bounded by th's stack, it cannot fault. (The unwinder
        // went through libc, but read past a coroutine stack's first frame under qemu and
        // crashed.) Code without frame pointers leaves its caller out of the chain.
        const size_t max = sizeof(s.pcs) / sizeof(s.pcs[0]);
        s.n = 0;
        if (pc) s.pcs[s.n++] = pc;
        // In the middle of a switch, the frame pointer is off th's stack: no walk.
        s.n += (uint32_t)walk_frames(fp, (uintptr_t)th->stack_lo, (uintptr_t)th->stack_hi,
                                     s.pcs + s.n, max - s.n);
        s.state.store(2, std::memory_order_release);
    }
    errno = saved;
}

// Installs the handler unless the program handles signo itself; under g_mu.
int install(int signo) {
    if (signo == g_handled_signo) return 0;
    struct sigaction old = {};
    if (sigaction(signo, nullptr, &old) == 0 &&
        ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != nullptr
                                     : old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
        g_can_signal = false;
        LOG_WARN(
            "slow-turn detector: signal ` has a handler of the program's: slow turns are "
            "reported without backtraces",
            signo);
        return 0;
    }
    struct sigaction sa = {};
    sa.sa_sigaction = &on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, nullptr) < 0)
        LOG_ERRNO_RETURN(0, -1, "slow-turn detector: sigaction(`)", signo);
    g_handled_signo = signo;
    g_can_signal = true;
    return 0;
}

// The thread's scheduling state (R, S, D, ...) and, when blocked, its system call's number.
char thread_state(pid_t tid, long* syscall_nr) {
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return '?';
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) return '?';
    buf[n] = 0;
    const char* paren = strrchr(buf, ')');
    char state = paren && paren[1] == ' ' ? paren[2] : '?';
    *syscall_nr = -1;
    if (state != 'R') {
        snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            n = read(fd, buf, sizeof(buf) - 1);
            close(fd);
            if (n > 0) {
                buf[n] = 0;
                char* end;
                long nr = strtol(buf, &end, 10);
                if (end != buf) *syscall_nr = nr;
            }
        }
    }
    return state;
}

struct report {
    int vcpu;
    pid_t tid;
    uint64_t turn_us;
    bool sampled;  // else blocked in a system call
    long syscall_nr;
    char state;
    // When sampled: the coroutine, its entry, and where it ran.
    thread* th;  // never dereferenced: it may have ended since the sample
    thread_entry entry;
    bool main;
    uint32_t n;
    void* pcs[32];
};

struct check_ctx {
    const SlowTurnOptions* opt;
    bool can_signal;
    uint64_t now;
    unsigned* budget;
    std::vector<report> out;
};

void check(vcpu_t* v, void* arg) {
    auto c = static_cast<check_ctx*>(arg);
    slow_sample& s = v->slow;
    int st = s.state.load(std::memory_order_acquire);
    if (st == 2) {  // a sample taken: reported if that turn is still the one asked about
        if (s.count == v->watch_count) {
            report r{};
            r.vcpu = v->id;
            r.tid = v->os_tid;
            r.turn_us = c->now - v->watch_since;
            r.sampled = true;
            r.th = s.th;
            r.entry = s.entry;
            r.main = s.main;
            r.n = s.n;
            memcpy(r.pcs, s.pcs, sizeof(void*) * s.n);
            c->out.push_back(r);
        }
        s.state.store(0, std::memory_order_relaxed);
    } else if (st == 1 && c->now - s.asked_at > 1000000) {
        s.state.store(0, std::memory_order_relaxed);  // never answered (the signal is blocked)
    }
    uint64_t count = turns(v);
    if (count != v->watch_count || v->idle_sleeping.load(std::memory_order_relaxed) ||
        !v->watch_since) {
        v->watch_count = count;
        v->watch_since = c->now;
        v->watch_reported = false;
        return;
    }
    if (v->watch_reported || c->now - v->watch_since < c->opt->threshold_us) return;
    v->watch_reported = true;
    if (!*c->budget) return;
    --*c->budget;
    long nr = -1;
    char state = thread_state(v->os_tid, &nr);
    if (state == 'R' && c->can_signal && s.state.load(std::memory_order_relaxed) == 0) {
        s.asked_at = c->now;
        s.state.store(1, std::memory_order_release);
        if (pthread_kill(v->os_thread, c->opt->signo) != 0) s.state.store(0);
        return;  // reported when the sample is in
    }
    report r{};
    r.vcpu = v->id;
    r.tid = v->os_tid;
    r.turn_us = c->now - v->watch_since;
    r.sampled = false;
    r.syscall_nr = nr;
    r.state = state;
    c->out.push_back(r);
}

std::string format(const report& r, symbol_names& names) {
    char buf[256];
    std::string text;
    if (r.sampled) {
        snprintf(buf, sizeof(buf),
                 "slow turn: vCPU %d (OS thread %d) has run coroutine %p for %.1f ms without a "
                 "switch; entry ",
                 r.vcpu, (int)r.tid, (void*)r.th, r.turn_us / 1000.0);
        text = buf;
        text += r.main ? std::string("(the vCPU's own thread)")
                       : names.of(reinterpret_cast<const void*>(r.entry), false);
        text += "; where it runs:";
        for (uint32_t i = 0; i < r.n; i++) {
            snprintf(buf, sizeof(buf), "\n      #%-2u %p ", i, r.pcs[i]);
            text += buf;
            text += names.of(r.pcs[i], i > 0);
        }
    } else {
        snprintf(buf, sizeof(buf),
                 "slow turn: vCPU %d (OS thread %d) has been in one turn for %.1f ms, its OS "
                 "thread %s (state %c, system call %ld): nothing else runs on that vCPU meanwhile",
                 r.vcpu, (int)r.tid, r.turn_us / 1000.0,
                 r.syscall_nr >= 0 ? "blocked in a system call"
                 : r.state == 'R'  ? "running (no backtrace: its signal is the program's)"
                                   : "not running",
                 r.state, r.syscall_nr);
        text = buf;
    }
    return text;
}

void run(detector* d) {
    unsigned budget = 0;
    uint64_t budget_at = 0;
    symbol_names names;
    std::unique_lock<std::mutex> lock(g_mu);
    while (!d->stop) {
        SlowTurnOptions opt = g_opt;
        uint64_t period =
            opt.threshold_us ? std::max<uint64_t>(opt.threshold_us / 2, 1000) : 100000;
        g_cv.wait_for(lock, std::chrono::microseconds(period), [d] { return d->stop; });
        if (d->stop) break;
        opt = g_opt;
        bool can_signal = g_can_signal && g_handled_signo == opt.signo;
        if (!opt.threshold_us) continue;
        lock.unlock();
        uint64_t now = mono_us();
        if (now - budget_at >= 1000000) budget = opt.max_reports_per_sec, budget_at = now;
        check_ctx ctx{&opt, can_signal, now, &budget, {}};
        for_each_vcpu_locked(&check, &ctx);
        for (auto& r : ctx.out) {
            std::string text = format(r, names);
            if (opt.report)
                opt.report(text.c_str(), opt.report_arg);
            else
                LOG_WARN("`", text.c_str());
        }
        lock.lock();
    }
}

void load_defaults() {  // under g_mu
    if (g_loaded) return;
    g_loaded = true;
#if defined(__SANITIZE_THREAD__) || defined(PHOTON_TSAN)
    g_opt.threshold_us = 0;  // TSan defers signals: the samples would be taken too late
#endif
    if (const char* e = getenv("PHOTON_SLOW_TURN_US"))
        g_opt.threshold_us = strtoull(e, nullptr, 10);
}

// Starts the detector if vCPUs run and it is on; under g_mu.
void start_locked() {
    if (g_detector || !g_vcpus || !g_opt.threshold_us) return;
    if (install(g_opt.signo) < 0) return;
    auto d = new detector;
    // Born with every signal blocked: signals sent to the process go to the program's threads
    // (photon's sync_signal blocks its signals there and reads them from a signalfd).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
        d->th = std::thread(&run, d);
    } catch (const std::exception& e) {
        delete d;
        d = nullptr;
        LOG_ERROR("slow-turn detector: cannot start its thread: `", e.what());
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    g_detector = d;
}

// fork(): the detector's locks are taken around it, so that the child never finds them held
// by a thread it does not have. The child has no detector (its parent's vCPUs other than the
// forking one are gone, so none is started there).
void before_fork() {
    g_mu.lock();
    vcpu_registry_lock();
}
void after_fork_in_parent() {
    vcpu_registry_unlock();
    g_mu.unlock();
}
void after_fork_in_child() {
    work_stealing_after_fork(current_vcpu());
    vcpu_registry_unlock();
    g_detector = nullptr;  // its thread is not in this process
    g_opt.threshold_us = 0;
    g_mu.unlock();
}

}  // namespace

void slow_turn_vcpu_init(vcpu_t* v) {
    v->os_thread = pthread_self();
    v->os_tid = (pid_t)syscall(SYS_gettid);
    static std::once_flag atfork_once;
    std::call_once(atfork_once, [] {
        pthread_atfork(&before_fork, &after_fork_in_parent, &after_fork_in_child);
    });
    std::lock_guard<std::mutex> lock(g_mu);
    load_defaults();
    g_vcpus++;
    start_locked();
}

void slow_turn_vcpu_fini() {
    detector* d = nullptr;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        if (--g_vcpus == 0 && g_detector) {
            d = g_detector;
            d->stop = true;
            g_detector = nullptr;
        }
    }
    if (!d) return;
    g_cv.notify_all();
    d->th.join();
    delete d;
}

int set_slow_turn_options(const SlowTurnOptions& opt) {
    if (opt.signo <= 0 || opt.signo >= NSIG || opt.signo == SIGKILL || opt.signo == SIGSTOP)
        LOG_ERROR_RETURN(EINVAL, -1, "set_slow_turn_options: cannot catch signal `", opt.signo);
    std::lock_guard<std::mutex> lock(g_mu);
    load_defaults();
    if (opt.threshold_us && install(opt.signo) < 0) return -1;
    g_opt = opt;
    start_locked();
    g_cv.notify_all();
    return 0;
}

SlowTurnOptions get_slow_turn_options() {
    std::lock_guard<std::mutex> lock(g_mu);
    load_defaults();
    return g_opt;
}

}  // namespace photon
