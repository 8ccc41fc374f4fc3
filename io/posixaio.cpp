// posixaio_*: file syscalls on helper OS threads, completion by
// thread_interrupt.
//
// glibc's POSIX AIO is itself a user-space thread pool running pread/pwrite;
// its only notifications are a signal (a handler may not call photon) or
// SIGEV_THREAD, which starts a new OS thread per completion; SIGEV_NONE would
// need polling. So we run the same model directly: up to kMaxHelpers threads
// shared by the process take requests from one queue, run the syscall, and
// wake the parked coroutine with thread_interrupt, which any OS thread may
// call. A request that no helper has taken yet can be cancelled.
#include <sys/uio.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include <photon/common/alog.h>
#include <photon/io/aio-wrapper.h>
#include <photon/io/fd-events.h>
#include <photon/thread/thread.h>

namespace photon {
namespace {

constexpr size_t kMaxHelpers = 16;

struct aio_job {
    ssize_t (*fn)(aio_job*);
    int fd;
    void* buf;
    size_t count;
    const iovec* iov;
    int iovcnt;
    off_t offset;
    ssize_t res = 0;
    int err = 0;
    bool done = false;         // under lock
    thread* waiter = nullptr;  // under lock
    spinlock lock;
};

class helper_pool {
public:
    ~helper_pool() {
        {
            std::lock_guard<std::mutex> l(mutex_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto& t : threads_) t.join();
    }
    void enqueue(aio_job* j) {
        std::lock_guard<std::mutex> l(mutex_);
        queue_.push_back(j);
        if (idle_ == 0 && threads_.size() < kMaxHelpers)
            threads_.emplace_back([this] { loop(); });
        else
            cv_.notify_one();
    }
    // True if j was still queued (and now never runs).
    bool cancel(aio_job* j) {
        std::lock_guard<std::mutex> l(mutex_);
        for (auto it = queue_.begin(); it != queue_.end(); ++it)
            if (*it == j) return queue_.erase(it), true;
        return false;
    }

private:
    void loop() {
        std::unique_lock<std::mutex> l(mutex_);
        while (true) {
            idle_++;
            cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
            idle_--;
            if (queue_.empty()) return;  // stop_
            aio_job* j = queue_.front();
            queue_.pop_front();
            l.unlock();
            run(j);
            l.lock();
        }
    }
    static void run(aio_job* j) {
        ssize_t r = j->fn(j);
        int e = errno;
        // Wake under the job's lock: the waiter may free the job (its stack)
        // as soon as it sees done, so the unlock is our last access.
        j->lock.lock();
        j->res = r;
        j->err = e;
        j->done = true;
        if (j->waiter) thread_interrupt(j->waiter, EOK);
        j->lock.unlock();
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<aio_job*> queue_;
    std::vector<std::thread> threads_;
    size_t idle_ = 0;
    bool stop_ = false;
};

helper_pool& pool() {
    static helper_pool p;
    return p;
}

void unlock_spin(void* l) { static_cast<spinlock*>(l)->unlock(); }

// Parks until a helper finished j. The first interrupt cancels j if it is
// still queued; otherwise j is waited for, ignoring further interrupts, and
// its own result is returned.
ssize_t run_job(aio_job* j) {
    if (!CURRENT) LOG_ERROR_RETURN(ENOSYS, -1, "posixaio: not a vCPU");
    pool().enqueue(j);
    vcpu_count_io(VCPU_IO_POSIX_AIO, 1, 0);
    int err = 0;
    j->lock.lock();
    while (!j->done) {
        j->waiter = CURRENT;
        // Release the lock only once committed to sleep, so the helper either
        // sees no waiter yet (and we then see done) or finds us asleep.
        int r = thread_usleep_defer(Timeout(), &unlock_spin, &j->lock);
        int e = errno;
        j->lock.lock();
        j->waiter = nullptr;
        if (j->done || r == 0 || e == EOK || err) continue;
        err = e;
        j->lock.unlock();
        bool cancelled = pool().cancel(j);
        j->lock.lock();
        if (cancelled) j->done = true, j->res = -1, j->err = err;
    }
    j->lock.unlock();
    vcpu_count_io(VCPU_IO_POSIX_AIO, 0, 1);
    if (j->res < 0) errno = j->err;
    return j->res;
}

ssize_t do_pread(aio_job* j) { return ::pread(j->fd, j->buf, j->count, j->offset); }
ssize_t do_pwrite(aio_job* j) { return ::pwrite(j->fd, j->buf, j->count, j->offset); }
ssize_t do_preadv(aio_job* j) { return ::preadv(j->fd, j->iov, j->iovcnt, j->offset); }
ssize_t do_pwritev(aio_job* j) { return ::pwritev(j->fd, j->iov, j->iovcnt, j->offset); }
ssize_t do_fsync(aio_job* j) { return ::fsync(j->fd); }
ssize_t do_fdatasync(aio_job* j) { return ::fdatasync(j->fd); }

ssize_t submit(ssize_t (*fn)(aio_job*), int fd, void* buf, size_t count, const iovec* iov,
               int iovcnt, off_t offset) {
    aio_job j;
    j.fn = fn;
    j.fd = fd;
    j.buf = buf;
    j.count = count;
    j.iov = iov;
    j.iovcnt = iovcnt;
    j.offset = offset;
    return run_job(&j);
}

}  // namespace
}  // namespace photon

using namespace photon;

extern "C" {

ssize_t posixaio_pread(int fd, void* buf, size_t count, off_t offset) {
    return submit(&do_pread, fd, buf, count, nullptr, 0, offset);
}
ssize_t posixaio_pwrite(int fd, const void* buf, size_t count, off_t offset) {
    return submit(&do_pwrite, fd, const_cast<void*>(buf), count, nullptr, 0, offset);
}
ssize_t posixaio_preadv(int fd, const iovec* iov, int iovcnt, off_t offset) {
    return submit(&do_preadv, fd, nullptr, 0, iov, iovcnt, offset);
}
ssize_t posixaio_pwritev(int fd, const iovec* iov, int iovcnt, off_t offset) {
    return submit(&do_pwritev, fd, nullptr, 0, iov, iovcnt, offset);
}
int posixaio_fsync(int fd) { return (int)submit(&do_fsync, fd, nullptr, 0, nullptr, 0, 0); }
int posixaio_fdatasync(int fd) { return (int)submit(&do_fdatasync, fd, nullptr, 0, nullptr, 0, 0); }

}  // extern "C"
