// LogBuffer output for function and member-function pointers, as PhotonLibOS
// declares it: "function_pointer<TYPE> at ADDRESS", TYPE demangled (e.g.
// "int (*)(char const*)"). Include it where such pointers are logged; any
// thread, never yields.
//
// Differences from PhotonLibOS: doc/compat.md#commonalog-functionptrh
#pragma once
#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <typeinfo>

#include <photon/common/alog.h>

template <typename T>
inline LogBuffer& __printfp__(LogBuffer& log, T func) {
    const char* mangled = typeid(func).name();
    int status = -4;
    char* name = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    // The first word: the code address (member pointers: its vtable slot
    // or address, per the Itanium ABI).
    void* address;
    static_assert(sizeof(func) >= sizeof(address), "a function pointer is at least a word");
    memcpy(&address, &func, sizeof(address));
    log << "function_pointer<" << (name ? name : mangled) << "> at " << address;
    free(name);
    return log;
}

template <typename Ret, typename... Args>
inline LogBuffer& operator<<(LogBuffer& log, Ret (*func)(Args...)) {
    return __printfp__(log, func);
}

template <typename Ret, typename Clazz, typename... Args>
inline LogBuffer& operator<<(LogBuffer& log, Ret (Clazz::*func)(Args...)) {
    return __printfp__(log, func);
}

template <typename Ret, typename Clazz, typename... Args>
inline LogBuffer& operator<<(LogBuffer& log, Ret (Clazz::*func)(Args...) const) {
    return __printfp__(log, func);
}
