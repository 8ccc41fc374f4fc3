// InputBuffer: the buffered read side of a connection.
#include <cstring>

#include <photon/net/http/body.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {
namespace http {

ssize_t receive_some(IStream* stream, void* buf, size_t count) {
    // Socket read() waits for the whole count; a head or a chunk needs what
    // has arrived, so sockets use recv().
    if (auto s = dynamic_cast<ISocketStream*>(stream)) return s->recv(buf, count);
    return stream->read(buf, count);
}

InputBuffer::InputBuffer(IStream* stream, size_t capacity)
    : buf_(new char[capacity]), cap_(capacity), stream_(stream) {}

void InputBuffer::reset(IStream* stream) {
    stream_ = stream;
    begin_ = end_ = 0;
}

ssize_t InputBuffer::fill() {
    if (begin_ == end_) begin_ = end_ = 0;
    if (end_ == cap_ && begin_ > 0) {  // compact: keep offsets relative to data()
        memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
    }
    if (end_ == cap_) {
        errno = ENOBUFS;
        return -1;
    }
    ssize_t n = receive_some(stream_, buf_.get() + end_, cap_ - end_);
    if (n > 0) end_ += (size_t)n;
    return n;
}

ssize_t InputBuffer::read_some(void* buf, size_t count) {
    size_t n = size() < count ? size() : count;
    if (n == 0) return count ? receive_some(stream_, buf, count) : 0;
    memcpy(buf, buf_.get() + begin_, n);
    begin_ += n;
    return (ssize_t)n;
}

}  // namespace http
}  // namespace net
}  // namespace photon
