#include "fuse_session_server.h"

#include <linux/fuse.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <photon/common/alog.h>
#include <photon/common/memory_budget.h>
#include <photon/fs/fuse_adaptor.h>
#include <photon/io/fd-events.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include "fuse_metrics.h"

namespace photon {
namespace fs {
namespace {

constexpr size_t kPage = 4096;
// A WRITE request is fuse_in_header + fuse_write_in + payload: reading the
// request at kReqOffset puts the payload on a page boundary.
constexpr size_t kWriteHeader = sizeof(fuse_in_header) + sizeof(fuse_write_in);
static_assert(kWriteHeader == 80, "FUSE write header changed size");
constexpr size_t kReqOffset = kPage - kWriteHeader;
// libfuse's largest request buffer (FUSE_MAX_MAX_PAGES pages + a header
// page); the kernel refuses reads into less than a full request's room.
constexpr size_t kReadSize = 256 * kPage + kPage;
constexpr size_t kLarge = fuse_buffer_max;
static_assert(kReqOffset + kReadSize <= kLarge, "a request must fit a large buffer");
constexpr size_t kSmallRequest = 64 * 1024 + kPage;  // up to here, copying is cheap
// Requests holding a kLarge buffer (big writes) per lane: memory is bounded
// by bytes (about 64 MiB), not only by max_inflight.
constexpr uint32_t kMaxLargeInflight = 64;
// How long the reader waits for budget for a request (not reading /dev/fuse
// meanwhile) before it answers the request ENOMEM.
constexpr uint64_t kBudgetWait = 30ull * 1000 * 1000;

// Per OS thread (so per lane) cache of page-aligned buffers in size classes
// of 4 KiB << k, and kLarge. Keeping them spares malloc's mmap / munmap and
// the page faults of a fresh buffer on every big read. A class keeps at most
// 16 MiB (and 8 to 1024 buffers); the cache at most 64 MiB.
class buffer_cache {
public:
    ~buffer_cache() {
        for (auto& c : free_)
            for (void* p : c) free(p);
    }
    void* get(size_t n) {
        int k = class_of(n);
        if (k < 0) return nullptr;
        auto& v = free_[k];
        if (!v.empty()) {
            void* p = v.back();
            v.pop_back();
            cached_ -= size_of(k);
            return p;
        }
        void* p = nullptr;
        return posix_memalign(&p, kPage, size_of(k)) == 0 ? p : nullptr;
    }
    void put(void* p, size_t n) {
        int k = class_of(n);
        if (!p || k < 0) return;
        size_t sz = size_of(k);
        size_t cap = std::min<size_t>(1024, std::max<size_t>(8, (16u << 20) / sz));
        if (free_[k].size() >= cap || cached_ + sz > (64u << 20)) return free(p);
        free_[k].push_back(p);
        cached_ += sz;
    }

private:
    static constexpr int kClasses = 10;  // 4 KiB .. 1 MiB, then kLarge
    static size_t size_of(int k) { return k == kClasses - 1 ? kLarge : kPage << k; }
    static int class_of(size_t n) {
        for (int k = 0; k < kClasses; k++)
            if (n <= size_of(k)) return k;
        return -1;
    }
    std::vector<void*> free_[kClasses];
    size_t cached_ = 0;
};
thread_local buffer_cache t_buffers;

// ---- the server -------------------------------------------------------------

class server;

struct lane {
    server* srv;
    std::unique_ptr<MemoryBudget::Account> account;
    spinlock reader_lock;  // guards `reader` against stop() on other vCPUs
    thread* reader = nullptr;
    uint32_t inflight = 0;        // this lane's coroutines only
    uint32_t large_inflight = 0;  // ... of them holding a whole kLarge read buffer
    condition_variable cv;        // inflight went down
};

// Lives at the start of a request's buffer, before the request itself.
struct request_slot {
    server* srv;
    lane* l;
    size_t n;         // request bytes at kReqOffset
    size_t cap;       // buffer class, for the cache
    uint64_t unique;  // the kernel's request id
    size_t charge;    // bytes taken from the lane's account
};
static_assert(sizeof(request_slot) <= kReqOffset, "slot overlaps the request");

class server {
public:
    server(fuse_session* se, const fuse_server_options& opt) : se_(se), opt_(opt) {
        if (opt_.lanes < 1) opt_.lanes = 1;
        if (opt_.max_inflight < 1) opt_.max_inflight = 1;
    }
    int run();

private:
    void serve_lane(lane& l);
    void drain(lane& l);
    void dispatch(lane& l, char*& big, size_t n);
    bool take_budget(lane& l, const fuse_in_header* in, size_t n, size_t* charge);
    void reply_error(uint64_t unique, int err);
    void process(char* req, size_t n);
    // process(), timed for the metrics.
    void serve(char* req, size_t n);
    void interrupt(const char* req, size_t n);
    int try_interrupt(uint64_t unique);
    void interrupt_later(uint64_t unique);
    void retry_interrupt(uint64_t unique);
    void interrupt_all(int error);
    static void* worker(void* arg);
    static void* watcher(void* arg);
    void stop();
    bool ending() const { return stopping_.load() || fuse_session_exited(se_); }
    void set_reader(lane& l, thread* th) {
        l.reader_lock.lock();
        l.reader = th;
        l.reader_lock.unlock();
    }

    fuse_session* se_;
    fuse_server_options opt_;
    int fd_ = -1;
    int wake_fd_ = -1;
    rwlock gate_;
    std::atomic<bool> stopping_{false};
    std::atomic<int> error_{0};
    std::vector<std::unique_ptr<lane>> lanes_;
    // Requests in their coroutines, by unique: FUSE_INTERRUPT wakes them.
    // A worker leaves the map (under the lock) before it ends.
    std::mutex running_mu_;
    std::unordered_map<uint64_t, thread*> running_;
    std::unordered_set<uint64_t> early_interrupts_;  // interrupted before registered
    std::atomic<int> retriers_{0};                   // interrupt_later coroutines
};

// No reply, or the first reply of the session: cheaper than a coroutine. A
// FORGET that must wait for the gate (serialize_writers) gets a coroutine:
// the reader waiting there would read no FUSE_INTERRUPT for the requests
// the gate waits for.
bool runs_inline(uint32_t opcode, bool serialize_writers) {
    if (opcode == FUSE_FORGET || opcode == FUSE_BATCH_FORGET) return !serialize_writers;
    return opcode == FUSE_INTERRUPT || opcode == FUSE_INIT || opcode == FUSE_DESTROY;
}

bool takes_path_write_lock(uint32_t opcode) {
    return opcode == FUSE_UNLINK || opcode == FUSE_RMDIR || opcode == FUSE_RENAME ||
           opcode == FUSE_RENAME2 || opcode == FUSE_FORGET || opcode == FUSE_BATCH_FORGET;
}

void server::process(char* req, size_t n) {
    struct fuse_buf fb;
    memset(&fb, 0, sizeof(fb));
    fb.mem = req;
    fb.size = n;
    if (!opt_.serialize_writers) return fuse_session_process_buf(se_, &fb);
    int mode = takes_path_write_lock(((fuse_in_header*)req)->opcode) ? WLOCK : RLOCK;
    while (gate_.lock(mode) < 0) {
    }
    fuse_session_process_buf(se_, &fb);
    gate_.unlock();
}

void server::serve(char* req, size_t n) {
    if (!metrics::kCounting || !opt_.metrics) return process(req, n);
    uint64_t t0 = __update_now();
    process(req, n);
    opt_.metrics->served(__update_now() - t0);
}

void* server::worker(void* arg) {
    char* block = (char*)arg;
    auto slot = *(request_slot*)block;
    slot.srv->serve(block + kReqOffset, slot.n);
    t_buffers.put(block, slot.cap);
    slot.l->account->release(slot.charge);  // the reply has been written
    {
        std::lock_guard<std::mutex> lock(slot.srv->running_mu_);
        slot.srv->running_.erase(slot.unique);
    }
    slot.l->inflight--;
    if (slot.cap == kLarge) slot.l->large_inflight--;
    slot.l->cv.notify_one();
    return nullptr;
}

// The kernel gave up waiting for a request (its caller got a signal): wake
// the request's coroutine, whose file system call then fails with EINTR.
// libfuse still sees the INTERRUPT (fuse_req_interrupted, its callbacks).
void server::interrupt(const char* req, size_t n) {
    if (n < sizeof(fuse_in_header) + sizeof(fuse_interrupt_in)) return;
    uint64_t unique = ((const fuse_interrupt_in*)(req + sizeof(fuse_in_header)))->unique;
    if (try_interrupt(unique) == 1) retry_interrupt(unique);
}

void server::retry_interrupt(uint64_t unique) {
    retriers_++;
    if (!thread_create11(&server::interrupt_later, this, unique)) retriers_--;
}

// 0: done (interrupted, or no longer running); 1: not asleep yet, where an
// interrupt would be lost (a READY coroutine keeps it only until its next
// sleep). A request another lane has read but not yet registered is
// remembered; dispatch() interrupts it once registered.
int server::try_interrupt(uint64_t unique) {
    std::lock_guard<std::mutex> lock(running_mu_);
    auto it = running_.find(unique);
    if (it == running_.end()) {
        if (opt_.lanes > 1) {
            if (early_interrupts_.size() >= 256) early_interrupts_.clear();  // long gone ones
            early_interrupts_.insert(unique);
        }
        return 0;
    }
    if (thread_stat(it->second) != SLEEPING) return 1;
    thread_interrupt(it->second, EINTR);
    return 0;
}

// Retries until the request's coroutine sleeps (in the file system) or ends.
void server::interrupt_later(uint64_t unique) {
    for (int i = 0; i < 10000 && !ending(); i++) {  // 10 s at most
        thread_usleep(1000);
        if (try_interrupt(unique) == 0) break;
    }
    retriers_--;
}

void server::interrupt_all(int error) {
    std::lock_guard<std::mutex> lock(running_mu_);
    for (auto& r : running_) thread_interrupt(r.second, error);
}

// The bytes a request holds until it has replied: its buffer, and the
// reply's for the calls whose reply is as large as asked.
size_t charge_of(const fuse_in_header* in, size_t n) {
    size_t c = kReqOffset + n <= kSmallRequest ? kReqOffset + n : kLarge;
    bool sized_reply =
        in->opcode == FUSE_READ || in->opcode == FUSE_READDIR || in->opcode == FUSE_READDIRPLUS;
    if (sized_reply && n >= sizeof(fuse_in_header) + sizeof(fuse_read_in))
        c += ((const fuse_read_in*)(in + 1))->size;
    return c;
}

void server::reply_error(uint64_t unique, int err) {
    if (opt_.metrics) opt_.metrics->error(err);
    fuse_out_header out;
    out.len = sizeof(out);
    out.error = -err;
    out.unique = unique;
    ssize_t r = ::write(fd_, &out, sizeof(out));  // ENOENT: the request was interrupted
    (void)r;
}

// Waits (the lane reads no further request meanwhile) until the request's
// bytes fit the budget. false: it was answered ENOMEM instead.
bool server::take_budget(lane& l, const fuse_in_header* in, size_t n, size_t* charge) {
    *charge = charge_of(in, n);
    if (l.account->acquire(*charge, Timeout(kBudgetWait)) == 0) return true;
    int e = errno;
    if (e == EINTR && ending()) {  // stopping: no reply is owed any more
        reply_error(in->unique, EINTR);
        return false;
    }
    LOG_EVERY_T(
        10, LOG_WARN("fuse: a request of ` bytes found no room in the memory budget "
                     "(` of ` used), answered ENOMEM: ",
                     *charge, l.account->budget()->used(), l.account->budget()->limit(), ERRNO(e)));
    reply_error(in->unique, ENOMEM);
    return false;
}

void server::dispatch(lane& l, char*& big, size_t n) {
    auto in = (const fuse_in_header*)(big + kReqOffset);
    if (opt_.metrics) opt_.metrics->request(in->opcode);
    if (in->opcode == FUSE_INTERRUPT) interrupt(big + kReqOffset, n);
    if (runs_inline(in->opcode, opt_.serialize_writers)) return process(big + kReqOffset, n);
    size_t charge;
    if (!take_budget(l, in, n, &charge)) return;
    char* block;
    size_t cap;
    if (kReqOffset + n <= kSmallRequest) {  // most: copied out, the read buffer stays
        cap = kReqOffset + n;
        block = (char*)t_buffers.get(cap);
        if (!block) return serve(big + kReqOffset, n), l.account->release(charge);
        memcpy(block + kReqOffset, big + kReqOffset, n);
    } else {  // hand the read buffer over, read the next request into a fresh one
        cap = kLarge;
        char* fresh = (char*)t_buffers.get(cap);
        if (!fresh) return serve(big + kReqOffset, n), l.account->release(charge);
        block = big;
        big = fresh;
    }
    new (block) request_slot{this, &l, n, cap, in->unique, charge};
    l.inflight++;
    if (cap == kLarge) l.large_inflight++;
    thread* th = thread_create(&server::worker, block);  // runs once we yield
    if (th) {
        uint64_t unique = in->unique;
        bool early;
        {
            std::lock_guard<std::mutex> lock(running_mu_);
            running_[unique] = th;
            early = !early_interrupts_.empty() && early_interrupts_.erase(unique);
        }
        if (early) retry_interrupt(unique);
        return;
    }
    l.inflight--;  // no coroutine to be had (out of memory): serve it here
    if (cap == kLarge) l.large_inflight--;
    serve(block + kReqOffset, n);
    t_buffers.put(block, cap);
    l.account->release(charge);
}

// Readiness of /dev/fuse goes through an epoll set of the lane's own: an
// io_uring master engine polling /dev/fuse itself would hold a reference to
// it, and a killed process would then close it only after its other files,
// once the ring is gone. fusermount3 -o auto_unmount, woken by the closing
// of its socket, would find the connection not yet aborted, get
// ECONNABORTED instead of ENOTCONN, and leave the mount in place.
int open_readiness(int fd) {
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) LOG_ERRNO_RETURN(0, -1, "fuse: epoll_create1 failed");
    struct epoll_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
        close(ep);
        LOG_ERRNO_RETURN(0, -1, "fuse: epoll_ctl on /dev/fuse failed");
    }
    return ep;
}

void server::serve_lane(lane& l) {
    set_reader(l, CURRENT);
    char* big = (char*)t_buffers.get(kLarge);
    int ready_fd = open_readiness(fd_);
    if (!big || ready_fd < 0) {
        error_.store(big ? errno : ENOMEM);
        LOG_ERROR("fuse: cannot start serving");
        fuse_session_exit(se_);
    }
    for (uint32_t batch = 0; big && ready_fd >= 0 && !ending();) {
        if (l.inflight >= opt_.max_inflight || l.large_inflight >= kMaxLargeInflight) {
            l.cv.wait_no_lock(Timeout(100 * 1000));
            continue;
        }
        ssize_t n = ::read(fd_, big + kReqOffset, kReadSize);
        if (n >= (ssize_t)sizeof(fuse_in_header)) {
            dispatch(l, big, (size_t)n);
            if (++batch % 64 == 0) thread_yield();  // let the workers start
            continue;
        }
        int e = n < 0 ? errno : EIO;
        if (e == EAGAIN) {
            if (wait_for_fd_readable(ready_fd, Timeout(1000 * 1000)) < 0 && errno != ETIMEDOUT &&
                errno != EINTR) {  // the engine failed: do not spin on EAGAIN
                int w = errno;
                LOG_ERROR("fuse: waiting for /dev/fuse failed: ", ERRNO(w));
                error_.store(w);
                fuse_session_exit(se_);
            }
        } else if (e == ENODEV) {  // unmounted, or the connection was aborted
            fuse_session_exit(se_);
        } else if (e != EINTR && e != ENOENT) {  // ENOENT: the request was interrupted
            LOG_ERROR("fuse: reading /dev/fuse failed: ", ERRNO(e));
            error_.store(e);
            fuse_session_exit(se_);
        }
    }
    stop();
    set_reader(l, nullptr);
    t_buffers.put(big, kLarge);
    drain(l);
    if (ready_fd >= 0) close(ready_fd);
}

void server::drain(lane& l) {
    for (int i = 1; l.inflight > 0 || retriers_.load() > 0; i++) {
        if (i % 50 == 0) {  // every 5 s: nudge handlers stuck in I/O
            LOG_WARN("fuse: waiting for ", l.inflight, " requests in progress");
            interrupt_all(ECANCELED);
        }
        l.cv.wait_no_lock(Timeout(100 * 1000));
    }
}

void server::stop() {
    stopping_.store(true);
    for (auto& l : lanes_) {
        l->reader_lock.lock();
        if (l->reader && l->reader != CURRENT) thread_interrupt(l->reader);
        l->reader_lock.unlock();
    }
}

void* server::watcher(void* arg) {
    auto s = (server*)arg;
    while (!s->ending()) {
        if (wait_for_fd_readable(s->wake_fd_) < 0 && s->stopping_.load()) break;
        uint64_t v;
        ssize_t r = ::read(s->wake_fd_, &v, sizeof(v));
        (void)r;
    }
    s->stop();
    return nullptr;
}

constexpr uint64_t kLaneEvents = INIT_EVENT_DEFAULT & ~INIT_EVENT_SIGNAL;

int server::run() {
    fd_ = fuse_session_fd(se_);
    int fl = fcntl(fd_, F_GETFL);
    if (fl < 0 || fcntl(fd_, F_SETFL, fl | O_NONBLOCK) < 0)
        LOG_ERRNO_RETURN(0, -1, "fuse: cannot make /dev/fuse non-blocking");
    wake_fd_ = opt_.wake_fd;
    for (int i = 0; i < opt_.lanes; i++) {
        lanes_.emplace_back(new lane);
        lanes_.back()->srv = this;
        lanes_.back()->account.reset(
            new MemoryBudget::Account(opt_.budget ? opt_.budget : MemoryBudget::process()));
    }
    thread* w = thread_create(&server::watcher, this);
    join_handle* wj = w ? thread_enable_join(w) : nullptr;
    semaphore lanes_done(0);
    std::vector<std::thread> threads;
    for (int i = 1; i < opt_.lanes; i++) {
        threads.emplace_back([this, i, &lanes_done] {
            if (photon::init(kLaneEvents, INIT_IO_LIBAIO) == 0 ||
                photon::init(kLaneEvents, INIT_IO_NONE) == 0) {
                serve_lane(*lanes_[i]);
                photon::fini();
            } else {
                LOG_ERROR("fuse: lane ", i, " could not become a vCPU: ", ERRNO());
            }
            lanes_done.signal(1);
        });
    }
    serve_lane(*lanes_[0]);
    lanes_done.wait(threads.size());
    for (auto& t : threads) t.join();
    if (wj) {
        thread_interrupt(w);
        thread_join(wj);
    }
    int e = error_.load();
    if (e) return errno = e, -1;
    return 0;
}

}  // namespace

int fuse_serve_session(fuse_session* se, const fuse_server_options& opt) {
    if (!se || opt.wake_fd < 0) LOG_ERROR_RETURN(EINVAL, -1, "fuse: no session or wake_fd");
    if (!CURRENT || !get_vcpu()->master_event_engine)
        LOG_ERROR_RETURN(ENOSYS, -1, "fuse: serving needs a vCPU with an event engine");
    server s(se, opt);
    return s.run();
}

void* fuse_buffer_get(size_t n) { return n <= kLarge ? t_buffers.get(n) : nullptr; }

void fuse_buffer_put(void* p, size_t n) { t_buffers.put(p, n); }

}  // namespace fs
}  // namespace photon
