// RingBuffer: the byte copies in and out of the ring, split where the ring wraps.
#include <photon/common/ring.h>

#include <algorithm>
#include <climits>
#include <cstring>

ssize_t RingBuffer::do_read(void*& buf, uint64_t& count, uint64_t end) {
    if (count == 0) return 0;
    uint64_t len = std::min<uint64_t>(count, end - m_begin);
    memcpy(buf, m_buf + m_begin, len);
    buf = (char*)buf + len;
    count -= len;
    m_begin += len;
    return len;
}

ssize_t RingBuffer::do_write(const void*& buf, uint64_t& count, uint64_t end) {
    if (count == 0) return 0;
    uint64_t len = std::min<uint64_t>(count, end - m_end);
    memcpy(m_buf + m_end, buf, len);
    buf = (const char*)buf + len;
    count -= len;
    m_end += len;
    return len;
}

ssize_t RingBuffer::do_read(void* buf, size_t count) {
    if ((!buf && count) || count > SSIZE_MAX) return errno = EINVAL, -1;
    uint64_t left = count;
    while (left > 0) {
        if (ensure_not_empty() < 0) return left == count ? -1 : (ssize_t)(count - left);
        // The readable bytes run to m_end, or to the ring's end when they wrap.
        do_read(buf, left, m_begin < m_end ? m_end : m_capacity);
        if (m_begin == m_capacity) m_begin = 0;
        m_cond_pop.notify_all();
    }
    return count;
}

ssize_t RingBuffer::do_write(const void* buf, size_t count) {
    if ((!buf && count) || count > SSIZE_MAX) return errno = EINVAL, -1;
    uint64_t left = count;
    while (left > 0) {
        if (ensure_not_full() < 0) return left == count ? -1 : (ssize_t)(count - left);
        // The free bytes run to just before m_begin (one slot stays empty to tell full from
        // empty), or to the ring's end when they wrap.
        if (m_end < m_begin) {
            do_write(buf, left, m_begin - 1);
        } else {
            do_write(buf, left, m_begin == 0 ? m_capacity - 1 : m_capacity);
            if (m_end == m_capacity) m_end = 0;
        }
        m_cond_push.notify_all();
    }
    return count;
}

namespace {

bool valid_iov(const struct iovec* iov, int iovcnt) {
    if (iovcnt < 0 || (iovcnt > 0 && !iov)) return false;
    for (int i = 0; i < iovcnt; i++)
        if (!iov[i].iov_base && iov[i].iov_len) return false;
    return true;
}

// Runs op over the iovecs while each is transferred in full; the total, or op's -1 if nothing
// moved at all.
template <typename Op>
ssize_t each_iov(const struct iovec* iov, int iovcnt, Op op) {
    if (!valid_iov(iov, iovcnt)) return errno = EINVAL, -1;
    ssize_t total = 0;
    for (int i = 0; i < iovcnt; i++) {
        ssize_t ret = op(iov[i].iov_base, iov[i].iov_len);
        if (ret < 0) return total ? total : ret;
        total += ret;
        if ((size_t)ret < iov[i].iov_len) break;  // interrupted: later bytes must not skip a gap
    }
    return total;
}

}  // namespace

ssize_t RingBuffer::readv(const struct iovec* iov, int iovcnt) {
    photon::scoped_lock lock(m_read_lock);
    return each_iov(iov, iovcnt, [this](void* b, size_t n) { return do_read(b, n); });
}

ssize_t RingBuffer::writev(const struct iovec* iov, int iovcnt) {
    photon::scoped_lock lock(m_write_lock);
    return each_iov(iov, iovcnt, [this](void* b, size_t n) { return do_write(b, n); });
}
