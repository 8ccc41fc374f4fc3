// websocket_codec.h: frame headers, masking, UTF-8, SHA-1 (FIPS 180-4) and
// base64 (RFC 4648), written out here so that WebSocket works in builds
// without OpenSSL too.
#include "websocket_codec.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace photon {
namespace net {
namespace http {
namespace ws_detail {

// ---- frames -------------------------------------------------------------

size_t header_size(uint8_t b0, uint8_t b1) {
    uint8_t len7 = b1 & 0x7F;
    size_t n = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0);
    return n + ((b1 & 0x80) ? 4 : 0);
}

int parse_header(const uint8_t* p, FrameHeader* h) {
    h->fin = (p[0] & 0x80) != 0;
    h->rsv = (p[0] >> 4) & 0x7;
    h->opcode = p[0] & 0x0F;
    h->masked = (p[1] & 0x80) != 0;
    uint8_t len7 = p[1] & 0x7F;
    size_t i = 2;
    if (len7 < 126) {
        h->length = len7;
    } else {
        int bytes = len7 == 126 ? 2 : 8;
        h->length = 0;
        for (int k = 0; k < bytes; k++) h->length = (h->length << 8) | p[i++];
        if (h->length >> 63) return -1;
    }
    if (h->masked) memcpy(h->mask, p + i, 4);
    return 0;
}

size_t build_header(uint8_t* out, uint8_t opcode, bool fin, uint64_t length, const uint8_t* mask) {
    size_t i = 0;
    out[i++] = (fin ? 0x80 : 0) | opcode;
    uint8_t m = mask ? 0x80 : 0;
    if (length < 126) {
        out[i++] = m | (uint8_t)length;
    } else if (length <= 0xFFFF) {
        out[i++] = m | 126;
        out[i++] = (uint8_t)(length >> 8);
        out[i++] = (uint8_t)length;
    } else {
        out[i++] = m | 127;
        for (int shift = 56; shift >= 0; shift -= 8) out[i++] = (uint8_t)(length >> shift);
    }
    if (mask) {
        memcpy(out + i, mask, 4);
        i += 4;
    }
    return i;
}

void apply_mask(char* data, size_t n, const uint8_t mask[4], uint64_t offset) {
    // The key repeated from this offset on: byte i of the buffer uses k[i & 7].
    uint8_t k[8];
    for (int i = 0; i < 8; i++) k[i] = mask[(offset + i) & 3];
    uint64_t k64;
    memcpy(&k64, k, 8);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {  // memcpy: no alignment assumed, plain loads
        uint64_t w;
        memcpy(&w, data + i, 8);
        w ^= k64;
        memcpy(data + i, &w, 8);
    }
    for (; i < n; i++) data[i] ^= (char)k[i & 7];
}

// ---- UTF-8 ----------------------------------------------------------------

bool utf8_checker::feed(const char* data, size_t n) {
    auto p = (const uint8_t*)data;
    size_t i = 0;
    while (ok_ && i < n) {
        if (need_ == 0) {
            // ASCII runs, the common case, a word at a time.
            while (i + 8 <= n) {
                uint64_t w;
                memcpy(&w, p + i, 8);
                if (w & 0x8080808080808080ULL) break;
                i += 8;
            }
            if (i == n) break;
            uint8_t b = p[i++];
            if (b < 0x80) continue;
            lo_ = 0x80, hi_ = 0xBF;
            if (b < 0xC2) {  // a stray continuation byte, or an overlong 2-byte form
                ok_ = false;
            } else if (b < 0xE0) {
                need_ = 1;
            } else if (b < 0xF0) {
                need_ = 2;
                if (b == 0xE0) lo_ = 0xA0;  // overlong
                if (b == 0xED) hi_ = 0x9F;  // UTF-16 surrogates
            } else if (b < 0xF5) {
                need_ = 3;
                if (b == 0xF0) lo_ = 0x90;  // overlong
                if (b == 0xF4) hi_ = 0x8F;  // above U+10FFFF
            } else {
                ok_ = false;
            }
        } else {
            uint8_t b = p[i++];
            if (b < lo_ || b > hi_) {
                ok_ = false;
            } else {
                need_--;
                lo_ = 0x80, hi_ = 0xBF;
            }
        }
    }
    return ok_;
}

bool is_utf8(std::string_view s) {
    utf8_checker c;
    return c.feed(s.data(), s.size()) && c.complete();
}

bool valid_close_code(uint16_t code) {
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

// ---- randomness ---------------------------------------------------------------

namespace {
// getrandom() in batches: a masking key per frame must not cost a syscall.
struct random_pool {
    uint8_t buf[256];
    size_t left = 0;

    void refill() {
        size_t got = 0;
        while (got < sizeof(buf)) {
            ssize_t r = getrandom(buf + got, sizeof(buf) - got, 0);
            if (r > 0) {
                got += (size_t)r;
            } else if (r < 0 && errno != EINTR) {
                break;  // ENOSYS on an old kernel: the fallback below
            }
        }
        if (got < sizeof(buf)) {
            std::random_device rd;
            for (; got < sizeof(buf); got++) buf[got] = (uint8_t)rd();
        }
        left = sizeof(buf);
    }
};
thread_local random_pool t_random;
}  // namespace

void random_bytes(void* out, size_t n) {
    auto dst = (uint8_t*)out;
    int saved = errno;
    while (n) {
        if (t_random.left == 0) t_random.refill();
        size_t k = n < t_random.left ? n : t_random.left;
        uint8_t* src = t_random.buf + sizeof(t_random.buf) - t_random.left;
        memcpy(dst, src, k);
        memset(src, 0, k);  // handed-out bytes are not kept
        t_random.left -= k;
        dst += k;
        n -= k;
    }
    errno = saved;
}

// ---- SHA-1, base64, keys ------------------------------------------------------

namespace {
uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void sha1_block(uint32_t h[5], const uint8_t* p) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d), k = 0x5A827999;
        } else if (i < 40) {
            f = b ^ c ^ d, k = 0x6ED9EBA1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
        } else {
            f = b ^ c ^ d, k = 0xCA62C1D6;
        }
        uint32_t t = rotl(a, 5) + f + e + k + w[i];
        e = d, d = c, c = rotl(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kHandshakeGuid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";  // RFC 6455 1.3
}  // namespace

void sha1(const void* data, size_t n, uint8_t out[20]) {
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    auto p = (const uint8_t*)data;
    size_t full = n / 64 * 64;
    for (size_t i = 0; i < full; i += 64) sha1_block(h, p + i);
    // The rest, 0x80, zeros, and the length in bits: one or two blocks.
    uint8_t tail[128] = {};
    size_t rest = n - full;
    if (rest) memcpy(tail, p + full, rest);
    tail[rest] = 0x80;
    size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++) tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t i = 0; i < tail_len; i += 64) sha1_block(h, tail + i);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

std::string base64(const void* data, size_t n) {
    auto p = (const uint8_t*)data;
    std::string out;
    out.reserve((n + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        for (int s = 18; s >= 0; s -= 6) out.push_back(kBase64[(v >> s) & 63]);
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        out.push_back(kBase64[(v >> 18) & 63]);
        out.push_back(kBase64[(v >> 12) & 63]);
        out.push_back(i + 1 < n ? kBase64[(v >> 6) & 63] : '=');
        out.push_back('=');
    }
    return out;
}

std::string accept_key(std::string_view key) {
    std::string s(key);
    s.append(kHandshakeGuid);
    uint8_t digest[20];
    sha1(s.data(), s.size(), digest);
    return base64(digest, sizeof(digest));
}

std::string new_client_key() {
    uint8_t nonce[16];
    random_bytes(nonce, sizeof(nonce));
    return base64(nonce, sizeof(nonce));
}

bool valid_client_key(std::string_view key) {
    // 16 bytes are 22 base64 digits and "==", the last digit carrying 2 bits.
    if (key.size() != 24 || key[22] != '=' || key[23] != '=') return false;
    for (size_t i = 0; i < 22; i++)
        if (!strchr(kBase64, key[i]) || key[i] == 0) return false;
    return strchr("AQgw", key[21]) != nullptr;
}

}  // namespace ws_detail
}  // namespace http
}  // namespace net
}  // namespace photon
