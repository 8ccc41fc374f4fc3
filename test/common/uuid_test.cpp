// photon/common/uuid.h and uuid4.h: generation (version, variant,
// uniqueness across threads), text round trips, and the parse errors.
#include <photon/common/uuid.h>

#include <gtest/gtest.h>

#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

const char kText[] = "bdf7bb2e-c231-43ce-87c2-299792458ef5";

std::string bytes_of(const UUID& u) { return std::string((const char*)&u, UUID::LEN); }

TEST(Uuid, ParsesKnownTextToItsBytesAndFormatsItUpperCase) {
    UUID u;
    ASSERT_EQ(0, u.parse(kText, sizeof(kText)));
    const unsigned char expected[16] = {0xbd, 0xf7, 0xbb, 0x2e, 0xc2, 0x31, 0x43, 0xce,
                                        0x87, 0xc2, 0x29, 0x97, 0x92, 0x45, 0x8e, 0xf5};
    EXPECT_EQ(0, memcmp(&u, expected, 16));
    UUID::String s = u;
    EXPECT_STREQ("BDF7BB2E-C231-43CE-87C2-299792458EF5", s.c_str());
    UUID again;
    ASSERT_EQ(0, again.parse(s));  // upper case parses too
    EXPECT_TRUE(again == u);
    EXPECT_FALSE(again != u);
}

TEST(Uuid, GeneratedUuidsAreVersion4WithTheRfcVariantAndDistinct) {
    std::set<std::string> seen;
    for (int i = 0; i < 2000; i++) {
        UUID u;
        u.generate();
        EXPECT_FALSE(u.is_null());
        auto b = bytes_of(u);
        EXPECT_EQ(0x40, (uint8_t)b[6] & 0xf0);
        EXPECT_EQ(0x80, (uint8_t)b[8] & 0xc0);
        UUID::String s = u;
        EXPECT_EQ('4', s.c_str()[14]);
        EXPECT_TRUE(UUID::String::is_valid(s.c_str()));
        seen.insert(b);
    }
    EXPECT_EQ(2000u, seen.size());
}

TEST(Uuid, ThreadsGenerateDistinctUuids) {
    std::mutex mtx;
    std::set<std::string> seen;
    std::vector<std::thread> ths;
    for (int t = 0; t < 4; t++) {
        ths.emplace_back([&] {
            std::vector<std::string> mine;
            for (int i = 0; i < 1000; i++) {
                UUID u;
                u.generate();
                mine.push_back(bytes_of(u));
            }
            std::lock_guard<std::mutex> lock(mtx);
            seen.insert(mine.begin(), mine.end());
        });
    }
    for (auto& t : ths) t.join();
    EXPECT_EQ(4000u, seen.size());
}

TEST(Uuid, ParseRejectsMalformedTextAndLeavesTheValueAlone) {
    UUID u;
    ASSERT_EQ(0, u.parse(kText, sizeof(kText)));
    const auto before = bytes_of(u);
    std::string dashless = kText;
    dashless[8] = 'a';  // a hex digit where a dash belongs
    std::string bad_digit = kText;
    bad_digit[3] = 'g';
    std::string moved_dash = kText;
    std::swap(moved_dash[8], moved_dash[9]);
    const char* bad[] = {"",
                         "bdf7bb2e-c231-43ce-87c2-299792458ef",
                         "bdf7bb2e-c231-43ce-87c2-299792458ef5x",
                         dashless.c_str(),
                         bad_digit.c_str(),
                         moved_dash.c_str(),
                         "{df7bb2e-c231-43ce-87c2-299792458ef5"};
    for (auto text : bad) {
        errno = 0;
        EXPECT_EQ(-1, u.parse(text, strlen(text) + 1)) << text;
        EXPECT_EQ(EINVAL, errno) << text;
        EXPECT_FALSE(UUID::String::is_valid(text)) << text;
        EXPECT_EQ(-1, uuid4_parse(const_cast<char*>(text), (char*)&u)) << text;
        EXPECT_EQ(before, bytes_of(u)) << text;
    }
    errno = 0;
    EXPECT_EQ(-1, u.parse(nullptr, 37));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, u.parse(kText, 35));  // the count is honoured
    EXPECT_FALSE(UUID::String::is_valid());
    EXPECT_EQ(-1, invalid_uuid4(nullptr));
    EXPECT_EQ(before, bytes_of(u));
}

TEST(Uuid, ParseTakesExactly36BytesWithoutANul) {
    char buf[36];
    memcpy(buf, kText, 36);
    UUID u;
    ASSERT_EQ(0, u.parse(buf, sizeof(buf)));
    UUID v;
    ASSERT_EQ(0, v.parse(kText, 36));
    EXPECT_TRUE(u == v);
    char longer[40];
    memcpy(longer, kText, 36);
    memcpy(longer + 36, "abc", 4);  // more text after it: invalid
    EXPECT_EQ(-1, u.parse(longer, sizeof(longer)));
}

TEST(Uuid, ToStringNeedsRoomForTheTextAndItsNul) {
    UUID u;
    u.generate();
    char small[36];
    memset(small, 'z', sizeof(small));
    errno = 0;
    EXPECT_EQ(-1, u.to_string(small, sizeof(small)));
    EXPECT_EQ(ENOBUFS, errno);
    EXPECT_EQ('z', small[0]);  // untouched
    char out[UUID::String::LEN];
    ASSERT_EQ(0, u.to_string(out, sizeof(out)));
    EXPECT_EQ(36u, strlen(out));
    UUID back;
    ASSERT_EQ(0, back.parse(out, sizeof(out)));
    EXPECT_TRUE(back == u);
}

TEST(Uuid, ResetTakesSixteenRawBytes) {
    UUID u;
    u.clear();
    EXPECT_TRUE(u.is_null());
    const char raw[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    errno = 0;
    EXPECT_EQ(-1, u.reset(raw, 15));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_TRUE(u.is_null());
    ASSERT_EQ(0, u.reset(raw, 16));
    EXPECT_FALSE(u.is_null());
    EXPECT_EQ(0, memcmp(&u, raw, 16));
    UUID copy = u;
    EXPECT_TRUE(copy == u);
    EXPECT_EQ(0, uuid4_compare((char*)&copy, (char*)&u));
    copy.e[5] = 0;
    EXPECT_TRUE(copy != u);
    EXPECT_LT(uuid4_compare((char*)&copy, (char*)&u), 0);
}

TEST(Uuid, LogsAsItsText) {
    UUID u;
    ASSERT_EQ(0, u.parse(kText, sizeof(kText)));
    LogBuffer log;
    log << u << ' ' << UUID::String(u);
    EXPECT_EQ("BDF7BB2E-C231-43CE-87C2-299792458EF5 BDF7BB2E-C231-43CE-87C2-299792458EF5",
              std::string(log.begin(), log.end()));
}

}  // namespace
