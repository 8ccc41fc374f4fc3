// Delegate<R, Ts...>: a two-pointer, non-owning callable (object + function), cheaper than
// std::function and never allocating. The bound object (or functor) must outlive the Delegate.
// Calling it runs the target on the caller's stack; it yields only if the target does.
//
// Member-function pointers are turned into plain code addresses by reading the Itanium C++ ABI
// representation {ptr, adj}, so that a Delegate stays two pointers wide. Supported: GCC and
// Clang on Itanium-ABI targets (Linux, BSD, macOS; x86-64, AArch64 and the other variants).
// Not MSVC, which a static_assert reports.
//
// photon::Closure<ARGS...> is a Delegate over a heap functor that deletes it when a call returns
// DELETE_CLOSURE. Including this header also provides get_member_function_address (PMF.h), as
// PhotonLibOS's does.
//
// Differences from PhotonLibOS: doc/compat.md#commoncallbackh
#pragma once
#include <cassert>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <photon/common/utility.h>

struct Delegate_Base {};

// Targets bound from member or U*-taking functions are called through Func on purpose (the ABI
// passes both alike); keep clang's -fsanitize=function from flagging those calls.
#if defined(__clang__)
#define PHOTON_DELEGATE_CALL __attribute__((no_sanitize("function")))
#else
#define PHOTON_DELEGATE_CALL
#endif

namespace photon {
namespace detail {

// Itanium C++ ABI pointer to member function. Generic form: a virtual function has
// ptr = 1 + vtable offset. ARM form: the virtual flag is adj's low bit, adj is doubled and
// ptr is the plain vtable offset.
struct pmf_repr {
    uintptr_t ptr;
    ptrdiff_t adj;
};

struct pmf_probe {
    virtual void slot0() = 0;
};

// Detects the ARM form from a known virtual member (slot 0) instead of testing the target
// architecture; compilers fold this to a constant.
inline bool pmf_arm_form() {
    auto mf = &pmf_probe::slot0;
    pmf_repr r;
    std::memcpy(&r, &mf, sizeof(r));
    return (r.ptr & 1) == 0;
}

// Returns the adjusted `this`; *fn receives the code address (0 for a null pointer). Only
// polymorphic classes can have virtual members, so only they pay for the vtable branch.
template <bool Polymorphic>
void* resolve_pmf(void* obj, const pmf_repr& r, uintptr_t* fn) {
    const bool arm = pmf_arm_form();
    const bool is_virtual = Polymorphic && (arm ? (r.adj & 1) : (r.ptr & 1));
    char* self = static_cast<char*>(obj) + (arm ? (r.adj >> 1) : r.adj);
    uintptr_t addr = r.ptr;
    if (is_virtual) {
        const char* vtable;
        std::memcpy(&vtable, self, sizeof(vtable));
        std::memcpy(&addr, vtable + (arm ? r.ptr : r.ptr - 1), sizeof(addr));
    }
    *fn = addr;
    return self;
}

template <typename U>
void* to_void(U* p) {
    return const_cast<void*>(static_cast<const volatile void*>(p));
}

}  // namespace detail
}  // namespace photon

template <typename R, typename... Ts>
struct Delegate : Delegate_Base {
    using Func = R (*)(void*, Ts...);
    using Func0 = R (*)(Ts...);
    template <typename U>
    using UMFunc = R (U::*)(Ts...);  // U's member function
    template <typename U>
    using UCMFunc = R (U::*)(Ts...) const;  // U's const member function
    template <typename U>
    using UFunc = R (*)(U*, Ts...);  // a function taking U* first

    void* _obj = nullptr;
    Func _func = nullptr;

    constexpr Delegate() = default;
    constexpr Delegate(void* obj, Func func) : _obj(obj), _func(func) {}
    constexpr Delegate(Func func, void* obj) : _obj(obj), _func(func) {}

    // A plain function; its address rides in _obj and a thunk drops the object argument.
    Delegate(Func0 f) : _obj(reinterpret_cast<void*>(f)), _func(f ? &call_plain : nullptr) {}

    // R f(U*, Ts...) called with obj. Relies on U* and void* being passed alike, as on every
    // ABI photon targets.
    template <typename T, typename U, ENABLE_IF(std::is_convertible<T*, U*>::value)>
    Delegate(T* obj, R (*f)(U*, Ts...))
        : _obj(photon::detail::to_void(static_cast<U*>(obj))),
          _func(reinterpret_cast<Func>(reinterpret_cast<void (*)()>(f))) {}

    // Member functions of T or of a base U of T, virtual ones resolved now (not at call time).
    template <typename T, typename U, ENABLE_IF(std::is_base_of<U, T>::value)>
    Delegate(T* obj, R (U::*mf)(Ts...)) {
        bind_member(static_cast<U*>(obj), mf);
    }

    template <typename T, typename U,
              ENABLE_IF(std::is_base_of<U, typename std::remove_cv<T>::type>::value)>
    Delegate(T* obj, R (U::*mf)(Ts...) const) {
        bind_member(static_cast<const U*>(obj), mf);
    }

    // A functor (lambda, std::function, ...) by reference: it must outlive the Delegate.
    template <typename U, ENABLE_IF(std::is_class<U>::value && !IS_BASE_OF(Delegate_Base, U))>
    Delegate(U& functor) : _obj(photon::detail::to_void(&functor)), _func(&call_functor<U>) {}

    // Accepts every argument list the constructors accept.
    template <typename... As>
    void bind(As&&... as) {
        *this = Delegate(std::forward<As>(as)...);
    }

    void clear() {
        _obj = nullptr;
        _func = nullptr;
    }

    operator bool() const { return _func != nullptr; }

    R operator()(Ts... args) const { return fire(std::forward<Ts>(args)...); }

    // Calls the target; an unbound Delegate returns R().
    PHOTON_DELEGATE_CALL R fire(Ts... args) const {
        return _func ? _func(_obj, std::forward<Ts>(args)...) : R();
    }

    // Unbinds first, so the target may safely re-bind this Delegate.
    R fire_once(Ts... args) {
        Delegate target = *this;
        clear();
        return target.fire(std::forward<Ts>(args)...);
    }

    bool operator==(const Delegate& rhs) const { return _obj == rhs._obj && _func == rhs._func; }
    bool operator!=(const Delegate& rhs) const { return !(*this == rhs); }

private:
    static R call_plain(void* f, Ts... args) {
        return reinterpret_cast<Func0>(f)(std::forward<Ts>(args)...);
    }

    template <typename U>
    static R call_functor(void* obj, Ts... args) {
        return (*static_cast<U*>(obj))(std::forward<Ts>(args)...);
    }

    template <typename U, typename MF>
    void bind_member(U* obj, MF mf) {
        static_assert(sizeof(MF) == sizeof(photon::detail::pmf_repr),
                      "Delegate needs Itanium C++ ABI member-function pointers (GCC or Clang)");
        photon::detail::pmf_repr r;
        std::memcpy(&r, &mf, sizeof(r));
        uintptr_t fn;
        _obj = photon::detail::resolve_pmf<std::is_polymorphic<U>::value>(
            photon::detail::to_void(obj), r, &fn);
        _func = reinterpret_cast<Func>(fn);
    }
};

// A Delegate that also binds temporaries (e.g. a lambda written in the call). Only for callees
// that finish with it before returning, such as join-style APIs; never store it.
template <typename R, typename... Ts>
struct TempDelegate : Delegate<R, Ts...> {
    using base = Delegate<R, Ts...>;
    using base::base;

    TempDelegate() = default;
    TempDelegate(const base& d) : base(d) {}

    template <typename U, typename V = typename std::remove_reference<U>::type,
              ENABLE_IF(std::is_class<V>::value && !IS_BASE_OF(Delegate_Base, V))>
    TempDelegate(U&& functor) : base(functor) {}
};

template <typename... Ts>
using Callback = Delegate<int, Ts...>;

// In a template parameter list: U is not a Delegate (so a functor, not a delegate, is bound).
#define ENABLE_IF_NOT_CB(U) ENABLE_IF_NOT_BASE_OF(Delegate_Base, U)

namespace photon {

// What a Closure's functor returns to have itself deleted after the call.
const int64_t DELETE_CLOSURE = -1234567890;

// A Delegate<int64_t, ARGS...> that may own its functor: Closure(new F(...)) calls *f and
// deletes f once a call returns DELETE_CLOSURE (so a one-shot task frees itself). Bound any
// other way, it is a plain Delegate.
template <typename... ARGS>
struct Closure : public Delegate<int64_t, ARGS...> {
    using base = Delegate<int64_t, ARGS...>;
    using base::base;
    using base::bind;

    Closure() = default;
    template <typename T>
    explicit Closure(T* pfunctor) {
        bind(pfunctor);
    }

    template <typename T>
    void bind(T* pfunctor) {
        this->_obj = pfunctor;
        this->_func = [](void* task, ARGS... args) -> int64_t {
            assert(task);
            auto t = static_cast<T*>(task);
            int64_t ret = (*t)(std::forward<ARGS>(args)...);
            if (ret == DELETE_CLOSURE) delete t;
            return ret;
        };
    }
};

using Closure0 = Closure<>;

}  // namespace photon

#if __has_include(<photon/common/PMF.h>)
#include <photon/common/PMF.h>
#endif
