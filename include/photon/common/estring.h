// estring / estring_view: std::string and std::string_view with the helpers PhotonLibOS code
// leans on, in the global namespace as Photon declares them: charset-based find and trim, lazy
// split into views, ASCII case folding and comparison, prefix number parsing, concatenation of
// many parts with one allocation (appends), and rstring_view, an (offset, length) pair relative
// to some base string. Pure computation on caller-owned memory: any thread, never yields.
//
// Differences from PhotonLibOS: doc/compat.md#commonestringh
#pragma once
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <bitset>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <photon/common/detail/std17.h>
#include <photon/common/string_view.h>
#include <photon/common/utility.h>

// A set of byte values, for the find/trim/split helpers below.
struct charset : std::bitset<256> {
    charset() = default;
    charset(char ch) { set(ch); }
    charset(const std::string_view& sv) {
        for (char ch : sv) set(ch);
    }
    bool test(char ch) const { return std::bitset<256>::test((unsigned char)ch); }
    bitset& set(char ch, bool value = true) {
        return std::bitset<256>::set((unsigned char)ch, value);
    }
};

class estring;

namespace photon {
namespace detail {
// T, named through a template parameter so that its completeness is checked at instantiation.
template <typename T, typename>
struct dependent_type {
    using type = T;
};
// snprintf out of line, so that the compiler does not warn about the truncation we handle.
int estring_snprintf(char* buf, size_t size, const char* fmt, ...);
inline const charset& estring_spaces() {
    static const charset spaces(" \t\r\n");
    return spaces;
}
}  // namespace detail
}  // namespace photon

class estring_view : public std::string_view {
public:
    using std::string_view::string_view;
    estring_view() : std::string_view(nullptr, 0) {}
    estring_view(const char* begin, const char* end)
        : std::string_view(begin, (size_type)(end - begin)) {}
    estring_view(std::string_view& sv) : std::string_view(sv) {}
    estring_view(const std::string_view& sv) : std::string_view(sv) {}
    estring_view(const std::string& s) : std::string_view(s) {}

    using std::string_view::find_first_not_of;
    using std::string_view::find_first_of;
    using std::string_view::find_last_not_of;
    using std::string_view::find_last_of;
    // Positions of the first/last byte in (or not in) `set`; npos if none.
    size_t find_first_of(const charset& set) const;
    size_t find_first_not_of(const charset& set) const;
    size_t find_last_of(const charset& set) const;
    size_t find_last_not_of(const charset& set) const;

    bool operator==(char c) const { return size() == 1 && front() == c; }
    bool operator!=(char c) const { return !(*this == c); }

    // A NUL-terminated copy of the view, on the stack when shorter than N, else on the heap
    // (nullptr if that allocation fails). The pointer lives as long as the Extraction does.
    // `strict` is accepted for Photon's signature; the copy is always made, because peeking at
    // data()[size()] may touch memory the view does not own.
    template <size_t N>
    class Extraction {
    public:
        Extraction(std::string_view sv, bool strict = false) {
            _unused(strict);
            char* p = sv.size() < N ? buf_ : static_cast<char*>(malloc(sv.size() + 1));
            if (p) {
                if (!sv.empty()) memcpy(p, sv.data(), sv.size());
                p[sv.size()] = '\0';
            }
            s_ = p;
        }
        Extraction(const Extraction&) = delete;
        Extraction& operator=(const Extraction&) = delete;
        ~Extraction() {
            if (s_ != buf_) free(s_);
        }
        operator const char*() const { return s_; }

    private:
        static_assert(N > 0, "Extraction needs room for the terminating NUL");
        char buf_[N];
        char* s_;
    };
    template <size_t N = 256>
    Extraction<N> extract_c_str() const {
        return {*this};
    }

    operator std::string() const { return to_string(); }
    std::string to_string() const { return std::string(data(), length()); }
    // True if the view is not empty and every character is '0'..'9'.
    bool all_digits() const {
        for (char c : *this)
            if (c < '0' || c > '9') return false;
        return !empty();
    }
    estring_view substr(size_type pos = 0, size_type count = npos) const {
        return std::string_view::substr(pos, count);
    }

    // The view without leading and trailing bytes of `spaces`; an empty view if nothing is left.
    estring_view trim(const charset& spaces = photon::detail::estring_spaces()) const {
        auto start = find_first_not_of(spaces);
        if (start == npos) return {};
        return substr(start, find_last_not_of(spaces) - start + 1);
    }
#if __cplusplus < 202000L
    bool starts_with(std::string_view x) const {
        return size() >= x.size() && std::string_view::compare(0, x.size(), x) == 0;
    }
    bool ends_with(std::string_view x) const {
        return size() >= x.size() && std::string_view::compare(size() - x.size(), npos, x) == 0;
    }
#endif

    // ASCII-only, locale-free case handling (see photon::stricmp_fast).
    int icmp(std::string_view x) const;
    estring tolower_fast() const;
    estring toupper_fast() const;
    bool istarts_with(std::string_view x) const {
        return size() >= x.size() && substr(0, x.size()).icmp(x) == 0;
    }
    bool iends_with(std::string_view x) const {
        return size() >= x.size() && substr(size() - x.size()).icmp(x) == 0;
    }

    // A lazy split of `str` at separator bytes. Separator is a charset (held by value) or a
    // const charset* (the caller's, which must outlive the split), or a std::string / const
    // std::string* whose characters form the set. With consecutive_merge, runs of separators
    // count as one and leading ones are skipped; without it, every separator ends a part, so
    // empty parts appear, except that a separator at the very end opens no empty last part.
    // Parts are views into `str`, which must outlive them.
    template <typename Separator>
    struct _split {
        std::string_view str;
        Separator sep;
        bool consecutive_merge;

        class iterator {
            using part_view =
                typename photon::detail::dependent_type<estring_view, Separator>::type;

        public:
            using iterator_category = std::forward_iterator_tag;
            using value_type = estring_view;
            using difference_type = std::ptrdiff_t;
            using pointer = const estring_view*;
            using reference = estring_view;

            iterator() = default;
            iterator(const _split* host, size_t pos = 0)
                : host_(host), part_(host->find_part(host->str.data() + pos)) {}
            estring_view operator*() const { return part_; }
            const estring_view* operator->() const { return &part_; }
            // The rest of the string from the next part on; empty after the last part.
            estring_view remainder() const {
                auto next = host_->next_part(part_);
                auto end = host_->str_end();
                return next.data() ? estring_view(next.data(), end) : estring_view(end, end);
            }
            iterator& operator++() {
                part_ = host_->next_part(part_);
                return *this;
            }
            iterator operator++(int) {
                auto ret = *this;
                ++*this;
                return ret;
            }
            bool operator==(const iterator& rhs) const {
                return part_.data() == rhs.part_.data() && part_.size() == rhs.part_.size();
            }
            bool operator!=(const iterator& rhs) const { return !(*this == rhs); }

        protected:
            const _split* host_ = nullptr;
            part_view part_;  // estring_view; data() == nullptr: past the last part
        };

        static const charset& sep_set(const charset& s) { return s; }
        static const charset& sep_set(const charset* s) { return *s; }
        static std::string_view sep_set(const std::string& s) { return s; }
        static std::string_view sep_set(const std::string* s) { return *s; }

        const char* str_end() const { return str.data() + str.size(); }

        // The part that starts at `begin` (after skipping separators when merging).
        estring_view find_part(const char* begin) const {
            auto end = str_end();
            if (!begin || begin >= end) return {};
            estring_view rest(begin, end);
            if (consecutive_merge) {
                auto pos = rest.find_first_not_of(sep_set(sep));
                if (pos == npos) return {};
                rest = rest.substr(pos);
            }
            return rest.substr(0, rest.find_first_of(sep_set(sep)));
        }
        // The part after `part`, which ends at a separator or at the end of `str`.
        estring_view next_part(estring_view part) const {
            if (!part.data()) return {};
            auto stop = part.data() + part.size();
            return stop >= str_end() ? estring_view() : find_part(stop + 1);
        }

        iterator begin() const { return iterator(this); }
        iterator end() const { return iterator(this, str.size()); }
        estring_view front() const { return *begin(); }
        // The i-th part, or an empty view if there are not that many.
        estring_view operator[](size_t i) const {
            auto it = begin(), e = end();
            while (i-- && it != e) ++it;
            return *it;
        }
    };
    template <size_t N>
    _split<charset> split(const char (&s)[N], bool consecutive_merge = true) const {
        return {*this, charset(std::string_view(s, strnlen(s, N))), consecutive_merge};
    }
    _split<charset> split(charset&& sep, bool consecutive_merge = true) const {
        return {*this, std::move(sep), consecutive_merge};
    }
    _split<const charset*> split(const charset& sep, bool consecutive_merge = true) const {
        return {*this, &sep, consecutive_merge};
    }
    _split<std::string> split(std::string&& sep, bool consecutive_merge = true) const {
        return {*this, std::move(sep), consecutive_merge};
    }
    _split<const std::string*> split(const std::string& sep, bool consecutive_merge = true) const {
        return {*this, &sep, consecutive_merge};
    }
    _split<charset> split_lines(bool consecutive_merge = true) const {
        return split(charset("\r\n"), consecutive_merge);
    }

    // Number parsing reads the longest prefix that forms a number and returns its length in
    // characters (so `== size()` means the whole view). 0 means failure: no digits, or a value
    // that does not fit; *v is written only on success. No leading spaces or '+'.
    // Decimal digits, value < 2^64.
    size_t to_uint64_check(uint64_t* v = nullptr) const;
    uint64_t to_uint64(uint64_t default_val = 0) const {
        uint64_t val = 0;
        return to_uint64_check(&val) ? val : default_val;
    }
    // An optional '-', then decimal digits; INT64_MIN..INT64_MAX. The '-' is counted.
    size_t to_int64_check(int64_t* v = nullptr) const;
    int64_t to_int64(int64_t default_val = 0) const {
        int64_t val = 0;
        return to_int64_check(&val) ? val : default_val;
    }
    // strtod's syntax in the "C" locale (leading spaces, sign, exponent, hex, inf, nan);
    // overflow to infinity fails, underflow gives the rounded value.
    size_t to_double_check(double* v = nullptr) const;
    double to_double(double default_val = NAN) const {
        double val = 0;
        return to_double_check(&val) ? val : default_val;
    }
    // Hex digits (either case), no 0x prefix, value < 2^64.
    size_t hex_to_uint64_check(uint64_t* v = nullptr) const;
    uint64_t hex_to_uint64(uint64_t default_val = 0) const {
        uint64_t val = 0;
        return hex_to_uint64_check(&val) ? val : default_val;
    }
};

inline bool operator==(const std::string_view& sv, const std::string& s) {
    return sv == std::string_view(s);
}

inline bool operator==(const std::string& s, const std::string_view& sv) { return sv == s; }

// A view relative to a base string: (offset, length) in small integers, resolved with
// `rsv | base`. Resolving against a string_view checks bounds (empty view if out of range);
// against a const char* it cannot.
template <typename OffsetType, typename LengthType = OffsetType>
class rstring_view {
protected:
    static_assert(std::is_integral<OffsetType>::value, "OffsetType must be an integer");
    static_assert(std::is_integral<LengthType>::value, "LengthType must be an integer");
    OffsetType _offset = 0;
    LengthType _length = 0;

    estring_view to_abs(const char* s) const { return estring_view(s + _offset, _length); }

public:
    constexpr rstring_view() = default;
    // Values that do not fit the types leave the view empty at offset 0.
    constexpr rstring_view(uint64_t offset, uint64_t length) {
        if (offset <= (uint64_t)std::numeric_limits<OffsetType>::max() &&
            length <= (uint64_t)std::numeric_limits<LengthType>::max()) {
            _offset = (OffsetType)offset;
            _length = (LengthType)length;
        }
    }
    estring_view operator|(const char* s) const { return to_abs(s); }
    estring_view operator|(const std::string_view& s) const {
        if ((uint64_t)_offset > s.size() || (uint64_t)_length > s.size() - (uint64_t)_offset)
            return {};
        return to_abs(s.data());
    }
    bool operator==(const rstring_view& rhs) const {
        return _offset == rhs._offset && _length == rhs._length;
    }
    bool operator!=(const rstring_view& rhs) const { return !(*this == rhs); }
    rstring_view& operator+=(int x) {
        _offset += x;
        return *this;
    }
    LengthType& size() { return _length; }
    LengthType size() const { return _length; }
    LengthType& length() { return _length; }
    LengthType length() const { return _length; }
    OffsetType& offset() { return _offset; }
    OffsetType offset() const { return _offset; }
};

template <typename T1, typename T2>
inline estring_view operator|(const std::string_view& s, const rstring_view<T1, T2>& rsv) {
    return rsv | s;
}

using rstring_view8 = rstring_view<uint8_t>;
using rstring_view16 = rstring_view<uint16_t>;
using rstring_view32 = rstring_view<uint32_t>;

class estring : public std::string {
public:
    using std::string::string;

    estring() = default;
    estring(const std::string& v) : std::string(v) {}
    estring(std::string&& v) : std::string(std::move(v)) {}
    estring(std::string_view sv) : std::string(sv) {}

    estring_view view() const { return {data(), size()}; }
    estring_view trim(const charset& spaces = photon::detail::estring_spaces()) const {
        return view().trim(spaces);
    }
#if __cplusplus < 202000L
    bool starts_with(std::string_view x) const { return view().starts_with(x); }
    bool ends_with(std::string_view x) const { return view().ends_with(x); }
#endif
    bool all_digits() const { return view().all_digits(); }

    bool operator==(char c) const { return size() == 1 && front() == c; }
    bool operator!=(char c) const { return !(*this == c); }

    // Parts are views into this estring: do not modify it while splitting.
    template <typename... Ts>
    auto split(Ts&&... xs) const -> decltype(view().split(std::forward<Ts>(xs)...)) {
        return view().split(std::forward<Ts>(xs)...);
    }
    estring_view::_split<charset> split_lines(bool consecutive_merge = true) const {
        return view().split(charset("\r\n"), consecutive_merge);
    }

    // printf into a new estring: a stack buffer of N bytes first, the heap when the output is
    // longer. An encoding error gives an empty string.
    template <size_t N = 4096, typename... Ts>
    static estring snprintf(const Ts&... xs) {
        static_assert(N > 0, "snprintf needs a buffer");
        char buf[N];
        int n = photon::detail::estring_snprintf(buf, N, xs...);
        if (n < 0) return {};
        if ((size_t)n < N) return estring(buf, (size_t)n);
        estring s((size_t)n, '\0');
        photon::detail::estring_snprintf(&s[0], (size_t)n + 1, xs...);  // s[n] stays '\0'
        return s;
    }

    // As std::string's; `+= 65` appends the char 'A' there too.
    template <typename T>
    auto operator+=(T&& t)
        -> decltype(std::declval<std::string&>() += std::forward<T>(t), std::declval<estring&>()) {
        std::string::operator+=(std::forward<T>(t));
        return *this;
    }
    estring& operator+=(const std::string_view& rhs) { return append(rhs); }

    // Whatever std::string::append takes, plus integers (in decimal) and single chars.
    template <typename... Args>
    auto append(Args&&... t)
        -> decltype(std::declval<std::string&>().append(std::forward<Args>(t)...),
                    std::declval<estring&>()) {
        std::string::append(std::forward<Args>(t)...);
        return *this;
    }
    estring& append(uint64_t x);
    template <typename Int, ENABLE_IF(std::is_integral<Int>::value && !IS_SAME(Int, char))>
    estring& append(Int x) {
        // x < 0 is false for an unsigned Int (the int64_t cast keeps compilers quiet about it).
        if (std::is_signed<Int>::value && (int64_t)x < 0) {
            push_back('-');
            return append(uint64_t(0) - (uint64_t)(int64_t)x);
        }
        return append((uint64_t)x);
    }
    estring& append(char c) {
        push_back(c);
        return *this;
    }
    estring& append(const std::string_view& sv) {
        std::string::append(sv.data(), sv.size());
        return *this;
    }
    // Appends every argument with at most one reallocation. Takes strings (views, literals,
    // std::string, a const char*, where nullptr appends nothing), chars, integers, enums,
    // floating point, and lists from make_cat_list / make_conditional_cat_list(2).
    template <typename... Ts>
    estring& appends(const Ts&... xs) {
        return cat(make_cat_list(xs...));
    }

protected:
    // Shortest form that reads back as the same double.
    estring& append_double(double x);

    template <typename... Ts>
    class CatList : public std::tuple<Ts...> {
    public:
        CatList(const Ts&... xs) : std::tuple<Ts...>(xs...) {}
    };

    template <typename... Ts>
    class ConditionalCatList {
    public:
        CatList<Ts...> _cl;
        bool _cond;
        ConditionalCatList(bool cond, const Ts&... xs) : _cl(xs...), _cond(cond) {}
    };

    template <typename A, typename B>
    class ConditionalCatList2 {
    public:
        A _cl1;
        B _cl2;
        bool _cond;
        ConditionalCatList2(bool cond, const A& a, const B& b) : _cl1(a), _cl2(b), _cond(cond) {}
    };

    // Each argument of appends() becomes one of: a list, string_view, char, uint64_t, int64_t
    // or double. Lists are held by value, so a list stays valid on its own.
    template <typename... Ts>
    static const CatList<Ts...>& cat_item_filter(const CatList<Ts...>& x) {
        return x;
    }
    template <typename... Ts>
    static const ConditionalCatList<Ts...>& cat_item_filter(const ConditionalCatList<Ts...>& x) {
        return x;
    }
    template <typename A, typename B>
    static const ConditionalCatList2<A, B>& cat_item_filter(const ConditionalCatList2<A, B>& x) {
        return x;
    }
    static std::string_view cat_item_filter(std::string_view x) { return x; }
    static std::string_view cat_item_filter(const char* s) {
        return s ? std::string_view(s) : std::string_view();
    }
    template <typename C, ENABLE_IF_SAME(C, char)>
    static char cat_item_filter(C c) {
        return c;
    }
    template <typename Int, ENABLE_IF(std::is_integral<Int>::value && !IS_SAME(Int, char) &&
                                      !std::is_signed<Int>::value)>
    static uint64_t cat_item_filter(Int x) {
        return x;
    }
    template <typename Int, ENABLE_IF(std::is_integral<Int>::value && !IS_SAME(Int, char) &&
                                      std::is_signed<Int>::value)>
    static int64_t cat_item_filter(Int x) {
        return x;
    }
    template <typename E, ENABLE_IF(std::is_enum<E>::value)>
    static auto cat_item_filter(E x) {
        return cat_item_filter(static_cast<typename std::underlying_type<E>::type>(x));
    }
    template <typename F, ENABLE_IF(std::is_floating_point<F>::value)>
    static double cat_item_filter(F x) {
        return x;
    }
    template <typename T>
    using cat_item_t =
        typename std::decay<decltype(cat_item_filter(std::declval<const T&>()))>::type;

public:
    template <typename... Ts>
    static CatList<cat_item_t<Ts>...> make_cat_list(const Ts&... xs) {
        return {cat_item_filter(xs)...};
    }

    // Appends xs only if cond.
    template <typename... Ts>
    static ConditionalCatList<cat_item_t<Ts>...> make_conditional_cat_list(bool cond,
                                                                           const Ts&... xs) {
        return {cond, cat_item_filter(xs)...};
    }

    // Appends a if cond, else b.
    template <typename... As, typename... Bs>
    static ConditionalCatList2<CatList<As...>, CatList<Bs...>> make_conditional_cat_list2(
        bool cond, const CatList<As...>& a, const CatList<Bs...>& b) {
        return {cond, a, b};
    }

protected:
    template <typename... Ts, typename Mapper>
    static void enumerate(const CatList<Ts...>& cl, Mapper& m) {
        photon::detail::apply([&](const auto&... item) { PHOTON_EXPAND_PACK(m(item)); },
                              static_cast<const std::tuple<Ts...>&>(cl));
    }

    template <typename D>
    struct Visitor {
        template <typename... Ts>
        void operator()(const CatList<Ts...>& x) {
            enumerate(x, static_cast<D&>(*this));
        }
        template <typename... Ts>
        void operator()(const ConditionalCatList<Ts...>& x) {
            if (x._cond) enumerate(x._cl, static_cast<D&>(*this));
        }
        template <typename A, typename B>
        void operator()(const ConditionalCatList2<A, B>& x) {
            if (x._cond)
                enumerate(x._cl1, static_cast<D&>(*this));
            else
                enumerate(x._cl2, static_cast<D&>(*this));
        }
    };
    // Sums the most each item can add, and notes items that view this string's own buffer.
    struct UpperBoundEstimator : public Visitor<UpperBoundEstimator> {
        size_t upper_bound = 0;
        const char *own_begin = nullptr, *own_end = nullptr;
        bool aliased = false;
        using Visitor<UpperBoundEstimator>::operator();
        void operator()(std::string_view x) {
            upper_bound += x.size();
            std::less<const char*> lt;
            if (!x.empty() && lt(x.data(), own_end) && lt(own_begin, x.data() + x.size()))
                aliased = true;
        }
        void operator()(char) { upper_bound += 1; }
        void operator()(uint64_t) { upper_bound += 20; }
        void operator()(int64_t) { upper_bound += 20; }
        void operator()(double) { upper_bound += 32; }
    };
    struct Appender : public Visitor<Appender> {
        estring* _this;
        Appender(estring* this_) : _this(this_) {}
        using Visitor<Appender>::operator();
        void operator()(std::string_view x) { _this->append(x); }
        void operator()(char x) { _this->push_back(x); }
        void operator()(uint64_t x) { _this->append(x); }
        void operator()(int64_t x) { _this->append(x); }
        void operator()(double x) { _this->append_double(x); }
    };

    template <typename List>
    estring& cat(const List& list) {
        UpperBoundEstimator estimator;
        estimator.own_begin = data();
        estimator.own_end = data() + capacity();
        estimator(list);
        if (estimator.aliased) {  // views of our own buffer must survive the reallocation
            estring out;
            out.reserve(size() + estimator.upper_bound);
            out.append(data(), size());
            Appender appender{&out};
            appender(list);
            return *this = std::move(out);
        }
        reserve(size() + estimator.upper_bound);
        Appender appender{this};
        appender(list);
        return *this;
    }
};

template <typename T, ENABLE_IF(!IS_SAME(T, estring) && !IS_SAME(T, std::string) &&
                                std::is_constructible<std::string_view, const T&>::value)>
inline estring operator+(const estring& s, const T& rhs) {
    return estring(s) += std::string_view(rhs);
}
template <typename T, ENABLE_IF(!IS_SAME(T, estring) && !IS_SAME(T, std::string) &&
                                std::is_constructible<std::string_view, const T&>::value)>
inline estring operator+(const T& lhs, const estring& s) {
    return estring(std::string_view(lhs)) += std::string_view(s);
}

namespace std {
template <>
struct hash<estring_view> {
    std::hash<std::string_view> hasher;
    size_t operator()(const estring_view& x) const { return hasher(x); }
};

template <>
struct hash<estring> {
    std::hash<std::string> hasher;
    size_t operator()(const estring& x) const { return hasher(x); }
};
}  // namespace std

namespace photon {

// ASCII-only case conversion and comparison: no locale, bytes >= 0x80 unchanged.
inline char tolower_fast(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c | 0x20) : c; }
inline char toupper_fast(char c) { return (c >= 'a' && c <= 'z') ? (char)(c & ~0x20) : c; }

// Converts len bytes of `in` into `out` and NUL-terminates it; out needs len + 1 bytes and may
// be `in`. len == 0 means strlen(in), so `in` must then be a C string.
void tolower_fast(char* out, const char* in, size_t len);
void toupper_fast(char* out, const char* in, size_t len);
// As above for a view, which may be empty (then out[0] = '\0').
inline void tolower_fast(char* out, std::string_view in) {
    if (in.empty())
        *out = '\0';
    else
        tolower_fast(out, in.data(), in.size());
}
inline void toupper_fast(char* out, std::string_view in) {
    if (in.empty())
        *out = '\0';
    else
        toupper_fast(out, in.data(), in.size());
}
inline estring tolower_fast(std::string_view in) {
    estring out(in.size(), '\0');
    if (!in.empty()) tolower_fast(&out[0], in.data(), in.size());
    return out;
}
inline estring toupper_fast(std::string_view in) {
    estring out(in.size(), '\0');
    if (!in.empty()) toupper_fast(&out[0], in.data(), in.size());
    return out;
}

// Compares ignoring ASCII case, bytes as unsigned; a proper prefix sorts first.
// Returns < 0, 0 or > 0.
int stricmp_fast(std::string_view a, std::string_view b);

}  // namespace photon

inline int estring_view::icmp(std::string_view x) const { return photon::stricmp_fast(*this, x); }

inline estring estring_view::tolower_fast() const { return photon::tolower_fast(*this); }
inline estring estring_view::toupper_fast() const { return photon::toupper_fast(*this); }
