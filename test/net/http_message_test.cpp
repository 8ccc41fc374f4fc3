// Messages over in-memory streams: every body framing, pipelining, chunked
// round trips, the writers' limits, 100-continue and responses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/http/message.h>

#include "../fuzz/mem_stream.h"

using namespace photon::net::http;
using photon_test::MemStream;

namespace {

std::string read_all(Message& m) {
    std::string body;
    char buf[7];  // small, odd: reads straddle chunk boundaries
    ssize_t n;
    while ((n = m.read(buf, sizeof(buf))) > 0) body.append(buf, n);
    EXPECT_EQ(0, n) << "errno " << errno << " " << parse_error_str(m.parse_error());
    return body;
}

std::string random_bytes(size_t n, std::mt19937& rng) {
    std::string s(n, 0);
    for (auto& c : s) c = (char)rng();
    return s;
}

const size_t kPieces[] = {SIZE_MAX, 1, 2, 5, 64};

}  // namespace

class HttpMessage : public ::testing::Test {
protected:
    void SetUp() override { set_log_output_level(ALOG_ERROR); }
};

TEST_F(HttpMessage, ReadsAContentLengthBodyAndNoMore) {
    for (size_t piece : kPieces) {
        MemStream s("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello worldEXTRA",
                    piece);
        InputBuffer in(&s);
        Request req;
        req.reset(&in, &s);
        ASSERT_EQ(0, req.receive_header());
        EXPECT_EQ(11, req.body_size());
        EXPECT_EQ("hello world", read_all(req));
        EXPECT_TRUE(req.body_done());
        // What follows the body stays buffered or unread for the next message.
        std::string rest;
        char buf[16];
        ssize_t n;
        while ((n = in.read_some(buf, sizeof(buf))) > 0) rest.append(buf, n);
        EXPECT_EQ("EXTRA", rest.substr(rest.size() - 5));
        EXPECT_EQ(5u, rest.size());
    }
}

TEST_F(HttpMessage, ReadsAChunkedBodyWithExtensionsAndTrailers) {
    std::string raw =
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5;name=value\r\nhello\r\n1 ; x\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer-A: 1\r\n\r\n";
    for (size_t piece : kPieces) {
        MemStream s(raw, piece);
        InputBuffer in(&s);
        Request req;
        req.reset(&in, &s);
        ASSERT_EQ(0, req.receive_header());
        EXPECT_EQ(Framing::Chunked, req.framing());
        EXPECT_EQ(-1, req.body_size());
        EXPECT_EQ("hello 0123456789", read_all(req));
        EXPECT_EQ("1", req.trailers["trailer-a"]);
        EXPECT_FALSE(req.headers.has("Trailer-A"));  // never merged into the head
    }
}

TEST_F(HttpMessage, RejectsMalformedChunks) {
    std::string head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    Limits l;
    l.max_chunk_line = 32;
    l.max_trailer_size = 64;
    l.max_body_size = 100;
    struct Case {
        std::string body;
        ParseError want;
    } cases[] = {
        {"5\r\nhelloXX0\r\n\r\n", ParseError::BadChunk},  // no CRLF after data
        {"5\nhello\r\n0\r\n\r\n", ParseError::BareLF},
        {"5\r\nhello\n0\r\n\r\n", ParseError::BareLF},
        {"5\r\nhello\r\n0\r\n\n", ParseError::BareLF},
        {"5\rhello\r\n0\r\n\r\n", ParseError::BareCR},
        {"x\r\n", ParseError::BadChunk},
        {"\r\n", ParseError::BadChunk},
        {"-5\r\n", ParseError::BadChunk},
        {"0x5\r\nhello\r\n", ParseError::BadChunk},
        {"5 \r\nhello\r\n", ParseError::BadChunk},        // whitespace without extension
        {"10000000000000000\r\n", ParseError::BadChunk},  // 17 hex digits: overflow
        {"ffffffffffffffff\r\n", ParseError::BadChunk},   // above kMaxBodyLength
        {"65\r\n", ParseError::BodyTooLarge},             // 101 > 100
        {"5;" + std::string(40, 'e') + "\r\nhello\r\n", ParseError::ChunkLineTooLong},
        {"5;a\x01\r\nhello\r\n", ParseError::BadChunk},
        {"0\r\nX: " + std::string(80, 'v') + "\r\n\r\n", ParseError::TrailersTooLarge},
        {"0\r\n folded\r\n\r\n", ParseError::ObsFold},
        {"0\r\nBad Name: v\r\n\r\n", ParseError::BadFieldName},
        {"5\r\nhel", ParseError::Truncated},
        {"5\r\nhello\r\n", ParseError::Truncated},
    };
    for (auto& c : cases) {
        for (size_t piece : {SIZE_MAX, (size_t)1}) {
            MemStream s(head + c.body, piece);
            InputBuffer in(&s);
            Request req(l);
            req.reset(&in, &s);
            ASSERT_EQ(0, req.receive_header());
            char buf[64];
            ssize_t n;
            while ((n = req.read(buf, sizeof(buf))) > 0) {
            }
            EXPECT_EQ(-1, n) << c.body;
            EXPECT_EQ(EPROTO, errno);
            EXPECT_EQ(c.want, req.parse_error())
                << c.body << " got " << parse_error_str(req.parse_error());
            EXPECT_FALSE(req.keep_alive());
        }
    }
}

// A chunk size (or chunked total) above 2^63-1 is BadChunk (400) whatever
// max_body_size says, as a Content-Length above it is BadContentLength.
TEST_F(HttpMessage, ChunkSizesShareTheContentLengthBound) {
    std::string head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
    struct Case {
        std::string body;
        ParseError want;
    } cases[] = {
        {"8000000000000000\r\n", ParseError::BadChunk},            // 2^63
        {"ffffffffffffffff\r\n", ParseError::BadChunk},            // 2^64-1
        {"1\r\na\r\n7fffffffffffffff\r\n", ParseError::BadChunk},  // total 2^63
        {"7fffffffffffffff\r\nabc", ParseError::Truncated},        // 2^63-1 itself is taken
    };
    for (auto& c : cases) {
        MemStream s(head + c.body, SIZE_MAX);
        InputBuffer in(&s);
        Request req;  // max_body_size UINT64_MAX
        req.reset(&in, &s);
        ASSERT_EQ(0, req.receive_header());
        char buf[64];
        ssize_t n;
        while ((n = req.read(buf, sizeof(buf))) > 0) {
        }
        EXPECT_EQ(-1, n) << c.body;
        EXPECT_EQ(c.want, req.parse_error())
            << c.body << " got " << parse_error_str(req.parse_error());
        if (c.want == ParseError::BadChunk) {
            EXPECT_EQ(400, http_status(req.parse_error()));
        }
    }
    EXPECT_EQ(400, http_status(ParseError::BadContentLength));
    EXPECT_EQ(INT64_MAX, (int64_t)kMaxBodyLength);
}

TEST_F(HttpMessage, ServesThreePipelinedRequestsInOrder) {
    std::string raw =
        "POST /1 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
        "POST /2 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n"
        "GET /3 HTTP/1.1\r\nHost: h\r\n\r\n";
    for (size_t piece : kPieces) {
        MemStream s(raw, piece);
        InputBuffer in(&s);
        Request req;
        req.reset(&in, &s);
        ASSERT_EQ(0, req.receive_header());
        EXPECT_EQ("/1", req.target());
        EXPECT_EQ("abc", read_all(req));
        ASSERT_EQ(0, req.receive_header());
        EXPECT_EQ("/2", req.target());
        EXPECT_EQ("de", read_all(req));
        ASSERT_EQ(0, req.receive_header());
        EXPECT_EQ("/3", req.target());
        EXPECT_EQ("", read_all(req));
        EXPECT_EQ(-1, req.receive_header());
        EXPECT_EQ(ENODATA, errno);
    }
}

TEST_F(HttpMessage, SkipsAnUnreadBodyBeforeTheNextRequest) {
    MemStream s(
        "POST /1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nabcde"
        "GET /2 HTTP/1.1\r\nHost: h\r\n\r\n",
        3);
    InputBuffer in(&s);
    Request req;
    req.reset(&in, &s);
    ASSERT_EQ(0, req.receive_header());
    char c;
    ASSERT_EQ(1, req.read(&c, 1));
    ASSERT_EQ(0, req.receive_header());
    EXPECT_EQ("/2", req.target());
}

TEST_F(HttpMessage, ChunkedRoundTripsWithRandomChunking) {
    std::mt19937 rng(42);
    for (int round = 0; round < 50; round++) {
        std::string body = random_bytes(rng() % 5000, rng);
        MemStream sink("");
        Request out;
        InputBuffer unused(&sink);
        out.reset(&unused, &sink);
        out.verb(Verb::PUT);
        ASSERT_EQ(0, out.target("/obj"));
        ASSERT_EQ(0, out.headers.insert("Host", "h"));
        ASSERT_EQ(0, out.headers.insert("Transfer-Encoding", "chunked"));
        for (size_t pos = 0; pos < body.size();) {
            size_t n = std::min<size_t>(body.size() - pos, 1 + rng() % 700);
            ASSERT_EQ((ssize_t)n, out.write(body.data() + pos, n));
            pos += n;
        }
        ASSERT_EQ(0, out.send());
        MemStream wire(sink.out, 1 + rng() % 100, rng());
        InputBuffer in(&wire);
        Request req;
        req.reset(&in, &wire);
        ASSERT_EQ(0, req.receive_header());
        EXPECT_EQ(Verb::PUT, req.verb());
        EXPECT_EQ(body, read_all(req));
    }
}

TEST_F(HttpMessage, ContentLengthWriterRefusesMoreThanDeclared) {
    MemStream sink("");
    InputBuffer in(&sink);
    Request req;
    req.reset(&in, &sink);
    req.verb(Verb::POST);
    ASSERT_EQ(0, req.target("/"));
    ASSERT_EQ(0, req.headers.content_length(5));
    ASSERT_EQ(3, req.write("abc", 3));
    errno = 0;
    EXPECT_EQ(-1, req.write("def", 3));
    EXPECT_EQ(EMSGSIZE, errno);
    EXPECT_EQ(-1, req.send());  // 2 bytes short
    EXPECT_EQ(EPROTO, errno);
    ASSERT_EQ(2, req.write("de", 2));
    EXPECT_EQ(0, req.send());
    EXPECT_EQ("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde", sink.out);
}

// Takes `room` bytes, then moves part of a write and fails the next one
// with `err`, as a kernel socket reports an error after a partial transfer.
class ShortWriteStream : public MemStream {
public:
    ShortWriteStream(size_t room, int err) : MemStream(""), room_(room), err_(err) {}
    ssize_t writev(const struct iovec* iov, int iovcnt) override {
        if (room_ == 0) {
            errno = err_;
            return -1;
        }
        ssize_t n = 0;
        for (int i = 0; i < iovcnt && room_; i++) {
            size_t k = std::min(room_, iov[i].iov_len);
            out.append((const char*)iov[i].iov_base, k);
            room_ -= k;
            n += k;
        }
        return n;
    }
    ssize_t write(const void* buf, size_t count) override {
        struct iovec iov = {const_cast<void*>(buf), count};
        return writev(&iov, 1);
    }

private:
    size_t room_;
    int err_;
};

TEST_F(HttpMessage, BodyWriterReportsTheStreamsErrnoAfterAShortWrite) {
    for (int err : {EPIPE, ECONNRESET}) {
        for (Framing f : {Framing::ContentLength, Framing::Chunked}) {
            ShortWriteStream s(10, err);
            BodyWriter w;
            w.reset(&s, f, 100);
            errno = 0;
            EXPECT_EQ(-1, w.write(std::string(50, 'x').data(), 50));
            EXPECT_EQ(err, errno);  // not EIO
            EXPECT_EQ(10u, s.out.size());
        }
    }
    ShortWriteStream s(1000, EPIPE);  // short writes that go on complete
    BodyWriter w;
    w.reset(&s, Framing::Chunked, 0);
    std::string a(30, 'a'), b(40, 'b');
    struct iovec iov[2] = {{&a[0], a.size()}, {&b[0], b.size()}};
    EXPECT_EQ(70, w.writev(iov, 2));
    EXPECT_EQ(0, w.finish());
    EXPECT_EQ("46\r\n" + a + b + "\r\n0\r\n\r\n", s.out);
}

TEST_F(HttpMessage, RequestWithoutLengthTakesNoBody) {
    MemStream sink("");
    InputBuffer in(&sink);
    Request req;
    req.reset(&in, &sink);
    EXPECT_EQ(-1, req.send());  // no verb, no target yet
    EXPECT_EQ(EINVAL, errno);
    req.verb(Verb::GET);
    ASSERT_EQ(0, req.target("/x?y"));
    EXPECT_EQ(-1, req.target("/a b"));
    EXPECT_EQ(-1, req.write("a", 1));
    EXPECT_EQ(EMSGSIZE, errno);
    ASSERT_EQ(0, req.send());
    EXPECT_EQ("GET /x?y HTTP/1.1\r\n\r\n", sink.out);
}

TEST_F(HttpMessage, SendsContinueOnFirstBodyRead) {
    MemStream s(
        "PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok");
    InputBuffer in(&s);
    Request req;
    req.reset(&in, &s);
    ASSERT_EQ(0, req.receive_header());
    EXPECT_TRUE(req.expect_continue());
    EXPECT_EQ("", s.out);
    EXPECT_EQ("ok", read_all(req));
    EXPECT_EQ("HTTP/1.1 100 Continue\r\n\r\n", s.out);
}

TEST_F(HttpMessage, ResponseChoosesFraming) {
    MemStream sink("");
    InputBuffer in(&sink);
    Response resp;
    resp.reset(&in, &sink);
    ASSERT_EQ(0, resp.set_result(404));
    EXPECT_EQ("Not Found", resp.status_message());
    ASSERT_EQ(3, resp.write("abc", 3));
    ASSERT_EQ(0, resp.send());
    EXPECT_EQ("HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
              sink.out);

    sink.out.clear();
    resp.reset(&in, &sink);
    resp.for_request(Verb::GET, 0);
    ASSERT_EQ(0, resp.set_result(200, "Fine"));
    ASSERT_EQ(2, resp.write("hi", 2));
    ASSERT_EQ(0, resp.send());
    EXPECT_EQ("HTTP/1.1 200 Fine\r\nConnection: close\r\n\r\nhi", sink.out);
    EXPECT_FALSE(resp.keep_alive());

    sink.out.clear();
    resp.reset(&in, &sink);
    resp.for_request(Verb::HEAD, 1);
    ASSERT_EQ(0, resp.headers.content_length(100));
    EXPECT_EQ(1, resp.write("x", 1));                              // HEAD: counted, not sent
    EXPECT_EQ(-1, resp.write(std::string(100, 'x').data(), 100));  // past the length, as GET
    EXPECT_EQ(EMSGSIZE, errno);
    ASSERT_EQ(0, resp.send());  // the length is metadata only
    EXPECT_EQ("HTTP/1.1 200 Fine\r\nContent-Length: 100\r\n\r\n", sink.out);

    // HEAD gets the GET's framing; no chunk, not even the last, is sent.
    sink.out.clear();
    resp.reset(&in, &sink);
    resp.for_request(Verb::HEAD, 1);
    ASSERT_EQ(3, resp.write("abc", 3));
    ASSERT_EQ(0, resp.send());
    EXPECT_EQ("HTTP/1.1 200 Fine\r\nTransfer-Encoding: chunked\r\n\r\n", sink.out);

    sink.out.clear();
    resp.reset(&in, &sink);
    resp.for_request(Verb::GET, 1);
    ASSERT_EQ(0, resp.set_result(204));
    EXPECT_EQ(-1, resp.write("x", 1));  // 204: no body at all
    EXPECT_EQ(EMSGSIZE, errno);
    ASSERT_EQ(0, resp.send());
    EXPECT_EQ("HTTP/1.1 204 No Content\r\n\r\n", sink.out);

    EXPECT_EQ(-1, resp.set_result(99));
    EXPECT_EQ(-1, resp.set_result(200, "a\r\nb"));
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(HttpMessage, ReceivesResponsesOfEachFraming) {
    std::string raw =
        "HTTP/1.1 100 Continue\r\n\r\n"
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nab"
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nc\r\n0\r\n\r\n"
        "HTTP/1.1 204 No Content\r\n\r\n"
        "HTTP/1.0 200 OK\r\n\r\nuntil close";
    for (size_t piece : kPieces) {
        MemStream s(raw, piece);
        InputBuffer in(&s);
        Response resp;
        resp.reset(&in, &s);
        ASSERT_EQ(0, resp.receive_header());
        EXPECT_EQ(100, resp.status_code());
        ASSERT_EQ(0, resp.receive_header());
        EXPECT_EQ("ab", read_all(resp));
        ASSERT_EQ(0, resp.receive_header());
        EXPECT_EQ("c", read_all(resp));
        ASSERT_EQ(0, resp.receive_header());
        EXPECT_EQ(204, resp.status_code());
        EXPECT_EQ("", read_all(resp));
        ASSERT_EQ(0, resp.receive_header());
        EXPECT_EQ(Framing::UntilClose, resp.framing());
        EXPECT_FALSE(resp.keep_alive());
        EXPECT_EQ("until close", read_all(resp));
    }
}

TEST_F(HttpMessage, TruncatedBodyReturnsItsBytesThenFailsWithEprotoForGood) {
    MemStream s("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc");
    InputBuffer in(&s);
    Request req;
    req.reset(&in, &s);
    ASSERT_EQ(0, req.receive_header());
    char buf[16];
    ASSERT_EQ(3, req.read(buf, sizeof(buf)));  // what arrived is delivered
    EXPECT_EQ("abc", std::string(buf, 3));
    for (int i = 0; i < 2; i++) {  // then the truncation, and it sticks
        errno = 0;
        EXPECT_EQ(-1, req.read(buf, sizeof(buf)));
        EXPECT_EQ(EPROTO, errno);
        EXPECT_EQ(ParseError::Truncated, req.parse_error());
    }
}

// Hands out its pieces one per read; an empty piece fails with `err`.
class ScriptedStream : public MemStream {
public:
    ScriptedStream(std::vector<std::string> pieces, int err)
        : MemStream(""), pieces_(std::move(pieces)), err_(err) {}
    ssize_t read(void* buf, size_t count) override {
        if (next_ == pieces_.size()) return 0;
        std::string& p = pieces_[next_];
        if (p.empty()) {
            next_++;
            errno = err_;
            return -1;
        }
        size_t n = std::min(count, p.size());
        memcpy(buf, p.data(), n);
        p.erase(0, n);
        if (p.empty()) next_++;
        return (ssize_t)n;
    }

private:
    std::vector<std::string> pieces_;
    size_t next_ = 0;
    int err_;
};

TEST_F(HttpMessage, ReadThatTimesOutKeepsTheBytesItCopiedAndCanBeRetried) {
    // 20 body bytes in two halves with a timeout between them.
    ScriptedStream s(
        {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 20\r\n\r\n0123456789", "", "abcdefghij"},
        ETIMEDOUT);
    InputBuffer in(&s);
    Request req;
    req.reset(&in, &s);
    ASSERT_EQ(0, req.receive_header());
    std::string body;
    char buf[20];
    int timeouts = 0;
    for (int i = 0; i < 10; i++) {  // a handler that retries after ETIMEDOUT
        ssize_t n = req.read(buf, sizeof(buf) - body.size());
        if (n < 0 && errno == ETIMEDOUT) {
            timeouts++;
            continue;
        }
        ASSERT_GE(n, 0) << errno;
        if (n == 0) break;
        body.append(buf, n);
    }
    EXPECT_EQ("0123456789abcdefghij", body);
    EXPECT_EQ(1, timeouts);  // reported once, by the call after the short one
    EXPECT_TRUE(req.body_done());
}

TEST_F(HttpMessage, ReadvKeepsTheBytesOfEarlierBuffersWhenALaterOneFails) {
    ScriptedStream s({"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 8\r\n\r\nabcd", "", "efgh"},
                     ECONNRESET);
    InputBuffer in(&s);
    Request req;
    req.reset(&in, &s);
    ASSERT_EQ(0, req.receive_header());
    char a[4], b[4];
    struct iovec iov[2] = {{a, 4}, {b, 4}};
    ASSERT_EQ(4, req.readv(iov, 2));
    EXPECT_EQ("abcd", std::string(a, 4));
    EXPECT_EQ(-1, req.readv(iov, 2));
    EXPECT_EQ(ECONNRESET, errno);
}

TEST_F(HttpMessage, HeadLargerThanTheBufferFailsWith431) {
    Limits l;
    l.max_head_size = 1 << 20;  // beyond the buffer: the buffer bounds it
    MemStream s("GET / HTTP/1.1\r\nHost: h\r\n" + std::string(2000, 'X'), 16);
    InputBuffer in(&s, 1024);
    Request req(l);
    req.reset(&in, &s);
    EXPECT_EQ(-1, req.receive_header());
    EXPECT_EQ(431, http_status(req.parse_error()));
}
