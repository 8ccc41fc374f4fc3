#include "wire.h"

#include <algorithm>
#include <cstring>

namespace photon {
namespace net {
namespace grpc {

const char* status_code_name(StatusCode code) {
    static const char* const names[] = {"OK",
                                        "CANCELLED",
                                        "UNKNOWN",
                                        "INVALID_ARGUMENT",
                                        "DEADLINE_EXCEEDED",
                                        "NOT_FOUND",
                                        "ALREADY_EXISTS",
                                        "PERMISSION_DENIED",
                                        "RESOURCE_EXHAUSTED",
                                        "FAILED_PRECONDITION",
                                        "ABORTED",
                                        "OUT_OF_RANGE",
                                        "UNIMPLEMENTED",
                                        "INTERNAL",
                                        "UNAVAILABLE",
                                        "DATA_LOSS",
                                        "UNAUTHENTICATED"};
    int c = (int)code;
    return c >= 0 && c <= 16 ? names[c] : "UNKNOWN";
}

namespace {

bool reserved_name(std::string_view n) {
    if (n.empty() || n[0] == ':') return true;
    if (n.compare(0, 5, "grpc-") == 0) return true;
    return n == "content-type" || n == "te" || n == "user-agent" || n == "content-length" ||
           n == "accept-encoding" || n == "content-encoding";
}

bool binary_key(std::string_view k) { return k.size() > 4 && k.substr(k.size() - 4) == "-bin"; }

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;  // also the URL-safe alphabet
    if (c == '/' || c == '_') return 63;
    return -1;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

bool valid_metadata(const std::string& key, const std::string& value) {
    if (key.empty() || reserved_name(key)) return false;
    for (char c : key)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            return false;
    if (binary_key(key)) return true;
    for (char c : value)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

bool valid_metadata_list(const Metadata& md) {
    for (auto& kv : md)
        if (!valid_metadata(kv.first, kv.second)) return false;
    return true;
}

bool parse_timeout(std::string_view v, uint64_t* us) {
    if (v.size() < 2 || v.size() > 9) return false;
    uint64_t n = 0;
    for (size_t i = 0; i + 1 < v.size(); i++) {
        if (v[i] < '0' || v[i] > '9') return false;
        n = n * 10 + (v[i] - '0');
    }
    switch (v.back()) {
        case 'H':
            *us = n * 3600ULL * 1000 * 1000;
            return true;
        case 'M':
            *us = n * 60ULL * 1000 * 1000;
            return true;
        case 'S':
            *us = n * 1000ULL * 1000;
            return true;
        case 'm':
            *us = n * 1000ULL;
            return true;
        case 'u':
            *us = n;
            return true;
        case 'n':
            *us = (n + 999) / 1000;
            return true;
        default:
            return false;
    }
}

std::string format_timeout(uint64_t us) {
    static const uint64_t kMax = 99999999;
    if (us <= kMax) return std::to_string(us) + "u";
    if (us / 1000 <= kMax) return std::to_string((us + 999) / 1000) + "m";
    if (us / 1000000 <= kMax) return std::to_string((us + 999999) / 1000000) + "S";
    uint64_t h = us / 3600000000ULL + 1;
    return std::to_string(h > kMax ? kMax : h) + "H";
}

std::string percent_encode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if (c >= 0x20 && c <= 0x7e && c != '%') {
            out += (char)c;
        } else {
            static const char hex[] = "0123456789ABCDEF";
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string percent_decode(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < s.size() && (hi = hex_value(s[i + 1])) >= 0 &&
            (lo = hex_value(s[i + 2])) >= 0) {
            out += (char)(hi * 16 + lo);
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

std::string base64_encode(std::string_view s) {
    std::string out;
    out.reserve((s.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= s.size(); i += 3) {
        uint32_t v = (uint8_t)s[i] << 16 | (uint8_t)s[i + 1] << 8 | (uint8_t)s[i + 2];
        out += kB64[v >> 18];
        out += kB64[(v >> 12) & 63];
        out += kB64[(v >> 6) & 63];
        out += kB64[v & 63];
    }
    if (i < s.size()) {
        uint32_t v = (uint8_t)s[i] << 16 | (i + 1 < s.size() ? (uint8_t)s[i + 1] << 8 : 0);
        out += kB64[v >> 18];
        out += kB64[(v >> 12) & 63];
        out += i + 1 < s.size() ? kB64[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

bool base64_decode(std::string_view s, std::string* out) {
    while (!s.empty() && s.back() == '=') s.remove_suffix(1);
    out->clear();
    out->reserve(s.size() * 3 / 4);
    uint32_t acc = 0;
    int bits = 0;
    for (char c : s) {
        int v = b64_value(c);
        if (v < 0) return false;
        acc = acc << 6 | v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *out += (char)((acc >> bits) & 0xff);
        }
    }
    return bits < 6;  // one leftover character is not base64
}

const std::string* find_field(const std::vector<header_field>& fields, std::string_view name) {
    for (auto& f : fields)
        if (f.name == name) return &f.value;
    return nullptr;
}

bool metadata_from_fields(const std::vector<header_field>& fields, Metadata* md) {
    for (auto& f : fields) {
        if (reserved_name(f.name)) continue;
        if (binary_key(f.name)) {
            std::string v;
            // Several values of a -bin key may arrive joined by commas.
            size_t start = 0;
            while (start <= f.value.size()) {
                size_t comma = f.value.find(',', start);
                if (comma == std::string::npos) comma = f.value.size();
                std::string_view piece(f.value.data() + start, comma - start);
                while (!piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
                if (!base64_decode(piece, &v)) return false;
                md->emplace_back(f.name, v);
                start = comma + 1;
            }
        } else {
            md->emplace_back(f.name, f.value);
        }
    }
    return true;
}

void metadata_to_fields(const Metadata& md, std::vector<header_field>* fields) {
    for (auto& kv : md) {
        if (binary_key(kv.first))
            fields->push_back({kv.first, base64_encode(kv.second)});
        else
            fields->push_back({kv.first, kv.second});
    }
}

void write_prefix(bool compressed, uint32_t n, char out[5]) {
    out[0] = compressed ? 1 : 0;
    out[1] = (char)(n >> 24);
    out[2] = (char)(n >> 16);
    out[3] = (char)(n >> 8);
    out[4] = (char)n;
}

char* message_reader::reserve(size_t n) {
    if (pos_ > 0 && pos_ == buf_.size()) {
        buf_.clear();
        pos_ = 0;
    } else if (pos_ > 65536 && pos_ >= buf_.size() / 2) {
        buf_.erase(0, pos_);
        pos_ = 0;
    }
    size_t old = buf_.size();
    buf_.resize(old + n);
    reserve_ = n;
    return &buf_[old];
}

size_t message_reader::want() const {
    const size_t kSmall = 512, kMax = 1 << 20;
    size_t avail = buf_.size() - pos_;
    if (avail < 5) return kSmall;
    auto p = (const uint8_t*)buf_.data() + pos_;
    size_t n = (size_t)p[1] << 24 | p[2] << 16 | p[3] << 8 | p[4];
    size_t rest = 5 + n > avail ? 5 + n - avail : 0;
    return std::min(std::max(rest, kSmall), kMax);
}

message_reader::Result message_reader::next(bool* compressed, std::string* msg) {
    size_t avail = buf_.size() - pos_;
    if (avail < 5) return kNeedMore;
    auto p = (const uint8_t*)buf_.data() + pos_;
    if (p[0] > 1) return kBadFlag;
    uint32_t n = (uint32_t)p[1] << 24 | p[2] << 16 | p[3] << 8 | p[4];
    if (n > max_) return kTooLarge;
    if (avail < 5 + (size_t)n) return kNeedMore;
    *compressed = p[0] == 1;
    if (pos_ == 0 && avail == 5 + (size_t)n) {  // the buffer holds just it: no copy
        msg->swap(buf_);
        msg->erase(0, 5);
        buf_.clear();  // keeps what was msg's capacity for the next read
        return kMessage;
    }
    msg->assign(buf_.data() + pos_ + 5, n);
    pos_ += 5 + n;
    if (pos_ == buf_.size()) {
        buf_.clear();
        pos_ = 0;
    }
    return kMessage;
}

StatusCode code_from_http(int s) {
    switch (s) {
        case 400:
            return StatusCode::INTERNAL;
        case 401:
            return StatusCode::UNAUTHENTICATED;
        case 403:
            return StatusCode::PERMISSION_DENIED;
        case 404:
            return StatusCode::UNIMPLEMENTED;
        case 429:
        case 502:
        case 503:
        case 504:
            return StatusCode::UNAVAILABLE;
        default:
            return StatusCode::UNKNOWN;
    }
}

}  // namespace grpc
}  // namespace net
}  // namespace photon
