// tcb::span: a non-owning view of a contiguous sequence (C++20's std::span for
// C++14 and C++17), under the names PhotonLibOS vendors from Tristan Brindle's span:
// tcb::span, tcb::dynamic_extent, tcb::byte, tcb::make_span, tcb::as_bytes,
// tcb::as_writable_bytes, tcb::get, plus std::tuple_size / std::tuple_element
// for fixed extents. Pure computation: any vCPU or thread, never yields.
//
// It stays its own type under C++20 (it converts to and from std::span through
// their container constructors), so code written for Photon keeps one meaning.
// Before C++17, as in tcb, tcb::byte is unsigned char (there is no std::byte) and
// there are no deduction guides (write span<T>, or make_span).
//
// Contract checks. The configuration macros are tcb's:
//   TCB_SPAN_THROW_ON_CONTRACT_VIOLATION   throw tcb::contract_violation_error
//   TCB_SPAN_TERMINATE_ON_CONTRACT_VIOLATION  print the condition, std::terminate
//   TCB_SPAN_NO_CONTRACT_CHECKING          no checks at all
// With none of them defined, the calls that make a new view (first, last,
// subspan, fixed-extent construction) are checked even under NDEBUG and
// terminate, because an out-of-range view silently reads foreign memory.
// Element access (operator[], front, back) is checked only without NDEBUG, as
// in tcb, since it sits in hot loops.
//
// Differences from PhotonLibOS: doc/compat.md#commonspanh
#ifndef TCB_SPAN_HPP_INCLUDED
#define TCB_SPAN_HPP_INCLUDED

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <type_traits>

#ifndef TCB_SPAN_NAMESPACE_NAME
#define TCB_SPAN_NAMESPACE_NAME tcb
#endif

#if !defined(TCB_SPAN_THROW_ON_CONTRACT_VIOLATION) && \
    !defined(TCB_SPAN_TERMINATE_ON_CONTRACT_VIOLATION) && !defined(TCB_SPAN_NO_CONTRACT_CHECKING)
#define TCB_SPAN_TERMINATE_ON_CONTRACT_VIOLATION
#define PHOTON_SPAN_DEFAULT_CONTRACTS
#endif

namespace TCB_SPAN_NAMESPACE_NAME {

#if defined(TCB_SPAN_THROW_ON_CONTRACT_VIOLATION)
struct contract_violation_error : std::logic_error {
    explicit contract_violation_error(const char* msg) : std::logic_error(msg) {}
};

inline void contract_violation(const char* msg) { throw contract_violation_error(msg); }
#elif defined(TCB_SPAN_TERMINATE_ON_CONTRACT_VIOLATION)
[[noreturn]] inline void contract_violation(const char* msg) {
    std::fputs(msg, stderr);
    std::fputc('\n', stderr);
    std::terminate();
}
#endif

}  // namespace TCB_SPAN_NAMESPACE_NAME

// PHOTON_SPAN_EXPECT_VIEW guards the view-making calls, TCB_SPAN_EXPECT element access.
#if defined(TCB_SPAN_NO_CONTRACT_CHECKING)
#define PHOTON_SPAN_EXPECT_VIEW(cond) ((void)0)
#else
#define PHOTON_SPAN_EXPECT_VIEW(cond) \
    ((cond) ? (void)0 : TCB_SPAN_NAMESPACE_NAME::contract_violation("span: expected " #cond))
#endif
#if defined(TCB_SPAN_NO_CONTRACT_CHECKING) || \
    (defined(PHOTON_SPAN_DEFAULT_CONTRACTS) && defined(NDEBUG))
#define TCB_SPAN_EXPECT(cond) ((void)0)
#else
#define TCB_SPAN_EXPECT(cond) PHOTON_SPAN_EXPECT_VIEW(cond)
#endif

namespace TCB_SPAN_NAMESPACE_NAME {

#if __cplusplus >= 201703L
using byte = std::byte;
inline constexpr std::size_t dynamic_extent = SIZE_MAX;
#else
using byte = unsigned char;
constexpr std::size_t dynamic_extent = SIZE_MAX;
#endif

template <typename ElementType, std::size_t Extent = dynamic_extent>
class span;

namespace detail {

// A fixed extent needs no size member, so span<T, N> is one pointer wide.
template <typename E, std::size_t S>
struct span_storage {
    constexpr span_storage() noexcept = default;
    constexpr span_storage(E* p, std::size_t) noexcept : ptr(p) {}
    E* ptr = nullptr;
    static constexpr std::size_t size = S;
};

template <typename E>
struct span_storage<E, dynamic_extent> {
    constexpr span_storage() noexcept = default;
    constexpr span_storage(E* p, std::size_t n) noexcept : ptr(p), size(n) {}
    E* ptr = nullptr;
    std::size_t size = 0;
};

template <typename T>
using uncvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <typename>
struct is_span : std::false_type {};
template <typename T, std::size_t S>
struct is_span<span<T, S>> : std::true_type {};

template <typename>
struct is_std_array : std::false_type {};
template <typename T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};

// std::size and std::data, which C++14 lacks.
template <typename C>
constexpr auto size(const C& c) -> decltype(c.size()) {
    return c.size();
}
template <typename T, std::size_t N>
constexpr std::size_t size(const T (&)[N]) noexcept {
    return N;
}
template <typename C>
constexpr auto data(C& c) -> decltype(c.data()) {
    return c.data();
}
template <typename C>
constexpr auto data(const C& c) -> decltype(c.data()) {
    return c.data();
}
template <typename T, std::size_t N>
constexpr T* data(T (&arr)[N]) noexcept {
    return arr;
}
template <typename E>
constexpr const E* data(std::initializer_list<E> il) noexcept {
    return il.begin();
}

template <typename... Ts>
struct make_void {
    using type = void;
};

template <typename, typename = void>
struct has_size_and_data : std::false_type {};
template <typename C>
struct has_size_and_data<C, typename make_void<decltype(detail::size(std::declval<C>())),
                                               decltype(detail::data(std::declval<C>()))>::type>
    : std::true_type {};

// Containers get the generic constructor; spans, arrays and std::arrays have their own.
template <typename C, typename U = uncvref_t<C>>
struct is_container {
    static constexpr bool value = !is_span<U>::value && !is_std_array<U>::value &&
                                  !std::is_array<U>::value && has_size_and_data<C>::value;
};

// Only qualification conversions (T -> const T), never derived-to-base, which would
// index with the wrong stride.
template <typename C, typename E, typename = void>
struct is_container_element_type_compatible : std::false_type {};
template <typename C, typename E>
struct is_container_element_type_compatible<
    C, E,
    std::enable_if_t<
        !std::is_same<std::remove_cv_t<decltype(detail::data(std::declval<C>()))>, void>::value &&
        std::is_convertible<std::remove_pointer_t<decltype(detail::data(std::declval<C>()))> (*)[],
                            E (*)[]>::value>> : std::true_type {};

template <typename, typename = std::size_t>
struct is_complete : std::false_type {};
template <typename T>
struct is_complete<T, decltype(sizeof(T))> : std::true_type {};

constexpr std::size_t bytes_extent(std::size_t elem_size, std::size_t extent) {
    return extent == dynamic_extent ? dynamic_extent : elem_size * extent;
}

}  // namespace detail

template <typename ElementType, std::size_t Extent>
class span {
    static_assert(std::is_object<ElementType>::value,
                  "span's ElementType must be an object type (not a reference or void)");
    static_assert(detail::is_complete<ElementType>::value,
                  "span's ElementType must be a complete type");
    static_assert(!std::is_abstract<ElementType>::value,
                  "span's ElementType cannot be an abstract class");

public:
    using element_type = ElementType;
    using value_type = std::remove_cv_t<ElementType>;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using pointer = element_type*;
    using const_pointer = const element_type*;
    using reference = element_type&;
    using const_reference = const element_type&;
    using iterator = pointer;
    using reverse_iterator = std::reverse_iterator<iterator>;

    static constexpr size_type extent = Extent;

    template <std::size_t E = Extent, std::enable_if_t<(E == dynamic_extent || E == 0), int> = 0>
    constexpr span() noexcept {}

    constexpr span(pointer ptr, size_type count) : storage_(ptr, count) {
        PHOTON_SPAN_EXPECT_VIEW(extent == dynamic_extent || count == extent);
    }

    constexpr span(pointer first_elem, pointer last_elem)
        : storage_(first_elem, static_cast<size_type>(last_elem - first_elem)) {
        PHOTON_SPAN_EXPECT_VIEW(
            first_elem <= last_elem &&
            (extent == dynamic_extent || static_cast<size_type>(last_elem - first_elem) == extent));
    }

    template <std::size_t N, std::size_t E = Extent,
              std::enable_if_t<(E == dynamic_extent || N == E) &&
                                   detail::is_container_element_type_compatible<element_type (&)[N],
                                                                                ElementType>::value,
                               int> = 0>
    constexpr span(element_type (&arr)[N]) noexcept : storage_(arr, N) {}

    template <typename T, std::size_t N, std::size_t E = Extent,
              std::enable_if_t<(E == dynamic_extent || N == E) &&
                                   detail::is_container_element_type_compatible<std::array<T, N>&,
                                                                                ElementType>::value,
                               int> = 0>
    constexpr span(std::array<T, N>& arr) noexcept : storage_(arr.data(), N) {}

    template <typename T, std::size_t N, std::size_t E = Extent,
              std::enable_if_t<(E == dynamic_extent || N == E) &&
                                   detail::is_container_element_type_compatible<
                                       const std::array<T, N>&, ElementType>::value,
                               int> = 0>
    constexpr span(const std::array<T, N>& arr) noexcept : storage_(arr.data(), N) {}

    template <typename Container, std::size_t E = Extent,
              std::enable_if_t<
                  E == dynamic_extent && detail::is_container<Container>::value &&
                      detail::is_container_element_type_compatible<Container&, ElementType>::value,
                  int> = 0>
    constexpr span(Container& cont) : storage_(detail::data(cont), detail::size(cont)) {}

    template <typename Container, std::size_t E = Extent,
              std::enable_if_t<E == dynamic_extent && detail::is_container<Container>::value &&
                                   detail::is_container_element_type_compatible<const Container&,
                                                                                ElementType>::value,
                               int> = 0>
    constexpr span(const Container& cont) : storage_(detail::data(cont), detail::size(cont)) {}

    constexpr span(const span& other) noexcept = default;

    // From another span: fixed <- dynamic is allowed and checks the size.
    template <
        typename OtherElementType, std::size_t OtherExtent,
        std::enable_if_t<(Extent == dynamic_extent || OtherExtent == dynamic_extent ||
                          Extent == OtherExtent) &&
                             std::is_convertible<OtherElementType (*)[], ElementType (*)[]>::value,
                         int> = 0>
    constexpr span(const span<OtherElementType, OtherExtent>& other)
        : storage_(other.data(), other.size()) {
        PHOTON_SPAN_EXPECT_VIEW(extent == dynamic_extent || other.size() == extent);
    }

    ~span() noexcept = default;

    constexpr span& operator=(const span& other) noexcept = default;

    template <std::size_t Count>
    constexpr span<element_type, Count> first() const {
        PHOTON_SPAN_EXPECT_VIEW(Count <= size());
        return {data(), Count};
    }

    template <std::size_t Count>
    constexpr span<element_type, Count> last() const {
        PHOTON_SPAN_EXPECT_VIEW(Count <= size());
        return {data() + (size() - Count), Count};
    }

    template <std::size_t Offset, std::size_t Count = dynamic_extent>
    using subspan_return_t =
        span<ElementType, Count != dynamic_extent
                              ? Count
                              : (Extent != dynamic_extent ? Extent - Offset : dynamic_extent)>;

    template <std::size_t Offset, std::size_t Count = dynamic_extent>
    constexpr subspan_return_t<Offset, Count> subspan() const {
        static_assert(Extent == dynamic_extent || Offset <= Extent, "subspan offset past extent");
        static_assert(
            Extent == dynamic_extent || Count == dynamic_extent || Count <= Extent - Offset,
            "subspan count past extent");
        PHOTON_SPAN_EXPECT_VIEW(Offset <= size() &&
                                (Count == dynamic_extent || Count <= size() - Offset));
        return {data() + Offset, Count != dynamic_extent ? Count : size() - Offset};
    }

    constexpr span<element_type, dynamic_extent> first(size_type count) const {
        PHOTON_SPAN_EXPECT_VIEW(count <= size());
        return {data(), count};
    }

    constexpr span<element_type, dynamic_extent> last(size_type count) const {
        PHOTON_SPAN_EXPECT_VIEW(count <= size());
        return {data() + (size() - count), count};
    }

    // `count <= size() - offset` rather than `offset + count <= size()`, which wraps.
    constexpr span<element_type, dynamic_extent> subspan(size_type offset,
                                                         size_type count = dynamic_extent) const {
        PHOTON_SPAN_EXPECT_VIEW(offset <= size() &&
                                (count == dynamic_extent || count <= size() - offset));
        return {data() + offset, count == dynamic_extent ? size() - offset : count};
    }

    constexpr size_type size() const noexcept { return storage_.size; }
    constexpr size_type size_bytes() const noexcept { return size() * sizeof(element_type); }
    [[nodiscard]] constexpr bool empty() const noexcept { return size() == 0; }

    constexpr reference operator[](size_type idx) const {
        TCB_SPAN_EXPECT(idx < size());
        return data()[idx];
    }

    constexpr reference front() const {
        TCB_SPAN_EXPECT(!empty());
        return *data();
    }

    constexpr reference back() const {
        TCB_SPAN_EXPECT(!empty());
        return data()[size() - 1];
    }

    constexpr pointer data() const noexcept { return storage_.ptr; }

    constexpr iterator begin() const noexcept { return data(); }
    constexpr iterator end() const noexcept { return data() + size(); }
    constexpr reverse_iterator rbegin() const noexcept { return reverse_iterator(end()); }
    constexpr reverse_iterator rend() const noexcept { return reverse_iterator(begin()); }

private:
    detail::span_storage<ElementType, Extent> storage_{};
};

// An odr-used static constexpr member needs a definition before C++17.
#if __cplusplus < 201703L
template <typename ElementType, std::size_t Extent>
constexpr std::size_t span<ElementType, Extent>::extent;
template <typename E, std::size_t S>
constexpr std::size_t detail::span_storage<E, S>::size;
#endif

#ifdef __cpp_deduction_guides
template <class T, std::size_t N>
span(T (&)[N]) -> span<T, N>;

template <class T, std::size_t N>
span(std::array<T, N>&) -> span<T, N>;

template <class T, std::size_t N>
span(const std::array<T, N>&) -> span<const T, N>;

template <class Container>
span(Container&)
    -> span<std::remove_reference_t<decltype(*detail::data(std::declval<Container&>()))>>;

template <class Container>
span(const Container&) -> span<const typename Container::value_type>;
#endif

template <typename ElementType, std::size_t Extent>
constexpr span<ElementType, Extent> make_span(span<ElementType, Extent> s) noexcept {
    return s;
}

template <typename T, std::size_t N>
constexpr span<T, N> make_span(T (&arr)[N]) noexcept {
    return {arr};
}

template <typename T, std::size_t N>
constexpr span<T, N> make_span(std::array<T, N>& arr) noexcept {
    return {arr};
}

template <typename T, std::size_t N>
constexpr span<const T, N> make_span(const std::array<T, N>& arr) noexcept {
    return {arr};
}

template <typename Container>
constexpr span<std::remove_reference_t<decltype(*detail::data(std::declval<Container&>()))>>
make_span(Container& cont) {
    return {cont};
}

template <typename Container>
constexpr span<const typename Container::value_type> make_span(const Container& cont) {
    return {cont};
}

template <typename ElementType, std::size_t Extent>
span<const byte, detail::bytes_extent(sizeof(ElementType), Extent)> as_bytes(
    span<ElementType, Extent> s) noexcept {
    return {reinterpret_cast<const byte*>(s.data()), s.size_bytes()};
}

template <typename ElementType, std::size_t Extent,
          std::enable_if_t<!std::is_const<ElementType>::value, int> = 0>
span<byte, detail::bytes_extent(sizeof(ElementType), Extent)> as_writable_bytes(
    span<ElementType, Extent> s) noexcept {
    return {reinterpret_cast<byte*>(s.data()), s.size_bytes()};
}

// Element N of a fixed-extent span; out of range is a compile error.
template <std::size_t N, typename E, std::size_t S>
constexpr auto get(span<E, S> s) -> decltype(s[N]) {
    static_assert(S == dynamic_extent || N < S, "tcb::get index out of range");
    return s[N];
}

}  // namespace TCB_SPAN_NAMESPACE_NAME

namespace std {

template <typename ElementType, size_t Extent>
class tuple_size<TCB_SPAN_NAMESPACE_NAME::span<ElementType, Extent>>
    : public integral_constant<size_t, Extent> {};

// Left undefined: a dynamic span has no compile-time size to destructure by.
template <typename ElementType>
class tuple_size<
    TCB_SPAN_NAMESPACE_NAME::span<ElementType, TCB_SPAN_NAMESPACE_NAME::dynamic_extent>>;

template <size_t I, typename ElementType, size_t Extent>
class tuple_element<I, TCB_SPAN_NAMESPACE_NAME::span<ElementType, Extent>> {
public:
    static_assert(Extent != TCB_SPAN_NAMESPACE_NAME::dynamic_extent && I < Extent,
                  "tuple_element of a span needs a fixed extent and I < extent");
    using type = ElementType;
};

}  // namespace std

#endif  // TCB_SPAN_HPP_INCLUDED
