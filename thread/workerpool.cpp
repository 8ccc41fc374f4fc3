// WorkPool: pool vCPUs on OS threads of their own, a bounded multi-producer
// task queue, and the worker loops that serve it.
#include <photon/thread/workerpool.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <photon/common/alog.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

namespace photon {

namespace {

struct work {
    void (*fn)(void*) = nullptr;
    void* arg = nullptr;
    void operator()() const { fn(arg); }
};

// Sleeps a little without blocking a vCPU's other coroutines.
void pause_briefly(uint64_t us) {
    if (CURRENT)
        thread_usleep(us);
    else
        std::this_thread::sleep_for(std::chrono::microseconds(us));
}

// Semaphore units that let every worker loop, present or late, see stop_.
constexpr uint64_t kStopUnits = 1ULL << 40;

}  // namespace

struct WorkPool::impl {
    // The ring, under mutex_: held for a few instructions, never across a
    // switch, so a plain OS-thread mutex serves coroutines and threads alike.
    std::mutex mutex_;
    std::vector<work> ring_;
    size_t head_ = 0, size_ = 0;
    // One unit per queued task: signal() works from any OS thread and
    // costs a wakeup syscall only if the woken worker's vCPU idles.
    semaphore avail_{0};
    std::atomic<bool> stop_{false};
    const int thread_mod_;

    spinlock vcpus_lock_;
    std::vector<vcpu_base*> vcpus_;  // thread_migrate targets
    std::atomic<size_t> next_vcpu_{0};
    std::atomic<int> joined_{0};

    std::vector<std::thread> os_threads_;
    std::mutex up_mutex_;
    std::condition_variable up_cv_;
    size_t up_ = 0;  // pool OS threads past photon::init, failed or not

    impl(size_t vcpu_num, int ev_engine, int io_engine, int thread_mod, size_t ring_size)
        : ring_(std::max<size_t>(ring_size, 1)), thread_mod_(thread_mod) {
        for (size_t i = 0; i < vcpu_num; i++)
            os_threads_.emplace_back([=] { os_thread_main(ev_engine, io_engine); });
        std::unique_lock<std::mutex> l(up_mutex_);
        up_cv_.wait(l, [&] { return up_ == vcpu_num; });
    }

    void os_thread_main(int ev_engine, int io_engine) {
        bool ok = photon::init((uint64_t)ev_engine, (uint64_t)io_engine) == 0;
        if (ok)
            add_vcpu(get_vcpu());
        else
            LOG_ERROR("WorkPool: photon::init failed on a pool OS thread: ", ERRNO());
        {
            std::lock_guard<std::mutex> l(up_mutex_);
            up_++;
            up_cv_.notify_one();
        }
        if (!ok) return;
        serve();
        remove_vcpu(get_vcpu());
        photon::fini();
    }

    bool add_vcpu(vcpu_base* v) {
        SCOPED_LOCK(vcpus_lock_);
        if (std::find(vcpus_.begin(), vcpus_.end(), v) != vcpus_.end()) return false;
        vcpus_.push_back(v);
        return true;
    }

    void remove_vcpu(vcpu_base* v) {
        SCOPED_LOCK(vcpus_lock_);
        vcpus_.erase(std::find(vcpus_.begin(), vcpus_.end(), v));
    }

    // Pool vCPU `index`, or the next one round-robin for -1; nullptr if none.
    vcpu_base* pick(size_t index) {
        SCOPED_LOCK(vcpus_lock_);
        size_t n = vcpus_.size();
        if (index == -1ULL && n) index = next_vcpu_.fetch_add(1, std::memory_order_relaxed) % n;
        return index < n ? vcpus_[index] : nullptr;
    }

    // The calling vCPU's worker loops, per thread_mod; returns on stop.
    void serve() {
        std::vector<join_handle*> extra;
        for (int i = 1; i < thread_mod_; i++)
            if (thread* th = thread_create11([this] { loop(); }))
                extra.push_back(thread_enable_join(th));
        loop();  // the calling coroutine is one of the workers
        for (auto h : extra) thread_join(h);
    }

    void loop() {
        work w;
        while (next(&w)) {
            if (thread_mod_ != 0 || !thread_create11([w] { w(); })) w();
        }
    }

    // Waits for a task; false once stopping with the queue empty.
    bool next(work* w) {
        while (true) {
            avail_.wait(1);
            if (pop(w)) return true;
            if (stop_.load(std::memory_order_acquire)) return false;
        }
    }

    bool pop(work* w) {
        std::lock_guard<std::mutex> l(mutex_);
        if (size_ == 0) return false;
        *w = ring_[head_];
        head_ = (head_ + 1) % ring_.size();
        size_--;
        return true;
    }

    void push(work w) {
        while (true) {
            {
                std::lock_guard<std::mutex> l(mutex_);
                if (size_ < ring_.size()) {
                    ring_[(head_ + size_) % ring_.size()] = w;
                    size_++;
                    break;
                }
            }
            pause_briefly(50);  // full: let the workers catch up
        }
        avail_.signal(1);
    }

    void shutdown() {
        stop_.store(true, std::memory_order_release);
        avail_.signal(kStopUnits);
        for (auto& t : os_threads_) t.join();
        while (joined_.load(std::memory_order_acquire) > 0) pause_briefly(1000);
        // Queued by a task after the last worker looked: run it here.
        work w;
        while (pop(&w)) w();
    }
};

WorkPool::WorkPool(size_t vcpu_num, int ev_engine, int io_engine, int thread_mod, size_t ring_size)
    : impl_(new impl(vcpu_num, ev_engine, io_engine, thread_mod, ring_size)) {}

WorkPool::~WorkPool() { impl_->shutdown(); }

void WorkPool::enqueue(void (*fn)(void*), void* arg) { impl_->push({fn, arg}); }

int WorkPool::thread_migrate(photon::thread* th, size_t index) {
    vcpu_base* v = impl_->pick(index);
    if (!v) LOG_ERROR_RETURN(EINVAL, -1, "WorkPool::thread_migrate: no pool vCPU ", (int64_t)index);
    return photon::thread_migrate(th, v);
}

int WorkPool::join_current_vcpu_into_workpool() {
    vcpu_base* v = get_vcpu();
    if (!v) LOG_ERROR_RETURN(ENOSYS, -1, "WorkPool::join_current_vcpu_into_workpool: not a vCPU");
    impl* p = impl_.get();  // the destructor frees *this once joined_ drops
    if (!p->add_vcpu(v))
        LOG_ERROR_RETURN(EALREADY, -1, "WorkPool::join_current_vcpu_into_workpool: joined already");
    p->joined_++;
    p->serve();
    p->remove_vcpu(v);
    p->joined_.fetch_sub(1, std::memory_order_release);  // our last touch of the pool
    return 0;
}

int WorkPool::get_vcpu_num() {
    SCOPED_LOCK(impl_->vcpus_lock_);
    return (int)impl_->vcpus_.size();
}

}  // namespace photon
