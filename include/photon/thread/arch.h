// Machine parameters PhotonLibOS exposes in photon/thread/arch.h.
// Any vCPU or OS thread; never yields.
#pragma once

#include <cstdint>

// A libc macro of the same name (<sys/user.h>) would break the declaration.
#pragma push_macro("PAGE_SIZE")
#undef PAGE_SIZE

namespace photon {

// The page size in bytes. Photon sets it in photon::init() / vcpu_init();
// here it is set before main() runs, so it is valid at any time after
// static initialization (not inside other static initializers).
extern uint32_t PAGE_SIZE;

}  // namespace photon

#pragma pop_macro("PAGE_SIZE")
