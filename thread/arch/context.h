// Machine context switch between coroutine stacks: the only interface the
// scheduler has to the per-ISA assembly in this folder. Private header.
//
// A suspended context is just a stack pointer: everything the ABI requires a
// callee to preserve is stored in a frame on the suspended stack (frame.h has
// its layout, checked below), so switching costs a few stores and loads and one
// return. Not switched (and not needed by the ABI): caller-saved registers,
// flags, AArch64's FPSR status bits, the exception-handling globals of the C++
// runtime (a coroutine must not switch while an exception is in flight, see
// doc/thread.md) and sanitizer fiber state (the scheduler annotates that around
// each switch). On x86-64, MXCSR is saved and restored whole, so its status
// (exception flag) bits travel with the context along with its control bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "frame.h"

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

// The saved frame as C++ sees it (a debugger or a test reading a parked
// context's registers), checked against the offsets the assembly uses.
#if defined(__x86_64__)
struct saved_frame {
    uint32_t mxcsr;
    uint16_t fpcw, pad;
    uint64_t r15, r14, r13, r12, rbx, rbp;
    void* ret;  // pushed by the call into the switch
};
static_assert(offsetof(saved_frame, mxcsr) == PHOTON_FRAME_MXCSR, "frame.h: MXCSR slot");
static_assert(offsetof(saved_frame, fpcw) == PHOTON_FRAME_FPCW, "frame.h: x87 control slot");
static_assert(offsetof(saved_frame, r15) == PHOTON_FRAME_R15, "frame.h: r15 slot");
static_assert(offsetof(saved_frame, r14) == PHOTON_FRAME_R14, "frame.h: r14 slot");
static_assert(offsetof(saved_frame, r13) == PHOTON_FRAME_R13, "frame.h: r13 slot");
static_assert(offsetof(saved_frame, r12) == PHOTON_FRAME_R12, "frame.h: r12 slot");
static_assert(offsetof(saved_frame, rbx) == PHOTON_FRAME_RBX, "frame.h: rbx slot");
static_assert(offsetof(saved_frame, rbp) == PHOTON_FRAME_RBP, "frame.h: rbp slot");
static_assert(offsetof(saved_frame, ret) == PHOTON_FRAME_RET, "frame.h: return address slot");
static_assert(sizeof(saved_frame) == PHOTON_FRAME_SIZE + 8,
              "the switch stores PHOTON_FRAME_SIZE bytes below the return address");
static_assert(sizeof(saved_frame) % 16 == 0,
              "a saved context must keep rsp 16-byte aligned for the hook's call");
static_assert(kInitialFrameBytes >= 15 + 16 + sizeof(saved_frame),
              "photon_make_context: alignment slack, the null pair and one frame");
#elif defined(__aarch64__)
struct saved_frame {
    uint64_t fp, lr;
    uint64_t x19, x20, x21, x22, x23, x24, x25, x26, x27, x28;
    uint64_t d8, d9, d10, d11, d12, d13, d14, d15;  // low halves of v8-v15
    uint64_t fpcr, pad;
};
static_assert(offsetof(saved_frame, fp) == PHOTON_FRAME_FP, "frame.h: x29 slot");
static_assert(offsetof(saved_frame, lr) == PHOTON_FRAME_LR, "frame.h: x30 slot");
static_assert(offsetof(saved_frame, x19) == PHOTON_FRAME_X19, "frame.h: x19/x20 pair");
static_assert(offsetof(saved_frame, x21) == PHOTON_FRAME_X21, "frame.h: x21/x22 pair");
static_assert(offsetof(saved_frame, x23) == PHOTON_FRAME_X23, "frame.h: x23/x24 pair");
static_assert(offsetof(saved_frame, x25) == PHOTON_FRAME_X25, "frame.h: x25/x26 pair");
static_assert(offsetof(saved_frame, x27) == PHOTON_FRAME_X27, "frame.h: x27/x28 pair");
static_assert(offsetof(saved_frame, d8) == PHOTON_FRAME_D8, "frame.h: d8/d9 pair");
static_assert(offsetof(saved_frame, d10) == PHOTON_FRAME_D10, "frame.h: d10/d11 pair");
static_assert(offsetof(saved_frame, d12) == PHOTON_FRAME_D12, "frame.h: d12/d13 pair");
static_assert(offsetof(saved_frame, d14) == PHOTON_FRAME_D14, "frame.h: d14/d15 pair");
static_assert(offsetof(saved_frame, fpcr) == PHOTON_FRAME_FPCR, "frame.h: FPCR slot");
static_assert(sizeof(saved_frame) == PHOTON_FRAME_SIZE,
              "the switch stores PHOTON_FRAME_SIZE bytes");
static_assert(sizeof(saved_frame) % 16 == 0, "AAPCS64 keeps sp 16-byte aligned at all times");
static_assert(kInitialFrameBytes >= 15 + 16 + sizeof(saved_frame),
              "photon_make_context: alignment slack, the zero pair and one frame");
#endif

}  // namespace arch
}  // namespace photon
