// libFuzzer target: an HTTP/2 server connection (net/http2/: frames, HPACK,
// the connection core, the server side) fed the input as its client's bytes,
// or a client connection fed it as its server's.
// Input: byte 0, the largest piece a read returns (1 + byte); byte 1, flags:
// 0x1 the client preface is put before the rest (server), 0x2 small windows
// (4 KiB a stream, the connection's own), 0x4 at most 2 streams at once and a
// 1 KiB header list limit, 0x8 the client side instead (three requests at
// once: GET /, POST /echo with a body, GET /trailers; each response read to
// its end). Every read and write yields, so the handlers (which echo the
// body; /reset, /trailers and /none do what they say) or the requests run
// between the reader's frames. What we write is checked as the peer would:
// each frame well-formed and within the largest frame size the input
// announced, header blocks in one piece and decodable, DATA within the flow
// control windows the input granted, and nothing on a stream after we ended
// or reset it but RST_STREAM. ASan/UBSan catch the rest.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include "../../net/http2/frame.h"
#include "../../net/http2/hpack.h"
#include "../../net/http2/client_connection.h"
#include "../../net/http2/server_connection.h"
#include "socket_stub.h"

using namespace photon;
using namespace photon::net::http2;

namespace {

void check(bool ok) {
    if (!ok) abort();
}

// A socket whose reads hand out the input in pieces and whose writes are
// kept; each call yields first, as a socket's wait would.
class FuzzSock : public photon_test::SocketStub {
public:
    FuzzSock(std::string in, size_t piece) : in_(std::move(in)), piece_(piece) {}
    std::string out;

    ssize_t recv(void* b, size_t n, int = 0) override {
        thread_yield();
        n = std::min({n, in_.size() - pos_, piece_});
        memcpy(b, in_.data() + pos_, n);
        pos_ += n;
        return (ssize_t)n;
    }
    ssize_t recv(const iovec* v, int n, int f = 0) override {
        return n ? recv(v[0].iov_base, v[0].iov_len, f) : 0;
    }
    ssize_t read(void* b, size_t n) override {
        size_t got = 0;
        while (got < n) {
            ssize_t r = recv((char*)b + got, n - got);
            if (r <= 0) break;
            got += r;
        }
        return (ssize_t)got;
    }
    ssize_t readv(const iovec* v, int n) override {
        return n ? read(v[0].iov_base, v[0].iov_len) : 0;
    }
    ssize_t write(const void* b, size_t n) override {
        thread_yield();
        out.append((const char*)b, n);
        return (ssize_t)n;
    }
    ssize_t writev(const iovec* v, int n) override {
        thread_yield();
        ssize_t t = 0;
        for (int i = 0; i < n; ++i) {
            out.append((const char*)v[i].iov_base, v[i].iov_len);
            t += v[i].iov_len;
        }
        return t;
    }

private:
    std::string in_;
    size_t pos_ = 0, piece_;
};

void handle(Stream& s) {
    std::string_view path = s.field(":path");
    if (path == "/none") return;  // a 500 is sent for it
    char buf[8192];
    std::string body;
    ssize_t n;
    while ((n = s.read(buf, sizeof(buf))) > 0) body.append(buf, n);
    if (path == "/reset") return s.reset(ErrorCode::CANCEL);
    if (s.respond({{":status", "200"}, {"x-path", std::string(path)}}) < 0) return;
    if (!body.empty() && s.write(body.data(), body.size()) < 0) return;
    if (path == "/trailers") {
        std::vector<header_field> t = {{"x-length", std::to_string(body.size())}};
        s.finish(&t);
    } else {
        s.finish();
    }
}

// What the client's bytes allow the server: upper bounds, whatever the
// order the frames were taken in.
struct Allowance {
    uint32_t max_frame = kDefaultMaxFrameSize;
    uint64_t connection = kDefaultWindow;
    uint64_t initial = kDefaultWindow;
    std::map<uint32_t, uint64_t> stream;  // WINDOW_UPDATE increments
};

Allowance allowance(const std::string& in, bool client) {
    Allowance a;
    size_t p = client                                                      ? 0
               : in.compare(0, kClientPreface.size(), kClientPreface) == 0 ? kClientPreface.size()
                                                                           : SIZE_MAX;
    while (p != SIZE_MAX && p + kFrameHeaderSize <= in.size()) {
        auto h = read_frame_header((const uint8_t*)&in[p]);
        if (p + kFrameHeaderSize + h.length > in.size()) break;
        auto d = (const uint8_t*)&in[p + kFrameHeaderSize];
        if (h.type == (uint8_t)frame_type::WINDOW_UPDATE && h.length == 4) {
            uint32_t inc = ((uint32_t)d[0] << 24 | d[1] << 16 | d[2] << 8 | d[3]) & 0x7fffffff;
            if (h.stream == 0)
                a.connection += inc;
            else
                a.stream[h.stream] += inc;
        } else if (h.type == (uint8_t)frame_type::SETTINGS) {
            for (size_t i = 0; i + 6 <= h.length; i += 6) {
                uint16_t id = (uint16_t)(d[i] << 8 | d[i + 1]);
                uint32_t v = (uint32_t)d[i + 2] << 24 | d[i + 3] << 16 | d[i + 4] << 8 | d[i + 5];
                if (id == (uint16_t)setting_id::MAX_FRAME_SIZE)
                    a.max_frame = std::max(a.max_frame, v);
                if (id == (uint16_t)setting_id::INITIAL_WINDOW_SIZE)
                    a.initial = std::max<uint64_t>(a.initial, v);
            }
        }
        p += kFrameHeaderSize + h.length;
    }
    return a;
}

// Reads what we wrote as the peer would.
void check_output(const std::string& out, const Allowance& a, bool client) {
    hpack_decoder dec(4096);
    std::map<uint32_t, uint64_t> sent;  // DATA bytes per stream
    std::map<uint32_t, int> ended;      // 1: END_STREAM sent, 2: RST_STREAM sent
    uint64_t total = 0;
    uint32_t continuing = 0;
    std::string block;
    size_t p = 0;
    if (client) {
        check(out.compare(0, kClientPreface.size(), kClientPreface) == 0);
        p = kClientPreface.size();
    }
    bool first = true;
    while (p + kFrameHeaderSize <= out.size()) {
        auto h = read_frame_header((const uint8_t*)&out[p]);
        check(h.length <= a.max_frame);
        check(p + kFrameHeaderSize + h.length <= out.size());  // frames are written whole
        Frame f;
        frame_error err;
        check(parse_frame(h, (const uint8_t*)&out[p + kFrameHeaderSize], &f, &err));
        p += kFrameHeaderSize + h.length;
        if (first) check(f.type() == frame_type::SETTINGS && !(h.flags & flags::ACK));
        first = false;
        check(!continuing || (f.type() == frame_type::CONTINUATION && h.stream == continuing));
        if (h.stream && f.type() != frame_type::RST_STREAM) check(ended[h.stream] == 0);
        switch (f.type()) {
            case frame_type::HEADERS:
            case frame_type::CONTINUATION:
                check(f.type() == frame_type::HEADERS || continuing);
                if (f.type() == frame_type::HEADERS) block.clear();
                block.append(f.data);
                continuing = (h.flags & flags::END_HEADERS) ? 0 : h.stream;
                if (!continuing) {
                    std::vector<header_field> fields;
                    check(dec.decode((const uint8_t*)block.data(), block.size(), &fields) ==
                          hpack_decoder::kOk);
                }
                break;
            case frame_type::DATA:
                sent[h.stream] += h.length;
                total += h.length;
                check(total <= a.connection);
                check(sent[h.stream] <=
                      a.initial + (a.stream.count(h.stream) ? a.stream.at(h.stream) : 0));
                break;
            case frame_type::RST_STREAM:
                ended[h.stream] = 2;
                break;
            case frame_type::PUSH_PROMISE:
                check(false);
                break;
            default:
                break;
        }
        if ((f.type() == frame_type::HEADERS || f.type() == frame_type::DATA) &&
            (h.flags & flags::END_STREAM))
            ended[h.stream] = 1;
    }
    check(p == out.size());
}

// The client side: three requests at once, each response read to its end.
void exchange(client_connection* c, int i) {
    static const char* paths[] = {"/", "/echo", "/trailers"};
    bool body = i == 1;
    auto s = c->request({{":method", body ? "POST" : "GET"},
                         {":scheme", "http"},
                         {":authority", "fuzz"},
                         {":path", paths[i]}},
                        !body);
    if (!s) return;
    if (body && s->write("hello, fuzz", 11) == 11) s->finish();
    if (s->response() >= 0) {
        char buf[4096];
        while (s->read(buf, sizeof(buf)) > 0) {
        }
    }
    c->release(s);
}

void run_client(FuzzSock* sock, const connection_options& opt) {
    client_connection c(sock, opt);
    if (c.start() < 0) return;
    join_handle* j[3] = {};
    for (int i = 0; i < 3; i++)
        if (auto th = thread_create11(exchange, &c, i)) j[i] = thread_enable_join(th);
    for (auto h : j)
        if (h) thread_join(h);
}

void init_once() {
    static bool done;
    if (done) return;
    done = true;
    set_log_output_level(ALOG_FATAL);
    photon::init(INIT_EVENT_EPOLL, INIT_IO_NONE);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    init_once();
    size_t piece = 1 + data[0];
    uint8_t fl = data[1];
    std::string in;
    if (fl & 0x1) in.assign(kClientPreface.data(), kClientPreface.size());
    in.append((const char*)data + 2, size - 2);
    connection_options opt;
    if (fl & 0x2) {
        opt.initial_window_size = 4096;
        opt.connection_window = kDefaultWindow;
    }
    if (fl & 0x4) {
        opt.max_concurrent_streams = 2;
        opt.max_header_list_size = 1024;
    }
    bool client = fl & 0x8;
    if (client) in.assign((const char*)data + 2, size - 2);
    FuzzSock sock(in, piece);
    if (client) {
        run_client(&sock, opt);
    } else {
        server_connection c(&sock, opt, handle);
        c.serve();
    }
    check_output(sock.out, allowance(in, client), client);
    return 0;
}
