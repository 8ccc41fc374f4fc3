#include <photon/common/checksum/xxhash.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace {

uint32_t xxh(const char* s, uint32_t seed = 0) {
    return xxhash32_sw((const uint8_t*)s, strlen(s), seed);
}

// Values from the reference implementation (python-xxhash, xxh32_intdigest).
TEST(XxHash32, MatchesTheReferenceImplementation) {
    EXPECT_EQ(xxh(""), 0x02CC5D05u);
    EXPECT_EQ(xxh("", 1), 0x0B2CB792u);
    EXPECT_EQ(xxh("a"), 0x550D7456u);
    EXPECT_EQ(xxh("abc"), 0x32D153FFu);
    EXPECT_EQ(xxh("abcdefghijklmnopqrstuvwxyz"), 0x63A14D5Fu);
    EXPECT_EQ(xxh("abcdefghijklmnopqrstuvwxyz", 42), 0xD5CCFE8Eu);
    EXPECT_EQ(xxh("0123456789abcdef"), 0xC2C45B69u);
    EXPECT_EQ(xxh("0123456789abcdefg"), 0xCC79B217u);
    EXPECT_EQ(xxh("The quick brown fox jumps over the lazy dog"), 0xE85EA4DEu);
}

TEST(XxHash32, EveryTailShapeMatchesTheReference) {
    std::vector<uint8_t> data(1000);
    for (size_t i = 0; i < data.size(); i++) data[i] = uint8_t(i * 131 + 7);
    struct {
        size_t len;
        uint32_t want;
    } cases[] = {{1, 0x7E9A167Bu},  {3, 0xFFF0BD7Bu},   {4, 0x78273B31u},   {15, 0xA072D91Fu},
                 {16, 0xC93AC1DBu}, {17, 0xAE4937C7u},  {31, 0x06F36919u},  {32, 0xE666A335u},
                 {33, 0xA2766AB3u}, {999, 0xE461D015u}, {1000, 0x6F678AB9u}};
    for (auto& c : cases) EXPECT_EQ(xxhash32_sw(data.data(), c.len, 0x9747b28c), c.want) << c.len;
    EXPECT_EQ(xxhash32_sw(data.data(), data.size(), 0xFFFFFFFFu), 0x995B89B7u);  // seed wraps
}

TEST(XxHash32, ReadsAnyAlignment) {
    std::vector<uint8_t> data(300);
    for (size_t i = 0; i < data.size(); i++) data[i] = uint8_t(i * 7);
    for (size_t off = 1; off < 16; off++) {
        std::vector<uint8_t> shifted(off, 0xEE);
        shifted.insert(shifted.end(), data.begin(), data.end());
        EXPECT_EQ(xxhash32_sw(shifted.data() + off, data.size(), 5),
                  xxhash32_sw(data.data(), data.size(), 5));
    }
}

TEST(XxHash32, EmptyInputMayBeNull) { EXPECT_EQ(xxhash32_sw(nullptr, 0), 0x02CC5D05u); }

}  // namespace
