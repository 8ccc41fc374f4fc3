// The pipelined Redis client and its pool.
//
// Callers append their encoded command to wbuf_ and their waiter to queue_ in one step (no
// yield between), so the order of the queue is the order on the wire. The first caller to find
// no write in progress becomes the writer: it yields once, so that the coroutines ready behind
// it add their commands too (group commit), then writes wbuf_ until it is empty. A reader
// coroutine parses replies and hands each to the waiter at the head of the queue; a batch's
// waiter takes as many replies as it sent commands, and is woken once, after the last.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include <photon/common/alog.h>
#include <photon/ecosystem/redis.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

namespace photon {
namespace redis {
namespace {

// A reply's first line, "<mark><body>\r\n"; next is the byte after it.
struct reply_line {
    char mark;
    const char* body;
    size_t body_len;
    const char* next;
};

bool line_int(const reply_line& l, int64_t* v) {
    return estring_view(l.body, l.body_len).to_int64_check(v) > 0;
}

// The replies that are their line alone, from p: bytes used, -1 when malformed.
ssize_t parse_simple(const reply_line& l, const char* p, reply* r) {
    const char *body = l.body, *next = l.next;
    size_t body_len = l.body_len;
    switch (l.mark) {
        case '+':
            r->type = reply::STATUS, r->str.assign(body, body_len);
            return next - p;
        case '-':
            r->type = reply::ERROR, r->str.assign(body, body_len);
            return next - p;
        case '(':
            r->type = reply::BIGNUM, r->str.assign(body, body_len);
            return next - p;
        case ':':
            r->type = reply::INTEGER;
            return line_int(l, &r->integer) ? next - p : -1;
        case '_':
            r->type = reply::NIL;
            return next - p;
        case '#':
            r->type = reply::BOOLEAN, r->integer = body_len && body[0] == 't';
            return next - p;
        case ',':
            r->type = reply::DOUBLE, r->str.assign(body, body_len);
            r->number = estring_view(body, body_len).to_double(0);
            if (r->str == "inf") r->number = HUGE_VAL;
            if (r->str == "-inf") r->number = -HUGE_VAL;
            return next - p;
        default:
            return -1;
    }
}

// '$', '=' and '!': a length, then that many bytes and CRLF.
ssize_t parse_bulk(const reply_line& l, const char* p, const char* end, reply* r) {
    const char* next = l.next;
    int64_t n;
    if (!line_int(l, &n) || n < -1) return -1;
    if (n == -1) {
        r->type = reply::NIL;
        return next - p;
    }
    if (end - next < n + 2) return 0;
    if (next[n] != '\r' || next[n + 1] != '\n') return -1;
    r->type = l.mark == '!' ? reply::ERROR : reply::STRING;
    size_t skip = (l.mark == '=' && n >= 4) ? 4 : 0;
    r->str.assign(next + skip, n - skip);
    return next + n + 2 - p;
}

ssize_t parse_reply(const char* p, const char* end, reply* r, int depth);

// '*', '%', '~', '>' and '|': a count, then that many replies (twice as many
// for a map or attributes).
ssize_t parse_aggregate(const reply_line& l, const char* p, const char* end, reply* r, int depth) {
    const char* next = l.next;
    char mark = l.mark;
    int64_t n;
    if (!line_int(l, &n) || n < -1) return -1;
    if (n == -1) {
        r->type = reply::NIL;
        return next - p;
    }
    size_t count = (mark == '%' || mark == '|') ? 2 * n : n;
    if (count > (size_t)(end - next) / 3) return end - next > (1 << 20) ? -1 : 0;
    std::vector<reply> elements(count);
    const char* q = next;
    for (auto& e : elements) {
        ssize_t used = parse_reply(q, end, &e, depth + 1);
        if (used <= 0) return used;
        q += used;
    }
    if (mark == '|') {  // attributes: skipped, the reply they annotate follows
        ssize_t used = parse_reply(q, end, r, depth + 1);
        return used <= 0 ? used : q + used - p;
    }
    r->type = mark == '*'   ? reply::ARRAY
              : mark == '%' ? reply::MAP
              : mark == '~' ? reply::SET
                            : reply::PUSH;
    r->elements = std::move(elements);
    return q - p;
}

// Parses one reply from [p, end): bytes used, 0 when incomplete, -1 when malformed.
ssize_t parse_reply(const char* p, const char* end, reply* r, int depth = 0) {
    if (depth > 64) return -1;
    auto line_end = (const char*)memchr(p, '\n', end - p);
    if (!line_end) return 0;
    if (line_end == p || line_end[-1] != '\r') return -1;
    const char* body = p + 1;
    reply_line l{*p, body, size_t(line_end - 1 - body), line_end + 1};
    switch (l.mark) {
        case '$':
        case '=':
        case '!':
            return parse_bulk(l, p, end, r);
        case '*':
        case '%':
        case '~':
        case '>':
        case '|':
            return parse_aggregate(l, p, end, r, depth);
        default:
            return parse_simple(l, p, r);
    }
}

// Decimal digits of v before end; returns where they start.
char* put_decimal(char* end, size_t v) {
    do *--end = char('0' + v % 10), v /= 10;
    while (v);
    return end;
}

// "<mark><n>\r\n" appended to w.
void append_header(std::string* w, char mark, size_t n) {
    char buf[24], *end = buf + sizeof(buf);
    end[-2] = '\r', end[-1] = '\n';
    char* p = put_decimal(end - 2, n);
    *--p = mark;
    w->append(p, end - p);
}

void append_command(std::string* w, const std::string_view* args, size_t n) {
    append_header(w, '*', n);
    for (size_t i = 0; i < n; ++i) {
        append_header(w, '$', args[i].size());
        w->append(args[i].data(), args[i].size());
        w->append("\r\n", 2);
    }
}

struct waiter {
    reply r;  // a single command's reply, handed over by swapping (its memory stays with the pool)
    reply* outs = &r;  // where the replies go: r, or a batch's caller's array
    size_t expect = 1, got = 0;
    int err = 0;
    bool done = false;
    bool abandoned = false;  // the caller timed out; the reply is dropped
    uint64_t deadline = 0;   // photon::now when the watchdog fails the call
    photon::semaphore sem;
    int refs = 2;  // the caller's and the queue's
    void unref();
    static waiter* get();
};

// Spare waiters of this vCPU (OS thread): a call reuses a warm one and its reply's memory. The
// reader writes a reply into the waiter rather than into the caller's (cold) stack.
struct waiter_pool {
    std::vector<waiter*> spare;
    ~waiter_pool() {
        for (auto w : spare) delete w;
    }
};
thread_local waiter_pool t_waiters;

waiter* waiter::get() {
    auto& spare = t_waiters.spare;
    if (spare.empty()) return new waiter;
    waiter* w = spare.back();
    spare.pop_back();
    w->err = 0, w->done = w->abandoned = false, w->refs = 2;
    w->outs = &w->r, w->expect = 1, w->got = 0;
    return w;
}

void waiter::unref() {
    if (--refs) return;
    if (sem.count() || t_waiters.spare.size() >= 4096)
        delete this;
    else
        t_waiters.spare.push_back(this);
}

class pipelined_client_impl : public pipelined_client {
public:
    explicit pipelined_client_impl(const client_options& o) : opts_(o) {}

    ~pipelined_client_impl() override {
        disconnect(ECONNABORTED);
        join_ended_reader();
        if (watchdog_) {
            stopping_ = true;
            thread_interrupt(watchdog_);
            thread_join((join_handle*)watchdog_);
        }
        delete tcp_;
    }

    int command(const std::string_view* args, size_t n, reply* out, uint64_t timeout_us) override {
        if (n == 0 || !out) {
            errno = EINVAL;
            return -1;
        }
        if (!sock_ && connect_once() < 0) return -1;
        auto w = waiter::get();
        append_command(&wbuf_, args, n);
        if (await(w, timeout_us) < 0) return -1;
        std::swap(*out, w->r);
        w->unref();
        return 0;
    }

    int commands(const command_batch& batch, reply* out, uint64_t timeout_us) override {
        if (batch.empty() || !out) {
            errno = EINVAL;
            return -1;
        }
        if (!sock_ && connect_once() < 0) return -1;
        auto w = waiter::get();
        w->outs = out, w->expect = batch.size();
        wbuf_.append(batch.wire());
        if (await(w, timeout_us) < 0) return -1;
        w->unref();
        return 0;
    }

    int protocol() const override { return protocol_; }
    size_t in_flight() const override { return queue_.size(); }
    uint64_t connects() const override { return connects_; }

private:
    // Queues w, whose commands are in wbuf_ already, writes unless another caller is writing,
    // and waits for its replies: 0 (w still to be released by the caller), or -1 with errno
    // (w released; its replies, if they come, are dropped).
    int await(waiter* w, uint64_t timeout_us) {
        queue_.push_back(w);
        // Timeouts: one watchdog per client rather than a timed sleep per call (a timed sleep
        // costs a sleep-queue insert and erase per call, a tenth of the client's CPU).
        uint64_t t = std::min(timeout_us, opts_.timeout_us);
        w->deadline = photon::now + t < photon::now ? UINT64_MAX : photon::now + t;
        if (!watchdog_) {
            watchdog_ = thread_create11(&pipelined_client_impl::watch_loop, this);
            thread_enable_join(watchdog_);
        } else if (w->deadline < watch_until_) {
            watch_until_ = w->deadline;
            thread_interrupt(watchdog_);
        }
        if (!writing_) write_all();
        if (!w->done && w->sem.wait(1) < 0 && !w->done) {
            int e = errno;
            w->abandoned = true;  // the queue keeps it until its replies come
            w->unref();
            errno = e;
            return -1;
        }
        if (int err = w->err) {
            w->unref();
            errno = err;
            return -1;
        }
        return 0;
    }

    // Connects and says HELLO (one coroutine at a time; the others wait for it).
    int connect_once() {
        while (connecting_) {
            connected_.wait(1, opts_.timeout_us);
            if (sock_) return 0;
        }
        if (sock_) return 0;
        connecting_ = true;
        int ret = do_connect();
        int err = errno;
        connecting_ = false;
        connected_.signal(1024);
        errno = err;
        return ret;
    }

    int do_connect() {
        join_ended_reader();
        if (!tcp_) {
            tcp_ = net::new_tcp_socket_client();
            if (!tcp_) return -1;
        }
        tcp_->timeout(opts_.timeout_us);
        net::EndPoint ep(net::IPAddr(opts_.host.c_str()), opts_.port);
        if (ep.addr.undefined()) {
            errno = EINVAL;
            return -1;
        }
        std::unique_ptr<net::ISocketStream> s(tcp_->connect(ep));
        if (!s) return -1;
        s->timeout(opts_.timeout_us);
        rlen_ = rpos_ = 0;
        // HELLO 3 (with AUTH), else RESP2 and AUTH; then SELECT.
        protocol_ = 2;
        reply r;
        if (opts_.resp3) {
            std::vector<std::string_view> hello = {"HELLO", "3"};
            if (!opts_.password.empty()) {
                hello.push_back("AUTH");
                hello.push_back(opts_.username.empty() ? std::string_view("default")
                                                       : std::string_view(opts_.username));
                hello.push_back(opts_.password);
            }
            if (sync_command(s.get(), hello.data(), hello.size(), &r) < 0) return -1;
            if (r.type == reply::MAP) protocol_ = 3;
        }
        if (protocol_ == 2 && !opts_.password.empty()) {
            std::string_view auth[] = {"AUTH", opts_.username, opts_.password};
            size_t n = opts_.username.empty() ? 2 : 3;
            if (n == 2) auth[1] = opts_.password;
            if (sync_command(s.get(), auth, n, &r) < 0) return -1;
            if (r.is_error()) {
                LOG_WARN("redis: AUTH failed: `", r.str.c_str());
                errno = EACCES;
                return -1;
            }
        }
        if (opts_.db) {
            std::string db = std::to_string(opts_.db);
            std::string_view sel[] = {"SELECT", db};
            if (sync_command(s.get(), sel, 2, &r) < 0) return -1;
            if (r.is_error()) {
                errno = EINVAL;
                return -1;
            }
        }
        sock_ = s.release();
        ++connects_;
        reader_ = thread_create11(&pipelined_client_impl::read_loop, this, sock_);
        thread_enable_join(reader_);
        return 0;
    }

    int sync_command(net::ISocketStream* s, const std::string_view* args, size_t n, reply* r) {
        std::string w;
        append_command(&w, args, n);
        if (s->write(w.data(), w.size()) != (ssize_t)w.size()) return -1;
        return read_reply(s, r);
    }

    // Reads one reply from s into r: 0, or -1 with errno.
    int read_reply(net::ISocketStream* s, reply* r) {
        for (;;) {
            if (rpos_ < rlen_) {
                ssize_t used = parse_reply(rbuf_.get() + rpos_, rbuf_.get() + rlen_, r);
                if (used < 0) {
                    LOG_EVERY_T(10, LOG_WARN("redis: malformed reply from the server"));
                    errno = EPROTO;
                    return -1;
                }
                if (used > 0) {
                    rpos_ += used;
                    return 0;
                }
            }
            if (rpos_ > 0) {  // keep the unparsed tail only, at the front
                memmove(rbuf_.get(), rbuf_.get() + rpos_, rlen_ - rpos_);
                rlen_ -= rpos_;
                rpos_ = 0;
            }
            if (rlen_ > opts_.max_reply_bytes) {
                errno = EMSGSIZE;
                return -1;
            }
            // At least 32 KiB free for the read; a large reply doubles the buffer.
            if (rcap_ - rlen_ < 32 * 1024) {
                size_t cap = std::max(rcap_ * 2, rlen_ + 64 * 1024);
                std::unique_ptr<char[]> b(new char[cap]);
                if (rlen_) memcpy(b.get(), rbuf_.get(), rlen_);
                rbuf_ = std::move(b);
                rcap_ = cap;
            }
            ssize_t got = s->recv(rbuf_.get() + rlen_, rcap_ - rlen_);
            if (got <= 0) {
                if (got == 0) errno = ECONNRESET;
                return -1;
            }
            rlen_ += got;
        }
    }

    void read_loop(net::ISocketStream* s) {
        reply r;  // reused: its string's memory goes to the caller, the caller's comes back
        for (;;) {
            r.type = reply::NONE, r.integer = 0, r.number = 0;
            r.str.clear();
            r.elements.clear();
            if (read_reply(s, &r) < 0) {
                // Idle, or a slow reply: the calls time out on their own, the link stays.
                if (errno == ETIMEDOUT && s == sock_) continue;
                if (s == sock_) disconnect(errno);
                return;
            }
            // RESP3 pushes are out of band, but for the replies to (UN)SUBSCRIBE.
            if (r.type == reply::PUSH && !is_subscribe_ack(r)) continue;
            if (queue_.empty()) {
                LOG_EVERY_T(10, LOG_WARN("redis: a reply no one asked for"));
                disconnect(EPROTO);
                return;
            }
            waiter* w = queue_.front();
            if (!w->abandoned) std::swap(w->outs[w->got], r);
            if (++w->got < w->expect) continue;
            queue_.pop_front();
            if (!w->abandoned) {
                w->done = true;
                w->sem.signal(1);
            }
            w->unref();
        }
    }

    // Fails the calls past their deadline (ETIMEDOUT; their replies are dropped when they come)
    // and sleeps until the next deadline, or until a call with an earlier one interrupts it.
    void watch_loop() {
        while (!stopping_) {
            uint64_t now = photon::now, next = UINT64_MAX;
            for (auto w : queue_) {
                if (w->done || w->abandoned) continue;
                if (w->deadline <= now) {
                    w->abandoned = true;
                    w->err = ETIMEDOUT;
                    w->done = true;
                    w->sem.signal(1);
                } else {
                    next = std::min(next, w->deadline);
                }
            }
            watch_until_ = next;
            thread_usleep(next == UINT64_MAX ? UINT64_MAX : next - now);
        }
    }

    static bool is_subscribe_ack(const reply& r) {
        if (r.elements.empty() || r.elements[0].type != reply::STRING) return false;
        auto& k = r.elements[0].str;
        return k == "subscribe" || k == "psubscribe" || k == "unsubscribe" || k == "punsubscribe" ||
               k == "ssubscribe" || k == "sunsubscribe";
    }

    // Writes wbuf_ until it is empty (the caller is the writer).
    void write_all() {
        writing_ = true;
        thread_yield();  // let the coroutines ready behind us add their commands
        while (!wbuf_.empty() && sock_) {
            out_.swap(wbuf_);  // out_ was empty: callers now append to its old buffer
            auto s = sock_;
            ssize_t ret = s->write(out_.data(), out_.size());
            bool ok = ret == (ssize_t)out_.size();
            out_.clear();
            if (!ok) {
                if (s == sock_) disconnect(errno ? errno : EIO);
                break;
            }
        }
        writing_ = false;
    }

    // Fails every call in flight with err and closes the connection (the next call reconnects).
    void disconnect(int err) {
        auto s = sock_;
        if (!s) return;
        sock_ = nullptr;
        s->shutdown(ShutdownHow::ReadWrite);
        wbuf_.clear();
        if (reader_ && reader_ != photon::CURRENT) {
            thread_interrupt(reader_);
            thread_join((join_handle*)reader_);
        } else {
            pending_join_ = reader_;  // the reader itself: it ends right after this
        }
        reader_ = nullptr;
        auto q = std::move(queue_);
        queue_.clear();
        for (auto w : q) {
            if (!w->abandoned) {
                w->err = err ? err : ECONNRESET;
                w->done = true;
                w->sem.signal(1);
            }
            w->unref();
        }
        delete s;
    }

    void join_ended_reader() {
        if (pending_join_ && pending_join_ != photon::CURRENT) {
            thread_join((join_handle*)pending_join_);
            pending_join_ = nullptr;
        }
    }

    client_options opts_;
    net::ISocketClient* tcp_ = nullptr;
    net::ISocketStream* sock_ = nullptr;
    photon::thread* reader_ = nullptr;
    photon::thread* pending_join_ = nullptr;
    photon::thread* watchdog_ = nullptr;
    uint64_t watch_until_ = UINT64_MAX;  // when the watchdog wakes next
    bool stopping_ = false;
    std::deque<waiter*> queue_;
    std::string wbuf_, out_;
    std::unique_ptr<char[]> rbuf_;  // replies read: [rpos_, rlen_) not parsed yet
    size_t rcap_ = 0, rlen_ = 0, rpos_ = 0;
    photon::semaphore connected_;
    bool writing_ = false, connecting_ = false;
    int protocol_ = 0;
    uint64_t connects_ = 0;
};

class client_pool_impl : public client_pool {
public:
    client_pool_impl(const client_options& o, size_t n) {
        for (size_t i = 0; i < n; ++i) clients_.emplace_back(new pipelined_client_impl(o));
    }
    int command(const std::string_view* args, size_t n, reply* out, uint64_t timeout_us) override {
        return least_busy()->command(args, n, out, timeout_us);
    }
    int commands(const command_batch& batch, reply* out, uint64_t timeout_us) override {
        return least_busy()->commands(batch, out, timeout_us);
    }
    size_t size() const override { return clients_.size(); }
    pipelined_client* get(size_t i) override {
        return i < clients_.size() ? clients_[i].get() : nullptr;
    }

private:
    pipelined_client* least_busy() {
        pipelined_client* best = clients_[next_++ % clients_.size()].get();
        for (auto& c : clients_)
            if (c->in_flight() < best->in_flight()) best = c.get();
        return best;
    }

    std::vector<std::unique_ptr<pipelined_client>> clients_;
    size_t next_ = 0;
};

}  // namespace

int command_batch::add(const std::string_view* args, size_t n) {
    if (n == 0) {
        errno = EINVAL;
        return -1;
    }
    append_command(&wire_, args, n);
    n_++;
    return 0;
}

pipelined_client* new_pipelined_client(const client_options& opts) {
    if (opts.host.empty() || opts.port == 0) {
        errno = EINVAL;
        return nullptr;
    }
    return new pipelined_client_impl(opts);
}

client_pool* new_client_pool(const client_options& opts, size_t connections) {
    if (opts.host.empty() || opts.port == 0 || connections == 0) {
        errno = EINVAL;
        return nullptr;
    }
    return new client_pool_impl(opts, connections);
}

}  // namespace redis
}  // namespace photon
