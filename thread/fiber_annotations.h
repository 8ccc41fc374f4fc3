// Tells ASan, TSan and Valgrind about coroutine stacks and switches, so they
// track the right stack. Compiles to nothing in builds without them.
// Private header.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define PHOTON_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PHOTON_ASAN 1
#endif
#endif

#if defined(__SANITIZE_THREAD__)
#define PHOTON_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PHOTON_TSAN 1
#endif
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>) && !defined(PHOTON_NO_VALGRIND)
#include <valgrind/valgrind.h>
#define PHOTON_VALGRIND 1
#endif
#endif

extern "C" {
#ifdef PHOTON_ASAN
void __asan_unpoison_memory_region(void const volatile* addr, size_t size);
void __lsan_ignore_object(const void* p);
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, size_t size);
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old,
                                     size_t* size_old);
#endif
#ifdef PHOTON_TSAN
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
#endif
}

namespace photon {

// Returns an id for annotate_stack_deregister.
inline unsigned annotate_stack_register(void* lo, void* hi) {
#ifdef PHOTON_VALGRIND
    return VALGRIND_STACK_REGISTER(lo, hi);
#else
    return 0;
#endif
}

// A coroutine ended without returning from its last frames (it switched away
// for good): their redzones are still poisoned in ASan's shadow, where the
// next coroutine on this stack will put its control block and frames.
inline void annotate_stack_dead(void* sp, void* hi) {
#ifdef PHOTON_ASAN
    if (sp && hi > sp) __asan_unpoison_memory_region(sp, (char*)hi - (char*)sp);
#endif
}

// A heap object whose only references may live in coroutine stacks (mmap'd
// memory LeakSanitizer does not scan): not a leak.
inline void annotate_not_leaked(const void* p) {
#ifdef PHOTON_ASAN
    if (p) __lsan_ignore_object(p);
#endif
}

inline void annotate_stack_deregister(unsigned id) {
#ifdef PHOTON_VALGRIND
    VALGRIND_STACK_DEREGISTER(id);
#endif
}

}  // namespace photon
