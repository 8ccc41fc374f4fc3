// The HTTP/2 server connection (net/http2/server_connection.h) on a TCP
// server of its own vCPU (127.0.0.1), against real clients: curl with
// --http2-prior-knowledge (a response, 8 MiB bodies both ways through the
// flow control windows, trailers), h2load (64 streams at once on one
// connection) and h2spec, whose every case must pass. A missing peer skips
// its test.
#include "../../net/http2/server_connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <photon/common/memory_budget.h>
#include <photon/net/socket.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../util/temp_dir.h"
#include "http2_test_util.h"

namespace {

using namespace photon::net::http2;
using photon_test::h2_pattern;
using photon_test::H2Server;

using photon_test::curl_http2_missing;
using photon_test::run_command;

bool have(const char* tool) {
    std::string out;
    return run_command(std::string("command -v ") + tool + " 2>/dev/null", &out) == 0;
}

class Http2Server : public ::testing::Test {
protected:
    void SetUp() override {
        auto why = curl_http2_missing();
        if (!why.empty()) GTEST_SKIP() << why;
        ASSERT_FALSE(server_.failed());
        base_ = "http://127.0.0.1:" + std::to_string(server_.port());
    }
    std::string curl(const std::string& args, int* status = nullptr) {
        std::string out;
        int st = run_command("curl -s --http2-prior-knowledge --max-time 20 " + args, &out);
        if (status)
            *status = st;
        else
            EXPECT_EQ(0, st) << args;
        return out;
    }
    H2Server server_;
    std::string base_;
};

TEST_F(Http2Server, CurlGetsAResponseOverHttp2) {
    EXPECT_EQ("hello\n", curl(base_ + "/hello"));
    EXPECT_EQ("2 200", curl("-o /dev/null -w '%{http_version} %{http_code}' " + base_ + "/hello"));
    EXPECT_EQ("404", curl("-o /dev/null -w '%{http_code}' " + base_ + "/nothing"));
}

TEST_F(Http2Server, EightMiBBodiesGoBothWaysThroughTheWindows) {
    photon_test::temp_dir dir;
    std::string in = dir.path() + "/in", got = dir.path() + "/got";
    std::string body = h2_pattern(8 << 20);
    std::ofstream(in, std::ios::binary) << body;
    curl("--data-binary @" + in + " -o " + got + " " + base_ + "/echo");
    std::ifstream f(got, std::ios::binary);
    std::string back((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(body.size(), back.size());
    EXPECT_TRUE(body == back);
    std::string big = curl(base_ + "/big/" + std::to_string(8 << 20));
    EXPECT_TRUE(big == body);
}

// h2load (nghttp2-client) keeps 64 streams open at once on one connection.
// (curl 7.88 cannot reuse an h2c connection for a second request at all.)
TEST_F(Http2Server, SixtyFourStreamsAtOnceOnOneConnection) {
    if (!have("h2load")) GTEST_SKIP() << "h2load not installed (Debian nghttp2-client)";
    std::string out;
    ASSERT_EQ(0, run_command("h2load -n 640 -c 1 -m 64 " + base_ + "/big/100000 2>&1", &out))
        << out;
    EXPECT_NE(std::string::npos, out.find("640 succeeded, 0 failed, 0 errored, 0 timeout")) << out;
    EXPECT_NE(std::string::npos, out.find("status codes: 640 2xx")) << out;
    // Each response carries its 100,000 body bytes (the "data" part of the traffic line).
    auto at = out.find(") data");  // "traffic: ... 61.04MB (64000000) data"
    ASSERT_NE(std::string::npos, at) << out;
    auto open = out.rfind("(", at);
    EXPECT_EQ("64000000", out.substr(open + 1, at - open - 1)) << out;
}

TEST_F(Http2Server, TrailersFollowTheBody) {
    std::string out = curl("-i " + base_ + "/trailers");
    EXPECT_NE(std::string::npos, out.find("x-checksum: 1234")) << out;
    EXPECT_NE(std::string::npos, out.find("body")) << out;
}

// ---- hostile peers, on a raw socket ----------------------------------------

// A client that writes frames by hand and reads the server's.
class RawClient {
public:
    explicit RawClient(uint16_t port, bool ack_settings = true) : ack_(ack_settings) {
        fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ok_ = fd_ >= 0 && connect(fd_, (sockaddr*)&a, sizeof(a)) == 0;
        timeval tv{5, 0};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        std::string out(kClientPreface);
        write_settings(nullptr, 0, &out);
        send(out);
    }
    ~RawClient() {
        if (fd_ >= 0) close(fd_);
    }
    bool ok() const { return ok_; }
    void send(const std::string& b) {
        if (::send(fd_, b.data(), b.size(), MSG_NOSIGNAL) != (ssize_t)b.size()) ok_ = false;
    }
    // A GET of path on stream id (HPACK without indexing: the server's table stays empty).
    std::string get(uint32_t id, const std::string& path, bool end_stream = true) {
        hpack_encoder e;
        std::string block, out;
        e.encode({{":method", "GET"}, {":scheme", "http"}, {":path", path}, {":authority", "x"}},
                 &block);
        write_headers(id, block, end_stream, kDefaultMaxFrameSize, &out);
        return out;
    }
    // Reads frames, acknowledging SETTINGS (if asked to), and gives each to
    // f until it returns false; false if the connection ended (or 5 s of
    // silence passed) first.
    template <typename F>
    bool frames(F&& f) {
        char tmp[65536];
        while (true) {
            while (buf_.size() >= kFrameHeaderSize) {
                auto h = read_frame_header((const uint8_t*)buf_.data());
                if (buf_.size() < kFrameHeaderSize + h.length) break;
                std::string payload = buf_.substr(kFrameHeaderSize, h.length);
                buf_.erase(0, kFrameHeaderSize + h.length);
                if (h.type == (uint8_t)frame_type::SETTINGS && !(h.flags & flags::ACK) && ack_) {
                    std::string a;
                    write_settings_ack(&a);
                    send(a);
                }
                if (!f(h, payload)) return true;
            }
            ssize_t n = recv(fd_, tmp, sizeof(tmp), 0);
            if (n <= 0) return false;
            buf_.append(tmp, n);
        }
    }
    static uint32_t be32(const std::string& p, size_t at) {
        auto u = (const uint8_t*)p.data() + at;
        return (uint32_t)u[0] << 24 | u[1] << 16 | u[2] << 8 | u[3];
    }
    // The error code of the GOAWAY that comes next, -1 if none does.
    int goaway_code() {
        int code = -1;
        frames([&](const FrameHeader& h, const std::string& p) {
            if (h.type != (uint8_t)frame_type::GOAWAY) return true;
            code = (int)be32(p, 4);
            return false;
        });
        return code;
    }

private:
    int fd_ = -1;
    bool ok_ = false, ack_;
    std::string buf_;
};

// A handler that blocks does not hold the streams behind it on its connection:
// one worker runs a batch of streams in turn, but a standby takes the next
// stream as soon as the running handler blocks.
TEST(Http2Streams, ABlockedHandlerDoesNotHoldTheStreamsBehindIt) {
    H2Server server;
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    std::string burst = c.get(1, "/wait-hello");
    for (uint32_t id = 3; id <= 9; id += 2) burst += c.get(id, "/hello");
    c.send(burst);
    std::vector<uint32_t> heads;  // streams in the order their responses began
    std::string body1;
    ASSERT_TRUE(c.frames([&](const FrameHeader& h, const std::string& p) {
        if (h.type == (uint8_t)frame_type::HEADERS) heads.push_back(h.stream);
        if (h.type == (uint8_t)frame_type::DATA && h.stream == 1) body1 += p;
        return !(h.type == (uint8_t)frame_type::DATA && h.stream == 1 &&
                 (h.flags & flags::END_STREAM));
    }));
    EXPECT_EQ("released", body1);
    ASSERT_EQ(5u, heads.size());
    EXPECT_EQ(1u, heads.back());  // the four /hello answered while /wait-hello waited
}

TEST(Http2Hostile, RapidResetIsCutWithEnhanceYourCalm) {
    H2Server server;
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    std::string burst;
    for (uint32_t id = 1; id < 2 * 400; id += 2) {  // 400 streams opened and reset at once
        burst += c.get(id, "/");
        write_rst_stream(id, ErrorCode::CANCEL, &burst);
    }
    c.send(burst);
    EXPECT_EQ((int)ErrorCode::ENHANCE_YOUR_CALM, c.goaway_code());
}

TEST(Http2Hostile, APingFloodIsCutWithEnhanceYourCalm) {
    H2Server server;
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    std::string burst;
    uint8_t data[8] = {};
    for (int i = 0; i < 3000; i++) write_ping(data, false, &burst);
    c.send(burst);
    EXPECT_EQ((int)ErrorCode::ENHANCE_YOUR_CALM, c.goaway_code());
}

TEST(Http2Hostile, ASettingsFloodIsCutWithEnhanceYourCalm) {
    H2Server server;
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    std::string burst;
    for (int i = 0; i < 3000; i++) write_settings(nullptr, 0, &burst);
    c.send(burst);
    EXPECT_EQ((int)ErrorCode::ENHANCE_YOUR_CALM, c.goaway_code());
}

// A handler that answers before the request's body ended refuses the rest
// with RST_STREAM(NO_ERROR); DATA the client sent before it saw that is
// ignored (RFC 9113 5.1), not a connection error.
TEST(Http2Streams, DataAfterTheEarlyAnswersResetIsIgnored) {
    H2Server server;
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    c.send(c.get(1, "/hello", false));  // a body was announced
    bool reset = false;
    c.frames([&](const FrameHeader& h, const std::string&) {
        if (h.stream == 1 && h.type == (uint8_t)frame_type::RST_STREAM) reset = true;
        return !reset;
    });
    ASSERT_TRUE(reset);
    std::string late;
    write_data_header(1, 4, true, &late);
    late += "late";
    c.send(late + c.get(3, "/hello"));
    uint8_t answer = 0;
    c.frames([&](const FrameHeader& h, const std::string&) {
        if (h.type == (uint8_t)frame_type::GOAWAY ||
            (h.stream == 3 && h.type == (uint8_t)frame_type::HEADERS))
            answer = h.type;
        return answer == 0;
    });
    EXPECT_EQ((uint8_t)frame_type::HEADERS, answer);
}

// A stream that ended stays closed however many streams follow it (only reset ids are
// remembered, 4,096 of them): DATA on it is a STREAM_CLOSED error (RFC 9113 5.1), not a
// PROTOCOL_ERROR for an id the server forgot.
TEST(Http2Streams, DataOnAStreamThatEndedLongAgoIsStreamClosed) {
    H2Server server;
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    uint32_t id = 1;
    for (int batch = 0; batch < 100; batch++) {  // 5,000 streams, 50 at a time
        std::string out;
        for (int i = 0; i < 50; i++, id += 2) out += c.get(id, "/hello");
        c.send(out);
        int ended = 0;
        ASSERT_TRUE(c.frames([&](const FrameHeader& h, const std::string&) {
            if (h.stream != 0 && (h.flags & flags::END_STREAM)) ended++;
            return ended < 50;
        }));
    }
    std::string late;
    write_data_header(1, 4, true, &late);
    late += "late";
    c.send(late);
    EXPECT_EQ((int)ErrorCode::STREAM_CLOSED, c.goaway_code());
}

TEST(Http2Hostile, AnEndlessHeaderBlockIsCut) {
    H2Server server;
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    std::string out;
    write_frame_header({1, (uint8_t)frame_type::HEADERS, 0, 1}, &out);  // no END_HEADERS
    out += '\x82';
    std::string junk(16000, '\x40');  // CONTINUATIONs of literal-with-indexing starts
    for (int i = 0; i < 20; i++) {
        write_frame_header({(uint32_t)junk.size(), (uint8_t)frame_type::CONTINUATION, 0, 1}, &out);
        out += junk;
    }
    c.send(out);
    EXPECT_EQ((int)ErrorCode::ENHANCE_YOUR_CALM, c.goaway_code());
}

TEST(Http2Hostile, AnIdlePeerGetsGoawayAndTheConnectionEnds) {
    connection_options opt;
    opt.idle_timeout = 300 * 1000;
    H2Server server(opt);
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ((int)ErrorCode::NO_ERROR, c.goaway_code());
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
}

TEST(Http2Hostile, UnacknowledgedSettingsEndTheConnection) {
    connection_options opt;
    opt.settings_timeout = 300 * 1000;
    H2Server server(opt);
    RawClient c(server.port(), false);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ((int)ErrorCode::SETTINGS_TIMEOUT, c.goaway_code());
}

TEST(Http2Hostile, StreamsPastTheLimitAreRefusedAndTheOthersServed) {
    connection_options opt;
    opt.max_concurrent_streams = 4;
    H2Server server(opt);
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    std::string burst;
    // "/" answers 128 KiB: past the 64 KiB window, so its stream stays open.
    for (uint32_t id = 1; id <= 11; id += 2) burst += c.get(id, "/");
    c.send(burst);
    std::map<uint32_t, std::string> first;  // stream -> its first frame's kind
    c.frames([&](const FrameHeader& h, const std::string& p) {
        if (!h.stream || first.count(h.stream)) return true;
        if (h.type == (uint8_t)frame_type::RST_STREAM)
            first[h.stream] =
                RawClient::be32(p, 0) == (uint32_t)ErrorCode::REFUSED_STREAM ? "refused" : "reset";
        else
            first[h.stream] = h.type == (uint8_t)frame_type::HEADERS ? "headers" : "other";
        return first.size() < 6;
    });
    for (uint32_t id : {1u, 3u, 5u, 7u}) EXPECT_EQ("headers", first[id]) << id;
    for (uint32_t id : {9u, 11u}) EXPECT_EQ("refused", first[id]) << id;
}

// The connection window past the protocol's 65,535 bytes is granted only
// from the memory budget: without room the peer gets no WINDOW_UPDATE for
// the connection, and a large upload still goes through the small window.
bool connection_window_granted(uint16_t port) {
    RawClient c(port);
    bool granted = false;
    c.frames([&](const FrameHeader& h, const std::string& p) {
        if (h.type == (uint8_t)frame_type::WINDOW_UPDATE && h.stream == 0) granted = true;
        // Our SETTINGS' ACK comes after the server's first write.
        return !(h.type == (uint8_t)frame_type::SETTINGS && (h.flags & flags::ACK));
    });
    return granted;
}

TEST(Http2Budget, TheConnectionWindowIsGrantedOnlyWithRoomInTheBudget) {
    {
        H2Server roomy;
        EXPECT_TRUE(connection_window_granted(roomy.port()));
    }
    static photon::MemoryBudget small(1 << 20);  // less than the 16 MiB window
    connection_options opt;
    opt.budget = &small;
    H2Server tight(opt);
    EXPECT_FALSE(connection_window_granted(tight.port()));
    EXPECT_EQ(0u, small.used());
    if (!curl_http2_missing().empty()) return;
    photon_test::temp_dir dir;
    std::string in = dir.path() + "/in", got = dir.path() + "/got";
    std::string body = h2_pattern(4 << 20);
    std::ofstream(in, std::ios::binary) << body;
    std::string out;
    ASSERT_EQ(0, run_command("curl -s --http2-prior-knowledge --max-time 20 --data-binary @" + in +
                                 " -o " + got +
                                 " http://127.0.0.1:" + std::to_string(tight.port()) + "/echo",
                             &out));
    std::ifstream f(got, std::ios::binary);
    std::string back((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(body == back);
}

// ---- the write path (frames queued, written by the connection's writer) ---

// The handler's finish() puts END_STREAM on its last DATA frame while that is
// still queued: one DATA frame, no empty one after it.
TEST(Http2Writes, AResponseEndsOnItsLastDataFrame) {
    H2Server server;
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    c.send(c.get(1, "/hello"));
    int data_frames = 0;
    std::string body;
    bool ended = false;
    ASSERT_TRUE(c.frames([&](const FrameHeader& h, const std::string& p) {
        if (h.stream != 1) return true;
        if (h.type == (uint8_t)frame_type::DATA) {
            data_frames++;
            body += p;
        }
        ended = h.flags & flags::END_STREAM;
        return !ended;
    }));
    EXPECT_TRUE(ended);
    EXPECT_EQ("hello\n", body);
    EXPECT_EQ(1, data_frames);
}

// DATA is counted against the windows when queued: with a stream window of 10
// bytes, 10 come, nothing more before the answer to a PING sent after them,
// and the rest once a WINDOW_UPDATE allows it.
TEST(Http2Writes, DataStaysWithinATinyStreamWindow) {
    H2Server server;
    RawClient c(server.port());
    ASSERT_TRUE(c.ok());
    std::pair<setting_id, uint32_t> tiny[] = {{setting_id::INITIAL_WINDOW_SIZE, 10}};
    std::string out;
    write_settings(tiny, 1, &out);
    out += c.get(1, "/big/100");
    c.send(out);
    std::string body;
    ASSERT_TRUE(c.frames([&](const FrameHeader& h, const std::string& p) {
        if (h.type == (uint8_t)frame_type::DATA) body += p;
        return body.size() < 10;
    }));
    uint8_t ping[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    std::string pb;
    write_ping(ping, false, &pb);
    c.send(pb);
    ASSERT_TRUE(c.frames([&](const FrameHeader& h, const std::string& p) {
        if (h.type == (uint8_t)frame_type::DATA) body += p;
        return !(h.type == (uint8_t)frame_type::PING && (h.flags & flags::ACK));
    }));
    EXPECT_EQ(10u, body.size());
    std::string wu;
    write_window_update(1, 90, &wu);
    c.send(wu);
    bool ended = false;
    ASSERT_TRUE(c.frames([&](const FrameHeader& h, const std::string& p) {
        if (h.type == (uint8_t)frame_type::DATA && h.stream == 1) body += p;
        ended = h.stream == 1 && (h.flags & flags::END_STREAM);
        return !ended;
    }));
    EXPECT_TRUE(ended);
    EXPECT_EQ(h2_pattern(100), body);
}

// h2spec (tools/install-deps.sh installs it): every case of RFC 9113 and
// 7541 it has must pass.
TEST(Http2Conformance, H2specPassesEveryCase) {
    if (photon_test::h2spec_path().empty())
        GTEST_SKIP() << "h2spec not installed (tools/install-deps.sh installs it)";
    H2Server server;
    ASSERT_FALSE(server.failed());
    photon_test::expect_h2spec_passes(server.port());
}

}  // namespace
