// std::basic_string_view for C++14 programs on libstdc++, whose <string_view> is empty before
// C++17. Only <photon/common/string_view.h> includes this, and only then.
//
// photon itself is built as C++17, so its functions taking a std::string_view were compiled
// against libstdc++'s class. For a C++14 caller to link with them and pass the same bytes,
// this class is that class to the ABI: the same name in namespace std (mangled
// St17basic_string_viewIcSt11char_traitsIcEE), the same template parameters, the same members
// in the same order ({size_t length; const CharT* data;}), trivially copyable (so it travels in
// two registers), the same std::hash values and the same unordered-container node layout.
//
// Beyond C++17's interface, it keeps what std::experimental::string_view (which PhotonLibOS
// gives C++14 code) had and C++14's std::string lacks: to_string() and an explicit conversion
// to std::basic_string, and construction from std::basic_string.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <iterator>
#include <string>

#if defined(__GNUC__)
#pragma GCC diagnostic push
// operator""sv is the standard library's suffix, which only the library may declare.
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option"
#pragma GCC diagnostic ignored "-Wliteral-suffix"
#pragma GCC diagnostic ignored "-Wuser-defined-literals"
#endif

namespace photon {
namespace detail {
// Keeps one operand of a comparison out of deduction, so that it converts (as C++20's
// std::type_identity_t does in libstdc++'s own comparisons).
template <typename T>
struct sv_identity {
    using type = T;
};
}  // namespace detail
}  // namespace photon

namespace std {

template <typename CharT, typename Traits = char_traits<CharT>>
class basic_string_view {
public:
    using traits_type = Traits;
    using value_type = CharT;
    using pointer = CharT*;
    using const_pointer = const CharT*;
    using reference = CharT&;
    using const_reference = const CharT&;
    using const_iterator = const CharT*;
    using iterator = const_iterator;
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;
    using reverse_iterator = const_reverse_iterator;
    using size_type = size_t;
    using difference_type = ptrdiff_t;
    static constexpr size_type npos = size_type(-1);

    constexpr basic_string_view() noexcept : len_(0), str_(nullptr) {}
    constexpr basic_string_view(const basic_string_view&) noexcept = default;
    constexpr basic_string_view(const CharT* s) : len_(length_of(s)), str_(s) {}
    constexpr basic_string_view(const CharT* s, size_type n) noexcept : len_(n), str_(s) {}
    // C++17 puts this conversion in std::basic_string; C++14's string has none.
    template <typename Alloc>
    basic_string_view(const basic_string<CharT, Traits, Alloc>& s) noexcept
        : len_(s.size()), str_(s.data()) {}

    basic_string_view& operator=(const basic_string_view&) noexcept = default;

    constexpr const_iterator begin() const noexcept { return str_; }
    constexpr const_iterator end() const noexcept { return str_ + len_; }
    constexpr const_iterator cbegin() const noexcept { return str_; }
    constexpr const_iterator cend() const noexcept { return str_ + len_; }
    const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
    const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
    const_reverse_iterator crbegin() const noexcept { return rbegin(); }
    const_reverse_iterator crend() const noexcept { return rend(); }

    constexpr size_type size() const noexcept { return len_; }
    constexpr size_type length() const noexcept { return len_; }
    constexpr size_type max_size() const noexcept {
        return (npos - sizeof(size_type) - sizeof(void*)) / sizeof(CharT) / 4;
    }
    constexpr bool empty() const noexcept { return len_ == 0; }

    constexpr const_reference operator[](size_type i) const noexcept { return str_[i]; }
    constexpr const_reference at(size_type i) const {
        if (i >= len_) __throw_out_of_range("basic_string_view::at");
        return str_[i];
    }
    constexpr const_reference front() const noexcept { return str_[0]; }
    constexpr const_reference back() const noexcept { return str_[len_ - 1]; }
    constexpr const_pointer data() const noexcept { return str_; }

    constexpr void remove_prefix(size_type n) noexcept {
        str_ += n;
        len_ -= n;
    }
    constexpr void remove_suffix(size_type n) noexcept { len_ -= n; }
    constexpr void swap(basic_string_view& o) noexcept {
        basic_string_view t = o;
        o = *this;
        *this = t;
    }

    size_type copy(CharT* dest, size_type n, size_type pos = 0) const {
        check_pos(pos, "basic_string_view::copy");
        size_type r = clamp(pos, n);
        Traits::copy(dest, str_ + pos, r);
        return r;
    }
    constexpr basic_string_view substr(size_type pos = 0, size_type n = npos) const {
        check_pos(pos, "basic_string_view::substr");
        return basic_string_view(str_ + pos, clamp(pos, n));
    }

    constexpr int compare(basic_string_view s) const noexcept {
        size_type n = len_ < s.len_ ? len_ : s.len_;
        int r = n ? Traits::compare(str_, s.str_, n) : 0;
        if (r == 0) r = len_ < s.len_ ? -1 : (len_ > s.len_ ? 1 : 0);
        return r;
    }
    constexpr int compare(size_type pos1, size_type n1, basic_string_view s) const {
        return substr(pos1, n1).compare(s);
    }
    constexpr int compare(size_type pos1, size_type n1, basic_string_view s, size_type pos2,
                          size_type n2) const {
        return substr(pos1, n1).compare(s.substr(pos2, n2));
    }
    constexpr int compare(const CharT* s) const { return compare(basic_string_view(s)); }
    constexpr int compare(size_type pos1, size_type n1, const CharT* s) const {
        return substr(pos1, n1).compare(basic_string_view(s));
    }
    constexpr int compare(size_type pos1, size_type n1, const CharT* s, size_type n2) const {
        return substr(pos1, n1).compare(basic_string_view(s, n2));
    }

    constexpr size_type find(basic_string_view s, size_type pos = 0) const noexcept {
        return find(s.str_, pos, s.len_);
    }
    constexpr size_type find(CharT c, size_type pos = 0) const noexcept {
        for (; pos < len_; ++pos)
            if (Traits::eq(str_[pos], c)) return pos;
        return npos;
    }
    constexpr size_type find(const CharT* s, size_type pos, size_type n) const noexcept {
        if (n == 0) return pos <= len_ ? pos : npos;
        if (n > len_ || pos > len_ - n) return npos;
        // Candidates start with s[0]: Traits::find (memchr for char) skips to them.
        const CharT* p = str_ + pos;
        const CharT* const last = str_ + (len_ - n);
        while ((p = Traits::find(p, size_type(last - p) + 1, s[0])) != nullptr) {
            if (Traits::compare(p + 1, s + 1, n - 1) == 0) return size_type(p - str_);
            if (p++ == last) break;
        }
        return npos;
    }
    constexpr size_type find(const CharT* s, size_type pos = 0) const {
        return find(s, pos, Traits::length(s));
    }

    constexpr size_type rfind(basic_string_view s, size_type pos = npos) const noexcept {
        return rfind(s.str_, pos, s.len_);
    }
    constexpr size_type rfind(CharT c, size_type pos = npos) const noexcept {
        return rfind(&c, pos, 1);
    }
    constexpr size_type rfind(const CharT* s, size_type pos, size_type n) const noexcept {
        if (n > len_) return npos;
        size_type i = len_ - n < pos ? len_ - n : pos;
        if (n == 0) return i;
        for (;; --i) {
            if (Traits::compare(str_ + i, s, n) == 0) return i;
            if (i == 0) return npos;
        }
    }
    constexpr size_type rfind(const CharT* s, size_type pos = npos) const {
        return rfind(s, pos, Traits::length(s));
    }

    constexpr size_type find_first_of(basic_string_view s, size_type pos = 0) const noexcept {
        return find_first_of(s.str_, pos, s.len_);
    }
    constexpr size_type find_first_of(CharT c, size_type pos = 0) const noexcept {
        return find(c, pos);
    }
    constexpr size_type find_first_of(const CharT* s, size_type pos, size_type n) const {
        for (; pos < len_; ++pos)
            if (Traits::find(s, n, str_[pos])) return pos;
        return npos;
    }
    constexpr size_type find_first_of(const CharT* s, size_type pos = 0) const {
        return find_first_of(s, pos, Traits::length(s));
    }

    constexpr size_type find_last_of(basic_string_view s, size_type pos = npos) const noexcept {
        return find_last_of(s.str_, pos, s.len_);
    }
    constexpr size_type find_last_of(CharT c, size_type pos = npos) const noexcept {
        return rfind(c, pos);
    }
    constexpr size_type find_last_of(const CharT* s, size_type pos, size_type n) const {
        for (size_type i = last_index(pos); i != npos; --i)
            if (Traits::find(s, n, str_[i])) return i;
        return npos;
    }
    constexpr size_type find_last_of(const CharT* s, size_type pos = npos) const {
        return find_last_of(s, pos, Traits::length(s));
    }

    constexpr size_type find_first_not_of(basic_string_view s, size_type pos = 0) const noexcept {
        return find_first_not_of(s.str_, pos, s.len_);
    }
    constexpr size_type find_first_not_of(CharT c, size_type pos = 0) const noexcept {
        for (; pos < len_; ++pos)
            if (!Traits::eq(str_[pos], c)) return pos;
        return npos;
    }
    constexpr size_type find_first_not_of(const CharT* s, size_type pos, size_type n) const {
        for (; pos < len_; ++pos)
            if (!Traits::find(s, n, str_[pos])) return pos;
        return npos;
    }
    constexpr size_type find_first_not_of(const CharT* s, size_type pos = 0) const {
        return find_first_not_of(s, pos, Traits::length(s));
    }

    constexpr size_type find_last_not_of(basic_string_view s, size_type pos = npos) const noexcept {
        return find_last_not_of(s.str_, pos, s.len_);
    }
    constexpr size_type find_last_not_of(CharT c, size_type pos = npos) const noexcept {
        for (size_type i = last_index(pos); i != npos; --i)
            if (!Traits::eq(str_[i], c)) return i;
        return npos;
    }
    constexpr size_type find_last_not_of(const CharT* s, size_type pos, size_type n) const {
        for (size_type i = last_index(pos); i != npos; --i)
            if (!Traits::find(s, n, str_[i])) return i;
        return npos;
    }
    constexpr size_type find_last_not_of(const CharT* s, size_type pos = npos) const {
        return find_last_not_of(s, pos, Traits::length(s));
    }

    // std::experimental::basic_string_view's, for PhotonLibOS code written against it.
    template <typename Alloc = allocator<CharT>>
    basic_string<CharT, Traits, Alloc> to_string(const Alloc& a = Alloc()) const {
        return basic_string<CharT, Traits, Alloc>(str_, len_, a);
    }
    template <typename Alloc>
    explicit operator basic_string<CharT, Traits, Alloc>() const {
        return basic_string<CharT, Traits, Alloc>(str_, len_);
    }

private:
    // char_traits<char>::length is constexpr only from C++17; the builtin is in C++14 too.
    static constexpr size_type length_of(const CharT* s) {
        return length_of(s, is_same<Traits, char_traits<char>>());
    }
    static constexpr size_type length_of(const CharT* s, true_type /* plain char */) {
        return __builtin_strlen(s);
    }
    static constexpr size_type length_of(const CharT* s, false_type) {
        size_type n = 0;
        while (!Traits::eq(s[n], CharT())) ++n;
        return n;
    }

    constexpr void check_pos(size_type pos, const char* what) const {
        if (pos > len_) __throw_out_of_range(what);
    }
    constexpr size_type clamp(size_type pos, size_type n) const noexcept {
        return n < len_ - pos ? n : len_ - pos;
    }
    // The index a backward search starts at, npos if the view is empty.
    constexpr size_type last_index(size_type pos) const noexcept {
        return len_ == 0 ? npos : (pos < len_ - 1 ? pos : len_ - 1);
    }

    // libstdc++'s order (_M_len, _M_str): the layout is the ABI.
    size_t len_;
    const CharT* str_;
};

// An odr-used static constexpr member needs a definition before C++17.
template <typename CharT, typename Traits>
constexpr
    typename basic_string_view<CharT, Traits>::size_type basic_string_view<CharT, Traits>::npos;

using string_view = basic_string_view<char>;
using wstring_view = basic_string_view<wchar_t>;
using u16string_view = basic_string_view<char16_t>;
using u32string_view = basic_string_view<char32_t>;

// Comparisons, each also with one side converting (from a std::string or a C string).
#define PHOTON_SV14_COMPARE(op, expr)                                                           \
    template <typename C, typename T>                                                           \
    constexpr bool operator op(basic_string_view<C, T> x, basic_string_view<C, T> y) noexcept { \
        return expr;                                                                            \
    }                                                                                           \
    template <typename C, typename T>                                                           \
    constexpr bool operator op(                                                                 \
        basic_string_view<C, T> x,                                                              \
        typename photon::detail::sv_identity<basic_string_view<C, T>>::type y) noexcept {       \
        return expr;                                                                            \
    }                                                                                           \
    template <typename C, typename T>                                                           \
    constexpr bool operator op(                                                                 \
        typename photon::detail::sv_identity<basic_string_view<C, T>>::type x,                  \
        basic_string_view<C, T> y) noexcept {                                                   \
        return expr;                                                                            \
    }
PHOTON_SV14_COMPARE(==, x.size() == y.size() && x.compare(y) == 0)
PHOTON_SV14_COMPARE(!=, !(x == y))
PHOTON_SV14_COMPARE(<, x.compare(y) < 0)
PHOTON_SV14_COMPARE(>, x.compare(y) > 0)
PHOTON_SV14_COMPARE(<=, x.compare(y) <= 0)
PHOTON_SV14_COMPARE(>=, x.compare(y) >= 0)
#undef PHOTON_SV14_COMPARE

// Honours width and fill, as for a std::string.
template <typename C, typename T>
basic_ostream<C, T>& operator<<(basic_ostream<C, T>& os, basic_string_view<C, T> s) {
    return __ostream_insert(os, s.data(), static_cast<streamsize>(s.size()));
}

// The hash libstdc++ gives C++17's string views (and its strings): equal values on both sides.
#define PHOTON_SV14_HASH(type)                                                        \
    template <>                                                                       \
    struct hash<type> {                                                               \
        size_t operator()(const type& s) const noexcept {                             \
            return _Hash_impl::hash(s.data(), s.length() * sizeof(type::value_type)); \
        }                                                                             \
    };                                                                                \
    /* not "fast": unordered containers cache it, so their nodes match C++17's */     \
    template <>                                                                       \
    struct __is_fast_hash<hash<type>> : false_type {};
PHOTON_SV14_HASH(string_view)
PHOTON_SV14_HASH(wstring_view)
PHOTON_SV14_HASH(u16string_view)
PHOTON_SV14_HASH(u32string_view)
#undef PHOTON_SV14_HASH

inline namespace literals {
inline namespace string_view_literals {
constexpr string_view operator""sv(const char* s, size_t n) noexcept { return string_view(s, n); }
constexpr wstring_view operator""sv(const wchar_t* s, size_t n) noexcept {
    return wstring_view(s, n);
}
constexpr u16string_view operator""sv(const char16_t* s, size_t n) noexcept {
    return u16string_view(s, n);
}
constexpr u32string_view operator""sv(const char32_t* s, size_t n) noexcept {
    return u32string_view(s, n);
}
}  // namespace string_view_literals
}  // namespace literals

}  // namespace std

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
