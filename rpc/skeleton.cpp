// The server side: serve() reads a connection's frames and runs each request
// in a pooled coroutine; replies are written under the connection's lock.
// shutdown() may come from another vCPU than the connections' (a server
// stopped from its watcher's vCPU): the sets of connections and requests are
// guarded by lock_.
//
// Memory: each connection holds an Account of the skeleton's MemoryBudget. A
// request takes its body's bytes and kRequestCharge (its coroutine) before
// its body is read, waiting unread (backpressure) while there is no room, and
// is shed with an ENOMEM reply if none comes in time; its reply's bytes are
// taken too while it is written; all are given back once the reply is out.
#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include <photon/common/alog.h>
#include <photon/common/memory_budget.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread-pool.h>
#include <photon/thread/thread.h>

#include "frame_reader.h"
#include "frame_writer.h"
#include "skeleton_metrics.h"
#include "wire.h"

namespace photon {
namespace rpc {
namespace {

class skeleton_impl;

// What a running request is charged for its coroutine beyond its body: the
// stack pages a handler touches (the rest of its stack is address space, not
// memory) and the request's bookkeeping. It makes the budget bound the
// requests running at once across connections too.
constexpr size_t kRequestCharge = 64 * 1024;
// After a coroutine could not be made, the requests then running, less a
// quarter, may run at once for this long (new connections need coroutines too).
constexpr uint64_t kCreateBackoffUs = 1000 * 1000;

// One connection being served.
struct connection {
    explicit connection(MemoryBudget* budget) : account(budget) {}
    IStream* stream;
    MemoryBudget::Account account;  // the bytes its requests and replies hold
    thread* reader = CURRENT;       // the coroutine in serve()
    frame_writer writer{false};     // a reply waits its turn behind the others
    int inflight = 0;
    condition_variable idle;          // inflight reached 0
    condition_variable room;          // inflight fell below the skeleton's cap
    std::atomic<bool> broken{false};  // set by abort_all() from any vCPU too
};

// One request, from its frame to its reply.
struct Request {
    Header header;
    Skeleton::Function func;
    IOVector body;
    connection* conn;
    skeleton_impl* sk;
    thread* th = nullptr;
    bool replied = false;
    BudgetHold hold;  // body, coroutine and reply bytes, until deleted

    Request(skeleton_impl* sk, connection* conn, const IOAlloc& alloc);
    int send_reply(iovector* resp);
    int send_error(int err);
    int write_frame(Header& h, iovector* payload);
};

class skeleton_impl final : public Skeleton {
public:
    explicit skeleton_impl(uint32_t pool_size)
        : pool_(ThreadPoolBase::new_thread_pool(pool_size)), budget_(MemoryBudget::process()) {}
    ~skeleton_impl() override {
        shutdown(true);
        if (pool_) ThreadPoolBase::delete_thread_pool(pool_);
    }

    int add_function(FunctionID id, Function f) override {
        return funcs_.emplace(id.function, f).second ? 0 : -1;
    }
    int remove_function(FunctionID id) override { return funcs_.erase(id.function) ? 0 : -1; }
    int set_accept_notify(Notifier n) override { return on_accept_ = n, 0; }
    int set_close_notify(Notifier n) override { return on_close_ = n, 0; }
    void set_allocator(IOAlloc a) override { alloc_ = a; }
    void set_max_message_size(uint32_t n) override { max_size_ = n; }
    void set_frame_timeout(uint64_t us) override { frame_timeout_ = us; }
    void set_idle_timeout(uint64_t us) override { idle_timeout_ = us; }
    void set_max_inflight(uint32_t n) override { max_inflight_ = n ? n : 1; }
    void set_memory_budget(MemoryBudget* b) override { budget_ = b; }
    void set_metrics_name(const char* name) override { metrics_.set_name(name); }

    int serve(IStream* stream) override;
    int shutdown(bool no_more_requests) override { return shutdown(no_more_requests, UINT64_MAX); }
    int shutdown(bool no_more_requests, uint64_t timeout_us) override;
    int shutdown_no_wait() override;

    static void* run(void* arg);
    uint64_t frame_timeout() const { return frame_timeout_; }
    void shed_reply(size_t n);
    skeleton_metrics metrics_;

private:
    int serve_frames(connection& c, frame_reader& rd);
    int dispatch(connection& c, frame_reader& rd, const Header& h);
    int take_budget(Request& r, size_t n, const Timeout& frame_deadline);
    int start(Request* req);
    bool create_allowed();
    void wait_idle(connection& c);
    void abort_all();
    void interrupt_readers_locked();

    std::unordered_map<uint64_t, Function> funcs_;
    Notifier on_accept_, on_close_;
    IOAlloc alloc_;
    ThreadPoolBase* pool_;
    mutex lock_;  // guards conns_ and requests_ (their threads live while listed)
    std::unordered_set<connection*> conns_;
    condition_variable conns_gone_;
    std::unordered_map<Request*, connection*> requests_;  // running requests
    std::atomic<bool> running_{true};
    uint32_t max_size_ = DEFAULT_MAX_MESSAGE_SIZE;
    uint64_t frame_timeout_ = DEFAULT_FRAME_TIMEOUT;
    uint64_t idle_timeout_ = DEFAULT_IDLE_TIMEOUT;
    uint32_t max_inflight_ = DEFAULT_MAX_INFLIGHT;
    MemoryBudget* budget_;
    std::atomic<uint64_t> sheds_{0};         // requests and replies refused bytes
    std::atomic<uint64_t> no_coroutine_{0};  // requests refused a coroutine
    std::atomic<uint32_t> running_requests_{0};
    std::atomic<uint32_t> create_cap_{UINT32_MAX};  // see kCreateBackoffUs
    std::atomic<uint64_t> cap_set_at_{0};
};

Request::Request(skeleton_impl* sk, connection* conn, const IOAlloc& alloc)
    : body(alloc), conn(conn), sk(sk), hold(&conn->account) {}

int Request::send_reply(iovector* resp) {
    if (replied) return errno = EALREADY, -1;
    size_t n = resp->sum();
    // A client that does not read its replies pins them while they are
    // written: they count too, but one up to kRequestCharge is covered by
    // its request's charge (were small replies to wait, requests that hold
    // the whole budget would wait for each other). No room for a larger one
    // within the frame timeout: the caller hears ENOMEM instead, and the
    // handler -1 ENOMEM.
    if (n > kRequestCharge && hold.acquire(n, Timeout(sk->frame_timeout())) < 0) {
        int e = errno;
        sk->shed_reply(n);
        if (e == EINTR) return send_error(EINTR), errno = EINTR, -1;
        return send_error(ENOMEM), errno = ENOMEM, -1;
    }
    replied = true;
    Header h;
    h.size = (uint32_t)n;
    sk->metrics_.reply(n);
    return write_frame(h, resp);
}

int Request::send_error(int err) {
    if (replied) return errno = EALREADY, -1;
    replied = true;
    Header h;
    h.size = 0;
    wire::set_error(h, err);
    return write_frame(h, nullptr);
}

// Writes one frame, batched with the replies other requests of the
// connection send in the same round.
int Request::write_frame(Header& h, iovector* payload) {
    h.function = header.function;
    h.tag = header.tag;
    if (conn->broken) return errno = ECONNRESET, -1;
    // A reply must be written within the frame timeout: a client that does
    // not read its replies is cut, not waited for.
    if (conn->writer.write(conn->stream, &h, payload, sk->frame_timeout(), conn->inflight > 1) == 0)
        return 0;
    int e = errno;
    if (!conn->broken) {
        conn->broken = true;
        // Its caller would wait for this reply forever: end the connection
        // (which also wakes serve()'s read).
        conn->stream->shutdown(ShutdownHow::ReadWrite);
    }
    return errno = e, -1;
}

void skeleton_impl::shed_reply(size_t n) {
    uint64_t k = ++sheds_;
    metrics_.error(skeleton_metrics::NO_MEMORY);
    LOG_EVERY_T(10, LOG_WARN("rpc server: no room in the memory budget for a reply of ` bytes, "
                             "replying ENOMEM instead (` shed so far)",
                             n, k));
}

int skeleton_impl::serve(IStream* stream) {
    if (!running_ || !pool_) return errno = ESHUTDOWN, -1;
    connection c(budget_);
    c.stream = stream;
    {
        SCOPED_LOCK(lock_);
        conns_.insert(&c);
    }
    metrics_.connection_opened();
    if (on_accept_) on_accept_(stream);
    frame_reader rd(stream);
    int ret = serve_frames(c, rd);
    int e = errno;
    wait_idle(c);
    if (on_close_) on_close_(stream);
    metrics_.connection_closed();
    {
        SCOPED_LOCK(lock_);
        conns_.erase(&c);
        conns_gone_.notify_all();
    }
    errno = e;
    return ret;
}

int skeleton_impl::serve_frames(connection& c, frame_reader& rd) {
    while (running_ && !c.broken) {
        // Back-pressure: at most max_inflight_ requests of a connection run
        // at once; the next frame waits in the socket (and the client's).
        while (c.inflight >= (int)max_inflight_ && running_ && !c.broken)
            if (c.room.wait_no_lock() < 0 && errno == EINTR && !running_) return 0;
        if (!running_ || c.broken) break;
        Header h;
        int r = rd.read_header(&h, frame_timeout_, idle_timeout_);
        // Idle with requests still running (a long call) is not idle: wait on.
        if (r == 0 && errno == ETIMEDOUT && c.inflight > 0 && running_ && !c.broken) continue;
        if (r == 0) return 0;  // the peer closed, or was idle too long, between frames
        if (r < 0) {
            if (errno == EINTR && !running_) return 0;  // shutdown
            metrics_.error(skeleton_metrics::READ_FAILED);
            LOG_EVERY_T(10, LOG_WARN("rpc server: reading a request failed ", ERRNO()));
            return -1;
        }
        if (h.magic != Header::MAGIC || h.version != Header::VERSION) {
            metrics_.error(skeleton_metrics::BAD_FRAME);
            LOG_EVERY_T(10, LOG_ERROR("rpc server: not an rpc frame (magic/version), closing"));
            return errno = EPROTO, -1;
        }
        if (h.size > max_size_) {
            metrics_.error(skeleton_metrics::BAD_FRAME);
            LOG_EVERY_T(
                10, LOG_ERROR("rpc server: request of ` bytes past the limit, closing", h.size));
            return errno = EMSGSIZE, -1;
        }
        if (dispatch(c, rd, h) < 0) return errno == EINTR && !running_ ? 0 : -1;
    }
    return 0;
}

// Takes n bytes for a request whose body is still unread. While there is no
// room the connection is not read (backpressure), for at most half of what
// is left of the frame's time, so that a refused body can still be skipped
// within it.
int skeleton_impl::take_budget(Request& r, size_t n, const Timeout& frame_deadline) {
    if (r.hold.acquire(n, Timeout(frame_deadline.timeout() / 2)) == 0) return 0;
    if (errno == EINTR && !running_) return -1;
    int e = errno;
    uint64_t k = ++sheds_;
    metrics_.error(skeleton_metrics::NO_MEMORY);
    LOG_EVERY_T(10, LOG_WARN("rpc server: no room in the memory budget for a request of ` bytes "
                             "(`), replying ENOMEM (` shed so far)",
                             n, ERRNO(e), k));
    return errno = ENOMEM, -1;
}

// Whether a request may try to get a coroutine: not while the cap set after
// a failure holds.
bool skeleton_impl::create_allowed() {
    if (running_requests_ < create_cap_) return true;
    if (__update_now() - cap_set_at_ < kCreateBackoffUs) return false;
    create_cap_ = UINT32_MAX;
    return true;
}

// Runs the request in a pooled coroutine; when none can be made (out of
// memory or address space) the caller hears ENOMEM, and the connection goes
// on: reading frames needs no coroutine beyond serve()'s.
int skeleton_impl::start(Request* req) {
    auto& c = *req->conn;
    c.inflight++;
    running_requests_++;
    {
        SCOPED_LOCK(lock_);
        requests_.emplace(req, &c);
    }
    int e = EAGAIN;
    if (create_allowed()) {
        if (pool_->thread_create(&skeleton_impl::run, req)) return 0;
        e = errno;
        uint32_t running = running_requests_ - 1;
        create_cap_ = std::max<uint32_t>(1, running - running / 4);
        cap_set_at_ = __update_now();
    }
    {
        SCOPED_LOCK(lock_);
        requests_.erase(req);
    }
    c.inflight--;
    running_requests_--;
    uint64_t k = ++no_coroutine_;
    metrics_.error(skeleton_metrics::NO_COROUTINE);
    LOG_EVERY_T(10, LOG_ERROR("rpc server: cannot make a coroutine for a request (`), replying "
                              "ENOMEM (` so far); at most ` requests run at once for 1 s",
                              ERRNO(e), k, create_cap_.load()));
    req->send_error(ENOMEM);
    delete req;
    return 0;
}

int skeleton_impl::dispatch(connection& c, frame_reader& rd, const Header& h) {
    Timeout deadline = rd.frame_deadline();
    metrics_.request(h.size);
    auto it = funcs_.find(h.function.function);
    auto req = new (std::nothrow) Request(this, &c, alloc_);
    if (!req) {  // the heap is exhausted: skipped, answered from here
        metrics_.error(skeleton_metrics::NO_MEMORY);
        Request here(this, &c, alloc_);
        here.header = h;
        if (rd.skip(h.size, deadline) < 0) return -1;
        return here.send_error(ENOMEM), 0;
    }
    req->header = h;
    if (it == funcs_.end()) {  // the caller hears ENOSYS; the connection goes on
        metrics_.error(skeleton_metrics::NO_FUNCTION);
        DEFER(delete req);
        if (rd.skip(h.size, deadline) < 0) return -1;
        LOG_EVERY_T(10, LOG_WARN("rpc server: no function ` (interface `, method `)",
                                 h.function.function, h.function.interface, h.function.method));
        return req->send_error(ENOSYS), 0;
    }
    req->func = it->second;
    // The body's bytes are granted before they are read or allocated.
    int r = take_budget(*req, h.size + kRequestCharge, deadline);
    if (r < 0 && errno == EINTR) return delete req, -1;  // shutdown
    if (r < 0 || (h.size && req->body.push_back(h.size) != h.size)) {
        if (r == 0) metrics_.error(skeleton_metrics::NO_MEMORY);  // (take_budget counted its own)
        DEFER(delete req);
        if (rd.skip(h.size, deadline) < 0) return -1;
        return req->send_error(ENOMEM), 0;
    }
    if (rd.read_body(&req->body, h.size, deadline) < 0) {
        delete req;
        return -1;
    }
    return start(req);
}

void* skeleton_impl::run(void* arg) {
    auto req = (Request*)arg;
    auto sk = req->sk;
    auto& c = *req->conn;
    {
        SCOPED_LOCK(sk->lock_);
        req->th = CURRENT;
    }
    ResponseSender sender(req, &Request::send_reply);
    static thread_local uint32_t t_seq = 0;
    metrics::sampled_timer timer(t_seq);
    int r = req->func(&req->body, sender, c.stream);
    if (timer.sampled()) sk->metrics_.handler_time(timer.elapsed_us());
    // A function that failed without replying: tell the caller why.
    if (!req->replied) {
        sk->metrics_.error(skeleton_metrics::HANDLER_FAILED);
        req->send_error(r < 0 && errno ? errno : EIO);
    }
    {
        SCOPED_LOCK(sk->lock_);
        sk->requests_.erase(req);
    }
    delete req;
    sk->running_requests_--;
    // (Below the cap, not at it: the cap may have been raised meanwhile.)
    if (--c.inflight < (int)sk->max_inflight_) c.room.notify_one();
    if (c.inflight == 0) c.idle.notify_all();
    return nullptr;
}

void skeleton_impl::wait_idle(connection& c) {
    while (c.inflight > 0) c.idle.wait_no_lock();
}

void skeleton_impl::interrupt_readers_locked() {
    for (auto c : conns_) thread_interrupt(c->reader);
}

int skeleton_impl::shutdown_no_wait() {
    running_ = false;
    SCOPED_LOCK(lock_);
    interrupt_readers_locked();
    return 0;
}

void skeleton_impl::abort_all() {
    SCOPED_LOCK(lock_);
    for (auto& kv : requests_)
        if (kv.first->th) thread_interrupt(kv.first->th);
    for (auto c : conns_) {
        c->broken = true;
        c->stream->shutdown(ShutdownHow::ReadWrite);
    }
}

int skeleton_impl::shutdown(bool no_more_requests, uint64_t timeout_us) {
    if (no_more_requests) shutdown_no_wait();
    Timeout deadline(timeout_us);
    uint64_t step_us = 1000;
    SCOPED_LOCK(lock_);
    while (!conns_.empty()) {
        // A reader on another vCPU that was running, not waiting, when it
        // was interrupted missed it if it had just checked running_: repeat.
        Timeout step(step_us);
        if (step.expiration() < deadline.expiration()) {
            if (conns_gone_.wait(lock_, step) < 0 && !running_) interrupt_readers_locked();
            if (step_us < 100 * 1000) step_us *= 2;
            continue;
        }
        if (conns_gone_.wait(lock_, deadline) < 0 && deadline.expired() && !conns_.empty()) {
            lock_.unlock();
            abort_all();
            lock_.lock();
            while (!conns_.empty()) conns_gone_.wait(lock_);
            return errno = ETIMEDOUT, -1;
        }
    }
    return 0;
}

}  // namespace

Skeleton* new_skeleton(uint32_t pool_size) {
    auto sk = new (std::nothrow) skeleton_impl(pool_size);
    return sk;
}

}  // namespace rpc
}  // namespace photon
