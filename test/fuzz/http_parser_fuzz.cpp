// libFuzzer target: the HTTP request parser and body decoders, the chunked
// decoder alone, the response parser and URL decoding, over arbitrary bytes.
// Besides crashes and over-reads (ASan), it traps when delivering the same
// bytes in different pieces changes the outcome (the parser must be
// incremental) or when an accepted head carries bytes that would let a
// forwarded copy be read differently (CR, LF, NUL).
#include <cstdint>
#include <cstdlib>
#include <string>

#include <photon/common/alog.h>
#include <photon/net/http/message.h>
#include <photon/net/http/url.h>

#include "mem_stream.h"

using namespace photon::net::http;
using photon_test::MemStream;

namespace {

Limits small_limits() {
    Limits l;
    l.max_request_line = 512;
    l.max_field_line = 512;
    l.max_head_size = 2048;
    l.max_fields = 16;
    l.max_body_size = 1 << 16;
    l.max_chunk_line = 64;
    l.max_trailer_size = 512;
    return l;
}

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool clean(std::string_view s) {
    for (char c : s)
        if (c == '\r' || c == '\n' || c == '\0') return false;
    return true;
}

// Serves up to 8 pipelined requests; returns a transcript of what was seen.
std::string serve_requests(const std::string& in, size_t piece) {
    MemStream s(in, piece, 99);
    InputBuffer buf(&s, 4096);
    Request req(small_limits());
    req.reset(&buf, &s);
    std::string log;
    for (int i = 0; i < 8; i++) {
        int r = req.receive_header();
        log += "H" + std::to_string(r) + parse_error_str(req.parse_error()) + "\n";
        if (r < 0) break;
        check(clean(req.target()) && req.target().find(' ') == req.target().npos);
        for (auto f : req.headers) check(clean(f.first) && clean(f.second));
        check(req.framing() != Framing::UntilClose);
        char body[300];
        ssize_t n;
        size_t total = 0;
        while ((n = req.read(body, sizeof(body))) > 0) {
            log.append(body, n);
            total += n;
        }
        check(total <= in.size());
        log += "B" + std::to_string(n) + parse_error_str(req.parse_error()) + "\n";
        if (n < 0) break;
    }
    return log;
}

std::string decode_chunked(const std::string& in, size_t piece) {
    MemStream s(in, piece, 7);
    InputBuffer buf(&s, 1024);
    Limits l = small_limits();
    Headers trailers;
    BodyReader r;
    r.reset(&buf, Framing::Chunked, 0, &l, &trailers);
    std::string out;
    char b[64];
    ssize_t n;
    while ((n = r.read_some(b, sizeof(b))) > 0) out.append(b, n);
    out += "|" + std::to_string(n) + parse_error_str(r.error());
    return out;
}

void parse_response(const std::string& in) {
    MemStream s(in, 3);
    InputBuffer buf(&s, 4096);
    Response resp(small_limits());
    resp.reset(&buf, &s);
    if (resp.receive_header(Verb::GET) == 0) {
        check(resp.status_code() >= 100 && resp.status_code() <= 599);
        (void)resp.skip_body();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static bool quiet = (set_log_output(log_output_null), true);
    (void)quiet;
    if (size == 0) return 0;
    size_t piece = 1 + data[0] % 16;  // first byte: the piece size of the slow run
    std::string in((const char*)data + 1, size - 1);

    check(serve_requests(in, SIZE_MAX) == serve_requests(in, piece));
    check(decode_chunked(in, SIZE_MAX) == decode_chunked(in, piece));
    parse_response(in);

    if (in.size() < 4096) {
        URL u;
        if (u.from_string(in)) check(clean(u.host()) && u.target().size() >= 1);
        std::string out;
        if (url_unescape(in, &out) == 0) check(url_escape(out) == url_escape(url_unescape(in)));
    }
    return 0;
}
