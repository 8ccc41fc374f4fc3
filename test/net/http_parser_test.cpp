// The head parser: what it accepts, every smuggling shape it refuses, and
// which status each limit maps to. Heads arrive in random pieces (1 byte at
// a time too) to prove the parser is incremental.
#include <gtest/gtest.h>

#include <memory>

#include <photon/common/alog.h>
#include <photon/net/http/message.h>

#include "../fuzz/mem_stream.h"

using namespace photon::net::http;
using photon_test::MemStream;

namespace {

struct Parsed {
    int ret = 0;
    int err = 0;
    ParseError pe = ParseError::None;
    std::unique_ptr<MemStream> stream;
    std::unique_ptr<InputBuffer> in;
    std::unique_ptr<Request> req_;
    Request& req() { return *req_; }
};

// Parses one request head from `raw`, delivered in pieces of up to `piece`.
void parse(const std::string& raw, Parsed* p, size_t piece = SIZE_MAX, Limits limits = {}) {
    p->stream.reset(new MemStream(raw, piece, (uint32_t)raw.size()));
    p->in.reset(new InputBuffer(p->stream.get()));
    p->req_.reset(new Request(limits));
    p->req().reset(p->in.get(), p->stream.get());
    errno = 0;
    p->ret = p->req().receive_header();
    p->err = errno;
    p->pe = p->req().parse_error();
}

ParseError error_of(const std::string& raw, Limits limits = {}) {
    ParseError first = ParseError::None;
    for (size_t piece : {SIZE_MAX, (size_t)1, (size_t)3}) {
        Parsed p;
        parse(raw, &p, piece, limits);
        if (p.ret == 0) {
            EXPECT_EQ(ParseError::None, p.pe);
        } else {
            EXPECT_EQ(EPROTO, p.err) << raw;
        }
        if (piece == SIZE_MAX) first = p.pe;
        EXPECT_EQ(first, p.pe) << "piece " << piece << ": " << raw;
    }
    return first;
}

}  // namespace

class HttpParser : public ::testing::Test {
protected:
    void SetUp() override { set_log_output_level(ALOG_ERROR); }
};

TEST_F(HttpParser, AcceptsAGetByteByByte) {
    Parsed p;
    parse("GET /a/b?x=1 HTTP/1.1\r\nHost: example.com\r\nX-A:  v  \r\nx-a: w\r\n\r\n", &p, 1);
    ASSERT_EQ(0, p.ret);
    EXPECT_EQ(Verb::GET, p.req().verb());
    EXPECT_EQ("/a/b?x=1", p.req().target());
    EXPECT_EQ("/a/b", p.req().abs_path());
    EXPECT_EQ("x=1", p.req().query());
    EXPECT_EQ("example.com", p.req().host());
    EXPECT_EQ("v", p.req().headers["x-a"]);
    EXPECT_EQ(2u, p.req().headers.count("X-A"));
    EXPECT_EQ(1, p.req().minor_version());
    EXPECT_TRUE(p.req().keep_alive());
    EXPECT_EQ(Framing::None, p.req().framing());
    EXPECT_EQ(0, p.req().body_size());
}

TEST_F(HttpParser, AcceptsOtherTargetForms) {
    EXPECT_EQ(ParseError::None, error_of("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::None, error_of("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n"));
    EXPECT_EQ(ParseError::None, error_of("GET http://h/p?q HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::None, error_of("GET / HTTP/1.0\r\n\r\n"));  // 1.0 needs no Host
}

TEST_F(HttpParser, SkipsLeadingEmptyLines) {
    EXPECT_EQ(ParseError::None, error_of("\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"));
}

TEST_F(HttpParser, ComputesKeepAlive) {
    Parsed p;
    parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", &p);
    EXPECT_FALSE(p.req().keep_alive());
    parse("GET / HTTP/1.0\r\n\r\n", &p);
    EXPECT_FALSE(p.req().keep_alive());
    parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &p);
    EXPECT_TRUE(p.req().keep_alive());
    parse("GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade, CLOSE\r\n\r\n", &p);
    EXPECT_FALSE(p.req().keep_alive());
}

TEST_F(HttpParser, Detects100Continue) {
    Parsed p;
    parse("PUT /f HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n", &p);
    ASSERT_EQ(0, p.ret);
    EXPECT_TRUE(p.req().expect_continue());
    parse("PUT /f HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n", &p);
    EXPECT_FALSE(p.req().expect_continue());  // 1.0 clients cannot expect it
    parse("GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n", &p);
    EXPECT_FALSE(p.req().expect_continue());  // no body to wait for
}

TEST_F(HttpParser, RejectsContentLengthSmuggling) {
    std::string r = "POST / HTTP/1.1\r\nHost: h\r\n";
    EXPECT_EQ(ParseError::MultipleContentLength,
              error_of(r + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n"));
    EXPECT_EQ(ParseError::MultipleContentLength,
              error_of(r + "Content-Length: 5\r\nContent-Length: 5\r\n\r\n"));
    EXPECT_EQ(ParseError::MultipleContentLength, error_of(r + "Content-Length: 5, 5\r\n\r\n"));
    for (const char* v : {"-1", "+5", "0x10", "5 5", "1e3", "", "99999999999999999999"})
        EXPECT_EQ(ParseError::BadContentLength, error_of(r + "Content-Length: " + v + "\r\n\r\n"))
            << v;
}

// 19 digits pass the digit check but may not fit the int64_t body size: the
// remaining-body arithmetic went negative and the server kept the connection.
TEST_F(HttpParser, RejectsAContentLengthAboveTheSigned64BitRange) {
    std::string r = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ";
    EXPECT_EQ(ParseError::BadContentLength, error_of(r + "9999999999999999999\r\n\r\n"));
    EXPECT_EQ(ParseError::BadContentLength, error_of(r + "9223372036854775808\r\n\r\n"));
    Parsed p;
    parse(r + "9223372036854775807\r\n\r\n", &p);
    ASSERT_EQ(0, p.ret);
    EXPECT_EQ(INT64_MAX, p.req().body_size());
}

// RFC 9112 3.2.2: the host of an absolute-form target wins over Host.
TEST_F(HttpParser, TakesTheHostOfAnAbsoluteFormTargetOverTheHostField) {
    Parsed p;
    parse("GET http://a/x?q=1 HTTP/1.1\r\nHost: b\r\n\r\n", &p);
    ASSERT_EQ(0, p.ret);
    EXPECT_EQ("http://a/x?q=1", p.req().target());
    EXPECT_EQ("a", p.req().host());
    EXPECT_EQ("a", p.req().host_no_port());
    EXPECT_EQ("/x", p.req().abs_path());
    EXPECT_EQ("q=1", p.req().query());
    parse("GET HTTP://a:8080 HTTP/1.1\r\nHost: b\r\n\r\n", &p);
    ASSERT_EQ(0, p.ret);
    EXPECT_EQ("a:8080", p.req().host());
    EXPECT_EQ("/", p.req().abs_path());
    // An origin-form target takes the Host field.
    parse("GET /y HTTP/1.1\r\nHost: b\r\n\r\n", &p);
    ASSERT_EQ(0, p.ret);
    EXPECT_EQ("b", p.req().host());
    EXPECT_EQ("/y", p.req().abs_path());
}

TEST_F(HttpParser, RejectsTransferEncodingSmuggling) {
    std::string r = "POST / HTTP/1.1\r\nHost: h\r\n";
    EXPECT_EQ(ParseError::ContentLengthWithTransferEncoding,
              error_of(r + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"));
    EXPECT_EQ(ParseError::ContentLengthWithTransferEncoding,
              error_of(r + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"));
    EXPECT_EQ(ParseError::ChunkedNotLast, error_of(r + "Transfer-Encoding: chunked, gzip\r\n\r\n"));
    EXPECT_EQ(ParseError::ChunkedNotLast, error_of(r + "Transfer-Encoding: gzip\r\n\r\n"));
    EXPECT_EQ(ParseError::ChunkedNotLast,
              error_of(r + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTransferEncoding,
              error_of(r + "Transfer-Encoding: \"chunked\"\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTransferEncoding, error_of(r + "Transfer-Encoding: ,\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTransferEncoding, error_of(r + "Transfer-Encoding:\r\n\r\n"));
    EXPECT_EQ(ParseError::UnsupportedTransferEncoding,
              error_of(r + "Transfer-Encoding: gzip, chunked\r\n\r\n"));
    EXPECT_EQ(ParseError::TransferEncodingInHttp10,
              error_of("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"));
    EXPECT_EQ(ParseError::None, error_of(r + "Transfer-Encoding: CHUNKED\r\n\r\n"));
}

TEST_F(HttpParser, RejectsObsFoldAndWhitespaceBeforeColon) {
    EXPECT_EQ(ParseError::ObsFold, error_of("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n"));
    EXPECT_EQ(ParseError::ObsFold, error_of("GET / HTTP/1.1\r\n\tHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::ObsFold, error_of("GET / HTTP/1.1\r\n Host: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadFieldName, error_of("GET / HTTP/1.1\r\nHost : h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadFieldName,
              error_of("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding : chunked\r\n\r\n"));
    EXPECT_EQ(ParseError::BadFieldName, error_of("GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n"));
    EXPECT_EQ(ParseError::BadFieldName, error_of("GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n"));
}

TEST_F(HttpParser, RejectsBareLfAndBareCr) {
    EXPECT_EQ(ParseError::BareLF, error_of("GET / HTTP/1.1\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BareLF, error_of("GET / HTTP/1.1\r\nHost: h\n\r\n"));
    EXPECT_EQ(ParseError::BareLF, error_of("GET / HTTP/1.1\r\nHost: h\r\n\n"));
    EXPECT_EQ(ParseError::BareLF, error_of("\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BareCR, error_of("GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n"));
    EXPECT_EQ(ParseError::BareCR, error_of("GET / HTTP/1.1\r\nHost: h\r\n\r\r\n"));
}

TEST_F(HttpParser, RejectsNulAndControlBytes) {
    EXPECT_EQ(ParseError::BadFieldValue,
              error_of(std::string("GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n", 35)));
    EXPECT_EQ(ParseError::BadFieldValue, error_of("GET / HTTP/1.1\r\nHost: h\r\nX: a\x01\r\n\r\n"));
    EXPECT_EQ(ParseError::BadFieldValue, error_of("GET / HTTP/1.1\r\nHost: h\r\nX: \x7f\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTarget,
              error_of(std::string("GET /\0 HTTP/1.1\r\nHost: h\r\n\r\n", 28)));
    EXPECT_EQ(ParseError::BadFieldName, error_of("GET / HTTP/1.1\r\nHost: h\r\nX\x01: a\r\n\r\n"));
    // obs-text in values is allowed (RFC 9110 5.5).
    EXPECT_EQ(ParseError::None, error_of("GET / HTTP/1.1\r\nHost: h\r\nX: caf\xc3\xa9\r\n\r\n"));
}

TEST_F(HttpParser, RejectsMalformedRequestLines) {
    EXPECT_EQ(ParseError::BadRequestLine, error_of("GET  / HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadRequestLine, error_of("GET / HTTP/1.1 \r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadRequestLine, error_of("GET /\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadRequestLine, error_of("G(T / HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTarget, error_of("GET a/b HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTarget, error_of("GET * HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTarget, error_of("GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTarget, error_of("GET /a#f HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTarget, error_of("CONNECT /x HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadTarget, error_of("GET http://u@h/ HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadVersion, error_of("GET / http/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadVersion, error_of("GET / HTTP/1.10\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(ParseError::BadVersion, error_of("GET / HTTP/1\r\nHost: h\r\n\r\n"));
}

TEST_F(HttpParser, RejectsMissingOrRepeatedHost) {
    EXPECT_EQ(ParseError::MissingHost, error_of("GET / HTTP/1.1\r\n\r\n"));
    EXPECT_EQ(ParseError::BadHost, error_of("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"));
    EXPECT_EQ(ParseError::BadHost, error_of("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n"));
    EXPECT_EQ(ParseError::BadHost, error_of("GET / HTTP/1.1\r\nHost: a b\r\n\r\n"));
}

TEST_F(HttpParser, MapsEveryErrorToItsStatus) {
    std::string r = "POST / HTTP/1.1\r\nHost: h\r\n";
    Limits small;
    small.max_request_line = 64;
    small.max_field_line = 64;
    small.max_head_size = 512;
    small.max_fields = 4;
    small.max_body_size = 1000;
    auto status = [&](const std::string& raw) { return http_status(error_of(raw, small)); };
    EXPECT_EQ(414, status("GET /" + std::string(100, 'a') + " HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(414, status("GET /" + std::string(1000, 'a')));  // before the line ends
    EXPECT_EQ(431, status(r + "X: " + std::string(100, 'a') + "\r\n\r\n"));
    EXPECT_EQ(431, status(r + "X: " + std::string(1000, 'a')));
    EXPECT_EQ(431, status(r + "A: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\n\r\n"));  // 5 fields
    std::string many = r;
    for (int i = 0; i < 12; i++) many += "X: " + std::string(40, 'a') + "\r\n";
    EXPECT_EQ(ParseError::HeadTooLarge, error_of(many, [] {
                  Limits l;
                  l.max_head_size = 512;
                  return l;
              }()));
    EXPECT_EQ(431, status(many));
    EXPECT_EQ(413, status(r + "Content-Length: 1001\r\n\r\n"));
    EXPECT_EQ(200, status(r + "Content-Length: 1000\r\n\r\n"));
    EXPECT_EQ(501, status("BREW / HTTP/1.1\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(501, status(r + "Transfer-Encoding: gzip, chunked\r\n\r\n"));
    EXPECT_EQ(505, status("GET / HTTP/2.0\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(505, status("GET / HTTP/1.2\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(505, status("GET / HTTP/0.9\r\nHost: h\r\n\r\n"));
    EXPECT_EQ(400, status(r + "Content-Length: 1\r\nContent-Length: 2\r\n\r\n"));
}

TEST_F(HttpParser, ReportsEofBetweenMessagesAsEnodata) {
    for (const char* raw : {"", "\r\n"}) {
        Parsed p;
        parse(raw, &p);
        EXPECT_EQ(-1, p.ret);
        EXPECT_EQ(ENODATA, p.err);
        EXPECT_EQ(ParseError::None, p.pe);
    }
    EXPECT_EQ(ParseError::Truncated, error_of("GET / HTTP/1.1\r\nHost: h\r\n"));
}

TEST_F(HttpParser, ParsesResponseHeads) {
    Limits l;
    ResponseHead h;
    Headers f;
    ASSERT_EQ(ParseError::None,
              parse_response_head("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n", Verb::GET,
                                  l, &h, &f));
    EXPECT_EQ(404, h.status);
    EXPECT_EQ("Not Found", h.reason);
    EXPECT_EQ(Framing::ContentLength, h.framing);
    EXPECT_TRUE(h.keep_alive);
    ASSERT_EQ(ParseError::None, parse_response_head("HTTP/1.1 200\r\n\r\n", Verb::GET, l, &h, &f));
    EXPECT_EQ(Framing::UntilClose, h.framing);
    EXPECT_FALSE(h.keep_alive);
    ASSERT_EQ(ParseError::None, parse_response_head("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n",
                                                    Verb::HEAD, l, &h, &f));
    EXPECT_EQ(Framing::None, h.framing);
    for (int code : {100, 204, 304}) {
        std::string head = "HTTP/1.1 " + std::to_string(code) + " X\r\n\r\n";
        ASSERT_EQ(ParseError::None, parse_response_head(head, Verb::GET, l, &h, &f));
        EXPECT_EQ(Framing::None, h.framing) << code;
    }
    EXPECT_EQ(ParseError::BadStatusLine,
              parse_response_head("HTTP/1.1 20 OK\r\n\r\n", Verb::GET, l, &h, &f));
    EXPECT_EQ(ParseError::BadStatusLine,
              parse_response_head("HTTP/1.1 600 X\r\n\r\n", Verb::GET, l, &h, &f));
    EXPECT_EQ(ParseError::VersionNotSupported,
              parse_response_head("HTTP/2.0 200 OK\r\n\r\n", Verb::GET, l, &h, &f));
    EXPECT_EQ(ParseError::ContentLengthWithTransferEncoding,
              parse_response_head(
                  "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                  Verb::GET, l, &h, &f));
}
