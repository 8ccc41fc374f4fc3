// The client side: callers write requests under a write lock and wait on
// their own condition; one reader coroutine per stub reads every reply and
// hands it to the caller whose tag it carries.
#include <unordered_map>

#include <photon/common/alog.h>
#include <photon/rpc/rpc.h>
#include <photon/thread/thread11.h>
#include <photon/thread/thread.h>

#include "frame_reader.h"
#include "frame_writer.h"
#include "wire.h"

namespace photon {
namespace rpc {
namespace {

class stub_impl final : public Stub {
public:
    stub_impl(IStream* s, bool own) : stream_(s), own_(own), reader_(s) {}
    ~stub_impl() override;

    IStream* get_stream() override { return stream_; }
    int set_stream(IStream* s) override;
    int get_queue_count() override { return (int)calls_.size(); }
    void set_max_message_size(uint32_t n) override { max_size_ = n; }
    void set_frame_timeout(uint64_t us) override { frame_timeout_ = us; }
    bool broken() const { return broken_; }

protected:
    int do_call(FunctionID function, iovector* request, iovector* response,
                Timeout timeout) override;

private:
    enum State { WAITING, RECEIVING, DONE };
    struct Call {
        iovector* resp;
        condition_variable cv;
        State state = WAITING;
        int ret = 0;
        int err = 0;
    };

    int send(FunctionID function, uint64_t tag, iovector* request, Timeout& timeout);
    int wait(Call& c, uint64_t tag, Timeout& timeout);
    void reader_loop();
    int receive(const Header& h);
    void finish(Call* c, int ret, int err);
    void fail_all(int err);
    void stop_reader();

    IStream* stream_;
    bool own_;
    frame_reader reader_;
    frame_writer writer_;
    std::unordered_map<uint64_t, Call*> calls_;
    uint64_t next_tag_ = 1;
    thread* reader_th_ = nullptr;
    condition_variable reader_gone_;
    bool broken_ = false;
    bool closing_ = false;
    uint32_t max_size_ = DEFAULT_MAX_MESSAGE_SIZE;
    uint64_t frame_timeout_ = DEFAULT_FRAME_TIMEOUT;
};

stub_impl::~stub_impl() {
    closing_ = true;
    fail_all(ECONNRESET);
    stop_reader();
    if (own_) delete stream_;
}

void stub_impl::stop_reader() {
    while (reader_th_) {
        thread_interrupt(reader_th_);
        reader_gone_.wait_no_lock();
    }
}

int stub_impl::set_stream(IStream* s) {
    fail_all(ECONNRESET);
    stop_reader();
    if (own_) delete stream_;
    stream_ = s;
    reader_.set_stream(s);
    writer_.reset();
    broken_ = !s;
    return 0;
}

int stub_impl::do_call(FunctionID function, iovector* request, iovector* response,
                       Timeout timeout) {
    if (broken_ || !stream_) return errno = ECONNRESET, -1;
    if (request->sum() > max_size_) return errno = EMSGSIZE, -1;
    Call c;
    c.resp = response;
    uint64_t tag = next_tag_++;
    calls_[tag] = &c;  // before sending: the reply may come at once
    if (send(function, tag, request, timeout) < 0) {
        int e = errno;
        calls_.erase(tag);
        return errno = e, -1;
    }
    if (!reader_th_ && !broken_) {
        reader_th_ = thread_create11(&stub_impl::reader_loop, this);
        if (!reader_th_) {
            calls_.erase(tag);
            return errno = ENOMEM, -1;
        }
    }
    return wait(c, tag, timeout);
}

int stub_impl::send(FunctionID function, uint64_t tag, iovector* request, Timeout& timeout) {
    Header h;
    h.size = (uint32_t)request->sum();
    h.function = function;
    h.tag = tag;
    uint64_t t = timeout.timeout();
    if (t == 0) return errno = ETIMEDOUT, -1;
    if (writer_.write(stream_, &h, request, t, calls_.size() > 1) == 0) return 0;
    int e = errno;
    if (writer_.broken()) {  // part of a frame may be out: no more calls here
        broken_ = true;
        fail_all(ECONNRESET);
    }
    return errno = e, -1;
}

int stub_impl::wait(Call& c, uint64_t tag, Timeout& timeout) {
    while (c.state == WAITING) {
        if (c.cv.wait_no_lock(timeout) < 0 && c.state == WAITING) {
            int e = errno == EINTR ? EINTR : ETIMEDOUT;
            calls_.erase(tag);  // a late reply finds nobody and is dropped
            return errno = e, -1;
        }
    }
    // The reply's body is being read into our buffers: it has the frame
    // timeout, and we must not leave before it is done.
    while (c.state == RECEIVING) c.cv.wait_no_lock();
    if (c.ret < 0) errno = c.err;
    return c.ret;
}

void stub_impl::finish(Call* c, int ret, int err) {
    c->state = DONE;
    c->ret = ret;
    c->err = err;
    c->cv.notify_one();
}

void stub_impl::fail_all(int err) {
    for (auto& kv : calls_)
        if (kv.second->state == WAITING) finish(kv.second, -1, err);
    calls_.clear();
}

void stub_impl::reader_loop() {
    for (;;) {
        Header h;
        int r = reader_.read_header(&h, frame_timeout_);
        if (r <= 0) {
            if (!closing_ && r < 0 && errno != EINTR)
                LOG_EVERY_T(10, LOG_WARN("rpc stub: reading a reply failed ", ERRNO()));
            break;
        }
        if (h.magic != Header::MAGIC || h.version != Header::VERSION || h.size > max_size_) {
            LOG_EVERY_T(10, LOG_ERROR("rpc stub: bad reply header (magic/version/size `)", h.size));
            break;
        }
        if (receive(h) < 0) break;
    }
    broken_ = true;
    if (!closing_) stream_->shutdown(ShutdownHow::ReadWrite);
    fail_all(ECONNRESET);
    reader_th_ = nullptr;
    reader_gone_.notify_all();
}

int stub_impl::receive(const Header& h) {
    Timeout deadline = reader_.frame_deadline();
    auto it = calls_.find(h.tag);
    if (it == calls_.end()) return reader_.skip(h.size, deadline);  // late or unknown
    Call* c = it->second;
    calls_.erase(it);
    int err = wire::error_of(h);
    if (err) {
        if (reader_.skip(h.size, deadline) < 0) return finish(c, -1, ECONNRESET), -1;
        return finish(c, -1, err), 0;
    }
    c->state = RECEIVING;
    if (c->resp->truncate(h.size) != h.size) {  // cannot hold it: drop it, fail the call
        int r = reader_.skip(h.size, deadline);
        finish(c, -1, ENOMEM);
        return r;
    }
    if (reader_.read_body(c->resp, h.size, deadline) < 0) {
        finish(c, -1, ECONNRESET);
        return -1;
    }
    finish(c, (int)h.size, 0);
    return 0;
}

}  // namespace

bool stub_broken(Stub* s) {
    auto impl = dynamic_cast<stub_impl*>(s);
    return impl && impl->broken();
}

Stub* new_rpc_stub(IStream* stream, bool ownership) {
    if (!stream) return errno = EINVAL, nullptr;
    return new (std::nothrow) stub_impl(stream, ownership);
}

}  // namespace rpc
}  // namespace photon
