// Photon-style use of the checksum headers, written the way PhotonLibOS's
// own programs call them: raw uint8_t buffers, brace-initialised
// components, std::string_view overloads, OpenSSL one-shot comparisons.
#include <photon/common/checksum/crc32c.h>
#include <photon/common/checksum/crc64ecma.h>
#include <photon/common/checksum/digest.h>
#include <photon/common/checksum/xxhash.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

TEST(checksum_compat, crc32c_combine_series_and_trim) {
    const uint32_t N = 10, M = 510;
    unsigned char buf[M * N];
    srand(1);
    for (auto& c : buf) c = rand();
    auto x = crc32c_sw(buf, M * N, 0);
    EXPECT_EQ(x, crc32c_hw(buf, M * N, 0));
    EXPECT_EQ(x, crc32c(buf, sizeof(buf)));

    uint32_t L1 = 1234, L2 = sizeof(buf) - L1;
    auto crc1 = crc32c_hw(buf, L1, 0);
    auto crc2 = crc32c_hw(buf + L1, L2, 0);
    EXPECT_EQ(x, crc32c_combine(crc1, crc2, L2));
    EXPECT_EQ(x, crc32c_extend(buf + L1, L2, crc1));

    uint32_t crc[N] = {0};
    crc32c_series(buf, M, N, crc);
    EXPECT_EQ(x, crc32c_combine_series(crc, M, N));

    uint32_t P = 100, S = 150;
    auto cp = crc32c(buf, P), cm = crc32c(buf + P, sizeof(buf) - P - S),
         cs = crc32c(buf + sizeof(buf) - S, S);
    EXPECT_EQ(cm, crc32c_trim({x, sizeof(buf)}, {cp, P}, {cs, S}));
}

TEST(checksum_compat, crc64ecma_extend_and_combine) {
    unsigned char buf[4096];
    memset(buf, 0, sizeof(buf));
    *(uint64_t*)buf = 0x1234567890abcdef;
    auto y = crc64ecma_sw(buf, 30, 0);
    auto y1 = crc64ecma_sw(buf, 8, 0);
    EXPECT_EQ(y, crc64ecma_sw(buf + 8, 30 - 8, y1));
    auto y2 = crc64ecma_sw(buf + 8, 30 - 8, 0);
    EXPECT_EQ(y, crc64ecma_combine(y1, y2, 30 - 8));
    EXPECT_EQ(y, crc64ecma(buf, 30, 0));
    EXPECT_EQ(crc64ecma_trim({y, 30}, {y1, 8}, {0, 0}), y2);
    std::string_view text = "hello";
    EXPECT_EQ(crc64ecma(text), crc64ecma_extend(text, 0));
}

template <typename T, typename F>
void digest_against_openssl(T&& shax, F truth_hasher) {
    static const char data[] = "The quick brown fox jumps over the lazy dog";
    shax.update(data, 10);
    shax.update(data + 10, sizeof(data) - 10);
    unsigned char hash[T::DIGEST_LENGTH] = {0}, truth[T::DIGEST_LENGTH] = {0};
    shax.finalize(hash);
    truth_hasher((const unsigned char*)data, sizeof(data), truth);
    EXPECT_EQ(0, memcmp(truth, hash, T::DIGEST_LENGTH));
}

TEST(checksum_compat, digest) {
    digest_against_openssl(photon::sha1(), &SHA1);
    digest_against_openssl(photon::sha256(), &SHA256);
    digest_against_openssl(photon::sha512(), &SHA512);
    auto hmac = photon::HMAC_SHA256("key", "The quick brown fox jumps over the lazy dog");
    std::string_view truth{
        "\xf7\xbc\x83\xf4\x30\x53\x84\x24\xb1\x32\x98\xe6\xaa\x6f\xb1\x43\xef\x4d\x59\xa1\x49\x46"
        "\x17\x59\x97\x47\x9d\xbc\x2d\x1a\x3c\xd8",
        32};
    EXPECT_EQ(hmac, truth);
}

TEST(checksum_compat, xxhash) {
    const char* s = "hello world";
    EXPECT_NE(xxhash32_sw((const uint8_t*)s, 11, 0), xxhash32_sw((const uint8_t*)s, 11, 1));
    EXPECT_EQ(xxhash32_sw((const uint8_t*)s, 11), xxhash32_sw((const uint8_t*)s, 11, 0));
}
