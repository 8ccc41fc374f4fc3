// The server side: serve() reads a connection's frames and runs each request
// in a pooled coroutine; replies are written under the connection's lock.
// shutdown() may come from another vCPU than the connections' (a server
// stopped from its watcher's vCPU): the sets of connections and requests are
// guarded by lock_.
#include <atomic>
#include <unordered_map>
#include <unordered_set>

#include <photon/common/alog.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread-pool.h>
#include <photon/thread/thread.h>

#include "frame_reader.h"
#include "frame_writer.h"
#include "wire.h"

namespace photon {
namespace rpc {
namespace {

class SkeletonImpl;

// One connection being served.
struct Conn {
    IStream* stream;
    thread* reader = CURRENT;   // the coroutine in serve()
    FrameWriter writer{false};  // a reply waits its turn behind the others
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
    Conn* conn;
    SkeletonImpl* sk;
    thread* th = nullptr;
    bool replied = false;

    Request(SkeletonImpl* sk, Conn* conn, const IOAlloc& alloc);
    int send_reply(iovector* resp);
    int send_error(int err);
    int write_frame(Header& h, iovector* payload);
};

class SkeletonImpl final : public Skeleton {
public:
    explicit SkeletonImpl(uint32_t pool_size) : pool_(ThreadPoolBase::new_thread_pool(pool_size)) {}
    ~SkeletonImpl() override {
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

    int serve(IStream* stream) override;
    int shutdown(bool no_more_requests) override { return shutdown(no_more_requests, UINT64_MAX); }
    int shutdown(bool no_more_requests, uint64_t timeout_us) override;
    int shutdown_no_wait() override;

    static void* run(void* arg);
    uint64_t frame_timeout() const { return frame_timeout_; }

private:
    int serve_frames(Conn& c, FrameReader& rd);
    int dispatch(Conn& c, FrameReader& rd, const Header& h);
    void wait_idle(Conn& c);
    void abort_all();
    void interrupt_readers_locked();

    std::unordered_map<uint64_t, Function> funcs_;
    Notifier on_accept_, on_close_;
    IOAlloc alloc_;
    ThreadPoolBase* pool_;
    mutex lock_;  // guards conns_ and requests_ (their threads live while listed)
    std::unordered_set<Conn*> conns_;
    condition_variable conns_gone_;
    std::unordered_map<Request*, Conn*> requests_;  // running requests
    std::atomic<bool> running_{true};
    uint32_t max_size_ = DEFAULT_MAX_MESSAGE_SIZE;
    uint64_t frame_timeout_ = DEFAULT_FRAME_TIMEOUT;
    uint64_t idle_timeout_ = DEFAULT_IDLE_TIMEOUT;
    uint32_t max_inflight_ = DEFAULT_MAX_INFLIGHT;
};

Request::Request(SkeletonImpl* sk, Conn* conn, const IOAlloc& alloc)
    : body(alloc), conn(conn), sk(sk) {}

int Request::send_reply(iovector* resp) {
    if (replied) return errno = EALREADY, -1;
    replied = true;
    Header h;
    h.size = (uint32_t)resp->sum();
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

int SkeletonImpl::serve(IStream* stream) {
    if (!running_ || !pool_) return errno = ESHUTDOWN, -1;
    Conn c;
    c.stream = stream;
    {
        SCOPED_LOCK(lock_);
        conns_.insert(&c);
    }
    if (on_accept_) on_accept_(stream);
    FrameReader rd(stream);
    int ret = serve_frames(c, rd);
    int e = errno;
    wait_idle(c);
    if (on_close_) on_close_(stream);
    {
        SCOPED_LOCK(lock_);
        conns_.erase(&c);
        conns_gone_.notify_all();
    }
    errno = e;
    return ret;
}

int SkeletonImpl::serve_frames(Conn& c, FrameReader& rd) {
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
            LOG_EVERY_T(10, LOG_WARN("rpc server: reading a request failed ", ERRNO()));
            return -1;
        }
        if (h.magic != Header::MAGIC || h.version != Header::VERSION) {
            LOG_EVERY_T(10, LOG_ERROR("rpc server: not an rpc frame (magic/version), closing"));
            return errno = EPROTO, -1;
        }
        if (h.size > max_size_) {
            LOG_EVERY_T(
                10, LOG_ERROR("rpc server: request of ` bytes past the limit, closing", h.size));
            return errno = EMSGSIZE, -1;
        }
        if (dispatch(c, rd, h) < 0) return -1;
    }
    return 0;
}

int SkeletonImpl::dispatch(Conn& c, FrameReader& rd, const Header& h) {
    Timeout deadline = rd.frame_deadline();
    auto it = funcs_.find(h.function.function);
    auto req = new (std::nothrow) Request(this, &c, alloc_);
    if (!req) return errno = ENOMEM, -1;
    req->header = h;
    if (it == funcs_.end()) {  // the caller hears ENOSYS; the connection goes on
        DEFER(delete req);
        if (rd.skip(h.size, deadline) < 0) return -1;
        LOG_EVERY_T(10, LOG_WARN("rpc server: no function ` (interface `, method `)",
                                 h.function.function, h.function.interface, h.function.method));
        return req->send_error(ENOSYS), 0;
    }
    req->func = it->second;
    if (h.size && req->body.push_back(h.size) != h.size) {
        DEFER(delete req);
        if (rd.skip(h.size, deadline) < 0) return -1;
        return req->send_error(ENOMEM), 0;
    }
    if (rd.read_body(&req->body, h.size, deadline) < 0) {
        delete req;
        return -1;
    }
    c.inflight++;
    {
        SCOPED_LOCK(lock_);
        requests_.emplace(req, &c);
    }
    if (!pool_->thread_create(&SkeletonImpl::run, req)) {
        SCOPED_LOCK(lock_);
        requests_.erase(req);
        c.inflight--;
        req->send_error(ENOMEM);
        delete req;
    }
    return 0;
}

void* SkeletonImpl::run(void* arg) {
    auto req = (Request*)arg;
    auto sk = req->sk;
    auto& c = *req->conn;
    {
        SCOPED_LOCK(sk->lock_);
        req->th = CURRENT;
    }
    ResponseSender sender(req, &Request::send_reply);
    int r = req->func(&req->body, sender, c.stream);
    // A function that failed without replying: tell the caller why.
    if (!req->replied) req->send_error(r < 0 && errno ? errno : EIO);
    {
        SCOPED_LOCK(sk->lock_);
        sk->requests_.erase(req);
    }
    delete req;
    // (Below the cap, not at it: the cap may have been raised meanwhile.)
    if (--c.inflight < (int)sk->max_inflight_) c.room.notify_one();
    if (c.inflight == 0) c.idle.notify_all();
    return nullptr;
}

void SkeletonImpl::wait_idle(Conn& c) {
    while (c.inflight > 0) c.idle.wait_no_lock();
}

void SkeletonImpl::interrupt_readers_locked() {
    for (auto c : conns_) thread_interrupt(c->reader);
}

int SkeletonImpl::shutdown_no_wait() {
    running_ = false;
    SCOPED_LOCK(lock_);
    interrupt_readers_locked();
    return 0;
}

void SkeletonImpl::abort_all() {
    SCOPED_LOCK(lock_);
    for (auto& kv : requests_)
        if (kv.first->th) thread_interrupt(kv.first->th);
    for (auto c : conns_) {
        c->broken = true;
        c->stream->shutdown(ShutdownHow::ReadWrite);
    }
}

int SkeletonImpl::shutdown(bool no_more_requests, uint64_t timeout_us) {
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
    auto sk = new (std::nothrow) SkeletonImpl(pool_size);
    return sk;
}

}  // namespace rpc
}  // namespace photon
