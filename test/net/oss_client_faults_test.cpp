// The object storage client against a scripted misbehaving server on
// 127.0.0.1: 500s and 503s with Retry-After (retried, then a clear error),
// slow and truncated bodies, wrong checksums, malformed XML listings, 403
// SignatureDoesNotMatch, a redirect to another region. Each ends in a
// correct retry or a clear errno, and nothing is written twice.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include <photon/common/checksum/crc32c.h>
#include <photon/common/checksum/crc64ecma.h>
#include <photon/common/checksum/digest.h>
#include <photon/ecosystem/oss.h>
#include <photon/net/utils.h>
#include <photon/thread/thread.h>

#include "../../net/oss/sign.h"
#include "../util/engine_fixture.h"
#include "http_test_util.h"

using namespace photon::objstore;
using photon::net::http::Request;
using photon::net::http::Response;
using photon::net::http::Verb;
using photon_test::scripted_server;

namespace {

class OssFaults : public photon_test::EngineTest {
protected:
    std::unique_ptr<Client> client_for(scripted_server& srv, SignVersion v = SignVersion::S3V4,
                                       bool md5_check = true, bool crc32c = false) {
        ClientOptions o;
        o.s3_md5_check = md5_check;
        o.s3_crc32c = crc32c;
        o.endpoint = "http://127.0.0.1:" + std::to_string(srv.port());
        o.bucket = "bkt";
        o.path_style = true;
        o.sign_version = v;
        o.retry_times = 2;
        o.retry_base_interval_us = 1000;
        o.request_timeout_us = 5ull * 1000 * 1000;
        return std::unique_ptr<Client>(new_oss_client(o, 0, CredentialParameters{"ak", "sk", ""}));
    }
};

std::string photon_test_md5(const std::string& s) { return detail::hex(photon::md5(s).finalize()); }

std::string read_body(Request& req) {
    std::string body;
    char buf[4096];
    ssize_t n;
    while ((n = req.read(buf, sizeof(buf))) > 0) body.append(buf, n);
    return body;
}

// A PUT of a few bytes that must fail: its errno (0 if it did not fail).
int failed_put_errno(Client& c) {
    std::string data = "payload";
    ObjectUploadOptions opts;
    errno = 0;
    return c.put_object("k", data.data(), data.size(), opts) == -1 ? errno : 0;
}

// S3's form of a body's CRC32C: base64 of its 4 bytes, most significant first.
std::string crc32c_b64(const std::string& s) {
    uint32_t c = ~crc32c_extend(s.data(), s.size(), ~0u);
    char b[4] = {(char)(c >> 24), (char)(c >> 16), (char)(c >> 8), (char)c};
    std::string out;
    photon::net::Base64Encode(std::string_view(b, 4), out);
    return out;
}

// An aws-chunked body with its trailer, decoded: "" and *error set when its framing is not
// S3's (every chunk but the last at least 8 KiB, CRLFs in place, one trailer line).
std::string aws_unchunk(const std::string& wire, std::string* trailer, std::string* error) {
    std::string data;
    size_t at = 0, last = SIZE_MAX;
    for (;;) {
        size_t eol = wire.find("\r\n", at);
        if (eol == std::string::npos) return *error = "no chunk size line", "";
        size_t n = strtoul(wire.substr(at, eol - at).c_str(), nullptr, 16);
        if (last != SIZE_MAX && last < 8192 && n) return *error = "a short chunk not last", "";
        at = eol + 2;
        if (n == 0) break;
        if (wire.size() < at + n + 2 || wire.compare(at + n, 2, "\r\n"))
            return *error = "chunk data not followed by CRLF", "";
        data.append(wire, at, n);
        at += n + 2;
        last = n;
    }
    size_t eol = wire.find("\r\n", at);
    if (eol == std::string::npos || wire.substr(eol) != "\r\n\r\n")
        return *error = "no trailer ending the body", "";
    *trailer = wire.substr(at, eol - at);
    return data;
}

const char kError403[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>"
    "<Message>The request signature we calculated does not match</Message></Error>\n";

}  // namespace

TEST_P(OssFaults, FiveHundredsAreRetriedThenSucceed) {
    int puts = 0;
    std::string stored;
    scripted_server srv([&](Request& req, Response& resp, photon::net::ISocketStream*) {
        auto body = read_body(req);
        if (++puts <= 2) {
            resp.set_result(puts == 1 ? 500 : 503);
            if (puts == 2) resp.headers.insert("Retry-After", "0");
            resp.headers.content_length(0);
            return 0;
        }
        stored = body;
        resp.set_result(200);
        resp.headers.insert("ETag", "\"" + photon_test_md5(body) + "\"");
        resp.headers.content_length(0);
        return 0;
    });
    auto c = client_for(srv);
    ASSERT_TRUE(c);
    std::string data(100000, 'x');
    ObjectUploadOptions opts;
    std::string etag;
    opts.etag = &etag;
    EXPECT_EQ((ssize_t)data.size(), c->put_object("k", data.data(), data.size(), opts));
    EXPECT_EQ(3, puts);  // the body came again from the writer for each attempt
    EXPECT_EQ(data, stored);
    EXPECT_EQ(32u, etag.size());
}

TEST_P(OssFaults, PersistentFiveHundredsGiveEbusyAfterTheRetries) {
    int gets = 0;
    scripted_server srv([&](Request&, Response& resp, photon::net::ISocketStream*) {
        gets++;
        resp.set_result(503);
        resp.headers.insert("Retry-After", "0");
        resp.headers.content_length(0);
        return 0;
    });
    auto c = client_for(srv);
    char buf[16];
    errno = 0;
    EXPECT_EQ(-1, c->get_object_range("k", buf, sizeof(buf), 0));
    EXPECT_EQ(EBUSY, errno);
    EXPECT_EQ(3, gets);  // retry_times = 2
}

TEST_P(OssFaults, SignatureDoesNotMatchIsEaccesWithoutRetry) {
    int n = 0;
    scripted_server srv([&](Request&, Response& resp, photon::net::ISocketStream*) {
        n++;
        resp.set_result(403);
        resp.headers.insert("Content-Type", "application/xml");
        resp.headers.content_length(sizeof(kError403) - 1);
        resp.write(kError403, sizeof(kError403) - 1);
        return 0;
    });
    auto c = client_for(srv);
    ObjectHeaderMeta m;
    char buf[16];
    errno = 0;
    EXPECT_EQ(-1, c->get_object_range("k", buf, sizeof(buf), 0, &m));
    EXPECT_EQ(EACCES, errno);
    EXPECT_EQ(1, n);
}

TEST_P(OssFaults, RedirectToAnotherRegionIsEremote) {
    int n = 0;
    scripted_server srv([&](Request&, Response& resp, photon::net::ISocketStream*) {
        n++;
        static const char body[] =
            "<Error><Code>PermanentRedirect</Code><Message>use the other endpoint</Message>"
            "<Endpoint>bkt.s3.eu-west-1.example</Endpoint></Error>";
        resp.set_result(301);
        resp.headers.insert("x-amz-bucket-region", "eu-west-1");
        resp.headers.insert("Location", "http://bkt.s3.eu-west-1.example/k");
        resp.headers.content_length(sizeof(body) - 1);
        resp.write(body, sizeof(body) - 1);
        return 0;
    });
    auto c = client_for(srv);
    EXPECT_EQ(EREMOTE, failed_put_errno(*c));
    EXPECT_EQ(1, n);
}

TEST_P(OssFaults, TruncatedBodyIsRetriedAndTheRetryIsWhole) {
    std::string obj(50000, 'q');
    for (size_t i = 0; i < obj.size(); i++) obj[i] = (char)('a' + i % 26);
    int n = 0;
    scripted_server srv([&](Request&, Response& resp, photon::net::ISocketStream* s) {
        if (++n == 1) {
            // Promise the whole object, send half and close.
            std::string head =
                "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(obj.size()) + "\r\n\r\n";
            s->write(head.data(), head.size());
            s->write(obj.data(), obj.size() / 2);
            return -1;
        }
        resp.set_result(200);
        resp.headers.content_length(obj.size());
        resp.write(obj.data(), obj.size());
        return 0;
    });
    auto c = client_for(srv);
    std::string got(obj.size(), 0);
    EXPECT_EQ((ssize_t)obj.size(), c->get_object_range("k", &got[0], got.size(), 0));
    EXPECT_EQ(obj, got);
    EXPECT_EQ(2, n);
}

TEST_P(OssFaults, AlwaysTruncatedBodyIsEio) {
    int n = 0;
    scripted_server srv([&](Request&, Response&, photon::net::ISocketStream* s) {
        n++;
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nshort";
        s->write(head, sizeof(head) - 1);
        return -1;
    });
    auto c = client_for(srv);
    char buf[1000];
    errno = 0;
    EXPECT_EQ(-1, c->get_object_range("k", buf, sizeof(buf), 0));
    EXPECT_EQ(EIO, errno);
    EXPECT_EQ(3, n);
}

TEST_P(OssFaults, SlowBodyArrivesWhole) {
    std::string obj(20000, 's');
    scripted_server srv([&](Request&, Response&, photon::net::ISocketStream* s) {
        std::string head =
            "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(obj.size()) + "\r\n\r\n";
        s->write(head.data(), head.size());
        for (size_t off = 0; off < obj.size(); off += 1000) {
            s->write(obj.data() + off, 1000);
            photon::thread_usleep(2000);
        }
        return -1;
    });
    auto c = client_for(srv);
    std::string got(obj.size(), 0);
    EXPECT_EQ((ssize_t)obj.size(), c->get_object_range("k", &got[0], got.size(), 0));
    EXPECT_EQ(obj, got);
}

TEST_P(OssFaults, WrongEtagOfAGetIsEio) {
    int n = 0;
    scripted_server srv([&](Request&, Response& resp, photon::net::ISocketStream*) {
        n++;
        resp.set_result(200);
        resp.headers.insert("ETag", "\"00000000000000000000000000000000\"");
        resp.headers.content_length(5);
        resp.write("hello", 5);
        return 0;
    });
    auto c = client_for(srv);
    char buf[5];
    errno = 0;
    EXPECT_EQ(-1, c->get_object_range("k", buf, sizeof(buf), 0));
    EXPECT_EQ(EIO, errno);
    EXPECT_EQ(3, n);  // retried, in case the body was damaged on the way
}

// With s3_md5_check off, an ETag that is not the body's MD5 is taken as it
// comes, both ways (an S3 service whose ETags are not MD5s, or a caller who
// checks otherwise): one request each, no EIO.
TEST_P(OssFaults, WithoutTheMd5CheckAnEtagIsNotCompared) {
    int n = 0;
    scripted_server srv([&](Request& req, Response& resp, photon::net::ISocketStream*) {
        n++;
        read_body(req);
        resp.set_result(200);
        resp.headers.insert("ETag", "\"00000000000000000000000000000000\"");
        bool get = req.verb() == Verb::GET;
        resp.headers.content_length(get ? 5 : 0);
        if (get) resp.write("hello", 5);
        return 0;
    });
    std::string data = "payload";
    ObjectUploadOptions opts;
    errno = 0;  // checked (the default): the PUT's ETag is not the MD5 of what went
    auto checked = client_for(srv);
    EXPECT_EQ(-1, checked->put_object("k", data.data(), data.size(), opts));
    EXPECT_EQ(EIO, errno);
    n = 0;
    auto c = client_for(srv, SignVersion::S3V4, false);
    char buf[5];
    EXPECT_EQ(5, c->get_object_range("k", buf, sizeof(buf), 0));
    EXPECT_EQ(0, memcmp(buf, "hello", 5));
    EXPECT_EQ((ssize_t)data.size(), c->put_object("k", data.data(), data.size(), opts));
    EXPECT_EQ(2, n);
}

TEST_P(OssFaults, WrongCrc64OfAnOssPutIsEio) {
    int n = 0;
    scripted_server srv([&](Request& req, Response& resp, photon::net::ISocketStream*) {
        n++;
        read_body(req);
        resp.set_result(200);
        resp.headers.insert("x-oss-hash-crc64ecma", "12345");
        resp.headers.content_length(0);
        return 0;
    });
    auto c = client_for(srv, SignVersion::OssV1);
    EXPECT_EQ(EIO, failed_put_errno(*c));
    EXPECT_EQ(1, n);
}

TEST_P(OssFaults, RightCrc64OfAnOssPutAndExpectedCrcPass) {
    std::string data = "payload of an oss put";
    uint64_t crc = crc64ecma(data.data(), data.size(), 0);
    scripted_server srv([&](Request& req, Response& resp, photon::net::ISocketStream*) {
        auto body = read_body(req);
        resp.set_result(200);
        resp.headers.insert("x-oss-hash-crc64ecma",
                            std::to_string(crc64ecma(body.data(), body.size(), 0)));
        resp.headers.content_length(0);
        // The request was signed the OSS V1 way.
        return req.headers["Authorization"].substr(0, 7) == "OSS ak:" ? 0 : -1;
    });
    auto c = client_for(srv, SignVersion::OssV1);
    ObjectUploadOptions opts;
    opts.expected_crc64 = &crc;
    EXPECT_EQ((ssize_t)data.size(), c->put_object("k", data.data(), data.size(), opts));
    uint64_t wrong = crc + 1;
    opts.expected_crc64 = &wrong;
    EXPECT_EQ(-1, c->put_object("k", data.data(), data.size(), opts));
    EXPECT_EQ(EIO, errno);
}

TEST_P(OssFaults, MalformedListingIsEio) {
    const char* bodies[] = {
        "<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents>",  // cut short
        "not xml at all",
        "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",      // no way on
        "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",  // no Key
        "",
    };
    for (auto b : bodies) {
        std::string body = b;
        scripted_server srv([&](Request&, Response& resp, photon::net::ISocketStream*) {
            resp.set_result(200);
            resp.headers.content_length(body.size());
            resp.write(body.data(), body.size());
            return 0;
        });
        auto c = client_for(srv);
        int seen = 0;
        auto cb = [&](const ListObjectsCBParameters&) { return seen++, 0; };
        errno = 0;
        EXPECT_EQ(-1, c->list_objects("", cb)) << b;
        EXPECT_EQ(EIO, errno) << b;
    }
}

TEST_P(OssFaults, ThrottlingIsRetriedUntilItPasses) {
    int n = 0;
    scripted_server srv([&](Request&, Response& resp, photon::net::ISocketStream*) {
        if (++n <= 5) {  // more than retry_times: throttling has its own budget
            static const char body[] = "<Error><Code>SlowDown</Code><Message>x</Message></Error>";
            resp.set_result(503);
            resp.headers.content_length(sizeof(body) - 1);
            resp.write(body, sizeof(body) - 1);
            return 0;
        }
        resp.set_result(200);
        resp.headers.insert("Last-Modified", "Fri, 24 May 2013 00:00:00 GMT");
        resp.headers.content_length(2);
        resp.write("ok", 2);
        return 0;
    });
    auto c = client_for(srv);
    ObjectHeaderMeta m;
    char buf[2];
    EXPECT_EQ(2, c->get_object_range("k", buf, sizeof(buf), 0, &m));
    EXPECT_EQ(6, n);
    EXPECT_TRUE(m.has_mtime());
    EXPECT_EQ(1369353600, m.mtime);
}

TEST_P(OssFaults, AppendIsNotSentTwiceAfterAFiveHundred) {
    int n = 0;
    scripted_server srv([&](Request& req, Response& resp, photon::net::ISocketStream*) {
        n++;
        read_body(req);
        resp.set_result(500);
        resp.headers.content_length(0);
        return 0;
    });
    auto c = client_for(srv, SignVersion::OssV4);
    std::string data = "tail";
    struct iovec iov = {&data[0], data.size()};
    errno = 0;
    EXPECT_EQ(-1, c->append_object("k", &iov, 1, 0));
    EXPECT_EQ(1, n);
    EXPECT_NE(0, errno);
}

// s3_crc32c: a PUT goes as aws-chunked with the body's CRC32C in its trailer, and
// Content-Length counts the framing (S3 takes no Transfer-Encoding: chunked).
TEST_P(OssFaults, Crc32cTrailerFramesThePutAsS3Does) {
    std::string got, trailer, error, headers_ok;
    scripted_server srv([&](Request& req, Response& resp, photon::net::ISocketStream*) {
        auto wire = read_body(req);
        auto& h = req.headers;
        bool ok = h["x-amz-content-sha256"] == "STREAMING-UNSIGNED-PAYLOAD-TRAILER" &&
                  h["Content-Encoding"] == "aws-chunked" &&
                  h["x-amz-trailer"] == "x-amz-checksum-crc32c" &&
                  h["Content-Length"] == std::to_string(wire.size());
        got = aws_unchunk(wire, &trailer, &error);
        headers_ok =
            ok && h["x-amz-decoded-content-length"] == std::to_string(got.size()) ? "yes" : "no";
        resp.set_result(200);
        resp.headers.insert("x-amz-checksum-crc32c", crc32c_b64(got));
        resp.headers.content_length(0);
        return 0;
    });
    auto c = client_for(srv, SignVersion::S3V4, false, true);
    for (size_t size : {0ul, 5ul, 65536ul, 65536ul * 3 + 17}) {
        std::string data(size, 0);
        for (size_t i = 0; i < size; i++) data[i] = (char)(i * 7 + size);
        ObjectUploadOptions opts;
        error.clear();
        ASSERT_EQ((ssize_t)size, c->put_object("k", data.data(), data.size(), opts)) << size;
        EXPECT_EQ("", error) << size;
        EXPECT_EQ("yes", headers_ok) << size;
        EXPECT_EQ(data, got) << size;
        EXPECT_EQ("x-amz-checksum-crc32c:" + crc32c_b64(data), trailer) << size;
    }
}

// The service's CRC32C of what it received differs from ours: EIO, not sent again (the
// service checked the trailer and stored what it got; the caller decides).
TEST_P(OssFaults, WrongCrc32cOfAPutIsEio) {
    int n = 0;
    scripted_server srv([&](Request& req, Response& resp, photon::net::ISocketStream*) {
        n++;
        read_body(req);
        resp.set_result(200);
        resp.headers.insert("x-amz-checksum-crc32c", "AAAAAA==");
        resp.headers.content_length(0);
        return 0;
    });
    auto c = client_for(srv, SignVersion::S3V4, false, true);
    EXPECT_EQ(EIO, failed_put_errno(*c));
    EXPECT_EQ(1, n);
}

// A whole GET whose body does not match the stored CRC32C is retried, then EIO; a composite
// checksum (of parts) and a ranged read are not compared with the body.
TEST_P(OssFaults, WrongCrc32cOfAGetIsEioAfterRetries) {
    int n = 0;
    std::string value = crc32c_b64("hellO"), type;
    bool asked = true;
    scripted_server srv([&](Request& req, Response& resp, photon::net::ISocketStream*) {
        n++;
        asked = asked && req.headers["x-amz-checksum-mode"] == "ENABLED";
        // "bytes=0-4" (all of it) or "bytes=0-1"
        size_t len = req.headers["Range"] == "bytes=0-1" ? 2 : 5;
        resp.set_result(206);
        resp.headers.insert("Content-Range", "bytes 0-" + std::to_string(len - 1) + "/5");
        resp.headers.insert("x-amz-checksum-crc32c", value);
        if (!type.empty()) resp.headers.insert("x-amz-checksum-type", type);
        resp.headers.content_length(len);
        resp.write("hello", len);
        return 0;
    });
    auto c = client_for(srv, SignVersion::S3V4, false, true);
    char buf[5];
    errno = 0;
    EXPECT_EQ(-1, c->get_object_range("k", buf, sizeof(buf), 0));
    EXPECT_EQ(EIO, errno);
    EXPECT_EQ(3, n);
    EXPECT_TRUE(asked);
    EXPECT_EQ(2, c->get_object_range("k", buf, 2, 0));  // a part of the object: not compared
    value = crc32c_b64("hello");
    EXPECT_EQ(5, c->get_object_range("k", buf, sizeof(buf), 0));
    value = "AAAAAA==-3", type = "COMPOSITE";
    EXPECT_EQ(5, c->get_object_range("k", buf, sizeof(buf), 0));
    value = "AAAAAA==";
    EXPECT_EQ(5, c->get_object_range("k", buf, sizeof(buf), 0));
    type.clear();
    n = 0;
    EXPECT_EQ(-1, c->get_object_range("k", buf, sizeof(buf), 0));
    EXPECT_EQ(3, n);
}

PHOTON_INSTANTIATE_ENGINE_TESTS(OssFaults);
