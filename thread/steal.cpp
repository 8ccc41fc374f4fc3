// Work stealing, opt-in with PhotonLibOS's flags: an active vCPU that runs out of work asks
// for some, and a busy passive vCPU gives it at its next switch. The giver moves the
// coroutines, not the taker: a run queue belongs to its vCPU alone (no lock on the hot path),
// so its owner takes them out and hands them over as thread_migrate does. A vCPU that nobody
// asks of pays one load of an unchanging, shared cache line per switch.
#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include <photon/thread/detail/work_stealing.h>

#include "vcpu.h"

namespace photon {

work_stealing_counts g_ws;

namespace {

// Coroutines looked at per offer, from the back of the run queue: the last to run here, whose
// stacks are the coldest in this core's caches.
constexpr size_t kScanMax = 64;
// After an offer that found nothing to give or nobody to take it, switches before the next
// look (many vCPUs would otherwise contend for the registry lock at every switch).
constexpr uint64_t kQuietSwitches = 64;
// vCPUs served by one offer.
constexpr size_t kMaxTakers = 8;

// CPUs this process may run on: work goes to an idle vCPU only while fewer vCPUs run than
// this. More would share a CPU with the giver, and the OS, not the vCPUs, would decide which
// coroutines wait (by whole time slices: milliseconds).
uint32_t cpus() {
    static const uint32_t n = [] {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
            return (uint32_t)CPU_COUNT(&set);
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        return c > 0 ? (uint32_t)c : 1u;
    }();
    return n;
}

void set_running(vcpu_t* v, bool running) {
    if (v->ws_running.exchange(running) != running)
        g_ws.running.fetch_add(running ? 1 : (uint32_t)-1, std::memory_order_relaxed);
}

// th, in v's run queue, may go: it allows stealing now, is neither running nor about to run
// (`from` is on the CPU, `to` is next), and nothing pins it to this vCPU's event engine.
bool may_leave(const thread* th, const thread* from, const thread* to) {
    constexpr uint32_t kMask = TF_STEAL | TF_STEAL_PAUSED | TF_MIGRATING | TF_MAIN | TF_DAEMON;
    return th != from && th != to && (th->flags & kMask) == TF_STEAL && th->pins == 0 &&
           th->state == READY;
}

// Takes up to `max` vCPUs other than v that ask for work (each stops asking and counts as
// running from now on), while fewer run than there are CPUs. Under the registry lock, which
// keeps them from ending.
size_t claim_takers(vcpu_t* v, vcpu_t** takers, size_t max) {
    size_t k = 0;
    for (vcpu_t* u = first_vcpu_locked(); u && k < max; u = u->all_vcpus_next) {
        if (g_ws.running.load(std::memory_order_relaxed) >= cpus()) break;
        if (u == v || !u->hungry.load(std::memory_order_relaxed)) continue;
        if (!u->hungry.exchange(false)) continue;  // another giver was first
        g_ws.hungry.fetch_sub(1, std::memory_order_relaxed);
        set_running(u, true);
        takers[k++] = u;
    }
    return k;
}

// Moves cand[0..n) that may still leave from v to u; returns how many moved.
size_t give(vcpu_t* v, vcpu_t* u, thread** cand, size_t n, thread* from, thread* to) {
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) {
        thread* th = cand[i];
        th->lock.lock();  // a pause from another vCPU takes it too
        if (may_leave(th, from, to)) {
            v->rq.erase(th);
            all_unlink(v, th);
            v->nthreads--;
            hand_over_locked(th, u);
            moved++;
        }
        th->lock.unlock();
    }
    return moved;
}

// Wakes u, claimed, to take what it was given. One that got nothing (its coroutines were paused
// meanwhile) must not block without asking again: it finds standby flagged, looks, and asks.
void wake_taker(vcpu_t* u) {
    u->standby_lock.lock();
    u->has_standby.store(true, std::memory_order_seq_cst);
    u->standby_lock.unlock();
    notify_vcpu(u);
}

}  // namespace

void start_work_stealing(vcpu_t* v) {
    if (v->ws_flags) set_running(v, true);
}

void ask_for_work(vcpu_t* v) {
    if (!v->ws_flags) return;
    set_running(v, false);
    if ((v->ws_flags & VCPU_ENABLE_ACTIVE_WORK_STEALING) && !v->hungry.exchange(true))
        g_ws.hungry.fetch_add(1, std::memory_order_relaxed);
}

void stop_asking_for_work(vcpu_t* v) {
    if (!v->ws_flags) return;
    if (v->hungry.load(std::memory_order_relaxed) && v->hungry.exchange(false))
        g_ws.hungry.fetch_sub(1, std::memory_order_relaxed);
    set_running(v, true);
}

void offer_work(vcpu_t* v, thread* from, thread* to) {
    if (v->ws_alive == 0 || to->prev() == to || v->switch_count < v->ws_quiet_until) return;
    if (g_ws.running.load(std::memory_order_relaxed) >= cpus()) return;
    thread* cand[kScanMax];
    size_t n = 0, looked = 0;
    for (thread* th = to->prev(); th != to && looked < kScanMax; th = th->prev(), looked++)
        if (may_leave(th, from, to)) cand[n++] = th;
    if (n == 0) {
        v->ws_quiet_until = v->switch_count + kQuietSwitches;
        return;
    }
    vcpu_t* takers[kMaxTakers];
    vcpu_registry_lock();
    size_t k = claim_takers(v, takers, std::min(n, kMaxTakers));
    if (k == 0) {  // other givers were first, or the CPUs filled up
        vcpu_registry_unlock();
        v->ws_quiet_until = v->switch_count + kQuietSwitches;
        return;
    }
    // All of them, in equal shares: v keeps what runs now and next. Each share a run of
    // neighbours in the queue, which often came in together and share data.
    size_t moved = 0;
    for (size_t t = 0; t < k; t++) {
        size_t lo = n * t / k, hi = n * (t + 1) / k;
        moved += give(v, takers[t], cand + lo, hi - lo, from, to);
        wake_taker(takers[t]);
    }
    vcpu_registry_unlock();
    if (moved) {
        bump(v->ctr.given_away, moved);
        wake_wait_all(v);
    }
}

void work_stealing_after_fork(vcpu_t* self) {
    for (vcpu_t* u = first_vcpu_locked(); u; u = u->all_vcpus_next) {
        if (u == self) continue;
        u->ws_flags = 0;  // its OS thread is not in this process
        u->hungry.store(false, std::memory_order_relaxed);
        u->ws_running.store(false, std::memory_order_relaxed);
    }
    g_ws.hungry.store(0, std::memory_order_relaxed);
    bool runs = self && self->ws_flags;
    if (self) self->hungry.store(false, std::memory_order_relaxed);
    if (self) self->ws_running.store(runs, std::memory_order_relaxed);
    g_ws.running.store(runs ? 1 : 0, std::memory_order_relaxed);
}

namespace detail {
void vcpu_stop_taking_work() {
    if (vcpu_t* v = current_vcpu()) close_work_stealing(v);
}
}  // namespace detail

void close_work_stealing(vcpu_t* v) {
    if (v->hungry.exchange(false)) g_ws.hungry.fetch_sub(1, std::memory_order_relaxed);
    set_running(v, false);
    v->ws_flags = 0;
    // A giver that claimed v before holds the registry lock until v has its coroutines.
    vcpu_registry_lock();
    vcpu_registry_unlock();
}

void thread_pause_work_stealing(bool flag, thread* th) {
    if (!th) return;
    th->lock.lock();
    if (flag)
        th->flags |= TF_STEAL_PAUSED;
    else
        th->flags &= ~TF_STEAL_PAUSED;
    th->lock.unlock();
}

}  // namespace photon
