// photon::retval<T>: a return value together with the errno of its failure, so that the error
// travels with the result instead of through the thread-local errno. reterr is the bare error
// (0 = success). As in PhotonLibOS: retval<T>(v) takes errno at construction when v is T's
// failure value (negative if T is signed, zero/null otherwise); retval<T>(v, e) sets both;
// retval<T>(reterr) is a failure carrying T's failure value. Plain values: any thread.
//
// Differences from PhotonLibOS: doc/compat.md#commonretvalh
#pragma once
#include <inttypes.h>
#include <assert.h>
#include <errno.h>
#include <type_traits>
#include <photon/common/utility.h>

namespace photon {

struct reterr {
    int64_t _err = 0;  // 64 bits, so that a retval comes back in two registers
    bool failed() const { return unlikely(_err); }
    bool succeeded() const { return !failed(); }
    int get_errno() const { return (int)_err; }
    operator int() const { return get_errno(); }
};

// What a function returning T returns on failure.
template <typename T>
using signed_arithmetic =
    std::integral_constant<bool, std::is_arithmetic<T>::value && std::is_signed<T>::value>;

template <typename T>
inline T failure_value_as(std::true_type /* signed arithmetic */) {
    return T(-1);
}
template <typename T>
inline T failure_value_as(std::false_type) {
    return T{};
}
template <typename T>
inline T failure_value() {
    return failure_value_as<T>(signed_arithmetic<T>());
}

// 0: signed arithmetic, 1: another scalar, 2: anything else.
template <typename T>
using failure_kind =
    std::integral_constant<int,
                           signed_arithmetic<T>::value ? 0 : (std::is_scalar<T>::value ? 1 : 2)>;
template <typename T>
inline bool is_failure_as(const T& x, std::integral_constant<int, 0>) {
    return unlikely(x < 0);
}
template <typename T>
inline bool is_failure_as(const T& x, std::integral_constant<int, 1>) {
    return unlikely(x == T{});
}
template <typename T>
inline bool is_failure_as(const T&, std::integral_constant<int, 2>) {
    return false;
}

// Whether x is T's failure value (see failure_value).
template <typename T>
inline bool is_failure(T x) {
    return is_failure_as(x, failure_kind<T>());
}

template <typename T>
struct retval : public reterr {
    T _val;
    retval(const retval&) = default;
    retval(T val) : reterr{is_failure(val) ? errno : 0}, _val(val) {}
    retval(T val, int _errno) : reterr{_errno}, _val(val) {}
    retval(const reterr& rvb) : reterr{rvb._err ? rvb._err : EINVAL}, _val(failure_value<T>()) {}
    retval& operator=(const retval&) = default;

    operator T() const { return get(); }
    // Hides reterr's conversion, which would hand out the errno where a value is meant.
    template <typename U = T, ENABLE_IF(!IS_SAME(U, int))>
    operator int() const = delete;
    T operator->() const { return get(); }
    T get() const { return _val; }
    reterr error() const { return (const reterr) * this; }
    bool operator==(const retval& rhs) const {
        return _err == rhs._err && (_err || _val == rhs._val);
    }
    bool operator!=(const retval& rhs) const { return !(*this == rhs); }
    bool operator==(T rhs) const { return _val == rhs; }
    bool operator!=(T rhs) const { return _val != rhs; }
};

template <>
struct retval<void> : public reterr {
    retval(int errno_ = 0) : reterr{errno_} {}
    retval(const reterr& rvb) : reterr(rvb) {}
    void get() const {}
    reterr error() const { return (const reterr) * this; }
    bool operator==(const retval& rhs) const { return _err == rhs._err; }
    bool operator!=(const retval& rhs) const { return !(*this == rhs); }
};

}  // namespace photon
