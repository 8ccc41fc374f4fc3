// HPACK (net/http2/hpack.h, huffman.h): the examples of RFC 7541 Appendix C
// decoded (and, for the Huffman ones, encoded to the same bytes), the
// Huffman code's round trip over every byte and its decoding errors, the
// decoder's COMPRESSION_ERRORs, table size updates both ways, the header
// list limit, and random blocks through an encoder and a decoder whose
// tables must stay in step.
#include "../../net/http2/hpack.h"
#include "../../net/http2/huffman.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace {

using photon::net::http2::header_field;
using photon::net::http2::hpack_decoder;
using photon::net::http2::hpack_encoder;
using photon::net::http2::huffman_decode;
using photon::net::http2::huffman_encode;
using photon::net::http2::huffman_encoded_size;

std::string unhex(const std::string& h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2)
        out.push_back((char)std::stoi(h.substr(i, 2), nullptr, 16));
    return out;
}

std::string hex(const std::string& s) {
    static const char* d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out.push_back(d[c >> 4]);
        out.push_back(d[c & 15]);
    }
    return out;
}

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields decode(hpack_decoder& d, const std::string& block, int* result = nullptr) {
    std::vector<header_field> out;
    int r = d.decode((const uint8_t*)block.data(), block.size(), &out);
    if (result)
        *result = r;
    else
        EXPECT_EQ(hpack_decoder::kOk, r) << d.error();
    Fields f;
    for (auto& h : out) f.emplace_back(h.name, h.value);
    return f;
}

std::vector<header_field> fields(const Fields& f) {
    std::vector<header_field> out;
    for (auto& p : f) out.push_back(header_field{p.first, p.second});
    return out;
}

const Fields kReq1 = {
    {":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {":authority", "www.example.com"}};
const Fields kReq2 = {{":method", "GET"},
                      {":scheme", "http"},
                      {":path", "/"},
                      {":authority", "www.example.com"},
                      {"cache-control", "no-cache"}};
const Fields kReq3 = {{":method", "GET"},
                      {":scheme", "https"},
                      {":path", "/index.html"},
                      {":authority", "www.example.com"},
                      {"custom-key", "custom-value"}};
const Fields kResp1 = {{":status", "302"},
                       {"cache-control", "private"},
                       {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                       {"location", "https://www.example.com"}};
const Fields kResp2 = {{":status", "307"},
                       {"cache-control", "private"},
                       {"date", "Mon, 21 Oct 2013 20:13:21 GMT"},
                       {"location", "https://www.example.com"}};
const Fields kResp3 = {{":status", "200"},
                       {"cache-control", "private"},
                       {"date", "Mon, 21 Oct 2013 20:13:22 GMT"},
                       {"location", "https://www.example.com"},
                       {"content-encoding", "gzip"},
                       {"set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"}};

TEST(Hpack, AppendixC2SingleFieldsDecode) {
    hpack_decoder d;
    EXPECT_EQ((Fields{{"custom-key", "custom-header"}}),
              decode(d, unhex("400a637573746f6d2d6b65790d637573746f6d2d686561646572")));
    EXPECT_EQ(55u, d.table().size());
    hpack_decoder d2;
    EXPECT_EQ((Fields{{":path", "/sample/path"}}),
              decode(d2, unhex("040c2f73616d706c652f70617468")));
    EXPECT_EQ(0u, d2.table().count());
    hpack_decoder d3;
    std::vector<header_field> out;
    std::string b = unhex("100870617373776f726406736563726574");
    ASSERT_EQ(hpack_decoder::kOk, d3.decode((const uint8_t*)b.data(), b.size(), &out));
    ASSERT_EQ(1u, out.size());
    EXPECT_EQ("password", out[0].name);
    EXPECT_EQ("secret", out[0].value);
    EXPECT_TRUE(out[0].never_index);
    EXPECT_EQ(0u, d3.table().count());
    hpack_decoder d4;
    EXPECT_EQ((Fields{{":method", "GET"}}), decode(d4, unhex("82")));
}

TEST(Hpack, AppendixC3AndC4RequestsDecodeWithTheTableInStep) {
    for (bool huff : {false, true}) {
        hpack_decoder d;
        const char* blocks[2][3] = {
            {"828684410f7777772e6578616d706c652e636f6d", "828684be58086e6f2d6361636865",
             "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565"},
            {"828684418cf1e3c2e5f23a6ba0ab90f4ff", "828684be5886a8eb10649cbf",
             "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"}};
        EXPECT_EQ(kReq1, decode(d, unhex(blocks[huff][0])));
        EXPECT_EQ(57u, d.table().size());
        EXPECT_EQ(kReq2, decode(d, unhex(blocks[huff][1])));
        EXPECT_EQ(110u, d.table().size());
        EXPECT_EQ(kReq3, decode(d, unhex(blocks[huff][2])));
        EXPECT_EQ(164u, d.table().size());
        ASSERT_EQ(3u, d.table().count());
        EXPECT_EQ("custom-key", d.table().at(0).name);
        EXPECT_EQ(":authority", d.table().at(2).name);
    }
}

TEST(Hpack, AppendixC5AndC6ResponsesEvictFromA256ByteTable) {
    const char* blocks[2][3] = {
        {"4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a3231"
         "20474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d",
         "4803333037c1c0bf",
         "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a697077"
         "38666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d616765"
         "3d333630303b2076657273696f6e3d31"},
        {"488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad"
         "171863c78f0b97c8e9ae82ae43d3",
         "4883640effc1c0bf",
         "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6"
         "c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007"}};
    for (int huff = 0; huff < 2; huff++) {
        hpack_decoder d(256);
        EXPECT_EQ(kResp1, decode(d, unhex(blocks[huff][0])));
        EXPECT_EQ(222u, d.table().size());
        EXPECT_EQ(kResp2, decode(d, unhex(blocks[huff][1])));
        EXPECT_EQ(222u, d.table().size());
        EXPECT_EQ(kResp3, decode(d, unhex(blocks[huff][2])));
        EXPECT_EQ(215u, d.table().size());
        ASSERT_EQ(3u, d.table().count());
        EXPECT_EQ("set-cookie", d.table().at(0).name);
        EXPECT_EQ("date", d.table().at(2).name);
    }
}

// The RFC's encoder indexes every field it can and codes with Huffman: ours
// makes the same bytes for these messages (its policy differs only for
// fields that change per message, which these do not have).
TEST(Hpack, TheEncoderReproducesAppendixC4AndC6) {
    hpack_encoder req;
    std::string out;
    const char* c4[] = {"828684418cf1e3c2e5f23a6ba0ab90f4ff", "828684be5886a8eb10649cbf",
                        "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"};
    const Fields* reqs[] = {&kReq1, &kReq2, &kReq3};
    for (int i = 0; i < 3; i++) {
        out.clear();
        req.encode(fields(*reqs[i]), &out);
        EXPECT_EQ(c4[i], hex(out)) << "C.4." << i + 1;
    }
    hpack_encoder resp(256);
    const char* c6[] = {
        "488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad1718"
        "63c78f0b97c8e9ae82ae43d3",
        "4883640effc1c0bf",
        "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7"
        "b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007"};
    const Fields* resps[] = {&kResp1, &kResp2, &kResp3};
    for (int i = 0; i < 3; i++) {
        out.clear();
        resp.encode(fields(*resps[i]), &out);
        std::string got = hex(out);
        if (i == 0) {  // our 256-byte table is announced first: 3f e1 01 = update to 256
            ASSERT_EQ("3fe101", got.substr(0, 6));
            got = got.substr(6);
        }
        EXPECT_EQ(c6[i], got) << "C.6." << i + 1;
    }
}

TEST(Huffman, EveryByteRoundTripsAndSizesAreExact) {
    std::string all;
    for (int c = 0; c < 256; c++) all.push_back((char)c);
    std::mt19937 rng(7);
    for (int round = 0; round < 200; round++) {
        std::string s = round == 0 ? all : std::string();
        for (int i = 0, n = rng() % 64; i < n; i++) s.push_back((char)(rng() % 256));
        std::string enc;
        huffman_encode(s, &enc);
        EXPECT_EQ(huffman_encoded_size(s), enc.size());
        std::string dec;
        ASSERT_TRUE(huffman_decode((const uint8_t*)enc.data(), enc.size(), &dec));
        EXPECT_EQ(s, dec);
    }
    std::string enc;
    huffman_encode("www.example.com", &enc);
    EXPECT_EQ("f1e3c2e5f23a6ba0ab90f4ff", hex(enc));  // C.4.1
}

TEST(Huffman, DecodingErrorsAreRefused) {
    std::string out;
    auto bad = [&](const std::string& h) {
        std::string b = unhex(h);
        out.clear();
        return !huffman_decode((const uint8_t*)b.data(), b.size(), &out);
    };
    EXPECT_TRUE(bad("00"));        // '0' (00000) then padding 000: not ones
    EXPECT_TRUE(bad("ffffffff"));  // 32 ones: EOS (30) is inside
    EXPECT_TRUE(bad("1fff"));      // 'a' (00011), then 11 ones: padding longer than 7 bits
    EXPECT_FALSE(bad("1f"));       // 'a' (00011) then 111: valid padding
    EXPECT_EQ("a", out);
    EXPECT_FALSE(bad(""));
}

TEST(Hpack, MalformedBlocksAreCompressionErrors) {
    const char* cases[] = {
        "80",                      // index 0
        "be",                      // index 62: the dynamic table is empty
        "ff80808080808080808001",  // an integer too long
        "ff",                      // a truncated integer
        "400a6375",                // a name shorter than its length
        "4085ffffffffff00",        // a Huffman name with EOS in it
        "8220",                    // a table size update after a field
        "3fe21f",                  // a table size update above 4096
        "0f2f00",                  // a name index (15 + 47 = 62) past the empty dynamic table
    };
    for (auto c : cases) {
        hpack_decoder d;
        int r;
        decode(d, unhex(c), &r);
        EXPECT_EQ(hpack_decoder::kCompressionError, r) << c;
        EXPECT_STRNE("", d.error()) << c;
    }
}

TEST(Hpack, ALoweredLimitRequiresAnUpdateAtTheNextBlockStart) {
    hpack_decoder d;
    decode(d, unhex("400a637573746f6d2d6b65790d637573746f6d2d686561646572"));
    d.set_max_table_size(0);
    int r;
    decode(d, unhex("82"), &r);  // no update: refused
    EXPECT_EQ(hpack_decoder::kCompressionError, r);
    hpack_decoder d2;
    decode(d2, unhex("400a637573746f6d2d6b65790d637573746f6d2d686561646572"));
    d2.set_max_table_size(0);
    EXPECT_EQ((Fields{{":method", "GET"}}),
              decode(d2, unhex("2082")));  // update to 0, then a field
    EXPECT_EQ(0u, d2.table().count());
    // The encoder, told of a smaller and then a larger table, says both.
    hpack_encoder e;
    e.set_peer_max_table_size(0);
    e.set_peer_max_table_size(1000);
    std::string out;
    e.encode({}, &out);
    EXPECT_EQ("203fc907", hex(out));  // update to 0, then to 1000
    e.encode(fields({{"custom-key", "custom-header"}}), &out);
    hpack_decoder d3;
    d3.set_max_table_size(1000);
    EXPECT_EQ((Fields{{"custom-key", "custom-header"}}), decode(d3, out));
    EXPECT_EQ(1000u, d3.table().max_size());
}

TEST(Hpack, AListPastTheLimitIsDecodedToItsEndAndReported) {
    hpack_encoder e;
    std::vector<header_field> big;
    for (int i = 0; i < 40; i++)
        big.push_back({"x-field-" + std::to_string(i), std::string(40, 'v')});
    std::string block;
    e.encode(big, &block);
    hpack_decoder d;
    d.set_max_header_list_size(1024);
    std::vector<header_field> out;
    EXPECT_EQ(hpack_decoder::kListTooLarge,
              d.decode((const uint8_t*)block.data(), block.size(), &out));
    EXPECT_LT(out.size(), 40u);
    // The tables are still in step: the next block decodes.
    std::string next;
    e.encode(fields({{"x-field-39", std::string(40, 'v')}}), &next);
    out.clear();
    d.set_max_header_list_size(SIZE_MAX);
    ASSERT_EQ(hpack_decoder::kOk, d.decode((const uint8_t*)next.data(), next.size(), &out));
    ASSERT_EQ(1u, out.size());
    EXPECT_EQ("x-field-39", out[0].name);
    EXPECT_EQ(1u, next.size()) << "the field was indexed by the earlier block";
}

TEST(Hpack, SensitiveAndPerMessageFieldsAreNotIndexed) {
    hpack_encoder e;
    std::string out;
    e.encode(fields({{"authorization", "Bearer abc"},
                     {"cookie", "id=1"},
                     {":path", "/a?b=c"},
                     {"content-length", "1234"}}),
             &out);
    EXPECT_EQ(0u, e.table().count());
    hpack_decoder d;
    std::vector<header_field> got;
    ASSERT_EQ(hpack_decoder::kOk, d.decode((const uint8_t*)out.data(), out.size(), &got));
    ASSERT_EQ(4u, got.size());
    EXPECT_TRUE(got[0].never_index);
    EXPECT_TRUE(got[1].never_index);
    EXPECT_FALSE(got[2].never_index);
    EXPECT_EQ("/a?b=c", got[2].value);
}

// A per-message field's coded literal is kept for the next message: the same
// value codes to the same bytes, a changed one to its own, and neither enters
// the table.
TEST(Hpack, PerMessageLiteralsAreReusedOnlyForTheSameValue) {
    hpack_encoder e;
    hpack_decoder d;
    auto block = [&](const std::string& etag, const std::string& length) {
        std::string out;
        e.begin_block(&out);
        e.put("ETag", etag, &out);
        e.put("Content-Length", length, &out);
        EXPECT_EQ(Fields({{"etag", etag}, {"content-length", length}}), decode(d, out));
        return out;
    };
    std::string first = block("\"abc-1000\"", "4096");
    EXPECT_EQ(first, block("\"abc-1000\"", "4096"));
    std::string changed = block("\"abc-1001\"", "4096");
    EXPECT_NE(first, changed);
    EXPECT_EQ(first, block("\"abc-1000\"", "4096"));
    EXPECT_EQ(0u, e.table().count());
    e.set_huffman(false);
    std::string plain = block("\"abc-1000\"", "4096");
    EXPECT_NE(std::string::npos, plain.find("\"abc-1000\""));  // not the Huffman form kept
}

// put() copies a field's coding from its memo only while that coding holds:
// an index into the dynamic table moves when an entry is added before it.
TEST(Hpack, PutReusesACodingOnlyWhileTheTableStays) {
    hpack_encoder e;
    hpack_decoder d;
    auto block = [&](const Fields& f) {
        std::string out;
        e.begin_block(&out);
        for (auto& p : f) e.put(p.first, p.second, &out);
        Fields lowered = f;
        for (auto& p : lowered)
            for (auto& ch : p.first) ch = (char)tolower(ch);
        if (!out.empty()) {
            EXPECT_EQ(lowered, decode(d, out));
        }
        return out;
    };
    block({{"X-Custom", "a"}});                                     // a literal, added to the table
    EXPECT_EQ(std::string("\xbe", 1), block({{"X-Custom", "a"}}));  // 62: the newest entry
    EXPECT_EQ(std::string("\xbe", 1), block({{"X-Custom", "a"}}));
    block({{"x-other", "b"}});  // added after it: it is 63 now
    EXPECT_EQ(std::string("\xbf", 1), block({{"X-Custom", "a"}}));
    // Connection-specific fields are dropped, memo or not.
    EXPECT_EQ("", block({{"Connection", "close"}, {"Transfer-Encoding", "chunked"}}));
    EXPECT_EQ("", block({{"Connection", "close"}}));
}

// put()'s memo tells a field from the one at its place in the last block byte for byte:
// a name or value of any length that differs in any one byte is coded anew.
TEST(Hpack, PutSeesAOneByteChangeAnywhereInAFieldOfAnyLength) {
    hpack_encoder e;
    hpack_decoder d;
    auto block = [&](const std::string& name, const std::string& value) {
        std::string out;
        e.begin_block(&out);
        e.put(name, value, &out);
        return decode(d, out);
    };
    for (size_t n = 1; n <= 40; n++) {
        std::string base(n, 'a');
        for (size_t at = 0; at < n; at++) {
            std::string changed = base;
            changed[at] = 'b';
            for (int twice = 0; twice < 2; twice++)  // the second is the memo's
                ASSERT_EQ(Fields({{"x-v", base}}), block("x-v", base));
            ASSERT_EQ(Fields({{"x-v", changed}}), block("x-v", changed)) << n << " " << at;
            for (int twice = 0; twice < 2; twice++)
                ASSERT_EQ(Fields({{"x-" + base, "v"}}), block("x-" + base, "v"));
            ASSERT_EQ(Fields({{"x-" + changed, "v"}}), block("x-" + changed, "v"))
                << n << " " << at;
        }
    }
}

// Names and values may hold any byte: fields that differ only in where a
// NUL falls are different entries (the fuzzer found them mixed up).
TEST(Hpack, FieldsWithNulBytesAreKeptApart) {
    hpack_encoder e;
    hpack_decoder d;
    std::vector<header_field> in = {{std::string("a\0b", 3), ""},
                                    {"a", std::string("b\0", 2)},
                                    {std::string("a\0b", 3), ""},
                                    {"a", std::string("b\0", 2)}};
    std::string out;
    e.encode(in, &out);
    std::vector<header_field> got;
    ASSERT_EQ(hpack_decoder::kOk, d.decode((const uint8_t*)out.data(), out.size(), &got));
    ASSERT_EQ(in.size(), got.size());
    for (size_t i = 0; i < in.size(); i++) {
        EXPECT_EQ(in[i].name, got[i].name) << i;
        EXPECT_EQ(in[i].value, got[i].value) << i;
    }
}

// Random blocks of fields from a small vocabulary, through one encoder and
// one decoder, with the table limit changed now and then: every block must
// decode to what was encoded (the tables stay in step across evictions).
TEST(Hpack, RandomBlocksRoundTripAcrossTableChanges) {
    std::mt19937 rng(31);
    hpack_encoder e(4096);
    hpack_decoder d(4096);
    // Per-message names too: their coded literals are kept and reused.
    const char* names[] = {
        "x-a",  "x-b",  "content-type",   ":status", "server",        "cookie",
        "date", "etag", "content-length", ":path",   "authorization", "last-modified"};
    const size_t kNames = sizeof(names) / sizeof(names[0]);
    for (int block = 0; block < 2000; block++) {
        if (rng() % 100 == 0) e.set_huffman(rng() % 2);
        if (rng() % 50 == 0) {
            size_t lim = rng() % 5000;
            d.set_max_table_size(lim);  // as announced in SETTINGS and acknowledged
            e.set_peer_max_table_size(lim);
        }
        std::vector<header_field> in;
        for (int i = 0, n = 1 + rng() % 12; i < n; i++) {
            std::string v(rng() % 3 == 0 ? 200 : rng() % 30, (char)('a' + rng() % 26));
            in.push_back({names[rng() % kNames], v + std::to_string(rng() % 4)});
        }
        // Half the blocks go through put(), with names in mixed case at times
        // and its memo of recent fields.
        std::string out;
        if (block % 2) {
            e.encode(in, &out);
        } else {
            e.begin_block(&out);
            for (auto& f : in) {
                std::string name = f.name;
                if (rng() % 2 && name[0] != ':') name[0] = (char)toupper(name[0]);
                e.put(name, f.value, &out);
            }
        }
        std::vector<header_field> got;
        ASSERT_EQ(hpack_decoder::kOk, d.decode((const uint8_t*)out.data(), out.size(), &got))
            << "block " << block << ": " << d.error();
        ASSERT_EQ(in.size(), got.size());
        for (size_t i = 0; i < in.size(); i++) {
            ASSERT_EQ(in[i].name, got[i].name);
            ASSERT_EQ(in[i].value, got[i].value);
        }
        ASSERT_EQ(e.table().size(), d.table().size()) << "block " << block;
    }
}

}  // namespace
