// BodyReader: Content-Length, chunked (RFC 9112 7.1) and until-close bodies.
#include <cerrno>

#include <photon/net/http/body.h>
#include <photon/net/http/parser.h>

#include "hex.h"

namespace photon {
namespace net {
namespace http {

void BodyReader::reset(InputBuffer* in, Framing framing, uint64_t content_length,
                       const Limits* limits, Headers* trailers) {
    in_ = in;
    limits_ = limits;
    trailers_ = trailers;
    if (trailers_) trailers_->clear();
    framing_ = framing;
    error_ = ParseError::None;
    remaining_ = content_length;
    received_ = 0;
    switch (framing) {
        case Framing::None:
            state_ = State::Done;
            break;
        case Framing::ContentLength:
            state_ = content_length ? State::Data : State::Done;
            break;
        case Framing::Chunked:
            state_ = State::ChunkSize;
            break;
        case Framing::UntilClose:
            state_ = State::Data;
            break;
    }
}

ssize_t BodyReader::fail(ParseError e) {
    error_ = e;
    state_ = State::Failed;
    errno = EPROTO;
    return -1;
}

ssize_t BodyReader::read_line(std::string_view* line, size_t max, ParseError too_long) {
    for (size_t i = 0;;) {
        std::string_view d = in_->data();
        for (; i < d.size() && i <= max + 1; i++) {        // max + CRLF
            if (d[i] == '\r' && i + 1 == d.size()) break;  // judge it with the next byte
            if (d[i] == '\r' && d[i + 1] != '\n') return fail(ParseError::BareCR);
            if (d[i] != '\n') continue;
            if (i == 0 || d[i - 1] != '\r') return fail(ParseError::BareLF);
            *line = d.substr(0, i - 1);
            return 0;
        }
        if (i > max + 1) return fail(too_long);  // not for lack of bytes: same for any split
        ssize_t n = in_->fill();
        if (n < 0) return -1;
        if (n == 0) return fail(ParseError::Truncated);
    }
}

// chunk-size [ chunk-ext ] CRLF; extensions are checked for bytes and
// length, then ignored.
ssize_t BodyReader::read_chunk_size() {
    std::string_view line;
    if (read_line(&line, limits_->max_chunk_line, ParseError::ChunkLineTooLong) < 0) return -1;
    size_t digits = 0;
    uint64_t size = 0;
    for (; digits < line.size() && hexval(line[digits]) >= 0; digits++) {
        if (digits == 16) return fail(ParseError::BadChunk);  // would overflow 64 bits
        size = size * 16 + hexval(line[digits]);
    }
    std::string_view ext = line.substr(digits);
    while (!ext.empty() && (ext[0] == ' ' || ext[0] == '\t')) ext.remove_prefix(1);
    bool has_ext = digits < line.size();  // BWS alone is not an extension
    if (digits == 0 || (has_ext && (ext.empty() || ext[0] != ';')))
        return fail(ParseError::BadChunk);
    for (unsigned char c : ext)
        if ((c < 0x20 && c != '\t') || c == 0x7f) return fail(ParseError::BadChunk);
    in_->consume(line.size() + 2);
    // The same bound as a Content-Length's, for the chunk and the total.
    if (size > kMaxBodyLength - received_) return fail(ParseError::BadChunk);
    if (size > limits_->max_body_size - received_) return fail(ParseError::BodyTooLarge);
    remaining_ = size;
    state_ = size ? State::Data : State::Trailers;
    return 0;
}

ssize_t BodyReader::read_trailers() {
    size_t total = 0;
    for (uint32_t n = 0;; n++) {
        std::string_view line;
        if (read_line(&line, limits_->max_field_line, ParseError::TrailersTooLarge) < 0) return -1;
        total += line.size() + 2;
        if (total > limits_->max_trailer_size) return fail(ParseError::TrailersTooLarge);
        if (line.empty()) break;
        if (n >= limits_->max_fields) return fail(ParseError::TrailersTooLarge);
        Headers scratch(1, SIZE_MAX);
        ParseError e = parse_field_line(line, trailers_ ? trailers_ : &scratch);
        if (e == ParseError::HeadTooLarge) e = ParseError::TrailersTooLarge;
        if (e != ParseError::None) return fail(e);
        in_->consume(line.size() + 2);
    }
    in_->consume(2);
    state_ = State::Done;
    return 0;
}

ssize_t BodyReader::read_data(void* buf, size_t count) {
    if (framing_ != Framing::UntilClose && count > remaining_) count = remaining_;
    ssize_t n = in_->read_some(buf, count);
    if (n < 0) return -1;
    if (n == 0) {
        if (framing_ != Framing::UntilClose) return fail(ParseError::Truncated);
        state_ = State::Done;
        return 0;
    }
    received_ += n;
    if (framing_ == Framing::UntilClose) return n;
    remaining_ -= n;
    if (remaining_ == 0) state_ = framing_ == Framing::Chunked ? State::ChunkEnd : State::Done;
    return n;
}

ssize_t BodyReader::read_some(void* buf, size_t count) {
    while (true) {
        switch (state_) {
            case State::Done:
                return 0;
            case State::Failed:
                errno = EPROTO;
                return -1;
            case State::Data:
                return count ? read_data(buf, count) : 0;
            case State::ChunkSize:
                if (read_chunk_size() < 0) return -1;
                break;
            case State::Trailers:
                if (read_trailers() < 0) return -1;
                break;
            case State::ChunkEnd: {  // the CRLF after chunk data
                std::string_view line;
                if (read_line(&line, 0, ParseError::BadChunk) < 0) return -1;
                in_->consume(2);
                state_ = State::ChunkSize;
                break;
            }
        }
    }
}

}  // namespace http
}  // namespace net
}  // namespace photon
