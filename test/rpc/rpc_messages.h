// Messages shared by the rpc tests: one per field type, and one with all.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <photon/rpc/rpc.h>
#include <photon/rpc/serialize.h>

namespace rpc_test {

namespace rpc = photon::rpc;

struct Point {
    int32_t x, y;
};

struct Inner : rpc::Message {
    uint64_t id = 0;
    rpc::string name;
    rpc::array<uint32_t> nums;
    PROCESS_FIELDS(name, nums);
};

struct All : rpc::Message {
    uint32_t pod = 0;
    double d = 0;
    rpc::string s;
    rpc::array<uint64_t> a;
    rpc::buffer b;
    rpc::aligned_buffer ab;
    rpc::iovec_array iov;
    rpc::fixed_buffer<Point> fb;
    Inner inner;
    rpc::array<Inner> inners;
    PROCESS_FIELDS(s, a, b, ab, iov, fb, inner, inners);
};

struct Checked : rpc::CheckedMessage<> {
    uint32_t n = 0;
    rpc::string s;
    PROCESS_FIELDS(s);
};

struct TestSvc {
    const static uint32_t IID = 0x5e57;
};

struct Echo : TestSvc {
    const static uint32_t FID = 1;
    struct Request : rpc::Message {
        uint32_t delay_ms = 0;
        rpc::string str;
        PROCESS_FIELDS(str);
    };
    struct Response : rpc::Message {
        rpc::string str;
        PROCESS_FIELDS(str);
    };
};

struct Everything : TestSvc {
    const static uint32_t FID = 2;
    using Request = All;
    using Response = All;
};

struct Verify : TestSvc {
    const static uint32_t FID = 3;
    using Request = Checked;
    using Response = Checked;
};

// Not registered by the servers of the tests.
struct Missing : TestSvc {
    const static uint32_t FID = 99;
    using Request = Echo::Request;
    using Response = Echo::Response;
};

// One Echo frame carrying `text`, as a stub would send it (header and
// serialized request, pointer fields zeroed).
inline std::string echo_frame(const std::string& text, uint64_t tag, uint32_t delay_ms = 0) {
    Echo::Request req;
    req.delay_ms = delay_ms;
    req.str = std::string_view(text);
    rpc::SerializerIOV ser;
    ser.zero_pointers = true;
    ser.serialize(req);
    std::string frame(sizeof(rpc::Header), '\0');
    for (auto& v : ser.iov) frame.append((const char*)v.iov_base, v.iov_len);
    rpc::Header h;
    h.size = (uint32_t)(frame.size() - sizeof(h));
    h.function = rpc::FunctionID(Echo::IID, Echo::FID);
    h.tag = tag;
    memcpy(&frame[0], &h, sizeof(h));
    return frame;
}

}  // namespace rpc_test
