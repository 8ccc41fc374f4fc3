// gRPC's wire details (net/grpc/wire.h): grpc-timeout both ways, grpc-message's
// percent-encoding, base64 of "-bin" metadata, metadata validity, the
// message reader over a body cut anywhere, gzip limits, and random bytes
// through every decoder (bounded: 20,000 inputs).
#include "../../net/grpc/wire.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

using namespace photon::net::grpc;

TEST(GrpcWire, TimeoutsParseAndFormat) {
    uint64_t us = 0;
    EXPECT_TRUE(parse_timeout("1S", &us));
    EXPECT_EQ(1000000u, us);
    EXPECT_TRUE(parse_timeout("250m", &us));
    EXPECT_EQ(250000u, us);
    EXPECT_TRUE(parse_timeout("2H", &us));
    EXPECT_EQ(7200000000ULL, us);
    EXPECT_TRUE(parse_timeout("3M", &us));
    EXPECT_EQ(180000000u, us);
    EXPECT_TRUE(parse_timeout("1500n", &us));
    EXPECT_EQ(2u, us) << "nanoseconds round up";
    EXPECT_TRUE(parse_timeout("99999999u", &us));
    for (const char* bad : {"", "S", "1", "1x", "-1S", "123456789S", "1 S", "1s"})
        EXPECT_FALSE(parse_timeout(bad, &us)) << bad;
    for (uint64_t v : std::vector<uint64_t>{0, 1, 999, 100000000, 123456789012ULL, UINT64_MAX}) {
        std::string f = format_timeout(v);
        EXPECT_LE(f.size(), 9u) << f;
        ASSERT_TRUE(parse_timeout(f, &us)) << f;
        EXPECT_GE(us, std::min<uint64_t>(v, 99999999ULL * 3600 * 1000000)) << f;
    }
}

TEST(GrpcWire, PercentEncodingRoundTripsAndIsLenient) {
    std::string all;
    for (int i = 0; i < 256; i++) all += (char)i;
    std::string enc = percent_encode(all);
    for (char c : enc) EXPECT_TRUE(c >= 0x20 && c <= 0x7e);
    EXPECT_EQ(all, percent_decode(enc));
    EXPECT_EQ("100%", percent_decode("100%"));
    EXPECT_EQ("%zz", percent_decode("%zz"));
    EXPECT_EQ("a b", percent_decode("a%20b"));
}

TEST(GrpcWire, Base64RoundTripsPaddedOrNot) {
    std::string out;
    for (size_t n = 0; n < 20; n++) {
        std::string s;
        for (size_t i = 0; i < n; i++) s += (char)(i * 37 + 200);
        std::string e = base64_encode(s);
        ASSERT_TRUE(base64_decode(e, &out));
        EXPECT_EQ(s, out);
        while (!e.empty() && e.back() == '=') e.pop_back();
        ASSERT_TRUE(base64_decode(e, &out));
        EXPECT_EQ(s, out);
    }
    EXPECT_FALSE(base64_decode("a", &out));
    EXPECT_FALSE(base64_decode("ab!c", &out));
}

TEST(GrpcWire, MetadataKeysAndValuesAreChecked) {
    EXPECT_TRUE(valid_metadata("x-a.b_c", "text"));
    EXPECT_TRUE(valid_metadata("x-bin", std::string("\0\xff", 2)));
    EXPECT_FALSE(valid_metadata("X-Upper", "v"));
    EXPECT_FALSE(valid_metadata("x", "new\nline"));
    EXPECT_FALSE(valid_metadata("grpc-status", "0"));
    EXPECT_FALSE(valid_metadata("content-type", "x"));
    EXPECT_FALSE(valid_metadata("", "x"));
    std::vector<header_field> f;
    metadata_to_fields({{"k", "v"}, {"b-bin", std::string("\0\x01", 2)}}, &f);
    f.push_back({"grpc-status", "0"});
    f.push_back({"b-bin", "AAE,AgM"});  // two values joined
    Metadata md;
    ASSERT_TRUE(metadata_from_fields(f, &md));
    ASSERT_EQ(4u, md.size());
    EXPECT_EQ(std::string("\0\x01", 2), md[1].second);
    EXPECT_EQ(std::string("\x02\x03", 2), md[3].second);
}

std::string frame(const std::string& m, uint8_t flag = 0) {
    char p[5];
    write_prefix(flag, (uint32_t)m.size(), p);
    return std::string(p, 5) + m;
}

TEST(GrpcWire, TheReaderFindsMessagesInABodyCutAnywhere) {
    std::string body;
    std::vector<std::string> sent;
    for (int i = 0; i < 50; i++) {
        sent.push_back(std::string(i * 13, (char)i));
        body += frame(sent.back(), i % 2);
    }
    std::mt19937 rng(7);
    for (int round = 0; round < 50; round++) {
        message_reader r(1 << 20);
        size_t off = 0, got = 0;
        while (off < body.size() || got < sent.size()) {
            size_t n = std::min<size_t>(rng() % 40, body.size() - off);
            r.feed(body.data() + off, n);
            off += n;
            bool compressed;
            std::string m;
            while (r.next(&compressed, &m) == message_reader::kMessage) {
                ASSERT_LT(got, sent.size());
                EXPECT_EQ(sent[got], m);
                EXPECT_EQ(got % 2 == 1, compressed);
                got++;
            }
            if (off == body.size() && got < sent.size()) FAIL() << "messages lost";
        }
        EXPECT_FALSE(r.partial());
    }
    message_reader small(10);
    small.feed(frame(std::string(11, 'x')).data(), 5);
    bool c;
    std::string m;
    EXPECT_EQ(message_reader::kTooLarge, small.next(&c, &m)) << "known from the prefix alone";
    message_reader flag(10);
    flag.feed("\x02\0\0\0\0", 5);
    EXPECT_EQ(message_reader::kBadFlag, flag.next(&c, &m));
}

TEST(GrpcWire, GzipRoundTripsAndHoldsItsLimit) {
    if (!gzip_supported()) GTEST_SKIP() << "built without zlib";
    std::string big(1 << 20, 'a'), z, out;
    ASSERT_EQ(0, gzip_compress(big, &z));
    EXPECT_LT(z.size(), big.size() / 100);
    ASSERT_EQ(0, gzip_decompress(z, big.size(), &out));
    EXPECT_TRUE(out == big);
    errno = 0;
    EXPECT_EQ(-1, gzip_decompress(z, big.size() - 1, &out));
    EXPECT_EQ(EMSGSIZE, errno) << "a bomb stops at the limit";
    EXPECT_EQ(-1, gzip_decompress(z.substr(0, z.size() / 2), big.size(), &out));
    EXPECT_EQ(EINVAL, errno);
}

TEST(GrpcWire, RandomBytesThroughEveryDecoder) {
    std::mt19937 rng(11);
    uint64_t us;
    std::string out;
    for (int i = 0; i < 20000; i++) {
        std::string s(rng() % 40, 0);
        for (auto& c : s) c = (char)rng();
        parse_timeout(s, &us);
        percent_decode(s);
        if (base64_decode(s, &out)) {
            EXPECT_LE(out.size(), s.size());
        }
        message_reader r(64);
        r.feed(s.data(), s.size());
        bool c;
        std::string m;
        while (r.next(&c, &m) == message_reader::kMessage) EXPECT_LE(m.size(), 64u);
        if (gzip_supported() && i % 10 == 0) gzip_decompress(s, 1 << 16, &out);
    }
}

}  // namespace
