// Executor: a task queue any OS thread may push to, drained by a loop
// coroutine on the executor's vCPU that starts one coroutine per task.
#include <photon/common/executor/executor.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <photon/common/alog.h>
#include <photon/common/list.h>
#include <photon/thread/thread11.h>

namespace photon {

namespace {

// As many tasks as Photon's ring holds; a producer beyond it waits.
constexpr size_t kQueueCapacity = 32 * 1024;

// Sleeps a little without blocking a vCPU's other coroutines.
void pause_briefly(uint64_t us) {
    if (CURRENT)
        thread_usleep(us);
    else
        std::this_thread::sleep_for(std::chrono::microseconds(us));
}

// A running task's coroutine, so that the destructor can tell whether it is
// called from one of them.
struct running_task : intrusive_list_node<running_task> {
    thread* th;
    explicit running_task(thread* t) : th(t) {}
};

}  // namespace

class Executor::ExecutorImpl {
public:
    explicit ExecutorImpl(const ExecutorQueueOption& qopt) : qopt_(qopt) {}

    // Thread mode: starts the OS thread and waits until its vCPU is up.
    void start_thread(int init_ev, int init_io, const PhotonOptions& options) {
        os_ =
            std::thread([this, init_ev, init_io, options] { os_main(init_ev, init_io, options); });
        std::unique_lock<std::mutex> l(up_mu_);
        up_cv_.wait(l, [&] { return vcpu_ != nullptr; });
    }

    // Export mode: serves from a new coroutine of the calling vCPU.
    bool start_here() {
        vcpu_ = get_vcpu();
        thread* th = thread_create11([this] { serve(); });
        if (!th) {
            mark_done();  // so that the destructor finds nothing to wait for
            release();    // the loop's reference, never taken up
            return false;
        }
        thread_yield_to(th);  // let it reach its first wait
        return true;
    }

    void push(Delegate<void> task) {
        bool wake;
        for (;;) {
            {
                std::lock_guard<std::mutex> l(mu_);
                if (q_.size() < kQueueCapacity) {
                    q_.push_back(task);
                    wake = take_idle_locked();
                    break;
                }
            }
            pause_briefly(50);  // full: let the loop catch up
        }
        if (wake) ready_.signal(1);
    }

    // The destructor's part: stop taking work and wait for it as it may.
    void shutdown() {
        close();
        const bool own_vcpu = CURRENT && get_vcpu() == vcpu_;
        if (!(own_vcpu && current_is_task())) wait_done();
        if (os_.joinable()) {
            if (own_vcpu)
                os_.detach();  // its photon::fini() waits for the caller
            else
                os_.join();
        }
    }

    // Drops one owner: the Executor and the loop each hold one.
    void release() {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }

private:
    void os_main(int init_ev, int init_io, PhotonOptions options) {
        if (photon::init(init_ev, init_io, options) < 0) {
            LOG_ERROR("Executor: photon::init(`, `) failed: `; running without event engine",
                      init_ev, init_io, ERRNO());
            if (photon::init(INIT_EVENT_NONE, INIT_IO_NONE, options) < 0) {
                LOG_FATAL("Executor: no vCPU could be made: `", ERRNO());
                std::abort();
            }
        }
        {
            std::lock_guard<std::mutex> l(up_mu_);
            vcpu_ = get_vcpu();
            up_cv_.notify_one();
        }
        serve();         // releases this loop's reference: `this` may be gone
        photon::fini();  // waits for coroutines the tasks left behind
    }

    // The loop: one coroutine per task until closed, drained and idle.
    void serve() {
        Delegate<void> task;
        while (next(&task)) {
            in_flight_++;
            if (!thread_create11(&ExecutorImpl::run_task, this, task)) {
                LOG_ERROR("Executor: no coroutine for a task (`); running it in the loop", ERRNO());
                run_task(task);
            }
        }
        mark_done();
        release();
    }

    void run_task(Delegate<void> task) {
        running_task self(CURRENT);
        running_.push_back(&self);
        task();
        running_.erase(&self);
        if (--in_flight_ == 0) {
            bool wake;
            {
                std::lock_guard<std::mutex> l(mu_);
                wake = closed_ && take_idle_locked();
            }
            // The loop shares this vCPU: it cannot free us before we return.
            if (wake) ready_.signal(1);
        }
    }

    // photon::now, which other vCPUs' schedulers store atomically.
    static uint64_t now_relaxed() {
        return __atomic_load_n(const_cast<const uint64_t*>(&photon::now), __ATOMIC_RELAXED);
    }

    // The next task; false once closed with nothing queued or running.
    bool next(Delegate<void>* task) {
        uint64_t turns = 0;
        const uint64_t t0 = now_relaxed();
        for (;;) {
            bool sleep;
            {
                std::lock_guard<std::mutex> l(mu_);
                if (!q_.empty()) {
                    *task = q_.front();
                    q_.pop_front();
                    return true;
                }
                if (closed_ && in_flight_ == 0) return false;
                // Poll a while first: a sleep and its wakeup cost two syscalls.
                sleep = turns >= qopt_.max_yield_turn || now_relaxed() - t0 >= qopt_.max_yield_usec;
                if (sleep) idle_ = true;
            }
            if (sleep) {
                // A push between unlock and here leaves its unit counted.
                ready_.wait(1);
            } else {
                turns++;
                thread_yield();
            }
        }
    }

    // Under mu_: whether the loop sleeps (or is about to) and needs a unit.
    bool take_idle_locked() {
        if (!idle_) return false;
        idle_ = false;
        return true;
    }

    void close() {
        bool wake;
        {
            std::lock_guard<std::mutex> l(mu_);
            closed_ = true;
            wake = take_idle_locked();
        }
        if (wake) ready_.signal(1);
    }

    bool current_is_task() {
        auto first = running_.front();
        if (!first) return false;
        auto t = first;
        do {
            if (t->th == CURRENT) return true;
            t = t->next();
        } while (t != first);
        return false;
    }

    void wait_done() {
        Awaiter<AutoContext> w;
        {
            std::lock_guard<std::mutex> l(done_mu_);
            if (done_) return;
            done_waiter_ = &w;
        }
        w.suspend();
    }

    void mark_done() {
        Awaiter<AutoContext>* w;
        {
            std::lock_guard<std::mutex> l(done_mu_);
            done_ = true;
            w = done_waiter_;
        }
        if (w) w->resume();
    }

    const ExecutorQueueOption qopt_;
    std::atomic<int> refs_{2};

    // The queue, under mu_: held for a few instructions, never across a
    // switch, so an OS-thread mutex serves coroutines and threads alike.
    std::mutex mu_;
    std::deque<Delegate<void>> q_;
    bool closed_ = false;
    bool idle_ = false;  // the loop sleeps on ready_, or will
    semaphore ready_;    // a unit per wakeup of the idle loop

    // Loop side: touched on the executor's vCPU only.
    uint64_t in_flight_ = 0;
    intrusive_list<running_task> running_;

    std::mutex done_mu_;
    bool done_ = false;  // the loop has ended
    Awaiter<AutoContext>* done_waiter_ = nullptr;

    std::thread os_;  // thread mode only
    std::mutex up_mu_;
    std::condition_variable up_cv_;
    vcpu_base* vcpu_ = nullptr;
};

Executor::Executor(int init_ev, int init_io, const PhotonOptions& options,
                   const ExecutorQueueOption& queue_options)
    : e(new ExecutorImpl(queue_options)) {
    e->start_thread(init_ev, init_io, options);
}

Executor::Executor(create_on_current_vcpu) : e(new ExecutorImpl({1024, 1024})) {}

Executor::~Executor() {
    e->shutdown();
    e->release();
}

void Executor::_issue(ExecutorImpl* e, Delegate<void> cb) { e->push(cb); }

Executor* Executor::export_as_executor() {
    if (!CURRENT) LOG_ERROR_RETURN(ENOSYS, nullptr, "Executor::export_as_executor: not a vCPU");
    auto ret = new Executor(create_on_current_vcpu());
    if (!ret->e->start_here()) {
        int err = errno;  // from thread_create
        delete ret;
        errno = err;
        return nullptr;
    }
    return ret;
}

}  // namespace photon
