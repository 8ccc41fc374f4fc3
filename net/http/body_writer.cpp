// BodyWriter: Content-Length and chunked encoders.
#include <cerrno>
#include <cstdio>
#include <vector>

#include <photon/net/http/body.h>

namespace photon {
namespace net {
namespace http {

namespace {
// Writes all of v (n entries, advanced in place): 0, or -1 with errno. A
// stream that moved only part reports why on its next call, so the rest is
// written again: it either goes out or fails with the real errno (EPIPE,
// ECONNRESET, ETIMEDOUT...).
int write_all(IStream* out, struct iovec* v, int n) {
    while (n > 0) {
        ssize_t r = out->writev(v, n);
        if (r < 0) return -1;
        if (r == 0) {  // no progress and no reason: the peer cannot take more
            errno = EPIPE;
            return -1;
        }
        size_t left = (size_t)r;
        for (; n > 0 && left >= v->iov_len; v++, n--) left -= v->iov_len;
        if (n > 0) {
            v->iov_base = (char*)v->iov_base + left;
            v->iov_len -= left;
        }
    }
    return 0;
}
}  // namespace

void BodyWriter::reset(IStream* out, Framing framing, uint64_t content_length, bool discard) {
    out_ = out;
    discard_ = discard;
    framing_ = framing;
    limit_ = content_length;
    written_ = 0;
    finished_ = false;
}

ssize_t BodyWriter::write(const void* buf, size_t count) {
    iovec iov{const_cast<void*>(buf), count};
    return writev(&iov, 1);
}

ssize_t BodyWriter::writev(const struct iovec* iov, int iovcnt) {
    size_t sum = 0;
    for (int i = 0; i < iovcnt; i++) sum += iov[i].iov_len;
    if (sum == 0) return 0;  // an empty chunk would end a chunked body
    bool over = finished_ || framing_ == Framing::None ||
                (framing_ == Framing::ContentLength && sum > limit_ - written_);
    if (over) {
        errno = EMSGSIZE;
        return -1;
    }
    if (discard_) {
        written_ += sum;
        return (ssize_t)sum;
    }
    // Our copy, which write_all advances: chunk head, the bytes, chunk end.
    struct iovec small[16];
    std::vector<struct iovec> big;
    struct iovec* v = small;
    if (iovcnt + 2 > 16) {
        big.resize(iovcnt + 2);
        v = big.data();
    }
    int n = 0;
    char head[24], tail[] = "\r\n";
    if (framing_ == Framing::Chunked)
        v[n++] = {head, (size_t)snprintf(head, sizeof(head), "%zx\r\n", sum)};
    for (int i = 0; i < iovcnt; i++) v[n++] = iov[i];
    if (framing_ == Framing::Chunked) v[n++] = {tail, 2};
    if (write_all(out_, v, n) < 0) return -1;
    written_ += sum;
    return (ssize_t)sum;
}

int BodyWriter::finish(const Headers* trailers) {
    if (finished_) return 0;
    if (discard_) {  // a HEAD answer may declare any length and write none of it
        finished_ = true;
        return 0;
    }
    if (framing_ == Framing::ContentLength && written_ != limit_) {
        errno = EPROTO;  // the peer would wait for the rest
        return -1;
    }
    if (framing_ == Framing::Chunked) {
        std::string last = "0\r\n";
        if (trailers) trailers->serialize(&last);
        last.append("\r\n");
        struct iovec v = {&last[0], last.size()};
        if (write_all(out_, &v, 1) < 0) return -1;
    }
    finished_ = true;
    return 0;
}

}  // namespace http
}  // namespace net
}  // namespace photon
