// Says "stack overflow" when a coroutine runs into its guard page, instead of
// a bare SIGSEGV. Each vCPU gets an alternate signal stack (the faulting stack
// has no room left for the handler); the handler writes one line and lets the
// fault happen again with the previous disposition, so the process still dies
// (or another handler, e.g. a sanitizer's, takes over).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "vcpu.h"

namespace photon {

namespace {

struct sigaction g_prev_segv, g_prev_bus;
std::once_flag g_install_once;
constexpr size_t kAltStackSize = 64 * 1024;
thread_local void* t_alt_stack = nullptr;

bool in_guard_page(thread* th, const char* addr) {
    if (!th || !th->stack || !th->stack->guarded) return false;
    return addr >= th->stack->base && addr < th->stack_lo;
}

void report_overflow(thread* th, const void* addr) {
    char line[256];
    int n = snprintf(line, sizeof(line),
                     "photon: stack overflow in coroutine %p: fault at %p, below its %zu-byte "
                     "stack (give thread_create a larger stack_size)\n",
                     (void*)th, addr, th->stack->usable);
    if (n > 0) {
        ssize_t r = write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line));
        (void)r;
    }
}

void on_fault(int sig, siginfo_t* info, void* uctx) {
    const struct sigaction& prev = sig == SIGSEGV ? g_prev_segv : g_prev_bus;
    if (in_guard_page(CURRENT, static_cast<const char*>(info->si_addr)))
        report_overflow(CURRENT, info->si_addr);
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
        prev.sa_sigaction(sig, info, uctx);
        return;
    }
    if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler) {
        prev.sa_handler(sig);
        return;
    }
    // Returning re-executes the faulting access under the default action.
    signal(sig, SIG_DFL);
}

void install_handlers() {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_prev_segv);
    sigaction(SIGBUS, &sa, &g_prev_bus);
}

}  // namespace

void stack_guard_vcpu_init() {
    std::call_once(g_install_once, install_handlers);
    stack_t cur;
    if (sigaltstack(nullptr, &cur) == 0 && !(cur.ss_flags & SS_DISABLE)) return;  // the user's
    void* mem = malloc(kAltStackSize);
    if (!mem) return;
    stack_t ss;
    ss.ss_sp = mem;
    ss.ss_size = kAltStackSize;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, nullptr) == 0)
        t_alt_stack = mem;
    else
        free(mem);
}

void stack_guard_vcpu_fini() {
    if (!t_alt_stack) return;
    stack_t ss;
    memset(&ss, 0, sizeof(ss));
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    free(t_alt_stack);
    t_alt_stack = nullptr;
}

}  // namespace photon
