// iovector_view and iovector, as PhotonLibOS declares them (global namespace).
//
// iovector_view is a (pointer, count) window over an iovec[] with operations
// that consume bytes from either end, copy between scattered buffers, and
// slice without copying data. iovector owns a fixed-capacity iovec array with
// room reserved at the front (so headers can be prepended in place) and
// remembers every buffer it allocated through its IOAlloc, freeing them all
// when it is disposed or destroyed, however its iovecs were edited since.
// IOVectorEntity<CAPACITY, RESERVE_FRONT> holds it all inline (on the stack
// or in an object); new_iovector makes one on the heap.
//
// Differences from PhotonLibOS: doc/compat.md#commoniovectorh
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <cassert>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <sys/types.h>
#include <sys/uio.h>

#include <photon/common/callback.h>
#include <photon/common/io-alloc.h>

inline bool operator==(const iovec& a, const iovec& b) {
    return a.iov_base == b.iov_base && a.iov_len == b.iov_len;
}

struct iovector_view {
    iovec* iov;
    int iovcnt;

    constexpr iovector_view() : iov(nullptr), iovcnt(0) {}
    explicit constexpr iovector_view(iovec* iov, int iovcnt) : iov(iov), iovcnt(iovcnt) {}
    template <int N>
    explicit constexpr iovector_view(iovec (&iov)[N]) : iov(iov), iovcnt(N) {}

    void assign(iovec* iov, int iovcnt) {
        this->iov = iov;
        this->iovcnt = iovcnt;
    }
    template <int N>
    void assign(iovec (&iov)[N]) {
        assign(iov, N);
    }

    bool empty() const { return iovcnt == 0; }
    iovec* begin() { return iov; }
    iovec* end() { return iov + iovcnt; }
    iovec& front() { return iov[0]; }
    iovec& back() { return iov[iovcnt - 1]; }
    const iovec* begin() const { return iov; }
    const iovec* end() const { return iov + iovcnt; }
    const iovec& front() const { return iov[0]; }
    const iovec& back() const { return iov[iovcnt - 1]; }
    iovec& operator[](size_t i) { return iov[i]; }
    const iovec& operator[](size_t i) const { return iov[i]; }
    size_t elements_count() const { return iovcnt; }
    void pop_front() {
        assert(iovcnt > 0);
        iov++;
        iovcnt--;
    }
    void pop_back() {
        assert(iovcnt > 0);
        iovcnt--;
    }

    bool operator==(const iovector_view& rhs) const {
        return iov == rhs.iov && iovcnt == rhs.iovcnt;
    }

    // Total bytes of iov[0, iovcnt).
    size_t sum() const;

    // Drops bytes from the back until sum() is `size` (iovcnt shrinks and the
    // last element is cut); returns the resulting sum, less than `size` if
    // there were not that many bytes.
    size_t shrink_to(size_t size);

    // Lowers iovcnt, leaving every iovec as it is, to the fewest elements that
    // still hold `size` bytes; returns how many bytes the last kept element
    // holds beyond `size` (0 if there were not `size` bytes).
    size_t shrink_less_than(size_t size);

    // Consumes up to `bytes` from the front; returns how many it consumed.
    size_t extract_front(size_t bytes);
    // Likewise, copying the consumed bytes to buf.
    size_t extract_front(size_t bytes, void* buf);
    // Likewise, describing the consumed bytes in iov's array (iov->iovcnt is
    // its room on entry, the count used on return), copying no data; -1 and
    // nothing consumed if the room is too small.
    ssize_t extract_front(size_t bytes, iovector_view* iov);
    // Consumes `bytes` from the front if the first element holds them all,
    // returning their address; nullptr (nothing consumed) otherwise.
    void* extract_front_continuous(size_t bytes);

    // The same from the back. extract_back(bytes, buf) fills buf in order,
    // ending at buf + bytes (so a short extraction leaves the head of buf).
    size_t extract_back(size_t bytes);
    size_t extract_back(size_t bytes, void* buf);
    ssize_t extract_back(size_t bytes, iovector_view* iov);
    void* extract_back_continuous(size_t bytes);

    // Copy between this view's buffers and a flat buffer or another view, up
    // to `size` bytes; return the bytes copied. Neither view is changed.
    size_t memcpy_to(void* buf, size_t size) const {
        iovec v{buf, size};
        return memcpy_iov(iovector_view{&v, 1}, *this, size);
    }
    size_t memcpy_from(const void* buf, size_t size) const {
        iovec v{const_cast<void*>(buf), size};
        return memcpy_iov(*this, iovector_view{&v, 1}, size);
    }
    size_t memcpy_to(const iovector_view* iov, size_t size = SIZE_MAX) const {
        return memcpy_iov(*iov, *this, size);
    }
    size_t memcpy_from(const iovector_view* iov, size_t size = SIZE_MAX) const {
        return memcpy_iov(*this, *iov, size);
    }

    // Copy like memcpy_*, consuming the source's bytes as they are copied.
    size_t pipe_to(void* buf, size_t size) {
        iovec v{buf, size};
        return pipe_iov(iovector_view{&v, 1}, *this, size);
    }
    size_t pipe_to(const iovector_view* iov, size_t size = SIZE_MAX) {
        return pipe_iov(*iov, *this, size);
    }
    size_t pipe_from(iovector_view* iov, size_t size = SIZE_MAX) const {
        return pipe_iov(*this, *iov, size);
    }

    // Describes `count` bytes starting at byte `offset` in iov's array (room
    // iov->iovcnt on entry, count used on return), sharing the data. Returns
    // the bytes described: fewer when the view or the room runs out, -1 when
    // iov has no room at all.
    ssize_t slice(size_t count, off_t offset, iovector_view* /*OUT*/ iov) const;

protected:
    static size_t memcpy_iov(iovector_view dest, iovector_view src, size_t size);
    static size_t pipe_iov(iovector_view dest, iovector_view& src, size_t size);
};

class iovector {
public:
    struct iovec& front() {
        return iovs_[begin_];
    }
    const struct iovec& front() const { return iovs_[begin_]; }
    struct iovec& back() {
        return iovs_[end_ - 1];
    }
    const struct iovec& back() const { return iovs_[end_ - 1]; }
    size_t sum() const { return view().sum(); }
    struct iovec* iovec() {
        return iovs_ + begin_;
    }
    const struct iovec* iovec() const { return iovs_ + begin_; }
    uint16_t iovcnt() const { return end_ - begin_; }
    size_t elements_count() const { return iovcnt(); }
    uint16_t front_free_iovcnt() const { return begin_; }
    uint16_t back_free_iovcnt() const { return capacity_ - end_; }
    bool empty() const { return begin_ >= end_; }
    struct iovec* begin() {
        return iovs_ + begin_;
    }
    const struct iovec* begin() const { return iovs_ + begin_; }
    struct iovec* end() {
        return iovs_ + end_;
    }
    const struct iovec* end() const { return iovs_ + end_; }
    struct iovec& operator[](int64_t i) {
        return iovs_[begin_ + i];
    }
    const struct iovec& operator[](int64_t i) const { return iovs_[begin_ + i]; }

    // Sets the element count to nn, keeping the front; -1 ENOBUFS if it does
    // not fit behind the front reserve.
    int resize(uint16_t nn);

    // Pushes one element; returns its length, or 0 and errno ENOBUFS if there
    // is no free slot at that end.
    size_t push_front(struct iovec iov);
    size_t push_front(void* buf, size_t size) { return push_front({buf, size}); }
    size_t push_back(struct iovec iov);
    size_t push_back(void* buf, size_t size) { return push_back({buf, size}); }
    // Allocates `bytes` with the vector's IOAlloc (in as many pieces as it
    // hands out) and pushes them; returns bytes, or 0 and nothing pushed.
    size_t push_front(size_t bytes);
    size_t push_back(size_t bytes);

    // Replaces the elements (buffers allocated so far stay owned); -1 ENOBUFS
    // if iovcnt does not fit behind the front reserve.
    int assign(const struct iovec* iovs, uint16_t iovcnt);

    // Pops one element and returns its length (0 when empty).
    size_t pop_front();
    size_t pop_back();

    // Forgets the elements but keeps the allocated buffers until dispose.
    void clear() { end_ = begin_; }
    // Forgets the elements and frees every buffer the vector allocated.
    void clear_dispose() { dispose(); }

    // Cuts bytes from the back down to `size`; returns the resulting sum.
    size_t shrink_to(size_t size);
    // Makes sum() equal `size`, cutting from the back or allocating more;
    // returns the resulting sum.
    size_t truncate(size_t size);

    size_t extract_front(size_t bytes) {
        return consume_front([&](iovector_view& v) { return v.extract_front(bytes); });
    }
    size_t extract_front(size_t bytes, void* buf) {
        return consume_front([&](iovector_view& v) { return v.extract_front(bytes, buf); });
    }
    // Into a view: when iov has no room (iovcnt 0) an array as long as this
    // vector's is allocated for it, owned by this vector.
    ssize_t extract_front(size_t bytes, iovector_view* iov);
    // Into another iovector's free slots (behind its reserve); -1 if null or short of room.
    ssize_t extract_front(size_t bytes, iovector* iov);
    template <typename T>
    T* extract_front() {
        return (T*)extract_front_continuous(sizeof(T));
    }
    // The address of `bytes` consumed from the front; when they span
    // elements, they are copied into a buffer the vector allocates. nullptr
    // (nothing consumed) if there are fewer bytes or the allocation fails.
    void* extract_front_continuous(size_t bytes);

    size_t extract_back(size_t bytes) {
        return consume_back([&](iovector_view& v) { return v.extract_back(bytes); });
    }
    size_t extract_back(size_t bytes, void* buf) {
        return consume_back([&](iovector_view& v) { return v.extract_back(bytes, buf); });
    }
    ssize_t extract_back(size_t bytes, iovector_view* iov);
    ssize_t extract_back(size_t bytes, iovector* iov);
    template <typename T>
    T* extract_back() {
        return (T*)extract_back_continuous(sizeof(T));
    }
    void* extract_back_continuous(size_t bytes);

    size_t memcpy_to(void* buf, size_t size) const { return view().memcpy_to(buf, size); }
    size_t memcpy_from(const void* buf, size_t size) const { return view().memcpy_from(buf, size); }
    size_t memcpy_to(const iovector_view* iov, size_t size = SIZE_MAX) const {
        return view().memcpy_to(iov, size);
    }
    size_t memcpy_from(const iovector_view* iov, size_t size = SIZE_MAX) const {
        return view().memcpy_from(iov, size);
    }
    size_t memcpy_to(const iovector* iov, size_t size = SIZE_MAX) const {
        auto v = iov->view();
        return memcpy_to(&v, size);
    }
    size_t memcpy_from(const iovector* iov, size_t size = SIZE_MAX) const {
        auto v = iov->view();
        return memcpy_from(&v, size);
    }

    size_t pipe_to(void* buf, size_t size) {
        ::iovec v{buf, size};
        auto dest = iovector_view{&v, 1};
        return pipe_to(&dest, size);
    }
    size_t pipe_to(const iovector_view* iov, size_t size = SIZE_MAX) {
        return consume_front([&](iovector_view& v) { return v.pipe_to(iov, size); });
    }
    size_t pipe_to(const iovector* iov, size_t size = SIZE_MAX) {
        auto dest = iov->view();
        return pipe_to(&dest, size);
    }
    size_t pipe_from(iovector_view* iov, size_t size = SIZE_MAX) const {
        return view().pipe_from(iov, size);
    }
    size_t pipe_from(iovector* iov, size_t size = SIZE_MAX) const {
        auto dest = view();
        return iov->pipe_to(&dest, size);
    }

    // Moves rhs's elements and buffers here (this one's own are freed first),
    // keeping this vector's front reserve where it can.
    void operator=(const iovector& rhs) = delete;
    void operator=(iovector&& rhs);

    // A buffer from the vector's IOAlloc, freed when the vector is disposed.
    void* malloc(size_t size) { return do_malloc(size); }

    iovector_view view() const {
        return iovector_view(const_cast<struct iovec*>(iovec()), iovcnt());
    }
    // Adopts a view of this vector's own array (as changed by view ops).
    void update(iovector_view va) {
        begin_ = (uint16_t)(va.iov - iovs_);
        end_ = (uint16_t)(begin_ + va.iovcnt);
    }

    // iovector_view::slice; a view without room gets an array allocated by
    // this vector (0 if that fails), valid until the vector is disposed.
    ssize_t slice(size_t count, off_t offset, iovector_view* /*OUT*/ iov);

    IOAlloc* get_allocator() { return alloc_; }

    void debug_print();

protected:
    friend iovector* new_iovector(uint16_t capacity, uint16_t reserve_front);
    friend void delete_iovector(iovector* ptr);

    uint16_t capacity_;
    uint16_t begin_, end_;  // elements are iovs_[begin_, end_)
    uint16_t nbases_;       // buffers allocated, in bases_[0, nbases_)
    struct iovec* iovs_;
    IOAlloc* alloc_;
    void** bases_;

    // Not constructed or destroyed freely: IOVectorEntity and new_iovector
    // provide the arrays.
    iovector(uint16_t capacity, uint16_t reserve_front, struct iovec* iovs, IOAlloc* alloc,
             void** bases)
        : capacity_(capacity),
          begin_(reserve_front <= capacity ? reserve_front : capacity),
          end_(begin_),
          nbases_(0),
          iovs_(iovs),
          alloc_(alloc),
          bases_(bases) {}
    ~iovector() { dispose(); }

    template <typename F>
    size_t consume_front(F&& f) {
        auto v = view();
        auto ret = f(v);
        begin_ = (uint16_t)(end_ - v.iovcnt);
        return ret;
    }
    template <typename F>
    size_t consume_back(F&& f) {
        auto v = view();
        auto ret = f(v);
        end_ = (uint16_t)(begin_ + v.iovcnt);
        return ret;
    }

    void dispose();
    void* do_malloc(size_t size);
    // Allocates between 1 and `size` bytes (as the IOAlloc decides).
    struct iovec new_iovec(size_t size);
    // Frees the buffers allocated after the first `nbases` (undo of a push).
    void release_bases_after(uint16_t nbases);
    struct iovec* view_room(iovector_view* iov);
};

// An iovector with its arrays inline. RESERVE_FRONT counts in CAPACITY.
template <uint16_t CAPACITY, uint16_t RESERVE_FRONT>
class IOVectorEntity : public iovector {
public:
    struct iovec iovs[CAPACITY];
    struct IOAlloc allocator;
    void* bases[CAPACITY];

    enum { capacity = CAPACITY };
    enum { default_reserve_front = RESERVE_FRONT };

    explicit IOVectorEntity(uint16_t reserve_front = RESERVE_FRONT)
        : iovector(CAPACITY, reserve_front, iovs, &allocator, bases) {}

    explicit IOVectorEntity(const struct iovec* iov, int iovcnt,
                            uint16_t reserve_front = RESERVE_FRONT)
        : iovector(CAPACITY, reserve_front, iovs, &allocator, bases) {
        if (iovcnt < 0 || iovcnt > CAPACITY) {
            errno = ENOBUFS;
            return;
        }
        if (begin_ + iovcnt > CAPACITY) begin_ = end_ = (uint16_t)(CAPACITY - iovcnt);
        assign(iov, (uint16_t)iovcnt);
    }

    explicit IOVectorEntity(IOAlloc allocator, uint16_t reserve_front = RESERVE_FRONT)
        : iovector(CAPACITY, reserve_front, iovs, &this->allocator, bases), allocator(allocator) {}

    IOVectorEntity(const IOVectorEntity& rhs) = delete;
    IOVectorEntity(const iovector& rhs) = delete;
    void operator=(const IOVectorEntity& rhs) = delete;
    void operator=(const iovector& rhs) = delete;

    IOVectorEntity(IOVectorEntity&& rhs) : IOVectorEntity() { iovector::operator=(std::move(rhs)); }
    IOVectorEntity(iovector&& rhs) : IOVectorEntity() { iovector::operator=(std::move(rhs)); }
    void operator=(IOVectorEntity&& rhs) { iovector::operator=(std::move(rhs)); }
    void operator=(iovector&& rhs) { iovector::operator=(std::move(rhs)); }
};

typedef IOVectorEntity<32, 4> IOVector;

// A heap iovector of `capacity` slots, the first `reserve_front` of them kept
// free for push_front; nullptr if malloc fails. Free it with delete_iovector.
iovector* new_iovector(uint16_t capacity, uint16_t reserve_front = 0);
void delete_iovector(iovector* ptr);

// A copy of an iovec[]: inline when it has at most INLINE_CAPACITY elements,
// on the heap otherwise (ptr is nullptr if that allocation fails).
template <size_t INLINE_CAPACITY>
class SmartCloneIOV {
public:
    iovec iov[INLINE_CAPACITY];
    iovec* ptr;

    SmartCloneIOV(const iovec* iov, int iovcnt) {
        if (iovcnt < 0) iovcnt = 0;
        ptr = (size_t)iovcnt <= INLINE_CAPACITY ? this->iov : new (std::nothrow) iovec[iovcnt];
        if (ptr) memcpy(ptr, iov, iovcnt * sizeof(*iov));
    }
    ~SmartCloneIOV() {
        if (ptr != iov) delete[] ptr;
    }
    SmartCloneIOV(const SmartCloneIOV&) = delete;
    SmartCloneIOV& operator=(const SmartCloneIOV&) = delete;
};
