#include <photon/common/iovector.h>

#include <algorithm>
#include <sstream>

#include <photon/common/alog.h>

size_t iovector_view::sum() const {
    size_t s = 0;
    for (int i = 0; i < iovcnt; ++i) s += iov[i].iov_len;
    return s;
}

size_t iovector_view::shrink_to(size_t size) {
    if (size == 0) return iovcnt = 0;
    size_t kept = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (size - kept <= iov[i].iov_len) {
            iov[i].iov_len = size - kept;
            iovcnt = i + 1;
            return size;
        }
        kept += iov[i].iov_len;
    }
    return kept;
}

size_t iovector_view::shrink_less_than(size_t size) {
    if (size == 0) {
        size_t first = iovcnt ? iov[0].iov_len : 0;
        iovcnt = 0;
        return first;
    }
    for (int i = 0; i < iovcnt; ++i) {
        if (size <= iov[i].iov_len) {
            iovcnt = i + 1;
            return iov[i].iov_len - size;
        }
        size -= iov[i].iov_len;
    }
    return 0;
}

namespace {

// Walks `bytes` from one end of a view, calling take(ptr, len) on each piece
// in walking order, consuming what it walked.
template <typename Take>
size_t consume_front(iovector_view& v, size_t bytes, Take&& take) {
    size_t left = bytes;
    while (left && !v.empty()) {
        auto& f = v.front();
        size_t n = std::min(left, f.iov_len);
        if (n) take(f.iov_base, n);
        f.iov_base = (char*)f.iov_base + n;
        f.iov_len -= n;
        left -= n;
        if (f.iov_len == 0) v.pop_front();
    }
    return bytes - left;
}

template <typename Take>
size_t consume_back(iovector_view& v, size_t bytes, Take&& take) {
    size_t left = bytes;
    while (left && !v.empty()) {
        auto& b = v.back();
        size_t n = std::min(left, b.iov_len);
        b.iov_len -= n;
        if (n) take((char*)b.iov_base + b.iov_len, n);
        left -= n;
        if (b.iov_len == 0) v.pop_back();
    }
    return bytes - left;
}

// How many non-empty pieces `bytes` taken from the front (or back) make.
int pieces_front(const iovector_view& v, size_t bytes) {
    int n = 0;
    for (int i = 0; i < v.iovcnt && bytes; ++i) {
        auto len = v.iov[i].iov_len;
        n += len > 0;
        bytes -= std::min(bytes, len);
    }
    return n;
}

int pieces_back(const iovector_view& v, size_t bytes) {
    int n = 0;
    for (int i = v.iovcnt - 1; i >= 0 && bytes; --i) {
        auto len = v.iov[i].iov_len;
        n += len > 0;
        bytes -= std::min(bytes, len);
    }
    return n;
}

}  // namespace

size_t iovector_view::extract_front(size_t bytes) {
    return consume_front(*this, bytes, [](void*, size_t) {});
}

size_t iovector_view::extract_front(size_t bytes, void* buf) {
    auto out = (char*)buf;
    return consume_front(*this, bytes, [&](void* p, size_t n) {
        memcpy(out, p, n);
        out += n;
    });
}

ssize_t iovector_view::extract_front(size_t bytes, iovector_view* iov) {
    if (pieces_front(*this, bytes) > iov->iovcnt) return errno = ENOBUFS, -1;
    int used = 0;
    auto ret = consume_front(*this, bytes, [&](void* p, size_t n) { iov->iov[used++] = {p, n}; });
    iov->iovcnt = used;
    return ret;
}

void* iovector_view::extract_front_continuous(size_t bytes) {
    if (empty() || front().iov_len < bytes) return nullptr;
    void* p = front().iov_base;
    extract_front(bytes);
    return p;
}

size_t iovector_view::extract_back(size_t bytes) {
    return consume_back(*this, bytes, [](void*, size_t) {});
}

size_t iovector_view::extract_back(size_t bytes, void* buf) {
    auto out = (char*)buf + bytes;
    return consume_back(*this, bytes, [&](void* p, size_t n) {
        out -= n;
        memcpy(out, p, n);
    });
}

ssize_t iovector_view::extract_back(size_t bytes, iovector_view* iov) {
    int room = iov->iovcnt;
    if (pieces_back(*this, bytes) > room) return errno = ENOBUFS, -1;
    auto first = iov->iov + room;  // filled backwards, then the view starts at the last one
    auto ret = consume_back(*this, bytes, [&](void* p, size_t n) { *--first = {p, n}; });
    iov->iovcnt = (int)(iov->iov + room - first);
    iov->iov = first;
    return ret;
}

void* iovector_view::extract_back_continuous(size_t bytes) {
    if (empty() || back().iov_len < bytes) return nullptr;
    void* p = (char*)back().iov_base + back().iov_len - bytes;
    extract_back(bytes);
    return p;
}

ssize_t iovector_view::slice(size_t count, off_t offset, iovector_view* iov) const {
    if (!iov || iov->iovcnt <= 0) return errno = ENOBUFS, -1;
    int room = iov->iovcnt, used = 0;
    size_t done = 0;
    size_t skip = offset < 0 ? 0 : (size_t)offset;
    for (int i = 0; i < iovcnt && done < count && used < room; ++i) {
        size_t len = this->iov[i].iov_len;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        size_t n = std::min(len - skip, count - done);
        iov->iov[used++] = {(char*)this->iov[i].iov_base + skip, n};
        done += n;
        skip = 0;
    }
    iov->iovcnt = used;
    return (ssize_t)done;
}

namespace {

// A cursor over a view that does not change it.
struct reader {
    const iovec* cur;
    const iovec* end;
    size_t off = 0;
    reader(const iovector_view& v) : cur(v.iov), end(v.iov + v.iovcnt) { skip_empty(); }
    bool done() const { return cur == end; }
    char* ptr() const { return (char*)cur->iov_base + off; }
    size_t len() const { return cur->iov_len - off; }
    void advance(size_t n) {
        off += n;
        skip_empty();
    }
    void skip_empty() {
        while (cur != end && off >= cur->iov_len) ++cur, off = 0;
    }
};

}  // namespace

size_t iovector_view::memcpy_iov(iovector_view dest, iovector_view src, size_t size) {
    reader d(dest), s(src);
    size_t left = size;
    while (left && !d.done() && !s.done()) {
        size_t n = std::min({left, d.len(), s.len()});
        memcpy(d.ptr(), s.ptr(), n);
        d.advance(n);
        s.advance(n);
        left -= n;
    }
    return size - left;
}

size_t iovector_view::pipe_iov(iovector_view dest, iovector_view& src, size_t size) {
    size_t n = memcpy_iov(dest, src, size);
    return src.extract_front(n);
}

// ---- iovector

int iovector::resize(uint16_t nn) {
    if (begin_ + nn > capacity_) return errno = ENOBUFS, -1;
    end_ = (uint16_t)(begin_ + nn);
    return 0;
}

int iovector::assign(const struct iovec* iovs, uint16_t iovcnt) {
    if (begin_ + iovcnt > capacity_) return errno = ENOBUFS, -1;
    memmove(iovs_ + begin_, iovs, iovcnt * sizeof(*iovs));
    end_ = (uint16_t)(begin_ + iovcnt);
    return 0;
}

size_t iovector::push_front(struct iovec iov) {
    if (begin_ == 0) return errno = ENOBUFS, 0;
    iovs_[--begin_] = iov;
    return iov.iov_len;
}

size_t iovector::push_back(struct iovec iov) {
    if (end_ >= capacity_) return errno = ENOBUFS, 0;
    iovs_[end_++] = iov;
    return iov.iov_len;
}

// Both ends: allocate piece by piece; on any failure free what this call
// allocated and restore the element range.
size_t iovector::push_front(size_t bytes) {
    auto begin0 = begin_;
    auto nbases0 = nbases_;
    for (size_t left = bytes; left;) {
        struct iovec v = begin_ ? new_iovec(left) : (errno = ENOBUFS, ::iovec{nullptr, 0});
        if (!v.iov_len) {
            begin_ = begin0;
            release_bases_after(nbases0);
            return 0;
        }
        left -= v.iov_len;
        iovs_[--begin_] = v;
    }
    // Pieces went in back to front; put them in address order of the bytes.
    std::reverse(iovs_ + begin_, iovs_ + begin0);
    return bytes;
}

size_t iovector::push_back(size_t bytes) {
    auto end0 = end_;
    auto nbases0 = nbases_;
    for (size_t left = bytes; left;) {
        struct iovec v =
            end_ < capacity_ ? new_iovec(left) : (errno = ENOBUFS, ::iovec{nullptr, 0});
        if (!v.iov_len) {
            end_ = end0;
            release_bases_after(nbases0);
            return 0;
        }
        left -= v.iov_len;
        iovs_[end_++] = v;
    }
    return bytes;
}

size_t iovector::pop_front() { return empty() ? 0 : iovs_[begin_++].iov_len; }

size_t iovector::pop_back() { return empty() ? 0 : iovs_[--end_].iov_len; }

size_t iovector::shrink_to(size_t size) {
    return consume_back([&](iovector_view& v) { return v.shrink_to(size); });
}

size_t iovector::truncate(size_t size) {
    size_t have = shrink_to(size);
    if (have == size) return size;
    return have + push_back(size - have);
}

struct iovec* iovector::view_room(iovector_view* iov) {
    if (iov->iovcnt > 0) return iov->iov;
    auto room = (struct iovec*)do_malloc(std::max<size_t>(1, iovcnt()) * sizeof(struct iovec));
    if (room) iov->assign(room, std::max<int>(1, iovcnt()));
    return room;
}

ssize_t iovector::extract_front(size_t bytes, iovector_view* iov) {
    if (!bytes) return 0;
    if (!view_room(iov)) return -1;
    return consume_front([&](iovector_view& v) { return v.extract_front(bytes, iov); });
}

ssize_t iovector::extract_back(size_t bytes, iovector_view* iov) {
    if (!bytes) return 0;
    if (!view_room(iov)) return -1;
    return consume_back([&](iovector_view& v) { return v.extract_back(bytes, iov); });
}

ssize_t iovector::extract_front(size_t bytes, iovector* iov) {
    if (!iov || iov == this) return errno = EINVAL, -1;
    if (!bytes) return 0;
    iovector_view room(iov->iovs_ + iov->begin_, iov->capacity_ - iov->begin_);
    auto ret =
        (ssize_t)consume_front([&](iovector_view& v) { return v.extract_front(bytes, &room); });
    if (ret >= 0) iov->update(room);
    return ret;
}

ssize_t iovector::extract_back(size_t bytes, iovector* iov) {
    if (!iov || iov == this) return errno = EINVAL, -1;
    if (!bytes) return 0;
    iovector_view room(iov->iovs_ + iov->begin_, iov->capacity_ - iov->begin_);
    auto ret =
        (ssize_t)consume_back([&](iovector_view& v) { return v.extract_back(bytes, &room); });
    if (ret >= 0) iov->update(room);
    return ret;
}

void* iovector::extract_front_continuous(size_t bytes) {
    auto v = view();
    if (auto p = v.extract_front_continuous(bytes)) return update(v), p;
    if (v.sum() < bytes) return nullptr;
    auto buf = do_malloc(bytes);
    if (buf) extract_front(bytes, buf);
    return buf;
}

void* iovector::extract_back_continuous(size_t bytes) {
    auto v = view();
    if (auto p = v.extract_back_continuous(bytes)) return update(v), p;
    if (v.sum() < bytes) return nullptr;
    auto buf = do_malloc(bytes);
    if (buf) extract_back(bytes, buf);
    return buf;
}

void iovector::operator=(iovector&& rhs) {
    if (this == &rhs) return;
    uint16_t n = rhs.iovcnt();
    if (n > capacity_ || rhs.nbases_ > capacity_) {
        errno = ENOBUFS;
        return;
    }
    dispose();
    begin_ = std::min<uint16_t>(begin_, (uint16_t)(capacity_ - n));
    end_ = (uint16_t)(begin_ + n);
    memcpy(iovs_ + begin_, rhs.iovec(), n * sizeof(struct iovec));
    *alloc_ = *rhs.alloc_;  // the buffers go back to the allocator that made them
    memcpy(bases_, rhs.bases_, rhs.nbases_ * sizeof(void*));
    nbases_ = rhs.nbases_;
    rhs.nbases_ = 0;
    rhs.clear();
}

ssize_t iovector::slice(size_t count, off_t offset, iovector_view* iov) {
    if (count == 0) return 0;
    if (!view_room(iov)) return 0;
    return view().slice(count, offset, iov);
}

void iovector::dispose() {
    release_bases_after(0);
    clear();
}

void iovector::release_bases_after(uint16_t nbases) {
    while (nbases_ > nbases) alloc_->deallocate(bases_[--nbases_]);
}

void* iovector::do_malloc(size_t size) {
    if (nbases_ >= capacity_) return errno = ENOBUFS, nullptr;
    if (size > INT_MAX) return errno = ENOMEM, nullptr;
    void* p = nullptr;
    int got = alloc_->allocate({(int)size, (int)size}, &p);
    if (got < (int)size || !p) {
        if (got >= 0 && p) alloc_->deallocate(p);
        if (got >= 0) errno = ENOMEM;
        return nullptr;
    }
    bases_[nbases_++] = p;
    return p;
}

struct iovec iovector::new_iovec(size_t size) {
    if (nbases_ >= capacity_) return errno = ENOBUFS, ::iovec{nullptr, 0};
    int want = size > INT_MAX ? INT_MAX : (int)size;
    void* p = nullptr;
    int got = alloc_->allocate({1, want}, &p);
    if (got < 1 || !p) {
        if (got >= 0) errno = ENOMEM;
        return {nullptr, 0};
    }
    bases_[nbases_++] = p;
    return {p, (size_t)std::min(got, want)};
}

void iovector::debug_print() {
    std::ostringstream ss;
    ss << "iovector sum " << sum() << ":";
    for (auto& v : *this) ss << " {" << v.iov_base << ", " << v.iov_len << "}";
    LOG_DEBUG(ss.str().c_str());
}

iovector* new_iovector(uint16_t capacity, uint16_t reserve_front) {
    // One block: the header, the iovec array, the IOAlloc, the bases.
    size_t size =
        sizeof(iovector) + sizeof(iovec) * capacity + sizeof(IOAlloc) + sizeof(void*) * capacity;
    auto mem = (char*)::malloc(size);
    if (!mem) return errno = ENOMEM, nullptr;
    auto iovs = (iovec*)(mem + sizeof(iovector));
    auto alloc = new (iovs + capacity) IOAlloc();
    auto bases = (void**)(alloc + 1);
    return new (mem) iovector(capacity, reserve_front, iovs, alloc, bases);
}

void delete_iovector(iovector* ptr) {
    if (!ptr) return;
    ptr->~iovector();
    ::free(ptr);
}
