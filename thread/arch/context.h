// Machine context switch between coroutine stacks: the only interface the
// scheduler has to the per-ISA assembly in this folder. Private header.
//
// A suspended context is just a stack pointer: everything the ABI requires a
// callee to preserve is pushed on the suspended stack, so switching costs a few
// pushes and pops and one indirect return. Not switched (and not needed by the
// ABI): caller-saved registers, flags, the MXCSR/FPSR status bits, the
// exception-handling globals of the C++ runtime (a coroutine must not switch
// while an exception is in flight, see doc/thread.md) and sanitizer fiber state
// (the scheduler annotates that around each switch).
#pragma once

#include <cstddef>
#include <cstdint>

namespace photon {
namespace arch {

using context_hook = void (*)(void* arg);
using context_entry = void (*)(void* arg);

extern "C" {
// Saves the running context on its stack, stores the stack pointer in *from,
// and resumes the context whose stack pointer is `to`.
void photon_switch_context(void** from, void* to);

// As photon_switch_context, but once on the stack of `to` and before resuming
// it, calls hook(arg). Lets the caller release a lock or recycle the stack it
// just left only after nothing runs on that stack any more.
void photon_switch_context_hook(void** from, void* to, context_hook hook, void* arg);

// Builds, below `stack_top`, a suspended context that on its first resume
// calls entry(arg) with a fresh ABI-conformant frame. `entry` must not return.
// Returns the stack pointer to pass as `to`.
void* photon_make_context(void* stack_top, context_entry entry, void* arg);
}

// Bytes photon_make_context needs below stack_top; the scheduler reserves them.
constexpr size_t kInitialFrameBytes = 256;
// The stack top given to photon_make_context must be aligned like this.
constexpr size_t kStackAlignment = 16;

}  // namespace arch
}  // namespace photon
