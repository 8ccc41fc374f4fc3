// The body of an HTTP/2 stream as a Message reads it, on both sides (the server's request, the
// client's response): the read that reaches the body's end takes the stream's trailers. For a
// body with a Content-Length, whose reader stops at its last byte, the read of that byte waits
// for the stream's end, so that the trailers are in when the reader stops.
#pragma once

#include <cerrno>
#include <cstdint>
#include <sys/types.h>

#include <photon/net/http/headers.h>

namespace photon {
namespace net {
namespace http {

struct H2BodyEnd {
    int64_t expect = -1;  // the body's Content-Length, or -1
    uint64_t got = 0;

    void reset(int64_t length = -1) { expect = length, got = 0; }

    // Stream: http2::Stream or http2::ClientStream. Trailers go to *trailers (if not null).
    template <typename Stream>
    ssize_t read(Stream* s, void* buf, size_t count, uint64_t timeout, Headers* trailers) {
        ssize_t n = s->read(buf, count, timeout);
        if (n > 0) got += n;
        bool end = n == 0 || (n > 0 && expect >= 0 && got == (uint64_t)expect);
        if (n > 0 && end) {
            char extra;
            ssize_t r = s->read(&extra, 1, timeout);
            if (r != 0) {
                if (r > 0) errno = EPROTO;  // more than its Content-Length: the check resets it
                return n;                   // the bytes first; the reader sees any error next
            }
        }
        if (end && trailers) {
            trailers->clear();
            for (auto& f : s->trailers()) trailers->insert(f.name, f.value);
        }
        return n;
    }
};

}  // namespace http
}  // namespace net
}  // namespace photon
