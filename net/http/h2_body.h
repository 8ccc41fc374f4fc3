// A Message's fields and body on an HTTP/2 stream, on both sides. h2_body_end: the body as a
// Message reads it (the server's request, the client's response): the read that reaches the
// body's end takes the stream's trailers. For a body with a Content-Length, whose reader stops
// at its last byte, the read of that byte waits for the stream's end, so that the trailers are
// in when the reader stops. append_h2_fields: a Message's headers or trailers as a header block.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include <photon/net/http/headers.h>

#include "../http2/hpack.h"
#include "../http2/request_check.h"

namespace photon {
namespace net {
namespace http {

struct h2_body_end {
    int64_t expect = -1;  // the body's Content-Length, or -1
    uint64_t got = 0;

    void reset(int64_t length = -1) { expect = length, got = 0; }

    // Stream: http2::Stream or http2::client_stream. Trailers go to *trailers (if not null).
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

// Appends h's fields to *out: names in lower case, neither pseudo-fields nor connection-specific
// ones (RFC 9113 8.2.2). Reuses the strings of the fields *out already has beyond its size.
inline void append_h2_fields(const Headers& h, std::vector<http2::header_field>* out) {
    size_t n = out->size();
    out->resize(n + h.field_count());
    for (auto f : h) {
        auto& field = (*out)[n];
        field.name.assign(f.first.data(), f.first.size());
        for (auto& ch : field.name)
            if (ch >= 'A' && ch <= 'Z') ch = (char)(ch | 0x20);
        if (field.name.empty() || field.name[0] == ':' || http2::connection_specific(field.name))
            continue;
        field.value.assign(f.second.data(), f.second.size());
        field.never_index = false;
        n++;
    }
    out->resize(n);
}

}  // namespace http
}  // namespace net
}  // namespace photon
