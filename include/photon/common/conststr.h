// Compile-time strings, as PhotonLibOS declares them in namespace ConstString:
// TString<chars...> (one type per distinct text, so equal texts share one
// static array) with cut/strip/split/reverse/substr/concat, TStrArray (a pack
// of TStrings with their views, offsets and join), TSTRING("literal"),
// DEFINE_ENUM_STR (an enum class plus the names of its values), and
// CompactStringArray (many strings in one NUL-separated array). Everything is
// computed by the compiler; the results are constants usable on any vCPU or
// thread, and nothing here yields.
//
// Differences from PhotonLibOS: doc/compat.md#commonconststrh
// DEFINE_ENUM_STR values must not have initializers ("A = 5"): names are
// looked up by position, as in Photon.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <photon/common/string_view.h>

namespace ConstString {

template <typename T, T... xs>
struct TList {};

template <size_t... indices>
struct index_sequence {
    template <size_t Z>
    using append = index_sequence<indices..., sizeof...(indices) + Z>;
};

namespace detail {
template <typename Seq, size_t Z>
struct shifted;
template <size_t... I, size_t Z>
struct shifted<std::index_sequence<I...>, Z> {
    using type = index_sequence<(I + Z)...>;
};
template <typename Seq, size_t N>
struct reversed;
template <size_t... I, size_t N>
struct reversed<std::index_sequence<I...>, N> {
    using type = index_sequence<(N - 1 - I)...>;
};
}  // namespace detail

// result is index_sequence<Z, Z+1, ..., Z+N-1>.
template <size_t N, size_t Z>
struct make_index_sequence {
    using result = typename detail::shifted<std::make_index_sequence<N>, Z>::type;
};

struct tstring_base {};

template <typename... Tss>
struct TStrArray;

template <char SP, char... chs>
struct TSCut;

template <char SP, char... chs>
struct TStrip;

template <char SP, char IGN, typename TStr>
struct TSpliter;

template <char... str>
struct TString : tstring_base {
    static constexpr const char chars[sizeof...(str) + 1] = {str..., '\0'};
    static constexpr const size_t len = sizeof...(str);

    using type = TString<str...>;

    template <char ch>
    using Prepend = TString<ch, str...>;
    template <char ch>
    using Append = TString<str..., ch>;

    template <char ch>
    static constexpr decltype(auto) prepend() {
        return Prepend<ch>{};
    }
    template <char ch>
    static constexpr decltype(auto) append() {
        return Append<ch>{};
    }
    template <char... rhs>
    static constexpr decltype(auto) concat(TString<rhs...>) {
        return TString<str..., rhs...>{};
    }
    template <typename T,
              typename = typename std::enable_if<std::is_base_of<tstring_base, T>::value>::type>
    constexpr decltype(auto) operator+(T rhs) const {
        return concat(rhs);
    }
    // Pieces between SP separators, each stripped of IGN at both ends.
    template <char SP, char IGN>
    static constexpr decltype(auto) split() {
        return TSpliter<SP, IGN, TString>::array();
    }
    template <char... cs>
    static constexpr decltype(auto) tsreverse(TString<cs...>) {
        using seq =
            typename detail::reversed<std::make_index_sequence<sizeof...(cs)>, sizeof...(cs)>::type;
        return TString<cs...>::_do_substr(seq{});
    }
    static constexpr decltype(auto) reverse() { return tsreverse(TString()); }
    // Head: text before the first SP (all of it if none); tail: text after it.
    template <char SP>
    static constexpr decltype(auto) cut() {
        return TSCut<SP, str...>();
    }
    template <char SP>
    static constexpr decltype(auto) lstrip() {
        return typename TStrip<SP, str...>::type();
    }
    template <char SP>
    static constexpr decltype(auto) rstrip() {
        return reverse().template lstrip<SP>().reverse();
    }
    template <char SP>
    static constexpr decltype(auto) strip() {
        return lstrip<SP>().template rstrip<SP>();
    }
    template <size_t... indices>
    static constexpr decltype(auto) _do_substr(index_sequence<indices...>) {
        return TString<chars[indices]...>();
    }
    template <size_t offset, size_t count>
    static constexpr decltype(auto) substr() {
        static_assert(offset <= len && count <= len - offset, "substr out of range");
        return _do_substr(typename make_index_sequence<count, offset>::result{});
    }

    static constexpr std::string_view view() { return {chars, len}; }
};

template <typename str, size_t... indices>
constexpr decltype(auto) build_tstring(index_sequence<indices...>) {
    return TString<str().chars[indices]...>();
}

// TSTRING("text"): the TString of a string literal. The local struct carries the
// literal into a constant expression, which a function parameter cannot.
#define TSTRING(x)                                                                  \
    [] {                                                                            \
        struct const_str {                                                          \
            const char* chars = x;                                                  \
        };                                                                          \
        return ConstString::build_tstring<const_str>(                               \
            typename ConstString::make_index_sequence<sizeof(x) - 1, 0>::result{}); \
    }()

// Accumulate<T, 0, a, a+b, ...>: prefix sums; Prepend<x> adds x to each and puts 0 first.
template <typename T, T... xs>
struct Accumulate {
    template <T x>
    using Prepend = Accumulate<T, 0, (xs + x)...>;

    constexpr static T arr[sizeof...(xs)] = {xs...};
    constexpr static T size() { return sizeof...(xs); }
};

// Before C++17 (no inline variables) an odr-used static constexpr member, such as an array
// indexed at run time, needs a definition; these class templates' are here.
#if __cplusplus < 201703L
template <char... str>
constexpr const char TString<str...>::chars[sizeof...(str) + 1];
template <char... str>
constexpr const size_t TString<str...>::len;
template <typename T, T... xs>
constexpr T Accumulate<T, xs...>::arr[sizeof...(xs)];
#endif

template <typename T, T x, T... xs>
constexpr decltype(auto) accumulate_helper(TList<T, x, xs...>) {
    return typename decltype(accumulate_helper(TList<T, xs...>{}))::template Prepend<x>{};
}

template <typename T>
constexpr Accumulate<T, 0> accumulate_helper(TList<T>) {
    return {};
}

template <typename... Tss>
struct TStrArray {
    template <typename T>
    using Prepend = TStrArray<T, Tss...>;

    template <typename T>
    using Append = TStrArray<Tss..., T>;

    template <typename T>
    constexpr static decltype(auto) prepend() {
        return Prepend<T>();
    }
    template <typename T>
    constexpr static decltype(auto) append() {
        return Append<T>();
    }
    // All strings, each followed by '\0' (the last by the array's own terminator).
    constexpr static decltype(auto) whole() { return join<'\0'>(); }
    constexpr static size_t size = sizeof...(Tss);
    constexpr static std::string_view views[sizeof...(Tss)] = {Tss::view()...};
    // offset.arr[i]: where string i starts in whole(); offset.arr[size]: whole's length + 1.
    constexpr static auto offset =
        decltype(accumulate_helper(TList<int16_t, (Tss::len + 1)...>{})){};

    template <char sp>
    constexpr static decltype(auto) _join_tstring() {
        return TString<>();
    }
    template <char sp, typename T>
    constexpr static decltype(auto) _join_tstring(T t) {
        return t;
    }
    template <char sp, typename LS, typename RS, typename... Args>
    constexpr static decltype(auto) _join_tstring(LS, RS rs, Args... args) {
        using with_tail = typename LS::template Append<sp>;
        return _join_tstring<sp>(with_tail::concat(rs), args...);
    }
    // The strings with SP between them.
    template <char SP>
    constexpr static decltype(auto) join() {
        return _join_tstring<SP>(Tss()...);
    }
};

#if __cplusplus < 201703L
template <typename... Tss>
constexpr size_t TStrArray<Tss...>::size;
template <typename... Tss>
constexpr std::string_view TStrArray<Tss...>::views[sizeof...(Tss)];
#endif

template <typename... Tss>
constexpr decltype(auto) make_tstring_array(Tss...) {
    return TStrArray<Tss...>{};
}

template <char SP, char IGN, typename TStr>
struct TSpliter {
    using Cut = decltype(TStr::template cut<SP>());
    using Current = decltype(Cut::Head::template strip<IGN>());
    using Next = TSpliter<SP, IGN, typename Cut::Tail>;
    using Array = typename Next::Array::template Prepend<Current>;
    static constexpr Current current() { return {}; }
    static constexpr Next next() { return {}; }
    static constexpr Array array() { return {}; }
};

template <char SP, char IGN>
struct TSpliter<SP, IGN, TString<>> {
    using Cut = TSCut<SP>;
    using Current = TString<>;
    using Next = TSpliter;
    using Array = TStrArray<>;
    static constexpr Current current() { return {}; }
    static constexpr Next next() { return {}; }
    static constexpr Array array() { return {}; }
};

namespace detail {
template <char... cs>
constexpr size_t find_char(char c) {
    const char a[] = {cs..., '\0'};
    for (size_t i = 0; i < sizeof...(cs); ++i)
        if (a[i] == c) return i;
    return sizeof...(cs);
}

template <char... cs>
constexpr size_t skip_char(char c) {
    const char a[] = {cs..., '\0'};
    size_t i = 0;
    while (i < sizeof...(cs) && a[i] == c) ++i;
    return i;
}

// Characters [off, off + n) of TString<cs...>.
template <size_t off, size_t n, char... cs>
using sub_tstring =
    decltype(TString<cs...>::_do_substr(typename make_index_sequence<n, off>::result{}));
}  // namespace detail

template <char SP, char... chs>
struct TSCut {
    static constexpr size_t _n = sizeof...(chs);
    static constexpr size_t _at = detail::find_char<chs...>(SP);  // _n if absent
    static constexpr size_t _rest = _at < _n ? _at + 1 : _n;
    using Head = detail::sub_tstring<0, _at, chs...>;
    using Tail = detail::sub_tstring<_rest, _n - _rest, chs...>;
    static constexpr Head head{};
    static constexpr Tail tail{};
};

template <char SP, char... chs>
struct TStrip {
    static constexpr size_t _skip = detail::skip_char<chs...>(SP);
    using type = detail::sub_tstring<_skip, sizeof...(chs) - _skip, chs...>;
};

template <typename EnumType, typename Split>
struct EnumStr : public Split {
    using Enum = EnumType;
    // The name of x; empty if x is not one of the enum's values.
    constexpr std::string_view operator[](EnumType x) const {
        const int i = static_cast<int>(x);
        if (i < 0 || static_cast<size_t>(i) >= size()) return {};
        return {base() + off(i), static_cast<size_t>(off(i + 1) - off(i)) - 1};
    }

    constexpr static decltype(auto) whole() { return Split::Array::whole(); }

    constexpr static decltype(auto) arr() { return typename Split::Array{}; }

    constexpr static int16_t off(int i) {
        return std::decay_t<decltype(Split::Array::offset)>::arr[i];  // offset is empty
    }

    constexpr static const char* base() { return Split::Array::whole().chars; }

    constexpr static size_t size() { return Split::Array::size; }
};

// enum class enum_name : char { values... } and str_name[value] -> its name.
#define DEFINE_ENUM_STR(enum_name, str_name, ...)                         \
    enum class enum_name : char { __VA_ARGS__ };                          \
    static const auto str_name = [] {                                     \
        auto x = TSTRING(#__VA_ARGS__);                                   \
        using sp = typename ConstString::TSpliter<',', ' ', decltype(x)>; \
        return ConstString::EnumStr<enum_name, sp>();                     \
    }()

// Strings stored back to back in Whole, each followed by '\0'; Accum holds the
// prefix sums of their lengths (without the '\0's).
template <typename Accum, typename Whole>
struct CompactStringArray {
    constexpr static decltype(auto) whole() { return Whole(); }
    constexpr static size_t size() { return Accum::size() - 1; }

    // String i; empty if i >= size().
    constexpr static std::string_view at(size_t i) {
        if (i >= size()) return {};
        return CompactStringArray<Accum, Whole>()[i];
    }
    constexpr std::string_view operator[](size_t i) const {
        if (i >= size()) return {};
        return {&Whole::chars[Accum::arr[i] + i],
                (size_t)Accum::arr[i + 1] - (size_t)Accum::arr[i]};
    }

    template <typename TS>
    constexpr static decltype(auto) prepend(TS) {
        return CompactStringArray<typename Accum::template Prepend<TS::len>,
                                  decltype(TS::template append<'\0'>().concat(Whole()))>();
    }
};

template <typename SizeType>
constexpr decltype(auto) make_compact_str_array() {
    return CompactStringArray<Accumulate<SizeType, 0>, TString<>>();
}

template <typename SizeType, char... Chs, typename... Ts>
constexpr decltype(auto) make_compact_str_array(TString<Chs...> first, Ts&&... tail) {
    return make_compact_str_array<SizeType>(tail...).prepend(first);
}

}  // namespace ConstString
