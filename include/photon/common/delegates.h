// Delegates<Feature<Dispatch, Signatures...>...>: a non-owning facade over any
// object that has the named member functions or operators, as PhotonLibOS
// declares it. It holds one object pointer plus one function pointer per
// signature, so unrelated classes can be used through one type without a
// common base or virtual functions. DEFINE_DELEGATE_FUNCTION(Dispatch, name),
// DEFINE_DELEGATE_OP, DEFINE_DELEGATE_UNARY_OP and DEFINE_DELEGATE_CAST_OP name
// what a Feature forwards; DFeature holds the predefined operators; SelfRef as
// a return type means "the object itself" (the call returns a facade of it);
// DUtils binds and reads single functions. The bound object must outlive the
// facade. Calls run on the caller's stack and yield only if the target does;
// a facade is not synchronized.
//
// Differences from PhotonLibOS: doc/compat.md#commondelegatesh
// Delegates(obj) leaves unbound any signature obj has no member for (its calls
// return Rt{}), as Photon's stack-allocator facade documents. A Delegates has one object pointer:
// bind_func() of a member that needs a different `this` (a non-first base's
// member bound from a derived object) returns false when another object is
// bound already.
#pragma once

#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include <photon/common/PMF.h>
#include <photon/common/callback.h>
#include <photon/common/detail/std17.h>

namespace photon {

struct DUtils;

template <typename FuncType>
class FuncSignature;

// Holds the object pointer every accessor calls with.
class DelegatesBase {
protected:
    void* __objptr;

public:
    template <typename T>
    DelegatesBase(T& obj) : __objptr(detail::to_void(std::addressof(obj))) {}
    DelegatesBase(void* obj) : __objptr(obj) {}
    DelegatesBase() : __objptr(nullptr) {}
    friend DUtils;
};

struct SelfRef {};

// The root of every accessor chain.
struct AccessorBase {
    AccessorBase() = default;
    template <typename T>
    explicit AccessorBase(T&&) {}
};

template <typename T, typename Rt, typename... Args>
struct Prototype {
    using type = Rt (T::*)(Args...);
};

template <typename T, typename... Args>
struct Prototype<T, SelfRef, Args...> {
    using type = T& (T::*)(Args...);
};

template <typename... Args>
struct Prototype<void, SelfRef, Args...> {
    using type = void* (*)(void*, Args...);
};

template <typename Rt, typename... Args>
struct Prototype<void, Rt, Args...> {
    using type = Rt (*)(void*, Args...);
};

template <typename Accessor, typename Rt, typename... Args>
struct FuncMatch;

template <typename Rt, typename... Args>
struct FuncMatch<AccessorBase, Rt, Args...> {
    using type = AccessorBase;
};

template <typename Accessor, typename Rt, typename... Args>
struct FuncMatch<Accessor, Rt&, Args...> {
    using type = AccessorBase;
};

template <typename Rt, typename... Args>
class FuncSignature<Rt(Args...)> {
    // Walks an accessor chain to the accessor of exactly this signature.
    template <typename A, bool = std::is_same<A, AccessorBase>::value>
    struct find_in_chain {
        using type =
            std::conditional_t<std::is_same<typename A::__signature, FuncSignature>::value, A,
                               typename find_in_chain<typename A::__ParentAccessor>::type>;
    };
    template <typename A>
    struct find_in_chain<A, true> {
        using type = AccessorBase;
    };

public:
    using Signature = Rt(Args...);
    using RetType = Rt;
    using ArgsType = std::tuple<Args...>;
    using Idx = std::make_integer_sequence<int, sizeof...(Args)>;
    using Dx = Delegate<std::conditional_t<std::is_same<SelfRef, Rt>::value, void*, Rt>, Args...>;

    template <typename DR>
    struct DCastable : std::false_type {};

    template <typename DR>
    struct DCastable<Delegate<DR&, Args...>> : std::true_type {};

    template <typename T>
    using Prototype = typename ::photon::Prototype<T, Rt, Args...>::type;

    template <typename Parent, typename Dispatch, typename FacadeType>
    using accessor = typename Dispatch::template accessor<Parent, FacadeType, Rt, Args...>;

    // The accessor of this signature in the chain that starts at Accessor;
    // AccessorBase if the chain has none.
    template <typename Accessor>
    using Match = typename find_in_chain<Accessor>::type;
};

namespace Overloads {

template <typename Dispatch, typename FacadeType, typename... Overloads>
struct OverloadGroup;

template <typename Dispatch, typename FacadeType>
struct OverloadGroup<Dispatch, FacadeType> {
    using type = AccessorBase;
};

// The first signature's accessor derives from the rest's, down to AccessorBase.
template <typename Dispatch, typename FacadeType, typename O, typename... Overloads>
struct OverloadGroup<Dispatch, FacadeType, O, Overloads...> {
    using type = typename O::template accessor<
        typename OverloadGroup<Dispatch, FacadeType, Overloads...>::type, Dispatch, FacadeType>;
};

}  // namespace Overloads

namespace DFeature {

// One named member (Dispatch) with its overloads; the first is the default one
// DUtils uses when no signature is given.
template <typename Dispatch, typename... FuncTypes>
struct Feature {
    template <typename FacadeType>
    using accessor =
        typename Overloads::OverloadGroup<Dispatch, FacadeType, FuncSignature<FuncTypes>...>::type;
};

}  // namespace DFeature

namespace FeatureBuild {

template <typename Dispatch, typename... Features>
struct MatchFeature {};

template <typename Dispatch, typename... FuncTypes>
struct MatchFeature<Dispatch, DFeature::Feature<Dispatch, FuncTypes...>> {
    using type = DFeature::Feature<Dispatch, FuncTypes...>;
};

template <typename Dispatch, typename... FuncTypes, typename... OtherConvs>
struct MatchFeature<Dispatch, DFeature::Feature<Dispatch, FuncTypes...>, OtherConvs...> {
    using type = DFeature::Feature<Dispatch, FuncTypes...>;
};

template <typename Dispatch, typename FirstConv, typename... OtherConvs>
struct MatchFeature<Dispatch, FirstConv, OtherConvs...> {
    using type = typename MatchFeature<Dispatch, OtherConvs...>::type;
};

}  // namespace FeatureBuild

template <typename... Convs>
struct Delegates : public DelegatesBase, public Convs::template accessor<Delegates<Convs...>>... {
    // Binds every signature of every Feature to obj's members.
    template <typename T, typename = std::enable_if_t<!std::is_base_of<DelegatesBase, T>::value>>
    explicit Delegates(T& obj)
        : DelegatesBase(obj), Convs::template accessor<Delegates<Convs...>>(obj)... {}

    Delegates(const Delegates& other) = default;
    Delegates& operator=(const Delegates& other) = default;

    // Unbound: calls return Rt{} (or do nothing) until DUtils binds them.
    Delegates() = default;
};

struct DUtils {
    template <typename... Convs>
    static void* __get_obj(Delegates<Convs...>& x) {
        return static_cast<DelegatesBase&>(x).__objptr;
    }
    template <typename... Convs>
    static void* __set_obj(Delegates<Convs...>& x, void* p) {
        return static_cast<DelegatesBase&>(x).__objptr = p;
    }

    template <typename DC, typename O, typename D>
    static std::enable_if_t<!std::is_same<O, AccessorBase>::value, bool> __bind_func(
        D& d, decltype(DC::_func) fptr) {
        static_cast<O&>(d).__funcptr = fptr;
        return true;
    }

    template <typename DC, typename O, typename D>
    static std::enable_if_t<std::is_same<O, AccessorBase>::value, bool> __bind_func(
        D&, decltype(DC::_func)) {
        return false;
    }

    template <typename DC, typename O, typename D>
    static std::enable_if_t<!std::is_same<O, AccessorBase>::value, DC> __get_func(D& d) {
        return DC(d.__objptr, static_cast<O&>(d).__funcptr);
    }

    template <typename DC, typename O, typename D>
    static std::enable_if_t<std::is_same<O, AccessorBase>::value, DC> __get_func(D&) {
        return DC();
    }

    // Binds signature C of Feature D to fptr. False, with d unchanged, if D has no
    // overload C or fptr's object differs from the one d holds.
    template <typename D, typename C, typename... Convs>
    static bool bind_func_delegate(Delegates<Convs...>& d, typename FuncSignature<C>::Dx fptr) {
        using FS = FuncSignature<C>;
        using O = typename FS::template Match<typename FeatureBuild::MatchFeature<
            D, Convs...>::type::template accessor<Delegates<Convs...>>>;
        using DC = typename FS::Dx;
        if (std::is_same<O, AccessorBase>::value) return false;
        if (d.__objptr && fptr._obj && fptr._obj != d.__objptr) return false;
        if (!d.__objptr) d.__objptr = fptr._obj;
        return __bind_func<DC, O>(d, fptr._func);
    }

    template <typename T, typename Ret, typename... Args>
    static Delegate<Ret, Args...> __build_delegate(T* obj, Ret (T::*func)(Args...)) {
        return {obj, func};
    }

    // Signature C of Feature D := obj->*func (virtual calls resolved now).
    template <typename D, typename C, typename T, typename Dlgs>
    static bool bind_func(Dlgs& d, T* obj, typename FuncSignature<C>::template Prototype<T> func) {
        return bind_member<D, C>(d, obj, func);
    }

    // Signature C of Feature D := func(obj, ...).
    template <typename D, typename C, typename Dlgs>
    static bool bind_func(Dlgs& d, void* obj,
                          typename FuncSignature<C>::template Prototype<void> func) {
        using DC = typename FuncSignature<C>::Dx;
        return bind_func_delegate<D, C>(d, DC(obj, func));
    }

    // Signature C of Feature D := func(the object d holds, ...).
    template <typename D, typename C, typename Dlgs>
    static bool bind_func(Dlgs& d, std::nullptr_t,
                          typename FuncSignature<C>::template Prototype<void> func) {
        using DC = typename FuncSignature<C>::Dx;
        return bind_func_delegate<D, C>(d, DC(nullptr, func));
    }

    // The default (first) signature of Feature D in Delegates F.
    template <typename D, typename F>
    struct __match_og;

    template <typename D, typename... Convs>
    struct __match_og<D, Delegates<Convs...>> {
        using OG = typename FeatureBuild::MatchFeature<D, Convs...>::type::template accessor<
            Delegates<Convs...>>;
        using FS = typename OG::__signature;
        using C = typename FS::Signature;
        using DC = typename FS::Dx;
    };

    template <typename D, typename T, typename Dlgs, typename = void (T::*)()>
    static bool bind_func(Dlgs& d, T* obj,
                          typename __match_og<D, Dlgs>::FS::template Prototype<T> func) {
        return bind_member<D, typename __match_og<D, Dlgs>::C>(d, obj, func);
    }

    template <typename D, typename Dlgs>
    static bool bind_func(Dlgs& d, void* obj,
                          typename __match_og<D, Dlgs>::FS::template Prototype<void> func) {
        using OG = __match_og<D, Dlgs>;
        return bind_func_delegate<D, typename OG::C>(d, typename OG::DC(obj, func));
    }

    template <typename D, typename Dlgs>
    static bool bind_func(Dlgs& d, std::nullptr_t,
                          typename __match_og<D, Dlgs>::FS::template Prototype<void> func) {
        using OG = __match_og<D, Dlgs>;
        return bind_func_delegate<D, typename OG::C>(d, typename OG::DC(nullptr, func));
    }

    // Sets the object if none is bound yet; false (unchanged) otherwise.
    template <typename T, typename... Convs>
    static bool bind_obj(Delegates<Convs...>& d, T* obj) {
        if (d.__objptr) return false;
        d.__objptr = detail::to_void(obj);
        return true;
    }

    // Rebinds d to obj and all of obj's members.
    template <typename T, typename... Convs>
    static bool bind_obj_and_func(Delegates<Convs...>& d, T& obj) {
        d = Delegates<Convs...>(obj);
        return true;
    }

    // Signature C of Feature D as a Delegate (unbound: a null _func).
    template <typename D, typename C, typename... Convs>
    static auto get_func(Delegates<Convs...>& d) {
        using FS = FuncSignature<C>;
        using O = typename FS::template Match<typename FeatureBuild::MatchFeature<
            D, Convs...>::type::template accessor<Delegates<Convs...>>>;
        return __get_func<typename FS::Dx, O>(d);
    }

    template <typename D, typename Dlg>
    static auto get_func(Dlg& d) {
        using OG = __match_og<D, Dlg>;
        using FS = typename OG::FS;
        return __get_func<typename OG::DC, typename FS::template Match<typename OG::OG>>(d);
    }

private:
    template <typename D, typename C, typename Dlgs, typename T, typename MF>
    static bool bind_member(Dlgs& d, T* obj, MF func) {
        using DC = typename FuncSignature<C>::Dx;
        if (!obj) return false;  // a member function needs its object
        auto m = ::get_member_function_address(obj, func);
        return bind_func_delegate<D, C>(
            d, DC(detail::to_void(m.obj),
                  reinterpret_cast<decltype(DC::_func)>(reinterpret_cast<void (*)()>(m.f))));
    }
};

namespace detail {

// The object a SelfRef member returned, as the bound type T.
template <typename T, typename R>
void* delegate_self_as(std::true_type /* a pointer */, R&& r) {
    return to_void(static_cast<T*>(r));
}
template <typename T, typename R>
void* delegate_self_as(std::false_type /* a reference */, R&& r) {
    static_assert(std::is_lvalue_reference<R>::value,
                  "a SelfRef member must return a reference or pointer to its object");
    return to_void(static_cast<T*>(std::addressof(r)));
}
template <typename T, typename R>
void* delegate_self(R&& r) {
    return delegate_self_as<T>(std::is_pointer<std::remove_reference_t<R>>(), std::forward<R>(r));
}

}  // namespace detail

// The state and calls an accessor needs; the DEFINE_DELEGATE_* macros add the
// named member on top. Dispatch::__dlg_call(p, args...) calls p's member by name.
template <typename Dispatch, typename Parent, typename FacadeType, typename Rt, typename... Args>
class delegate_slot : public Parent {
    static constexpr bool self_ref = std::is_same<Rt, SelfRef>::value;
    using fn_ret = std::conditional_t<self_ref, void*, Rt>;
    using fn_type = fn_ret (*)(void*, Args...);

protected:
    using __signature = FuncSignature<Rt(Args...)>;
    using __result = std::conditional_t<self_ref, FacadeType, Rt>;
    fn_type __funcptr = nullptr;

    // Whether T has a member this signature can call.
    template <typename T, typename = void>
    struct callable_on : std::false_type {};
    template <typename T>
    struct callable_on<T, detail::void_t<decltype(Dispatch::__dlg_call(
                              std::declval<T*>(), std::declval<Args>()...))>> : std::true_type {};

    template <typename T>
    static constexpr fn_type thunk_for(std::true_type /* callable_on<T> */) {
        return &__thunk<T>;
    }
    template <typename T>
    static constexpr fn_type thunk_for(std::false_type) {
        return nullptr;
    }

    template <typename T>
    static fn_ret __thunk(void* obj, Args... args) {
        return __thunk_call(std::integral_constant<bool, self_ref>(), static_cast<T*>(obj),
                            std::forward<Args>(args)...);
    }
    template <typename T>
    static void* __thunk_call(std::true_type /* self_ref */, T* p, Args&&... args) {
        return detail::delegate_self<T>(Dispatch::__dlg_call(p, std::forward<Args>(args)...));
    }
    template <typename T>
    static Rt __thunk_call(std::false_type, T* p, Args&&... args) {
        return Dispatch::__dlg_call(p, std::forward<Args>(args)...);
    }

    // Unbound: Rt{}, nothing, or (SelfRef) a facade with no object.
    using __fire_kind =
        std::integral_constant<int, self_ref ? 0 : (std::is_void<Rt>::value ? 1 : 2)>;
    __result __fire(Args... args) { return __fire_as(__fire_kind(), std::forward<Args>(args)...); }
    __result __fire_as(std::integral_constant<int, 0> /* SelfRef */, Args&&... args) {
        auto& self = static_cast<FacadeType&>(*this);
        void* next =
            __funcptr ? __funcptr(DUtils::__get_obj(self), std::forward<Args>(args)...) : nullptr;
        FacadeType ret = self;
        DUtils::__set_obj(ret, next);
        return ret;
    }
    __result __fire_as(std::integral_constant<int, 1> /* void */, Args&&... args) {
        auto& self = static_cast<FacadeType&>(*this);
        if (__funcptr) __funcptr(DUtils::__get_obj(self), std::forward<Args>(args)...);
    }
    __result __fire_as(std::integral_constant<int, 2>, Args&&... args) {
        auto& self = static_cast<FacadeType&>(*this);
        return __funcptr ? __funcptr(DUtils::__get_obj(self), std::forward<Args>(args)...) : Rt{};
    }

public:
    using __ParentAccessor = Parent;

    delegate_slot() = default;

    // Binds to obj's member; left unbound if obj has none this signature can call.
    template <typename T, typename = std::enable_if_t<!std::is_base_of<delegate_slot, T>::value>>
    delegate_slot(T& obj) : Parent(obj), __funcptr(thunk_for<T>(callable_on<T>())) {}

    friend DUtils;
    template <typename T>
    friend class FuncSignature;
};

}  // namespace photon

// Dispatch `name` forwards member function `funcname` (which may be `operator X`).
// Its accessors, one per signature, derive from one another; the AccessorBase
// form is the last one and has no overloads above it to bring into scope.
#define DEFINE_DELEGATE_FUNCTION(name, funcname)                                                 \
    struct name {                                                                                \
        template <typename T, typename... As>                                                    \
        static auto __dlg_call(T* p, As&&... as)                                                 \
            -> decltype(p->funcname(std::forward<As>(as)...)) {                                  \
            return p->funcname(std::forward<As>(as)...);                                         \
        }                                                                                        \
        template <typename Parent, typename FacadeType, typename Rt, typename... Args>           \
        class accessor : public ::photon::delegate_slot<name, Parent, FacadeType, Rt, Args...> { \
            using __slot = ::photon::delegate_slot<name, Parent, FacadeType, Rt, Args...>;       \
                                                                                                 \
        public:                                                                                  \
            using __slot::__slot;                                                                \
            typename __slot::__result funcname(Args... args) {                                   \
                return this->__fire(std::forward<Args>(args)...);                                \
            }                                                                                    \
            using Parent::funcname;                                                              \
        };                                                                                       \
        template <typename FacadeType, typename Rt, typename... Args>                            \
        class accessor<::photon::AccessorBase, FacadeType, Rt, Args...>                          \
            : public ::photon::delegate_slot<name, ::photon::AccessorBase, FacadeType, Rt,       \
                                             Args...> {                                          \
            using __slot =                                                                       \
                ::photon::delegate_slot<name, ::photon::AccessorBase, FacadeType, Rt, Args...>;  \
                                                                                                 \
        public:                                                                                  \
            using __slot::__slot;                                                                \
            typename __slot::__result funcname(Args... args) {                                   \
                return this->__fire(std::forward<Args>(args)...);                                \
            }                                                                                    \
        };                                                                                       \
    };

#define DEFINE_DELEGATE_OP(name, opname) DEFINE_DELEGATE_FUNCTION(name, operator opname)

// A prefix unary operator: signatures take no arguments.
#define DEFINE_DELEGATE_UNARY_OP(name, funcname)                                        \
    struct name {                                                                       \
        template <typename T>                                                           \
        static auto __dlg_call(T* p) -> decltype(p->operator funcname()) {              \
            return p->operator funcname();                                              \
        }                                                                               \
        template <typename Parent, typename FacadeType, typename Rt>                    \
        class accessor : public ::photon::delegate_slot<name, Parent, FacadeType, Rt> { \
            using __slot = ::photon::delegate_slot<name, Parent, FacadeType, Rt>;       \
                                                                                        \
        public:                                                                         \
            using __slot::__slot;                                                       \
            typename __slot::__result operator funcname() { return this->__fire(); }    \
        };                                                                              \
    };

// A conversion operator to `funcname` (a type); signatures take no arguments.
#define DEFINE_DELEGATE_CAST_OP(name, funcname)                                         \
    struct name {                                                                       \
        template <typename T>                                                           \
        static auto __dlg_call(T* p) -> decltype(p->operator funcname()) {              \
            return p->operator funcname();                                              \
        }                                                                               \
        template <typename Parent, typename FacadeType, typename Rt>                    \
        class accessor : public ::photon::delegate_slot<name, Parent, FacadeType, Rt> { \
            using __slot = ::photon::delegate_slot<name, Parent, FacadeType, Rt>;       \
                                                                                        \
        public:                                                                         \
            using __slot::__slot;                                                       \
            operator funcname() { return this->__fire(); }                              \
        };                                                                              \
    };

namespace photon {
namespace DFeature {

DEFINE_DELEGATE_OP(EQ, ==);
DEFINE_DELEGATE_OP(NE, !=);
DEFINE_DELEGATE_OP(LT, <);
DEFINE_DELEGATE_OP(LE, <=);
DEFINE_DELEGATE_OP(GT, >);
DEFINE_DELEGATE_OP(GE, >=);

DEFINE_DELEGATE_OP(OR, |);
DEFINE_DELEGATE_OP(AND, &);
DEFINE_DELEGATE_OP(XOR, ^);
DEFINE_DELEGATE_UNARY_OP(NOT, ~);
DEFINE_DELEGATE_UNARY_OP(LNOT, !);
DEFINE_DELEGATE_OP(LOR, ||);
DEFINE_DELEGATE_OP(LAND, &&);

DEFINE_DELEGATE_OP(ADD, +);
DEFINE_DELEGATE_OP(SUB, -);
DEFINE_DELEGATE_OP(MUL, *);
DEFINE_DELEGATE_OP(DIV, /);
DEFINE_DELEGATE_OP(MOD, %);

DEFINE_DELEGATE_OP(ADD_ASSIGN, +=);
DEFINE_DELEGATE_OP(SUB_ASSIGN, -=);
DEFINE_DELEGATE_OP(MUL_ASSIGN, *=);
DEFINE_DELEGATE_OP(DIV_ASSIGN, /=);
DEFINE_DELEGATE_OP(MOD_ASSIGN, %=);
DEFINE_DELEGATE_OP(OR_ASSIGN, |=);
DEFINE_DELEGATE_OP(AND_ASSIGN, &=);
DEFINE_DELEGATE_OP(XOR_ASSIGN, ^=);
DEFINE_DELEGATE_OP(LSH, <<);
DEFINE_DELEGATE_OP(RSH, >>);
DEFINE_DELEGATE_OP(LSH_ASSIGN, <<=);
DEFINE_DELEGATE_OP(RSH_ASSIGN, >>=);

DEFINE_DELEGATE_OP(ASSIGN, =);
DEFINE_DELEGATE_OP(INVOKE, ());
DEFINE_DELEGATE_OP(INC, ++);
DEFINE_DELEGATE_OP(DEC, --);

}  // namespace DFeature
}  // namespace photon
