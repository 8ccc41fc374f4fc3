// Go-style concurrency on photon coroutines, as PhotonLibOS's
// photon/thread/go.h declares it: go() starts a coroutine, channel<T> passes
// values between coroutines of any vCPUs, select() waits for the first of
// several channel operations.
//
// Blocking calls (send, recv, select, iteration) park the calling coroutine,
// not its vCPU, and need a vCPU (elsewhere they fail with ENOSYS). try_send,
// try_recv, select_nonblock and close never park and may be called from any
// vCPU or OS thread. A parked operation ignores thread_interrupt() (as
// Photon's) except with ESHUTDOWN, and ends on thread_shutdown() (EPERM).
// A channel holds a spinlock while it moves a T, so T's move constructor and
// move assignment must neither yield nor throw.
//
// Semantics are Go's: a recv case on a closed, drained channel is ready and
// runs its function with ok == false; select() parks until a case is ready; a
// failed send leaves an rvalue argument intact; failures set errno (ETIMEDOUT,
// ESHUTDOWN for a closed channel, EAGAIN for try_* that would block, ENOMEM if
// the buffer could not be allocated).
// Differences from PhotonLibOS: doc/compat.md#threadgoh
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include <photon/common/detail/std17.h>
#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/thread/list.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

namespace photon {

// ---- go ---------------------------------------------------------------------

// Starts f(args...) on a new coroutine of this vCPU (thread_create11): it
// runs when the caller yields. Returns it, or nullptr with errno.
template <typename F, typename... ARGUMENTS>
inline thread* go(uint64_t stack_size, F&& f, ARGUMENTS&&... args) {
    return thread_create11(stack_size, std::forward<F>(f), std::forward<ARGUMENTS>(args)...);
}

template <typename F, typename... ARGUMENTS>
inline detail::not_stack_size<F> go(F&& f, ARGUMENTS&&... args) {
    return thread_create11(std::forward<F>(f), std::forward<ARGUMENTS>(args)...);
}

// ---- channel machinery (internal) --------------------------------------------

namespace detail {

// A parked coroutine: a blocking send/recv, or a whole select. A waker
// claims it under `lock` by setting `fired`, so only one case completes.
struct chan_waiter {
    static constexpr int kWaiting = -1;
    static constexpr int kCancelled = -2;  // timed out (or shut down) first
    spinlock lock;
    condition_variable cv;
    int fired = kWaiting;  // index of the completed case; under lock
};

// One parked operation of a waiter on one channel (Go's sudog). Fields other
// than `ok` are guarded by the channel's lock; `ok` by the waiter's.
struct chan_sudog : intrusive_list_node<chan_sudog> {
    chan_waiter* waiter = nullptr;
    intrusive_list<chan_sudog>* queue = nullptr;  // where it is parked; nullptr once popped
    void* elem = nullptr;                         // T*: send moves from it, recv moves into it
    int index = 0;                                // its case in a select
    bool in_select = false;
    bool ok = false;  // set by the completer: a value moved (false: channel closed)
};

// The type-independent part of a channel.
struct chan_base {
    spinlock lock;
    intrusive_list<chan_sudog> recvq, sendq;  // parked receivers / senders
    std::atomic<bool> closed{false};          // written under lock
    std::atomic<size_t> count{0};             // buffered values; written under lock
    int close_errno = ESHUTDOWN;              // ENOMEM if the buffer never came
};

// With the channel locked: pops the first sudog of q whose waiter still
// waits and returns it with that waiter's lock held; nullptr if none.
chan_sudog* chan_claim(intrusive_list<chan_sudog>& q);
// Completes a claimed sudog: records ok, fires and wakes its waiter, and
// releases the waiter's lock. The channel stays locked meanwhile.
void chan_complete(chan_sudog* sg, bool ok);
inline void chan_enqueue(intrusive_list<chan_sudog>& q, chan_sudog* sg) {
    q.push_back(sg);
    sg->queue = &q;
}
// With the channel locked: marks it closed and fails its parked operations.
void chan_close_locked(chan_base* c);

// chans: distinct, in address order (chan_sort_unique); locks in that order.
size_t chan_sort_unique(chan_base** chans, size_t n);
void chan_lock_all(chan_base* const* chans, size_t n);
void chan_unlock_all(chan_base* const* chans, size_t n);

// Parks CURRENT as `w`, whose sudogs are queued on `chans` (all locked on
// entry, unlocked on return). Returns the fired index, or -1 with ETIMEDOUT,
// EPERM (shut down), ESHUTDOWN (interrupted so) or ENOSYS.
int chan_park(chan_waiter& w, chan_base* const* chans, size_t nchans, chan_sudog* sgs, size_t nsgs,
              Timeout timeout);

// A case select can park on: its channel and the operation, run with that
// channel locked.
class chan_case {
public:
    virtual chan_base* chan_core() = 0;
    enum poll_result { kNotReady, kDone, kClosed, kDead };
    // Does the operation if it can complete now (kDone). A recv on a closed,
    // drained channel is ready all the same (kClosed); a send on a closed
    // channel can never happen (kDead).
    virtual poll_result poll_locked() = 0;
    // Queues `sg` as this operation, unless it can never happen.
    virtual void park_locked(chan_sudog& sg) = 0;
    // After `sg` completed while parked.
    virtual void fired(const chan_sudog& sg) = 0;

protected:
    ~chan_case() = default;
};

struct select_ref {
    void* obj;
    bool (*ready)(void*);
    void (*execute)(void*);
    chan_case* chan;  // nullptr: a case that can only be polled
};

// The select loop (go.cpp). chans and sgs: scratch arrays of n entries.
int select_cases(select_ref* cases, size_t n, chan_base** chans, chan_sudog* sgs, Timeout timeout,
                 bool block);

template <typename T>
struct identity {
    using type = T;
};

}  // namespace detail

template <typename T, typename F>
struct recv_case;
template <typename T, typename F>
struct send_case;

// ---- channel ------------------------------------------------------------------

// A typed FIFO between coroutines. Capacity 0 (unbuffered): a send completes
// when a receiver takes the value. Capacity n: sends complete while fewer
// than n values are buffered. After close(), sends fail with ESHUTDOWN and
// receives drain the buffer, then fail. Destroy or move a channel only when
// no coroutine uses it.
template <typename T>
class channel {
public:
    channel() : channel(0) {}
    explicit channel(size_t capacity) : cap_(capacity) {
        if (capacity == 0) return;
        // posix_memalign, not C++17's aligned new: one allocator in C++14 and C++17 code.
        void* p = nullptr;
        const size_t align = alignof(T) > sizeof(void*) ? alignof(T) : sizeof(void*);
        if (capacity > SIZE_MAX / sizeof(T) || posix_memalign(&p, align, capacity * sizeof(T)))
            p = nullptr;
        buf_ = static_cast<T*>(p);
        if (!buf_) {  // a channel that fails every operation with ENOMEM
            core_.close_errno = ENOMEM;
            core_.closed = true;
        }
    }
    ~channel() {
        close();
        free_buffer();
    }
    channel(const channel&) = delete;
    channel& operator=(const channel&) = delete;

    // Takes other's buffer, values and closed state; other becomes an empty,
    // open, unbuffered channel.
    channel(channel&& other) noexcept { take(other); }
    channel& operator=(channel&& other) noexcept {
        if (this != &other) {
            close();
            free_buffer();
            take(other);
        }
        return *this;
    }

    // Wakes every parked receiver (they fail) and sender (ESHUTDOWN). Again: no-op.
    void close() {
        core_.lock.lock();
        if (!core_.closed) detail::chan_close_locked(&core_);
        core_.lock.unlock();
    }
    bool is_closed() const { return core_.closed.load(std::memory_order_acquire); }
    bool empty() const { return size() == 0; }
    size_t size() const { return core_.count.load(std::memory_order_relaxed); }
    size_t capacity() const { return cap_; }

    // Blocks until the value is taken (unbuffered) or buffered. false with
    // ETIMEDOUT or ESHUTDOWN (closed); the value is then not sent.
    bool send(const T& value, Timeout timeout = {}) {
        T v(value);
        return do_send(v, timeout);
    }
    bool send(T&& value, Timeout timeout = {}) { return do_send(value, timeout); }

    // Blocks until a value comes. {value, true}, or {T{}, false} when closed
    // and drained (ESHUTDOWN) or on timeout (ETIMEDOUT).
    std::pair<T, bool> recv(Timeout timeout = {}) {
        T value{};
        bool ok = do_recv(value, timeout);
        return {std::move(value), ok};
    }
    // As above, into `value` (untouched on failure).
    bool recv(T& value, Timeout timeout = {}) { return do_recv(value, timeout); }

    // Never block: false with EAGAIN (no room / no parked receiver; nothing
    // buffered / no parked sender) or ESHUTDOWN (closed).
    bool try_send(const T& value) {
        T v(value);
        return do_try_send(v);
    }
    bool try_send(T&& value) { return do_try_send(value); }
    bool try_recv(T& value) {
        core_.lock.lock();
        int r = recv_locked(value);
        core_.lock.unlock();
        if (r <= 0) errno = r < 0 ? core_.close_errno : EAGAIN;
        return r > 0;
    }

    // Blocking send / recv that ignore failure, for chaining.
    channel& operator<<(const T& value) {
        send(value);
        return *this;
    }
    channel& operator<<(T&& value) {
        send(std::move(value));
        return *this;
    }
    channel& operator>>(T& value) {
        recv(value);
        return *this;
    }

    // Receives until the channel is closed and drained: for (auto v : ch).
    class iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using pointer = T*;
        using reference = T&;

        iterator() : channel_(nullptr), valid_(false) {}
        explicit iterator(channel* ch) : channel_(ch), valid_(true) { advance(); }

        T& operator*() { return value_; }
        T* operator->() { return &value_; }
        iterator& operator++() {
            advance();
            return *this;
        }
        iterator operator++(int) {
            iterator old = *this;
            advance();
            return old;
        }
        bool operator==(const iterator& rhs) const {
            return (!valid_ && !rhs.valid_) || (channel_ == rhs.channel_ && valid_ == rhs.valid_);
        }
        bool operator!=(const iterator& rhs) const { return !(*this == rhs); }

    private:
        void advance() {
            if (channel_ && valid_) valid_ = channel_->recv(value_);
        }
        channel* channel_;
        T value_{};
        bool valid_;
    };

    iterator begin() { return iterator(this); }
    iterator end() { return iterator(); }

private:
    template <typename U, typename F>
    friend struct recv_case;
    template <typename U, typename F>
    friend struct send_case;

    // ---- with core_.lock held ----

    T* slot(size_t i) { return buf_ + (head_ + i) % cap_; }
    void push_locked(T& v) {
        size_t n = core_.count.load(std::memory_order_relaxed);
        new (slot(n)) T(std::move(v));
        core_.count.store(n + 1, std::memory_order_relaxed);
    }
    void pop_locked(T& dst) {
        T* p = slot(0);
        dst = std::move(*p);
        p->~T();
        head_ = (head_ + 1) % cap_;
        core_.count.store(core_.count.load(std::memory_order_relaxed) - 1,
                          std::memory_order_relaxed);
    }
    // 1: moved a value into dst; 0: none ready; -1: closed and drained.
    int recv_locked(T& dst) {
        if (core_.count.load(std::memory_order_relaxed) > 0) {
            pop_locked(dst);
            // A sender parked on the full buffer: its value takes the freed
            // slot, behind those already buffered.
            if (auto sg = detail::chan_claim(core_.sendq)) {
                push_locked(*static_cast<T*>(sg->elem));
                detail::chan_complete(sg, true);
            }
            return 1;
        }
        if (auto sg = detail::chan_claim(core_.sendq)) {  // unbuffered hand-over
            dst = std::move(*static_cast<T*>(sg->elem));
            detail::chan_complete(sg, true);
            return 1;
        }
        return core_.closed.load(std::memory_order_relaxed) ? -1 : 0;
    }
    // 1: src moved to a receiver or the buffer; 0: would block; -1: closed.
    int send_locked(T& src) {
        if (core_.closed.load(std::memory_order_relaxed)) return -1;
        // Receivers park only on an empty buffer: handing over keeps FIFO.
        if (auto sg = detail::chan_claim(core_.recvq)) {
            *static_cast<T*>(sg->elem) = std::move(src);
            detail::chan_complete(sg, true);
            return 1;
        }
        if (core_.count.load(std::memory_order_relaxed) < cap_) {
            push_locked(src);
            return 1;
        }
        return 0;
    }

    // ---- blocking operations ----

    bool do_send(T& src, Timeout timeout) {
        core_.lock.lock();
        int r = send_locked(src);
        if (r != 0) {
            core_.lock.unlock();
            if (r < 0) errno = core_.close_errno;
            return r > 0;
        }
        return park(core_.sendq, &src, timeout);
    }
    bool do_recv(T& dst, Timeout timeout) {
        core_.lock.lock();
        int r = recv_locked(dst);
        if (r != 0) {
            core_.lock.unlock();
            if (r < 0) errno = core_.close_errno;
            return r > 0;
        }
        return park(core_.recvq, &dst, timeout);
    }
    bool do_try_send(T& src) {
        core_.lock.lock();
        int r = send_locked(src);
        core_.lock.unlock();
        if (r <= 0) errno = r < 0 ? core_.close_errno : EAGAIN;
        return r > 0;
    }
    // Called locked, after the operation could not complete; unlocks.
    bool park(intrusive_list<detail::chan_sudog>& q, T* elem, Timeout timeout) {
        if (timeout.expired() || !CURRENT) {
            core_.lock.unlock();
            errno = timeout.expired() ? ETIMEDOUT : ENOSYS;
            return false;
        }
        detail::chan_waiter w;
        detail::chan_sudog sg;
        sg.waiter = &w;
        sg.elem = elem;
        detail::chan_enqueue(q, &sg);
        detail::chan_base* self = &core_;
        if (detail::chan_park(w, &self, 1, &sg, 1, timeout) < 0) return false;
        if (!sg.ok) errno = core_.close_errno;
        return sg.ok;
    }

    void free_buffer() {
        size_t n = core_.count.load(std::memory_order_relaxed);
        for (size_t i = 0; i < n; i++) slot(i)->~T();
        core_.count = 0;
        free(buf_);
        buf_ = nullptr;
    }
    void take(channel& other) {
        buf_ = other.buf_;
        cap_ = other.cap_;
        head_ = other.head_;
        core_.count = other.core_.count.load();
        core_.closed = other.core_.closed.load();
        core_.close_errno = other.core_.close_errno;
        other.buf_ = nullptr;
        other.cap_ = other.head_ = 0;
        other.core_.count = 0;
        other.core_.closed = false;
        other.core_.close_errno = ESHUTDOWN;
    }

    detail::chan_base core_;
    T* buf_ = nullptr;  // ring of cap_ slots; count values from head_
    size_t cap_ = 0;
    size_t head_ = 0;
};

template <typename T>
inline channel<T> make_channel(size_t capacity = 0) {
    return channel<T>(capacity);
}

// ---- select -------------------------------------------------------------------

// select() runs the first case that becomes ready: a receive (its function
// gets the value and ok) or a send (its function gets nothing). Among ready
// cases it picks one at random. It returns the case's index; select(timeout,
// ...) returns -1 with ETIMEDOUT when the time runs out, select_nonblock(...)
// -1 at once (Go's `default:`). Each case's function runs after the
// operation, on the caller, outside any lock.
// As in Go, a receive from a closed, drained channel is always ready, with ok
// false (select yields before running it, so a loop over such a select does
// not starve the other coroutines of its vCPU; stop selecting a channel once
// it reports closed, as Go code sets it to nil). A send on a closed channel
// never happens; if every case is one, select returns -1 with ESHUTDOWN.
// A case may also be any object with bool ready() (do it if possible) and
// execute(); select polls those, sleeping up to 10 ms between polls.
struct select_case_base {
    virtual bool ready() = 0;
    virtual void execute() = 0;
    virtual ~select_case_base() = default;
};

template <typename T, typename F>
struct recv_case : select_case_base, detail::chan_case {
    channel<T>& ch;
    F func;
    T value{};
    bool ok = false;  // what func() gets with the value

    recv_case(channel<T>& c, F&& f) : ch(c), func(std::forward<F>(f)) {}
    recv_case(channel<T>& c, const F& f) : ch(c), func(f) {}

    bool ready() override {
        ch.core_.lock.lock();
        auto r = poll_locked();
        ch.core_.lock.unlock();
        return r != kNotReady;
    }
    void execute() override { func(value, ok); }

    detail::chan_base* chan_core() override { return &ch.core_; }
    poll_result poll_locked() override {
        int r = ch.recv_locked(value);
        ok = r > 0;
        return r > 0 ? kDone : r < 0 ? kClosed : kNotReady;
    }
    void park_locked(detail::chan_sudog& sg) override {
        sg.elem = &value;
        detail::chan_enqueue(ch.core_.recvq, &sg);
    }
    void fired(const detail::chan_sudog& sg) override { ok = sg.ok; }
};

template <typename T, typename F>
struct send_case : select_case_base, detail::chan_case {
    channel<T>& ch;
    T value;
    F func;

    send_case(channel<T>& c, const T& v, F&& f) : ch(c), value(v), func(std::forward<F>(f)) {}
    send_case(channel<T>& c, const T& v, const F& f) : ch(c), value(v), func(f) {}

    bool ready() override {
        ch.core_.lock.lock();
        auto r = poll_locked();
        ch.core_.lock.unlock();
        return r == kDone;
    }
    void execute() override { func(); }

    detail::chan_base* chan_core() override { return &ch.core_; }
    poll_result poll_locked() override {
        int r = ch.send_locked(value);
        return r > 0 ? kDone : r < 0 ? kDead : kNotReady;
    }
    void park_locked(detail::chan_sudog& sg) override {
        if (ch.core_.closed.load(std::memory_order_relaxed)) return;
        sg.elem = &value;
        detail::chan_enqueue(ch.core_.sendq, &sg);
    }
    void fired(const detail::chan_sudog&) override {}
};

template <typename T, typename F>
inline recv_case<T, typename std::decay<F>::type> recv_case_of(channel<T>& ch, F&& func) {
    return recv_case<T, typename std::decay<F>::type>(ch, std::forward<F>(func));
}

// `value` converts to T: T comes from the channel alone, so e.g. an int goes
// to a channel<long>.
template <typename T, typename F>
inline send_case<T, typename std::decay<F>::type> send_case_of(
    channel<T>& ch, const typename detail::identity<T>::type& value, F&& func) {
    return send_case<T, typename std::decay<F>::type>(ch, value, std::forward<F>(func));
}

namespace detail {

template <typename C, typename = void>
struct is_select_case : std::false_type {};
template <typename C>
struct is_select_case<C, photon::detail::void_t<decltype(bool(std::declval<C&>().ready())),
                                                decltype(std::declval<C&>().execute())>>
    : std::true_type {};
template <typename... Cases>
using select_cases_t =
    std::enable_if_t<all_true<is_select_case<std::decay_t<Cases>>::value...>::value, int>;

template <typename C>
chan_case* as_chan_case(C& c, std::true_type /* derives from chan_case */) {
    return &c;
}
template <typename C>
chan_case* as_chan_case(C&, std::false_type) {
    return nullptr;
}

template <typename C>
select_ref make_select_ref(C& c) {
    chan_case* cc = as_chan_case(c, std::is_base_of<chan_case, C>());
    return {&c, [](void* p) { return bool(static_cast<C*>(p)->ready()); },
            [](void* p) { static_cast<C*>(p)->execute(); }, cc};
}

template <typename Tuple, size_t... I>
int select_tuple(Tuple& t, Timeout timeout, bool block, std::index_sequence<I...>) {
    constexpr size_t N = sizeof...(I);
    select_ref refs[N ? N : 1] = {make_select_ref(std::get<I>(t))...};
    chan_base* chans[N ? N : 1];
    chan_sudog sgs[N ? N : 1];
    return select_cases(refs, N, chans, sgs, timeout, block);
}

template <typename... Cases>
int select_run(Timeout timeout, bool block, Cases&&... cases) {
    auto t = std::make_tuple(std::forward<Cases>(cases)...);
    return select_tuple(t, timeout, block, std::index_sequence_for<Cases...>{});
}

}  // namespace detail

// Runs one ready case, or returns -1 at once if none is ready.
template <typename... Cases, detail::select_cases_t<Cases...> = 0>
inline int select_nonblock(Cases&&... cases) {
    return detail::select_run(Timeout(0), false, std::forward<Cases>(cases)...);
}

// Parks until a case is ready and runs it. -1 only with EPERM / ESHUTDOWN
// (shut down), or ENOSYS (not a vCPU); `select()` with no case parks for ever.
template <typename... Cases, detail::select_cases_t<Cases...> = 0>
inline int select(Cases&&... cases) {
    return detail::select_run(Timeout(), true, std::forward<Cases>(cases)...);
}

// As above, or -1 with ETIMEDOUT once the timeout expires.
template <typename... Cases, detail::select_cases_t<Cases...> = 0>
inline int select(Timeout timeout, Cases&&... cases) {
    return detail::select_run(timeout, true, std::forward<Cases>(cases)...);
}

}  // namespace photon
