#include "huffman.h"

namespace photon {
namespace net {
namespace http2 {
namespace {

constexpr int kSymbols = 257;  // the bytes, and EOS (256)

// The code lengths of Appendix B by symbol. The code is canonical: codes of
// one length are consecutive in symbol order, and each length's first code
// follows the previous length's last, shifted. The codes are made from this.
constexpr uint8_t kLength[kSymbols] = {
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28,
    28, 28, 28, 28, 28, 28, 28, 28, 6,  10, 10, 12, 13, 6,  8,  11, 10, 10, 8,  11, 8,  6,  6,  6,
    5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8,  15, 6,  12, 10, 13, 6,  7,  7,  7,  7,  7,  7,
    7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8,  13, 19, 13, 14, 6,
    15, 5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5,  6,  7,  6,  5,  5,  6,  7,  7,
    7,  7,  7,  15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21,
    23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24,
    21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
};

struct huffman_code {
    uint32_t bits[kSymbols];  // right-aligned
    huffman_code() {
        uint32_t code = 0;
        for (int l = 1; l <= 30; l++) {
            for (int s = 0; s < kSymbols; s++)
                if (kLength[s] == l) bits[s] = code++;
            code <<= 1;
        }
    }
};

// The decoder's states are the inner nodes of the code tree (0 is the
// root); a step consumes 4 bits: it may end a symbol (at most one, as no code
// is shorter than 5 bits) and lands on a node.
struct step {
    uint8_t next;   // the node after the 4 bits
    uint8_t sym;    // the symbol ended, if kEmit
    uint8_t flags;  // kEmit, kFail, kAccept
};
constexpr uint8_t kEmit = 1, kFail = 2, kAccept = 4;  // kAccept: a string may end here

struct huffman_decoder {
    step steps[256][16];
    huffman_decoder(const huffman_code& code) {
        int16_t child[256][2];  // >= 0: inner node; < 0: -1 - symbol
        bool ones[256];         // the node's path is all 1s ...
        uint8_t depth[256];     // ... and this long
        int nodes = 1;
        for (auto& c : child) c[0] = c[1] = 0;
        ones[0] = true;
        depth[0] = 0;
        for (int s = 0; s < kSymbols; s++) {
            int n = 0;
            for (int i = kLength[s] - 1; i >= 0; i--) {
                int b = (code.bits[s] >> i) & 1;
                if (i == 0) {
                    child[n][b] = (int16_t)(-1 - s);
                } else {
                    if (child[n][b] == 0) {
                        child[n][b] = (int16_t)nodes;
                        ones[nodes] = ones[n] && b;
                        depth[nodes] = depth[n] + 1;
                        nodes++;
                    }
                    n = child[n][b];
                }
            }
        }
        for (int n = 0; n < nodes; n++)
            for (int nib = 0; nib < 16; nib++) steps[n][nib] = walk(child, ones, depth, n, nib);
    }
    static step walk(int16_t (*child)[2], bool* ones, uint8_t* depth, int n, int nib) {
        step st{0, 0, 0};
        for (int i = 3; i >= 0; i--) {
            int c = child[n][(nib >> i) & 1];
            if (c >= 0) {
                n = c;
                continue;
            }
            int sym = -1 - c;
            if (sym == 256) return step{0, 0, kFail};
            st.sym = (uint8_t)sym;
            st.flags |= kEmit;
            n = 0;
        }
        st.next = (uint8_t)n;
        if (ones[n] && depth[n] <= 7) st.flags |= kAccept;
        return st;
    }
};

const huffman_code& code() {
    static const huffman_code c;
    return c;
}

const huffman_decoder& decoder() {
    static const huffman_decoder d(code());
    return d;
}

}  // namespace

size_t huffman_encoded_size(std::string_view s) {
    uint64_t bits = 0;
    for (unsigned char c : s) bits += kLength[c];
    return (size_t)((bits + 7) / 8);
}

void huffman_encode(std::string_view s, std::string* out) {
    const auto& c = code();
    size_t at = out->size();
    out->resize(at + huffman_encoded_size(s));  // written in place: no push_back per byte
    char* p = &(*out)[at];
    uint64_t acc = 0;  // pending bits, right-aligned
    int n = 0;         // how many
    for (unsigned char ch : s) {
        acc = (acc << kLength[ch]) | c.bits[ch];
        n += kLength[ch];
        while (n >= 8) {
            n -= 8;
            *p++ = (char)(acc >> n);
        }
        acc &= (uint64_t(1) << n) - 1;
    }
    if (n > 0) *p++ = (char)((acc << (8 - n)) | (0xff >> n));  // EOS's leading ones
}

bool huffman_decode(const uint8_t* p, size_t n, std::string* out) {
    const auto& d = decoder();
    // The shortest code is 5 bits: at most 8n/5 symbols, written in place.
    size_t at = out->size();
    out->resize(at + n * 8 / 5 + 1);
    char* w = &(*out)[at];
    uint8_t state = 0;
    uint8_t flags = kAccept;
    for (size_t i = 0; i < n; i++) {
        for (int half = 0; half < 2; half++) {
            const step& st = d.steps[state][half ? p[i] & 0xf : p[i] >> 4];
            if (st.flags & kFail) return out->resize(at), false;
            if (st.flags & kEmit) *w++ = (char)st.sym;
            state = st.next;
            flags = st.flags;
        }
    }
    out->resize((size_t)(w - out->data()));
    return (flags & kAccept) != 0;
}

}  // namespace http2
}  // namespace net
}  // namespace photon
