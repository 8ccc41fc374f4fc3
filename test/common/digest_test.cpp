#include <photon/common/checksum/digest.h>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

std::string hex(std::string_view s) {
    static const char* d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) out += d[c >> 4], out += d[c & 15];
    return out;
}

TEST(Digest, MatchesTheStandardsTestVectors) {
    EXPECT_EQ(hex(photon::sha1("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
    EXPECT_EQ(hex(photon::sha256("abc")),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(hex(photon::sha512("abc")),
              "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
              "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
    EXPECT_EQ(hex(photon::md5("message digest")), "f96b697d7cb7938d525a2f31aaf161d0");
    EXPECT_EQ(hex(photon::md5("")), "d41d8cd98f00b204e9800998ecf8427e");
    EXPECT_EQ(int(photon::sha256::DIGEST_LENGTH), 32);
}

TEST(Digest, UpdatesInRandomPiecesEqualOneShot) {
    std::mt19937 rng(1);
    std::string data(100000, '\0');
    for (auto& c : data) c = (char)rng();
    std::string want = std::string(photon::sha256(data.data(), data.size()).finalize());
    photon::sha256 h;
    for (size_t off = 0; off < data.size();) {
        size_t n = std::min<size_t>(rng() % 300, data.size() - off);
        h.update(data.data() + off, n);
        off += n;
    }
    unsigned char out[photon::sha256::DIGEST_LENGTH];
    h.finalize(out);
    EXPECT_EQ(std::string((char*)out, sizeof(out)), want);
    EXPECT_TRUE(h.ok());
}

TEST(Digest, FinalizeMayBeRepeatedAndUpdatesMayFollow) {
    photon::sha1 h("ab");
    EXPECT_EQ(hex(h.finalize()), hex(photon::sha1("ab")));
    EXPECT_EQ(hex(h.finalize()), hex(photon::sha1("ab")));
    h.update("c");
    EXPECT_EQ(hex(h.finalize()), "a9993e364706816aba3e25717850c26c9cd0d89d");
}

TEST(Digest, CopiesContinueIndependently) {
    photon::sha256 common("prefix-");
    photon::sha256 a = common, b(common);
    a.update("a");
    b.update("b");
    EXPECT_EQ(a.finalize(), photon::sha256("prefix-a").finalize());
    EXPECT_EQ(b.finalize(), photon::sha256("prefix-b").finalize());
    EXPECT_EQ(common.finalize(), photon::sha256("prefix-").finalize());
    photon::sha256 moved = std::move(a);
    EXPECT_EQ(moved.finalize(), photon::sha256("prefix-a").finalize());
    a = b;  // assignment into a moved-from object
    EXPECT_EQ(a.finalize(), photon::sha256("prefix-b").finalize());
}

TEST(Hmac, MatchesRfc2202AndRfc4231) {
    const char* key = "Jefe";
    const char* data = "what do ya want for nothing?";
    EXPECT_EQ(hex(photon::HMAC_SHA1(key, data)), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
    EXPECT_EQ(hex(photon::HMAC_SHA256(key, data)),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    EXPECT_EQ(hex(photon::HMAC_SHA512(key, data).finalize()),
              "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
              "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737");
}

TEST(Hmac, WritesToACallerBufferToo) {
    char buf[photon::HMAC_SHA256::DIGEST_LENGTH];
    photon::HMAC_SHA256 h("Jefe", "what do ya want for nothing?", buf);
    EXPECT_TRUE(h.ok());
    EXPECT_EQ(std::string_view(buf, sizeof(buf)), std::string_view(h));
    EXPECT_EQ(hex(std::string_view(buf, sizeof(buf))),
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

}  // namespace
