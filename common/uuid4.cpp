// uuid4.h: UUID text <-> bytes, and random version-4 UUIDs.
#include <photon/common/uuid4.h>

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>

namespace {

const char kUpperHex[] = "0123456789ABCDEF";

// Where the dashes of "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" go.
bool is_dash_position(int i) { return i == 8 || i == 13 || i == 18 || i == 23; }

int hex_value(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

// xorshift128+ (Vigna): fast, and good enough for identifiers that need to
// be unique, not secret. The state is per OS thread, so no locking.
struct xorshift128plus {
    uint64_t s[2];

    xorshift128plus() {
        if (getrandom(s, sizeof(s), 0) != (ssize_t)sizeof(s)) fallback_seed();
        if (s[0] == 0 && s[1] == 0) s[1] = 0x9e3779b97f4a7c15ULL;  // never all zero
    }
    // No kernel randomness (very old kernel, seccomp): mix what differs
    // between threads and runs.
    void fallback_seed() {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ts.tv_sec;
        s[1] = ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)this ^ (uint64_t)clock();
    }
    uint64_t next() {
        uint64_t x = s[0];
        const uint64_t y = s[1];
        s[0] = y;
        x ^= x << 23;
        s[1] = x ^ y ^ (x >> 17) ^ (y >> 26);
        return s[1] + y;
    }
};

}  // namespace

int invalid_uuid4(char* str_uu) {
    if (!str_uu) return -1;
    for (int i = 0; i < 36; i++) {
        bool ok = is_dash_position(i) ? str_uu[i] == '-' : hex_value(str_uu[i]) >= 0;
        if (!ok) return -1;  // also stops at a NUL: too short
    }
    return str_uu[36] == '\0' ? 0 : -1;
}

int uuid4_parse(char* in, uuid4_t uu) {
    if (invalid_uuid4(in) != 0) return UUID4_EFAILURE;
    int byte = 0;
    for (int i = 0; i < 36; i += 2) {
        if (is_dash_position(i)) i++;
        uu[byte++] = (char)(hex_value(in[i]) << 4 | hex_value(in[i + 1]));
    }
    return UUID4_ESUCCESS;
}

void uuid4_unparse_upper(uuid4_t uu, uuid4_string_t out) {
    int p = 0;
    for (int i = 0; i < 16; i++) {
        if (is_dash_position(p)) out[p++] = '-';
        auto x = (uint8_t)uu[i];
        out[p++] = kUpperHex[x >> 4];
        out[p++] = kUpperHex[x & 0xf];
    }
    out[36] = '\0';
}

void uuid4_clear(uuid4_t uu) { memset(uu, 0, 16); }

int uuid4_is_null(uuid4_t uu) {
    for (int i = 0; i < 16; i++)
        if (uu[i] != 0) return 0;
    return 1;
}

void uuid4_generate(uuid4_t uu) {
    thread_local xorshift128plus rng;
    uint64_t w[2] = {rng.next(), rng.next()};
    memcpy(uu, w, 16);
    uu[6] = (char)(((uint8_t)uu[6] & 0x0f) | 0x40);  // version 4
    uu[8] = (char)(((uint8_t)uu[8] & 0x3f) | 0x80);  // variant 10xx (RFC 4122)
}

void uuid4_copy(uuid4_t dst, uuid4_t src) { memcpy(dst, src, 16); }

int uuid4_compare(uuid4_t uu1, uuid4_t uu2) { return memcmp(uu1, uu2, 16); }
