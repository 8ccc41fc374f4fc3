// get_member_function_address(obj, &T::f): turns an object and a pointer to
// member function into a plain function pointer R(*)(T*, ARGS...) plus the
// `this` to call it with, as PhotonLibOS declares it (global namespace,
// pmf_map, __get_mfa__). Virtual functions are looked up in obj's vtable now,
// so the result calls obj's final overrider. Pure computation: any vCPU or
// thread, never yields.
//
// Reads the Itanium C++ ABI member-pointer layout (GCC and Clang on Linux,
// BSD, macOS; both its generic and its ARM form, detected at run time and
// folded by the compiler), the same decoding Delegate uses (callback.h).
//
// Differences from PhotonLibOS: doc/compat.md#commonpmfh
// Calling f(obj, args...) is how the ABI passes `this`; it is not portable
// C++, which is why this header exists.
#pragma once
#include <cinttypes>
#include <cstring>
#include <type_traits>

#include <photon/common/callback.h>

template <typename PF, typename T>
struct pmf_map {
    PF f;
    T* obj;  // adjusted to the subobject f expects as `this`
};

template <typename PF, typename T, typename MF>
inline auto __get_mfa__(T* obj, MF f) -> pmf_map<PF, T> {
    namespace d = photon::detail;
    static_assert(sizeof(MF) == sizeof(d::pmf_repr),
                  "get_member_function_address needs Itanium C++ ABI member pointers");
    d::pmf_repr r;
    std::memcpy(&r, &f, sizeof(r));
    constexpr bool poly = std::is_polymorphic<std::remove_cv_t<T>>::value;
    if (!obj) {
        const bool is_virtual = poly && (d::pmf_arm_form() ? (r.adj & 1) : (r.ptr & 1));
        return {is_virtual ? nullptr : reinterpret_cast<PF>(r.ptr), nullptr};
    }
    uintptr_t fn;
    void* self = d::resolve_pmf<poly>(d::to_void(obj), r, &fn);
    return {reinterpret_cast<PF>(fn), static_cast<T*>(self)};
}

template <typename T, typename R, typename... ARGS>
inline auto get_member_function_address(T* obj, R (T::*f)(ARGS...))
    -> pmf_map<R (*)(T*, ARGS...), T> {
    typedef R (*PF)(T*, ARGS...);
    return __get_mfa__<PF>(obj, f);
}

template <typename T, typename R, typename... ARGS>
inline auto get_member_function_address(const T* obj, R (T::*f)(ARGS...) const)
    -> pmf_map<R (*)(const T*, ARGS...), const T> {
    typedef R (*PF)(const T*, ARGS...);
    return __get_mfa__<PF>(obj, f);
}
