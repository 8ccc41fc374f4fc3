// BodyWriter: Content-Length and chunked encoders.
#include <cerrno>
#include <cstdio>
#include <vector>

#include <photon/net/http/body.h>

namespace photon {
namespace net {
namespace http {

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
    ssize_t n;
    if (framing_ == Framing::Chunked) {
        char head[24], tail[] = "\r\n";
        int len = snprintf(head, sizeof(head), "%zx\r\n", sum);
        std::vector<iovec> v;
        v.reserve(iovcnt + 2);
        v.push_back({head, (size_t)len});
        v.insert(v.end(), iov, iov + iovcnt);
        v.push_back({tail, 2});
        n = out_->writev(v.data(), (int)v.size());
        if (n < 0) return -1;
        if ((size_t)n != sum + len + 2) {
            errno = EIO;
            return -1;
        }
    } else {
        n = out_->writev(iov, iovcnt);
        if (n < 0) return -1;
        if ((size_t)n != sum) {
            errno = EIO;
            return -1;
        }
    }
    written_ += sum;
    return (ssize_t)sum;
}

int BodyWriter::finish() {
    if (finished_) return 0;
    if (discard_) {  // a HEAD answer may declare any length and write none of it
        finished_ = true;
        return 0;
    }
    if (framing_ == Framing::ContentLength && written_ != limit_) {
        errno = EPROTO;  // the peer would wait for the rest
        return -1;
    }
    if (framing_ == Framing::Chunked && out_->write("0\r\n\r\n", 5) != 5) return -1;
    finished_ = true;
    return 0;
}

}  // namespace http
}  // namespace net
}  // namespace photon
