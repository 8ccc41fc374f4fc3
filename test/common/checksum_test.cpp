#include <photon/common/checksum/crc32c.h>
#include <photon/common/checksum/crc64ecma.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

// Bit-at-a-time register updates, independent of the library's tables and
// instructions: reg(crc, data) for the reflected polynomials.
uint32_t ref_crc32c(const uint8_t* p, size_t n, uint32_t crc) {
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78u : 0);
    }
    return crc;
}

uint64_t ref_crc64ecma(const uint8_t* p, size_t n, uint64_t crc) {
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ ((crc & 1) ? 0xc96c5795d7870f42ull : 0);
    }
    return ~crc;
}

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = (uint8_t)rng();
    return v;
}

const uint8_t* u8(const char* s) { return (const uint8_t*)s; }

// --- known values ------------------------------------------------------------

TEST(Crc32c, CheckValueIsTheRawRegisterAndTextbookValueNeedsInversion) {
    // Photon's convention: no pre/post inversion.
    EXPECT_EQ(crc32c("123456789", 9), 0x58E3FA20u);
    EXPECT_EQ(crc32c(std::string_view("123456789")), 0x58E3FA20u);
    // The CRC-32C catalogue check value.
    EXPECT_EQ(~crc32c_extend("123456789", 9, ~0u), 0xE3069283u);
    EXPECT_EQ(crc32c("a", 1), 2477592673u);  // from PhotonLibOS's own test data
    EXPECT_EQ(crc32c_sw(u8("123456789"), 9, 0), 0x58E3FA20u);
    EXPECT_EQ(crc32c_hw(u8("123456789"), 9, 0), 0x58E3FA20u);
}

TEST(Crc32c, MatchesTheIscsiVectorsOfRfc3720) {
    uint8_t zeros[32] = {}, ones[32], up[32], down[32];
    for (int i = 0; i < 32; i++) ones[i] = 0xff, up[i] = (uint8_t)i, down[i] = (uint8_t)(31 - i);
    auto iscsi = [](const uint8_t* p) { return ~crc32c_extend(p, 32, ~0u); };
    EXPECT_EQ(iscsi(zeros), 0x8A9136AAu);
    EXPECT_EQ(iscsi(ones), 0x62A8AB43u);
    EXPECT_EQ(iscsi(up), 0x46DD794Eu);
    EXPECT_EQ(iscsi(down), 0x113FDB5Cu);
}

TEST(Crc32c, EmptyInputLeavesTheCrcUnchanged) {
    EXPECT_EQ(crc32c("", 0), 0u);
    EXPECT_EQ(crc32c(nullptr, 0), 0u);
    for (uint32_t c : {0u, 1u, 0xdeadbeefu, ~0u}) {
        EXPECT_EQ(crc32c_extend(nullptr, 0, c), c);
        EXPECT_EQ(crc32c_sw(nullptr, 0, c), c);
        EXPECT_EQ(crc32c_hw(nullptr, 0, c), c);
    }
}

TEST(Crc64ecma, CheckValueIsCrc64Xz) {
    EXPECT_EQ(crc64ecma("123456789", 9, 0), 0x995DC9BBDF1939FAull);
    EXPECT_EQ(crc64ecma_sw(u8("123456789"), 9, 0), 0x995DC9BBDF1939FAull);
    EXPECT_EQ(crc64ecma_hw(u8("123456789"), 9, 0), 0x995DC9BBDF1939FAull);
    EXPECT_EQ(crc64ecma("a", 1, 0), 3675645893302102789ull);  // PhotonLibOS's test data
}

TEST(Crc64ecma, StringViewOverloadReturnsAll64Bits) {
    // PhotonLibOS returned uint32_t here, dropping the high half.
    auto v = crc64ecma(std::string_view("123456789"));
    static_assert(sizeof(v) == 8, "64-bit result");
    EXPECT_EQ(v, 0x995DC9BBDF1939FAull);
    EXPECT_EQ(crc64ecma_extend(std::string_view("6789"), crc64ecma("12345", 5, 0)), v);
}

TEST(Crc64ecma, EmptyInputLeavesTheCrcUnchanged) {
    EXPECT_EQ(crc64ecma("", 0, 0), 0u);
    for (uint64_t c : {0ull, 1ull, 0x0123456789abcdefull, ~0ull}) {
        EXPECT_EQ(crc64ecma_extend(nullptr, 0, c), c);
        EXPECT_EQ(crc64ecma_sw(nullptr, 0, c), c);
        EXPECT_EQ(crc64ecma_hw(nullptr, 0, c), c);
    }
}

// --- hardware against software ---------------------------------------------

TEST(Checksum, ReportsWhichPathsThisCpuUses) {
    RecordProperty("crc32c_hw", is_crc32c_hw_available() ? "yes" : "no");
    RecordProperty("crc64ecma_hw", is_crc64ecma_hw_available() ? "yes" : "no");
    // The dispatched entry points agree with the explicit ones either way.
    auto d = random_bytes(100, 1);
    EXPECT_EQ(crc32c(d.data(), d.size()), crc32c_sw(d.data(), d.size(), 0));
    EXPECT_EQ(crc64ecma(d.data(), d.size(), 0), crc64ecma_sw(d.data(), d.size(), 0));
}

TEST(Checksum, EveryLengthUpTo1024AtRandomAlignmentsMatchesTheBitwiseReference) {
    auto data = random_bytes(1024 + 64, 2);
    std::mt19937_64 rng(3);
    for (size_t n = 0; n <= 1024; n++) {
        for (int rep = 0; rep < 2; rep++) {
            const uint8_t* p = data.data() + rng() % 64;
            uint32_t c32 = rep ? (uint32_t)rng() : 0;
            uint64_t c64 = rep ? rng() : 0;
            uint32_t want32 = ref_crc32c(p, n, c32);
            uint64_t want64 = ref_crc64ecma(p, n, c64);
            ASSERT_EQ(crc32c_sw(p, n, c32), want32) << "n=" << n;
            ASSERT_EQ(crc32c_hw(p, n, c32), want32) << "n=" << n << " off=" << p - data.data();
            ASSERT_EQ(crc32c_extend(p, n, c32), want32) << "n=" << n;
            ASSERT_EQ(crc64ecma_sw(p, n, c64), want64) << "n=" << n;
            ASSERT_EQ(crc64ecma_hw(p, n, c64), want64) << "n=" << n << " off=" << p - data.data();
            ASSERT_EQ(crc64ecma_extend(p, n, c64), want64) << "n=" << n;
        }
    }
}

TEST(Checksum, LengthsAroundTheHardwareBlockSizesMatchSoftware) {
    auto data = random_bytes(3 * 4096 * 3 + 64, 4);
    std::vector<size_t> lens;
    for (size_t block : {3 * 64, 3 * 512, 3 * 4096, 2 * 3 * 4096, 128, 256, 240, 16, 32})
        for (size_t d = 0; d < 20; d++) lens.push_back(block + d - 10);
    lens.push_back(data.size() - 64);
    for (size_t n : lens)
        for (size_t off : {0, 1, 7, 8, 13, 33}) {
            const uint8_t* p = data.data() + off;
            ASSERT_EQ(crc32c_hw(p, n, 0x1234), crc32c_sw(p, n, 0x1234)) << n << "@" << off;
            ASSERT_EQ(crc64ecma_hw(p, n, 0x1234), crc64ecma_sw(p, n, 0x1234)) << n << "@" << off;
        }
}

TEST(Checksum, MultiMegabyteBuffersMatchTheBitwiseReference) {
    for (size_t n : {size_t(5 << 20) + 3, size_t(8 << 20)}) {
        auto data = random_bytes(n + 1, n);
        const uint8_t* p = data.data() + 1;  // odd address
        EXPECT_EQ(crc32c_hw(p, n, 0), ref_crc32c(p, n, 0));
        EXPECT_EQ(crc32c_sw(p, n, 0), ref_crc32c(p, n, 0));
        EXPECT_EQ(crc64ecma_hw(p, n, 0), ref_crc64ecma(p, n, 0));
        EXPECT_EQ(crc64ecma_sw(p, n, 0), ref_crc64ecma(p, n, 0));
    }
}

// --- incremental, combine, series, trim --------------------------------------

TEST(Checksum, ExtendingPieceByPieceEqualsOneShot) {
    auto data = random_bytes(200000, 5);
    const uint32_t whole32 = crc32c(data.data(), data.size());
    const uint64_t whole64 = crc64ecma(data.data(), data.size(), 0);
    std::mt19937_64 rng(6);
    for (int trial = 0; trial < 20; trial++) {
        uint32_t c32 = 0, h32 = 0, s32 = 0;
        uint64_t c64 = 0, h64 = 0, s64 = 0;
        size_t off = 0, max_piece = size_t(1) << (rng() % 16);
        while (off < data.size()) {
            size_t n = std::min<size_t>(rng() % (max_piece + 1), data.size() - off);
            const uint8_t* p = data.data() + off;
            c32 = crc32c_extend(p, n, c32), h32 = crc32c_hw(p, n, h32), s32 = crc32c_sw(p, n, s32);
            c64 = crc64ecma_extend(p, n, c64), h64 = crc64ecma_hw(p, n, h64);
            s64 = crc64ecma_sw(p, n, s64);
            off += n;
        }
        ASSERT_EQ(c32, whole32);
        ASSERT_EQ(h32, whole32);
        ASSERT_EQ(s32, whole32);
        ASSERT_EQ(c64, whole64);
        ASSERT_EQ(h64, whole64);
        ASSERT_EQ(s64, whole64);
    }
}

TEST(Checksum, CombineOfTwoPartsEqualsTheWhole) {
    auto data = random_bytes(5100, 7);
    const uint32_t x32 = crc32c(data.data(), data.size());
    const uint64_t x64 = crc64ecma(data.data(), data.size(), 0);
    std::mt19937_64 rng(8);
    for (int i = 0; i < 2000; i++) {
        uint32_t l1 = i < 2 ? i * (uint32_t)data.size() : uint32_t(rng() % (data.size() + 1));
        uint32_t l2 = uint32_t(data.size()) - l1;
        const uint8_t* b = data.data() + l1;
        uint32_t a32 = crc32c(data.data(), l1), b32 = crc32c(b, l2);
        uint64_t a64 = crc64ecma(data.data(), l1, 0), b64 = crc64ecma(b, l2, 0);
        ASSERT_EQ(crc32c_combine(a32, b32, l2), x32) << l1;
        ASSERT_EQ(crc32c_combine_sw(a32, b32, l2), x32) << l1;
        ASSERT_EQ(crc32c_combine_hw(a32, b32, l2), x32) << l1;
        ASSERT_EQ(crc64ecma_combine(a64, b64, l2), x64) << l1;
        ASSERT_EQ(crc64ecma_combine_sw(a64, b64, l2), x64) << l1;
        ASSERT_EQ(crc64ecma_combine_hw(a64, b64, l2), x64) << l1;
    }
}

TEST(Checksum, CombineOverFourGibibytesOfZerosMatchesExtendingInSteps) {
    // crc(a || 2^32 - 1 zero bytes), reached two ways: one combine with the
    // CRC of the zeros built by doubling, and extending a MiB of zeros 4095
    // times plus a remainder. Exercises the top bits of the length.
    std::vector<uint8_t> zeros(1 << 20);
    uint32_t z32 = crc32c(zeros.data(), zeros.size());  // CRC of 1 MiB of zeros
    uint64_t z64 = crc64ecma(zeros.data(), zeros.size(), 0);
    uint32_t c32 = crc32c("head", 4);
    uint64_t c64 = crc64ecma("head", 4, 0);
    uint32_t step32 = c32;
    uint64_t step64 = c64;
    for (int i = 0; i < 4095; i++)
        step32 = crc32c_combine(step32, z32, 1 << 20),
        step64 = crc64ecma_combine(step64, z64, 1 << 20);
    step32 = crc32c_extend(zeros.data(), (1 << 20) - 1, step32);
    step64 = crc64ecma_extend(zeros.data(), (1 << 20) - 1, step64);

    uint32_t zz32 = crc32c(zeros.data(), (1 << 20) - 1);
    uint64_t zz64 = crc64ecma(zeros.data(), (1 << 20) - 1, 0);
    uint32_t len = (1 << 20) - 1;
    for (int i = 0; i < 12; i++) {  // double up to 4 GiB - 1 (len*2+1 each time)
        uint32_t one32 = crc32c(zeros.data(), 1);
        uint64_t one64 = crc64ecma(zeros.data(), 1, 0);
        zz32 = crc32c_combine(crc32c_combine(zz32, zz32, len), one32, 1);
        zz64 = crc64ecma_combine(crc64ecma_combine(zz64, zz64, len), one64, 1);
        len = len * 2 + 1;
    }
    ASSERT_EQ(len, 0xFFFFFFFFu);
    EXPECT_EQ(crc32c_combine_sw(c32, zz32, len), step32);
    EXPECT_EQ(crc32c_combine_hw(c32, zz32, len), step32);
    EXPECT_EQ(crc64ecma_combine_sw(c64, zz64, len), step64);
    EXPECT_EQ(crc64ecma_combine_hw(c64, zz64, len), step64);
}

TEST(Checksum, CombineWithAnEmptyPartIsTheOtherPart) {
    uint32_t a = crc32c("abc", 3);
    EXPECT_EQ(crc32c_combine(a, 0, 0), a);
    EXPECT_EQ(crc32c_combine(0, a, 3), a);
    uint64_t b = crc64ecma("abc", 3, 0);
    EXPECT_EQ(crc64ecma_combine(b, 0, 0), b);
    EXPECT_EQ(crc64ecma_combine(0, b, 3), b);
}

TEST(Checksum, SeriesAndCombineSeriesAgreeWithTheWhole) {
    for (uint32_t part : {1u, 3u, 7u, 8u, 9u, 100u, 510u, 4096u, 5000u}) {
        for (uint32_t n : {0u, 1u, 4u, 5u, 13u}) {
            auto data = random_bytes(size_t(part) * n + 1, part * 100 + n);
            const uint8_t* p = data.data() + 1;
            std::vector<uint32_t> s32(n + 1, 0xAAAAAAAA), h32(n + 1, 0xAAAAAAAA),
                d32(n + 1, 0xAAAAAAAA);
            std::vector<uint64_t> s64(n + 1, 7), h64(n + 1, 7), d64(n + 1, 7);
            crc32c_series_sw(p, part, n, s32.data());
            crc32c_series_hw(p, part, n, h32.data());
            crc32c_series(p, part, n, d32.data());
            crc64ecma_series_sw(p, part, n, s64.data());
            crc64ecma_series_hw(p, part, n, h64.data());
            crc64ecma_series(p, part, n, d64.data());
            for (uint32_t i = 0; i < n; i++) {
                uint32_t want = crc32c(p + size_t(i) * part, part);
                ASSERT_EQ(s32[i], want) << part << "x" << n << " [" << i << "]";
                ASSERT_EQ(h32[i], want) << part << "x" << n << " [" << i << "]";
                ASSERT_EQ(d32[i], want);
                uint64_t want64 = crc64ecma(p + size_t(i) * part, part, 0);
                ASSERT_EQ(s64[i], want64);
                ASSERT_EQ(h64[i], want64);
                ASSERT_EQ(d64[i], want64);
            }
            // Nothing past n_parts is written.
            EXPECT_EQ(s32[n], 0xAAAAAAAAu);
            EXPECT_EQ(h32[n], 0xAAAAAAAAu);
            EXPECT_EQ(s64[n], 7u);
            EXPECT_EQ(h64[n], 7u);

            uint32_t whole32 = crc32c(p, size_t(part) * n);
            uint64_t whole64 = crc64ecma(p, size_t(part) * n, 0);
            EXPECT_EQ(crc32c_combine_series(s32.data(), part, n), whole32);
            EXPECT_EQ(crc32c_combine_series_sw(s32.data(), part, n), whole32);
            EXPECT_EQ(crc32c_combine_series_hw(s32.data(), part, n), whole32);
            EXPECT_EQ(crc64ecma_combine_series(s64.data(), part, n), whole64);
            EXPECT_EQ(crc64ecma_combine_series_sw(s64.data(), part, n), whole64);
            EXPECT_EQ(crc64ecma_combine_series_hw(s64.data(), part, n), whole64);
        }
    }
}

TEST(Checksum, SeriesHwCoversPartsShorterThanEightBytes) {
    // PhotonLibOS's interleaved series skipped the sub-qword tail when a part
    // had no whole qword, leaving 0 for every part shorter than 8 bytes.
    auto data = random_bytes(64, 14);
    for (uint32_t part = 1; part < 8; part++) {
        uint32_t out[8] = {};
        crc32c_series_hw(data.data(), part, 8, out);
        for (uint32_t i = 0; i < 8; i++)
            EXPECT_EQ(out[i], crc32c(data.data() + i * part, part)) << part << " [" << i << "]";
    }
}

TEST(Checksum, TrimLeavesTheMiddle) {
    auto data = random_bytes(5100, 9);
    const uint32_t n = (uint32_t)data.size();
    const uint32_t x32 = crc32c(data.data(), n);
    const uint64_t x64 = crc64ecma(data.data(), n, 0);
    std::mt19937_64 rng(10);
    for (int i = 0; i < 1000; i++) {
        uint32_t l1 = rng() % 200, l3 = rng() % 200;
        if (i == 0) l1 = l3 = 0;
        if (i == 1) l1 = 0;
        if (i == 2) l3 = 0;
        if (i == 3) l1 = 2000, l3 = n - 2000;  // empty middle
        const uint8_t* mid = data.data() + l1;
        uint32_t lm = n - l1 - l3;
        CRC32C_Component all{x32, n}, pre{crc32c(data.data(), l1), l1},
            suf{crc32c(mid + lm, l3), l3};
        uint32_t want32 = crc32c(mid, lm);
        ASSERT_EQ(crc32c_trim(all, pre, suf), want32) << l1 << "," << l3;
        ASSERT_EQ(crc32c_trim_sw(all, pre, suf), want32) << l1 << "," << l3;
        ASSERT_EQ(crc32c_trim_hw(all, pre, suf), want32) << l1 << "," << l3;
        CRC64ECMA_Component all64{x64, n}, pre64{crc64ecma(data.data(), l1, 0), l1},
            suf64{crc64ecma(mid + lm, l3, 0), l3};
        uint64_t want64 = crc64ecma(mid, lm, 0);
        ASSERT_EQ(crc64ecma_trim(all64, pre64, suf64), want64) << l1 << "," << l3;
        ASSERT_EQ(crc64ecma_trim_sw(all64, pre64, suf64), want64) << l1 << "," << l3;
        ASSERT_EQ(crc64ecma_trim_hw(all64, pre64, suf64), want64) << l1 << "," << l3;
    }
}

TEST(Checksum, TrimRejectsPrefixAndSuffixLongerThanTheWhole) {
    errno = 0;
    EXPECT_EQ(crc32c_trim({1, 10}, {2, 6}, {3, 5}), 0u);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(crc64ecma_trim({1, 10}, {2, 11}, {3, 0}), 0u);
    EXPECT_EQ(errno, EINVAL);
}

TEST(Checksum, TrimRejectsSizesWhoseSumWrapsAround) {
    // 0xFFFFFFFF + 2 wraps to 1 in 32 bits; PhotonLibOS accepted it.
    errno = 0;
    EXPECT_EQ(crc32c_trim_sw({1, 10}, {2, 0xFFFFFFFFu}, {3, 2}), 0u);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(crc64ecma_trim_hw({1, 10}, {2, ~0ull}, {3, 2}), 0u);
    EXPECT_EQ(errno, EINVAL);
}

// CRC-64 of n zero bytes for any n, without the bytes: doubling by combine.
uint64_t crc64_of_zeros(uint64_t n) {
    uint64_t acc = 0, acc_len = 0, pow = crc64ecma("\0", 1, 0), pow_len = 1;
    for (; n; n >>= 1) {
        if (n & 1) {
            // acc covers acc_len bytes; append pow_len more (fits uint32_t
            // here: the callers keep every power below 4 GiB).
            acc = crc64ecma_combine(acc, pow, (uint32_t)pow_len), acc_len += pow_len;
        }
        if (n > 1) pow = crc64ecma_combine(pow, pow, (uint32_t)pow_len), pow_len *= 2;
    }
    return acc;
}

TEST(Checksum, Crc64TrimHandlesPartsOfFourGibibytesAndMore) {
    // P || M || Z || S with Z = 4.5 GiB of zeros, so the suffix Z || S and
    // the span after P are both past 32 bits (Photon truncated those to
    // uint32_t and indexed past its shift tables). Only the small parts are
    // real bytes; the rest is CRC algebra.
    const uint64_t gib = 1ull << 30, zlen = 4 * gib + gib / 2;
    auto p = random_bytes(100, 11), m = random_bytes(300, 12), s = random_bytes(50, 13);
    uint64_t cp = crc64ecma(p.data(), p.size(), 0), cm = crc64ecma(m.data(), m.size(), 0),
             cs = crc64ecma(s.data(), s.size(), 0);
    uint64_t z3 = crc64_of_zeros(3 * gib), z15 = crc64_of_zeros(gib + gib / 2);
    // crc(X || Z) for any X: extend over Z in two steps below 4 GiB each.
    auto then_zeros = [&](uint64_t x) {
        return crc64ecma_combine(crc64ecma_combine(x, z3, uint32_t(3 * gib)), z15,
                                 uint32_t(gib + gib / 2));
    };
    uint64_t pm = crc64ecma_combine(cp, cm, (uint32_t)m.size());
    uint64_t all = crc64ecma_combine(then_zeros(pm), cs, (uint32_t)s.size());
    uint64_t suffix = crc64ecma_combine(then_zeros(0), cs, (uint32_t)s.size());
    uint64_t total = p.size() + m.size() + zlen + s.size();
    CRC64ECMA_Component a{all, total}, pre{cp, p.size()}, suf{suffix, zlen + s.size()};
    EXPECT_EQ(crc64ecma_trim_sw(a, pre, suf), cm);
    EXPECT_EQ(crc64ecma_trim_hw(a, pre, suf), cm);
    // And the other way round: a short suffix, a middle of M || Z.
    uint64_t mz = then_zeros(cm);
    EXPECT_EQ(crc64ecma_trim_sw(a, pre, {cs, s.size()}), mz);
    EXPECT_EQ(crc64ecma_trim_hw(a, pre, {cs, s.size()}), mz);
}

}  // namespace
