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

class StubImpl final : public Stub {
public:
    StubImpl(IStream* s, bool own) : m_stream(s), m_own(own), m_reader(s) {}
    ~StubImpl() override;

    IStream* get_stream() override { return m_stream; }
    int set_stream(IStream* s) override;
    int get_queue_count() override { return (int)m_calls.size(); }
    void set_max_message_size(uint32_t n) override { m_max_size = n; }
    void set_frame_timeout(uint64_t us) override { m_frame_timeout = us; }
    bool broken() const { return m_broken; }

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

    IStream* m_stream;
    bool m_own;
    FrameReader m_reader;
    FrameWriter m_writer;
    std::unordered_map<uint64_t, Call*> m_calls;
    uint64_t m_next_tag = 1;
    thread* m_reader_th = nullptr;
    condition_variable m_reader_gone;
    bool m_broken = false;
    bool m_closing = false;
    uint32_t m_max_size = DEFAULT_MAX_MESSAGE_SIZE;
    uint64_t m_frame_timeout = DEFAULT_FRAME_TIMEOUT;
};

StubImpl::~StubImpl() {
    m_closing = true;
    fail_all(ECONNRESET);
    stop_reader();
    if (m_own) delete m_stream;
}

void StubImpl::stop_reader() {
    while (m_reader_th) {
        thread_interrupt(m_reader_th);
        m_reader_gone.wait_no_lock();
    }
}

int StubImpl::set_stream(IStream* s) {
    fail_all(ECONNRESET);
    stop_reader();
    if (m_own) delete m_stream;
    m_stream = s;
    m_reader.set_stream(s);
    m_writer.reset();
    m_broken = !s;
    return 0;
}

int StubImpl::do_call(FunctionID function, iovector* request, iovector* response, Timeout timeout) {
    if (m_broken || !m_stream) return errno = ECONNRESET, -1;
    if (request->sum() > m_max_size) return errno = EMSGSIZE, -1;
    Call c;
    c.resp = response;
    uint64_t tag = m_next_tag++;
    m_calls[tag] = &c;  // before sending: the reply may come at once
    if (send(function, tag, request, timeout) < 0) {
        int e = errno;
        m_calls.erase(tag);
        return errno = e, -1;
    }
    if (!m_reader_th && !m_broken) {
        m_reader_th = thread_create11(&StubImpl::reader_loop, this);
        if (!m_reader_th) {
            m_calls.erase(tag);
            return errno = ENOMEM, -1;
        }
    }
    return wait(c, tag, timeout);
}

int StubImpl::send(FunctionID function, uint64_t tag, iovector* request, Timeout& timeout) {
    Header h;
    h.size = (uint32_t)request->sum();
    h.function = function;
    h.tag = tag;
    uint64_t t = timeout.timeout();
    if (t == 0) return errno = ETIMEDOUT, -1;
    if (m_writer.write(m_stream, &h, request, t, m_calls.size() > 1) == 0) return 0;
    int e = errno;
    if (m_writer.broken()) {  // part of a frame may be out: no more calls here
        m_broken = true;
        fail_all(ECONNRESET);
    }
    return errno = e, -1;
}

int StubImpl::wait(Call& c, uint64_t tag, Timeout& timeout) {
    while (c.state == WAITING) {
        if (c.cv.wait_no_lock(timeout) < 0 && c.state == WAITING) {
            int e = errno == EINTR ? EINTR : ETIMEDOUT;
            m_calls.erase(tag);  // a late reply finds nobody and is dropped
            return errno = e, -1;
        }
    }
    // The reply's body is being read into our buffers: it has the frame
    // timeout, and we must not leave before it is done.
    while (c.state == RECEIVING) c.cv.wait_no_lock();
    if (c.ret < 0) errno = c.err;
    return c.ret;
}

void StubImpl::finish(Call* c, int ret, int err) {
    c->state = DONE;
    c->ret = ret;
    c->err = err;
    c->cv.notify_one();
}

void StubImpl::fail_all(int err) {
    for (auto& kv : m_calls)
        if (kv.second->state == WAITING) finish(kv.second, -1, err);
    m_calls.clear();
}

void StubImpl::reader_loop() {
    for (;;) {
        Header h;
        int r = m_reader.read_header(&h, m_frame_timeout);
        if (r <= 0) {
            if (!m_closing && r < 0 && errno != EINTR)
                LOG_EVERY_T(10, LOG_WARN("rpc stub: reading a reply failed ", ERRNO()));
            break;
        }
        if (h.magic != Header::MAGIC || h.version != Header::VERSION || h.size > m_max_size) {
            LOG_EVERY_T(10, LOG_ERROR("rpc stub: bad reply header (magic/version/size `)", h.size));
            break;
        }
        if (receive(h) < 0) break;
    }
    m_broken = true;
    if (!m_closing) m_stream->shutdown(ShutdownHow::ReadWrite);
    fail_all(ECONNRESET);
    m_reader_th = nullptr;
    m_reader_gone.notify_all();
}

int StubImpl::receive(const Header& h) {
    Timeout deadline = m_reader.frame_deadline();
    auto it = m_calls.find(h.tag);
    if (it == m_calls.end()) return m_reader.skip(h.size, deadline);  // late or unknown
    Call* c = it->second;
    m_calls.erase(it);
    int err = wire::error_of(h);
    if (err) {
        if (m_reader.skip(h.size, deadline) < 0) return finish(c, -1, ECONNRESET), -1;
        return finish(c, -1, err), 0;
    }
    c->state = RECEIVING;
    if (c->resp->truncate(h.size) != h.size) {  // cannot hold it: drop it, fail the call
        int r = m_reader.skip(h.size, deadline);
        finish(c, -1, ENOMEM);
        return r;
    }
    if (m_reader.read_body(c->resp, h.size, deadline) < 0) {
        finish(c, -1, ECONNRESET);
        return -1;
    }
    finish(c, (int)h.size, 0);
    return 0;
}

}  // namespace

bool stub_broken(Stub* s) {
    auto impl = dynamic_cast<StubImpl*>(s);
    return impl && impl->broken();
}

Stub* new_rpc_stub(IStream* stream, bool ownership) {
    if (!stream) return errno = EINVAL, nullptr;
    return new (std::nothrow) StubImpl(stream, ownership);
}

}  // namespace rpc
}  // namespace photon
