// The WebSocket codec (net/http/websocket_codec.h): SHA-1, base64 and the
// handshake keys, the UTF-8 checker, masking and frame headers, against the
// RFCs' and FIPS 180's vectors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "../../net/http/websocket_codec.h"
#include "net_test_util.h"

using namespace photon::net::http;
using photon_test::pattern;

namespace {

// ---- the codec ---------------------------------------------------------------------

std::string hex(const uint8_t* p, size_t n) {
    static const char d[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; i++) s += d[p[i] >> 4], s += d[p[i] & 15];
    return s;
}

std::string sha1_hex(const std::string& s) {
    uint8_t out[20];
    ws_detail::sha1(s.data(), s.size(), out);
    return hex(out, 20);
}

TEST(WebSocketCodec, Sha1MatchesFips180Vectors) {
    EXPECT_EQ("da39a3ee5e6b4b0d3255bfef95601890afd80709", sha1_hex(""));
    EXPECT_EQ("a9993e364706816aba3e25717850c26c9cd0d89d", sha1_hex("abc"));
    EXPECT_EQ(
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
        sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"));  // 56: 2 blocks
    EXPECT_EQ("34aa973cd4c4daa4f61eeb2bdbad27316534016f", sha1_hex(std::string(1000000, 'a')));
}

TEST(WebSocketCodec, Base64AndKeysFollowTheRfcs) {
    EXPECT_EQ("", ws_detail::base64("", 0));
    EXPECT_EQ("Zg==", ws_detail::base64("f", 1));
    EXPECT_EQ("Zm8=", ws_detail::base64("fo", 2));
    EXPECT_EQ("Zm9vYmFy", ws_detail::base64("foobar", 6));
    EXPECT_EQ("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", ws_detail::accept_key("dGhlIHNhbXBsZSBub25jZQ=="));
    std::string k1 = ws_detail::new_client_key(), k2 = ws_detail::new_client_key();
    EXPECT_TRUE(ws_detail::valid_client_key(k1)) << k1;
    EXPECT_NE(k1, k2);
    EXPECT_TRUE(ws_detail::valid_client_key("dGhlIHNhbXBsZSBub25jZQ=="));
    EXPECT_FALSE(ws_detail::valid_client_key("dGhlIHNhbXBsZSBub25jZR=="));  // stray low bits
    EXPECT_FALSE(ws_detail::valid_client_key("dGhlIHNhbXBsZSBub25jZQ="));
    EXPECT_FALSE(ws_detail::valid_client_key("dGhlIHNhbXBsZSBub25j*Q=="));
}

TEST(WebSocketCodec, Utf8CheckerFollowsRfc3629AcrossFeeds) {
    using ws_detail::is_utf8;
    EXPECT_TRUE(is_utf8(""));
    EXPECT_TRUE(is_utf8("plain ascii, longer than a word"));
    EXPECT_TRUE(
        is_utf8("\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF"));
    for (const char* bad : {"\x80", "\xC1\xBF", "\xE0\x9F\xBF", "\xED\xBF\xBF", "\xF0\x8F\xBF\xBF",
                            "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", "\xC3"})
        EXPECT_FALSE(is_utf8(bad)) << hex((const uint8_t*)bad, strlen(bad));
    // One byte at a time: a character straddling feeds is fine.
    std::string s =
        "a\xF0\x9F\x98\x80"
        "b\xE2\x82\xAC";
    ws_detail::utf8_checker c;
    for (char ch : s) {
        ASSERT_TRUE(c.feed(&ch, 1));
    }
    EXPECT_TRUE(c.complete());
    EXPECT_TRUE(c.feed("\xE2", 1));
    EXPECT_FALSE(c.complete());
    EXPECT_FALSE(c.feed("A", 1));
    EXPECT_FALSE(c.feed("A", 1));  // stays failed
}

TEST(WebSocketCodec, MaskingFromAnyOffsetMatchesBytewise) {
    const uint8_t key[4] = {0x12, 0x34, 0x56, 0x78};
    std::string data = pattern(1000, 11);
    for (size_t split : {0, 1, 3, 7, 8, 9, 500, 999}) {
        std::string m = data;
        ws_detail::apply_mask(&m[0], split, key, 0);
        ws_detail::apply_mask(&m[split], m.size() - split, key, split);
        for (size_t i = 0; i < data.size(); i++)
            ASSERT_EQ((char)(data[i] ^ key[i % 4]), m[i]) << split << " " << i;
    }
}

TEST(WebSocketCodec, HeadersRoundTripEveryLengthForm) {
    const uint8_t key[4] = {1, 2, 3, 4};
    for (uint64_t len : {0ULL, 125ULL, 126ULL, 65535ULL, 65536ULL, 1ULL << 32, (1ULL << 63) - 1})
        for (bool masked : {false, true}) {
            uint8_t h[ws_detail::kMaxFrameHeader];
            size_t n = ws_detail::build_header(h, ws_detail::kOpBinary, len < 126, len,
                                               masked ? key : nullptr);
            ASSERT_EQ(n, ws_detail::header_size(h[0], h[1]));
            ws_detail::FrameHeader f;
            ASSERT_EQ(0, ws_detail::parse_header(h, &f));
            EXPECT_EQ(len, f.length);
            EXPECT_EQ(masked, f.masked);
            EXPECT_EQ(len < 126, f.fin);
            EXPECT_EQ(ws_detail::kOpBinary, f.opcode);
            if (masked) {
                EXPECT_EQ(0, memcmp(key, f.mask, 4));
            }
        }
}

}  // namespace
