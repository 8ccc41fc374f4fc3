// estring helpers that are not inline: charset search, number parsing, case folding.
#include <photon/common/estring.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <charconv>
#include <clocale>
#include <cmath>
#include <locale.h>

int photon::detail::estring_snprintf(char* buf, size_t size, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(buf, size, fmt, args);
    va_end(args);
    return n;
}

size_t estring_view::find_first_of(const charset& set) const {
    for (size_t i = 0; i < size(); ++i)
        if (set.test((*this)[i])) return i;
    return npos;
}

size_t estring_view::find_first_not_of(const charset& set) const {
    for (size_t i = 0; i < size(); ++i)
        if (!set.test((*this)[i])) return i;
    return npos;
}

size_t estring_view::find_last_of(const charset& set) const {
    for (size_t i = size(); i-- > 0;)
        if (set.test((*this)[i])) return i;
    return npos;
}

size_t estring_view::find_last_not_of(const charset& set) const {
    for (size_t i = size(); i-- > 0;)
        if (!set.test((*this)[i])) return i;
    return npos;
}

namespace {

unsigned decimal_digit(char c) { return (unsigned char)c - (unsigned)'0'; }

unsigned hex_digit(char c) {
    unsigned d = (unsigned char)c - (unsigned)'0';
    if (d < 10) return d;
    d = ((unsigned char)c | 0x20u) - (unsigned)'a';  // 'A'..'F' fold onto 'a'..'f'
    return d < 6 ? d + 10 : 16;
}

// Reads the leading digits of `s` in base Base. Returns how many there were, or 0 if none or
// if the value does not fit 64 bits; *v is written only on success.
template <unsigned Base, typename DigitOf>
size_t parse_unsigned(std::string_view s, uint64_t* v, DigitOf digit_of) {
    uint64_t val = 0;
    size_t i = 0;
    for (; i < s.size(); ++i) {
        unsigned d = digit_of(s[i]);
        if (d >= Base) break;
        if (__builtin_mul_overflow(val, (uint64_t)Base, &val) ||
            __builtin_add_overflow(val, (uint64_t)d, &val))
            return 0;
    }
    if (i && v) *v = val;
    return i;
}

// strtod must not see the process locale's decimal separator.
locale_t c_locale() {
    static const locale_t loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    return loc;
}

}  // namespace

size_t estring_view::to_uint64_check(uint64_t* v) const {
    return parse_unsigned<10>(*this, v, decimal_digit);
}

size_t estring_view::hex_to_uint64_check(uint64_t* v) const {
    return parse_unsigned<16>(*this, v, hex_digit);
}

size_t estring_view::to_int64_check(int64_t* v) const {
    bool negative = !empty() && front() == '-';
    uint64_t mag = 0;
    size_t n = parse_unsigned<10>(substr(negative), &mag, decimal_digit);
    if (n == 0) return 0;
    const uint64_t limit = (uint64_t)INT64_MAX + negative;  // |INT64_MIN| = INT64_MAX + 1
    if (mag > limit) return 0;
    if (v) *v = negative ? (int64_t)(uint64_t(0) - mag) : (int64_t)mag;
    return n + negative;
}

size_t estring_view::to_double_check(double* v) const {
    if (empty()) return 0;
    Extraction<64> s(*this, true);
    const char* p = s;
    if (!p) return 0;  // no memory for a long input
    const int saved_errno = errno;
    errno = 0;
    char* end = nullptr;
    auto loc = c_locale();
    double val = loc ? strtod_l(p, &end, loc) : strtod(p, &end);
    bool overflow = errno == ERANGE && std::isinf(val);
    errno = saved_errno;
    size_t n = end - p;
    if (n == 0 || overflow) return 0;
    if (v) *v = val;
    return n;
}

estring& estring::append(uint64_t x) {
    char buf[20];  // 2^64 - 1 has 20 digits
    char* p = buf + sizeof(buf);
    do {
        *--p = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    std::string::append(p, buf + sizeof(buf) - p);
    return *this;
}

estring& estring::append_double(double x) {
    char buf[32];  // the shortest form of a double takes at most 24 chars
    auto r = std::to_chars(buf, buf + sizeof(buf), x);
    std::string::append(buf, r.ec == std::errc() ? r.ptr - buf : 0);
    return *this;
}

// The type-valued contracts Photon's users rely on.
static_assert(std::is_same<estring&, decltype(std::declval<estring>().append(0ULL))>::value, "");
static_assert(std::is_same<estring&, decltype(std::declval<estring>().append('0'))>::value, "");
static_assert(std::is_same<estring&, decltype(std::declval<estring>().append("Hello"))>::value, "");
static_assert(std::is_same<estring&, decltype(std::declval<estring>().append(std::declval<char*>(),
                                                                             5))>::value,
              "");
static_assert(std::is_same<estring&, decltype(std::declval<estring>().append(
                                         std::declval<std::string>()))>::value,
              "");
static_assert(std::is_same<estring&, decltype(std::declval<estring>().append(
                                         std::declval<std::string_view>()))>::value,
              "");
static_assert(std::is_same<estring&, decltype(std::declval<estring>() += 0ULL)>::value, "");
static_assert(std::is_same<estring&, decltype(std::declval<estring>() += '0')>::value, "");
static_assert(std::is_same<estring&, decltype(std::declval<estring>() += "Hello")>::value, "");
static_assert(
    std::is_same<estring&, decltype(std::declval<estring>() += std::declval<std::string>())>::value,
    "");
static_assert(std::is_same<estring&, decltype(std::declval<estring>() +=
                                              std::declval<std::string_view>())>::value,
              "");

namespace photon {
namespace {

constexpr uint64_t kOnes = 0x0101010101010101ULL;

// Bytes of x that are ASCII and in [lo, hi], as 0x80 in that byte. Each byte's low 7 bits plus
// a bias stays below 256, so no carry crosses into the next byte.
inline uint64_t bytes_in_range(uint64_t x, char lo, char hi) {
    uint64_t low7 = x & (0x7F * kOnes);
    uint64_t ge_lo = low7 + (uint64_t)(0x80 - lo) * kOnes;  // bit 7 set iff byte >= lo
    uint64_t gt_hi = low7 + (uint64_t)(0x7F - hi) * kOnes;  // bit 7 set iff byte > hi
    return ge_lo & ~gt_hi & ~x & (0x80 * kOnes);
}

inline uint64_t tolower8(uint64_t x) { return x | (bytes_in_range(x, 'A', 'Z') >> 2); }
inline uint64_t toupper8(uint64_t x) { return x & ~(bytes_in_range(x, 'a', 'z') >> 2); }

// 8 bytes at a time through memcpy (no alignment or aliasing assumptions), then the tail.
template <typename F1, typename F8>
void convert_case(char* out, const char* in, size_t len, F1 f1, F8 f8) {
    if (len == 0) len = strlen(in);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x;
        memcpy(&x, in + i, 8);
        x = f8(x);
        memcpy(out + i, &x, 8);
    }
    for (; i < len; ++i) out[i] = f1(in[i]);
    out[len] = '\0';
}

}  // namespace

void tolower_fast(char* out, const char* in, size_t len) {
    convert_case(
        out, in, len, [](char c) { return tolower_fast(c); }, tolower8);
}

void toupper_fast(char* out, const char* in, size_t len) {
    convert_case(
        out, in, len, [](char c) { return toupper_fast(c); }, toupper8);
}

int stricmp_fast(std::string_view a, std::string_view b) {
    size_t n = std::min(a.size(), b.size()), i = 0;
    for (; i + 8 <= n; i += 8) {  // skip equal blocks quickly; compare a differing one bytewise
        uint64_t x, y;
        memcpy(&x, a.data() + i, 8);
        memcpy(&y, b.data() + i, 8);
        if (x != y && tolower8(x) != tolower8(y)) break;
    }
    for (; i < n; ++i) {
        int ca = (unsigned char)tolower_fast(a[i]), cb = (unsigned char)tolower_fast(b[i]);
        if (ca != cb) return ca - cb;
    }
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

}  // namespace photon
