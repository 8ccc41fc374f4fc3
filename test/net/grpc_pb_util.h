// Protobuf's wire format by hand (protobuf.dev/programming-guides/encoding),
// for the gRPC tests that talk to grpc C++ and etcd without generated code:
// varints, length-delimited fields, and a flat decoder of one message level.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace photon_test {

class PbWriter {
public:
    PbWriter& varint(uint32_t field, uint64_t v) {
        key(field, 0);
        raw_varint(v);
        return *this;
    }
    PbWriter& bytes(uint32_t field, const std::string& v) {
        key(field, 2);
        raw_varint(v.size());
        out_ += v;
        return *this;
    }
    const std::string& str() const { return out_; }

private:
    void key(uint32_t field, int wire) { raw_varint((uint64_t)field << 3 | wire); }
    void raw_varint(uint64_t v) {
        while (v >= 0x80) out_ += (char)(v | 0x80), v >>= 7;
        out_ += (char)v;
    }
    std::string out_;
};

// The fields of one message: field number -> values in order (varints as
// their decimal text, length-delimited ones as bytes). ok false if malformed.
struct PbFields {
    bool ok = true;
    std::map<uint32_t, std::vector<std::string>> f;
    std::string bytes(uint32_t n) const {
        auto it = f.find(n);
        return it == f.end() ? "" : it->second.back();
    }
    uint64_t num(uint32_t n) const {
        auto it = f.find(n);
        return it == f.end() ? 0 : std::stoull(it->second.back());
    }
    const std::vector<std::string>& all(uint32_t n) const {
        static const std::vector<std::string> none;
        auto it = f.find(n);
        return it == f.end() ? none : it->second;
    }
};

inline PbFields pb_parse(const std::string& s) {
    PbFields r;
    size_t i = 0;
    auto varint = [&](uint64_t* v) {
        *v = 0;
        for (int shift = 0; i < s.size() && shift < 64; shift += 7) {
            uint8_t b = (uint8_t)s[i++];
            *v |= (uint64_t)(b & 0x7f) << shift;
            if (!(b & 0x80)) return true;
        }
        return false;
    };
    while (i < s.size()) {
        uint64_t key, v;
        if (!varint(&key)) return r.ok = false, r;
        uint32_t field = (uint32_t)(key >> 3);
        switch (key & 7) {
            case 0:
                if (!varint(&v)) return r.ok = false, r;
                r.f[field].push_back(std::to_string(v));
                break;
            case 2:
                if (!varint(&v) || v > s.size() - i) return r.ok = false, r;
                r.f[field].push_back(s.substr(i, v));
                i += v;
                break;
            case 1:
                if (s.size() - i < 8) return r.ok = false, r;
                i += 8;
                break;
            case 5:
                if (s.size() - i < 4) return r.ok = false, r;
                i += 4;
                break;
            default:
                return r.ok = false, r;
        }
    }
    return r;
}

}  // namespace photon_test
