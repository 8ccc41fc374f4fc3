// Bodies over a connection: InputBuffer (the read side of a connection,
// shared by the messages that arrive on it, so bytes of a pipelined next
// message stay for it), BodyReader (Content-Length / chunked / until-close
// decoding that never reads past the body) and BodyWriter (the encoders).
// Calls block the calling coroutine on the stream; one reader and one writer
// coroutine per connection.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include <photon/common/stream.h>
#include <photon/net/http/headers.h>
#include <photon/net/http/parser.h>

namespace photon {
namespace net {
namespace http {

// One receive: ISocketStream::recv for sockets (partial transfers), else
// IStream::read, whose short count is taken as "what is there now".
// Bytes, 0 at EOF, -1 with errno.
ssize_t receive_some(IStream* stream, void* buf, size_t count);

class InputBuffer {
public:
    explicit InputBuffer(IStream* stream = nullptr, size_t capacity = 64 * 1024);
    // Rebinds to `stream`, dropping buffered bytes.
    void reset(IStream* stream);
    IStream* stream() const { return stream_; }

    std::string_view data() const { return {buf_.get() + begin_, end_ - begin_}; }
    size_t size() const { return end_ - begin_; }
    size_t capacity() const { return cap_; }
    void consume(size_t n) { begin_ += n < size() ? n : size(); }

    // One receive appended to data(): bytes, 0 at EOF, -1 with errno
    // (ENOBUFS when data() already fills the buffer).
    ssize_t fill();
    // Buffered bytes first, else one receive straight into buf (no copy,
    // and never more than count). Bytes, 0 at EOF, -1 with errno.
    ssize_t read_some(void* buf, size_t count);

private:
    std::unique_ptr<char[]> buf_;
    size_t cap_, begin_ = 0, end_ = 0;
    IStream* stream_;
};

class BodyReader {
public:
    // Starts a body of this framing; trailers of a chunked body go to
    // `trailers` (cleared), never into the head's fields.
    void reset(InputBuffer* in, Framing framing, uint64_t content_length, const Limits* limits,
               Headers* trailers);
    // 1..count body bytes, 0 at the end of the body, -1 with errno: EPROTO
    // with error() set for a malformed or truncated body, or the stream's.
    ssize_t read_some(void* buf, size_t count);
    bool done() const { return state_ == State::Done; }
    ParseError error() const { return error_; }
    uint64_t received() const { return received_; }

private:
    enum class State : uint8_t { Data, ChunkSize, ChunkEnd, Trailers, Done, Failed };
    ssize_t fail(ParseError e);
    // A CRLF-ended line of at most max bytes at the buffer front, or
    // nullptr-like (-1) with error set.
    ssize_t read_line(std::string_view* line, size_t max, ParseError too_long);
    ssize_t read_chunk_size();
    ssize_t read_trailers();
    ssize_t read_data(void* buf, size_t count);

    InputBuffer* in_ = nullptr;
    const Limits* limits_ = nullptr;
    Headers* trailers_ = nullptr;
    Framing framing_ = Framing::None;
    State state_ = State::Done;
    ParseError error_ = ParseError::None;
    uint64_t remaining_ = 0;  // of the body (Content-Length) or of the chunk
    uint64_t received_ = 0;
};

class BodyWriter {
public:
    // Framing::None accepts no bytes; ContentLength exactly content_length.
    // discard: bytes are checked against the framing and counted, never
    // written, and finish() writes nothing (the body of a HEAD answer).
    void reset(IStream* out, Framing framing, uint64_t content_length, bool discard = false);
    // Writes all of it (one chunk when chunked): count, or -1 with errno
    // EMSGSIZE (more than the declared length, or any byte when no body is
    // allowed; nothing is written) or the stream's (a short write is
    // continued, so that the stream reports why it stopped: EPIPE,
    // ECONNRESET, ETIMEDOUT...).
    ssize_t write(const void* buf, size_t count);
    ssize_t writev(const struct iovec* iov, int iovcnt);
    // Ends the body: the last chunk when chunked, followed by `trailers`
    // when given. -1 with errno EPROTO if fewer bytes than declared were
    // written, or the stream's. Idempotent.
    int finish(const Headers* trailers = nullptr);
    Framing framing() const { return framing_; }
    bool finished() const { return finished_; }
    uint64_t written() const { return written_; }

private:
    IStream* out_ = nullptr;
    Framing framing_ = Framing::None;
    uint64_t limit_ = 0, written_ = 0;
    bool finished_ = false;
    bool discard_ = false;
};

}  // namespace http
}  // namespace net
}  // namespace photon
