// HTTP/2 frames (net/http2/frame.h): headers round-trip, each type's checks
// of RFC 9113 6 (stream 0 or not, fixed sizes, padding, self-dependency,
// WINDOW_UPDATE of 0, SETTINGS values), and the writers' frames read back,
// header blocks split into CONTINUATIONs.
#include "../../net/http2/frame.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace photon::net::http2;

std::string frame(uint32_t len, frame_type t, uint8_t fl, uint32_t stream,
                  const std::string& payload) {
    std::string out;
    write_frame_header({len, (uint8_t)t, fl, stream}, &out);
    return out + payload;
}

// Parses a whole frame made of header + payload: true, or false with *err.
bool parse(const std::string& bytes, Frame* f, frame_error* err) {
    auto h = read_frame_header((const uint8_t*)bytes.data());
    EXPECT_EQ(bytes.size() - kFrameHeaderSize, h.length);
    return parse_frame(h, (const uint8_t*)bytes.data() + kFrameHeaderSize, f, err);
}

void expect_refused(const std::string& bytes, ErrorCode code, bool connection) {
    Frame f;
    frame_error err;
    EXPECT_FALSE(parse(bytes, &f, &err));
    EXPECT_EQ((uint32_t)code, (uint32_t)err.code) << err.why;
    EXPECT_EQ(connection, err.connection) << err.why;
}

TEST(Http2Frame, HeaderRoundTripsAndDropsTheReservedBit) {
    std::string b;
    write_frame_header({0xabcdef, 7, 0x25, 0x7fffffff}, &b);
    ASSERT_EQ(kFrameHeaderSize, b.size());
    b[5] |= 0x80;  // the reserved bit, set by a peer
    auto h = read_frame_header((const uint8_t*)b.data());
    EXPECT_EQ(0xabcdefu, h.length);
    EXPECT_EQ(7, h.type);
    EXPECT_EQ(0x25, h.flags);
    EXPECT_EQ(0x7fffffffu, h.stream);
}

TEST(Http2Frame, PaddedDataAndHeadersLoseTheirPadding) {
    Frame f;
    frame_error err;
    // (f.data views the bytes: they are kept in locals.)
    std::string data =
        frame(8, frame_type::DATA, flags::PADDED, 1, std::string("\x03") + "abcd" + "xxx");
    ASSERT_TRUE(parse(data, &f, &err));
    EXPECT_EQ("abcd", f.data);
    // HEADERS: pad length, priority, fragment, padding.
    std::string p =
        std::string("\x02") + std::string("\x80\x00\x00\x03", 4) + "\x0f" + "blk" + "zz";
    std::string headers =
        frame((uint32_t)p.size(), frame_type::HEADERS, flags::PADDED | flags::PRIORITY, 5, p);
    ASSERT_TRUE(parse(headers, &f, &err)) << err.why;
    EXPECT_EQ("blk", f.data);
    EXPECT_TRUE(f.exclusive);
    EXPECT_EQ(3u, f.dependency);
    EXPECT_EQ(15, f.weight);
    // Padding that fills the payload: PROTOCOL_ERROR; no room for the pad length: FRAME_SIZE.
    expect_refused(frame(3, frame_type::DATA, flags::PADDED, 1, "\x03xy"),
                   ErrorCode::PROTOCOL_ERROR, true);
    expect_refused(frame(0, frame_type::DATA, flags::PADDED, 1, ""), ErrorCode::FRAME_SIZE_ERROR,
                   true);
    std::string all_padding = frame(3, frame_type::DATA, flags::PADDED, 1, "\x02xy");
    EXPECT_TRUE(parse(all_padding, &f, &err));
    EXPECT_EQ("", f.data);
}

TEST(Http2Frame, StreamAndConnectionFramesOnTheWrongStreamAreProtocolErrors) {
    expect_refused(frame(1, frame_type::DATA, 0, 0, "x"), ErrorCode::PROTOCOL_ERROR, true);
    expect_refused(frame(1, frame_type::HEADERS, 0, 0, "x"), ErrorCode::PROTOCOL_ERROR, true);
    expect_refused(frame(1, frame_type::CONTINUATION, 0, 0, "x"), ErrorCode::PROTOCOL_ERROR, true);
    expect_refused(frame(4, frame_type::RST_STREAM, 0, 0, std::string(4, 0)),
                   ErrorCode::PROTOCOL_ERROR, true);
    expect_refused(frame(0, frame_type::SETTINGS, 0, 1, ""), ErrorCode::PROTOCOL_ERROR, true);
    expect_refused(frame(8, frame_type::PING, 0, 3, std::string(8, 0)), ErrorCode::PROTOCOL_ERROR,
                   true);
    expect_refused(frame(8, frame_type::GOAWAY, 0, 3, std::string(8, 0)), ErrorCode::PROTOCOL_ERROR,
                   true);
}

TEST(Http2Frame, FixedSizesAreChecked) {
    expect_refused(frame(4, frame_type::PRIORITY, 0, 1, std::string(4, 0)),
                   ErrorCode::FRAME_SIZE_ERROR, false);  // a stream error (6.3)
    expect_refused(frame(5, frame_type::RST_STREAM, 0, 1, std::string(5, 0)),
                   ErrorCode::FRAME_SIZE_ERROR, true);
    expect_refused(frame(7, frame_type::PING, 0, 0, std::string(7, 0)), ErrorCode::FRAME_SIZE_ERROR,
                   true);
    expect_refused(frame(3, frame_type::WINDOW_UPDATE, 0, 1, std::string(3, 0)),
                   ErrorCode::FRAME_SIZE_ERROR, true);
    expect_refused(frame(7, frame_type::GOAWAY, 0, 0, std::string(7, 0)),
                   ErrorCode::FRAME_SIZE_ERROR, true);
    expect_refused(frame(5, frame_type::SETTINGS, 0, 0, std::string(5, 0)),
                   ErrorCode::FRAME_SIZE_ERROR, true);
    expect_refused(frame(6, frame_type::SETTINGS, flags::ACK, 0, std::string(6, 0)),
                   ErrorCode::FRAME_SIZE_ERROR, true);
}

TEST(Http2Frame, SelfDependencyAndZeroIncrementsAreRefused) {
    expect_refused(frame(5, frame_type::PRIORITY, 0, 7, std::string("\x00\x00\x00\x07\x10", 5)),
                   ErrorCode::PROTOCOL_ERROR, false);
    expect_refused(frame(4, frame_type::WINDOW_UPDATE, 0, 3, std::string(4, 0)),
                   ErrorCode::PROTOCOL_ERROR, false);  // a stream's: a stream error
    expect_refused(frame(4, frame_type::WINDOW_UPDATE, 0, 0, std::string(4, 0)),
                   ErrorCode::PROTOCOL_ERROR, true);
}

TEST(Http2Frame, UnknownTypesPass) {
    Frame f;
    frame_error err;
    std::string unknown = frame(3, (frame_type)0x42, 0xff, 9, "abc");
    EXPECT_TRUE(parse(unknown, &f, &err));
    EXPECT_EQ("abc", f.data);
}

TEST(Http2Frame, WrittenFramesReadBack) {
    std::string out;
    std::pair<setting_id, uint32_t> s[] = {{setting_id::MAX_CONCURRENT_STREAMS, 100},
                                           {setting_id::INITIAL_WINDOW_SIZE, 1 << 20}};
    write_settings(s, 2, &out);
    Frame f;
    frame_error err;
    ASSERT_TRUE(parse(out, &f, &err));
    std::vector<std::pair<uint16_t, uint32_t>> got;
    ASSERT_TRUE(parse_settings(
        f.data, [&](uint16_t id, uint32_t v) { got.emplace_back(id, v); }, &err));
    ASSERT_EQ(2u, got.size());
    EXPECT_EQ(3, got[0].first);
    EXPECT_EQ(100u, got[0].second);
    EXPECT_EQ(1u << 20, got[1].second);

    out.clear();
    write_goaway(5, ErrorCode::ENHANCE_YOUR_CALM, "slow down", &out);
    ASSERT_TRUE(parse(out, &f, &err));
    EXPECT_EQ(5u, f.last_stream);
    EXPECT_EQ((uint32_t)ErrorCode::ENHANCE_YOUR_CALM, f.error);
    EXPECT_EQ("slow down", f.data);

    out.clear();
    write_window_update(3, 1000, &out);
    ASSERT_TRUE(parse(out, &f, &err));
    EXPECT_EQ(1000u, f.increment);
    EXPECT_EQ(3u, f.h.stream);

    out.clear();
    uint8_t ping[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    write_ping(ping, true, &out);
    ASSERT_TRUE(parse(out, &f, &err));
    EXPECT_EQ(flags::ACK, f.h.flags);
    EXPECT_EQ(std::string((char*)ping, 8), f.data);

    out.clear();
    write_rst_stream(9, ErrorCode::CANCEL, &out);
    ASSERT_TRUE(parse(out, &f, &err));
    EXPECT_EQ((uint32_t)ErrorCode::CANCEL, f.error);
}

TEST(Http2Frame, AHeaderBlockIsSplitIntoContinuations) {
    std::string block(40000, 'h');
    std::string out;
    write_headers(1, block, true, kDefaultMaxFrameSize, &out);
    std::string joined;
    const char* p = out.data();
    int frames = 0;
    while (p < out.data() + out.size()) {
        auto h = read_frame_header((const uint8_t*)p);
        EXPECT_LE(h.length, kDefaultMaxFrameSize);
        EXPECT_EQ(frames == 0 ? (uint8_t)frame_type::HEADERS : (uint8_t)frame_type::CONTINUATION,
                  h.type);
        bool last = p + kFrameHeaderSize + h.length == out.data() + out.size();
        EXPECT_EQ(last, (h.flags & flags::END_HEADERS) != 0);
        EXPECT_EQ(frames == 0, (h.flags & flags::END_STREAM) != 0);  // on HEADERS only
        joined.append(p + kFrameHeaderSize, h.length);
        p += kFrameHeaderSize + h.length;
        frames++;
    }
    EXPECT_EQ(3, frames);
    EXPECT_EQ(block, joined);
}

TEST(Http2Frame, SettingsValuesOutOfRangeAreRefused) {
    frame_error err;
    auto one = [](uint16_t id, uint32_t v) {
        return std::string{(char)(id >> 8), (char)id,       (char)(v >> 24),
                           (char)(v >> 16), (char)(v >> 8), (char)v};
    };
    auto ok = [&](uint16_t id, uint32_t v) {
        return parse_settings(
            one(id, v), [](uint16_t, uint32_t) {}, &err);
    };
    EXPECT_FALSE(ok(2, 2));
    EXPECT_EQ((uint32_t)ErrorCode::PROTOCOL_ERROR, (uint32_t)err.code);
    EXPECT_FALSE(ok(4, 0x80000000u));
    EXPECT_EQ((uint32_t)ErrorCode::FLOW_CONTROL_ERROR, (uint32_t)err.code);
    EXPECT_FALSE(ok(5, 16383));
    EXPECT_FALSE(ok(5, 1u << 24));
    EXPECT_TRUE(ok(5, (1u << 24) - 1));
    EXPECT_TRUE(ok(4, 0x7fffffff));
    EXPECT_TRUE(ok(0x99, 12345));  // unknown: passed on
}

}  // namespace
