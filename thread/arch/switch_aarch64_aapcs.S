/*
 * Coroutine context switch for AArch64, AAPCS64, ELF (Linux). See context.h.
 *
 * A suspended context is its stack pointer; the frame it points at (176 bytes,
 * so sp stays 16-byte aligned as AAPCS64 requires at every instruction; offsets
 * in frame.h, checked against a struct in context.h) is:
 *
 *   offset  content              why it is saved
 *   0x00    x29 (fp)             callee-saved frame pointer; 0 in a new context
 *   0x08    x30 (lr)             where the switch returns to in this context;
 *                                photon_context_start in a new context
 *   0x10    x19                  callee-saved; entry of a new context
 *   0x18    x20                  callee-saved; arg of a new context
 *   0x20    x21, x22             callee-saved
 *   0x30    x23, x24             callee-saved
 *   0x40    x25, x26             callee-saved
 *   0x50    x27, x28             callee-saved
 *   0x60    d8, d9               callee-saved: the low 64 bits of v8-v15 only
 *   0x70    d10, d11             callee-saved
 *   0x80    d12, d13             callee-saved
 *   0x90    d14, d15             callee-saved
 *   0xa0    FPCR (8 bytes)       its mode bits (rounding, FZ, DN, AHP) must be
 *                                preserved across calls in AAPCS64
 *   0xa8    (8 bytes padding)    keeps the frame a multiple of 16
 *
 * sp itself is the context handle. x29/x30 sit at the bottom, as a compiler's
 * prologue would put them, so one pre-indexed store and one post-indexed load
 * move sp. Not saved: x0-x18 (x18 is a temporary on Linux; a shadow call stack
 * in x18 is not supported), the upper 64 bits of v8-v15, v0-v7, v16-v31, SVE
 * z/p registers (caller-saved in the base PCS), NZCV and FPSR (status flags,
 * not preserved by the ABI), TPIDR_EL0 (per OS thread, not per coroutine) and
 * SME state: a caller of a base-PCS function is not in streaming mode, and a
 * pending lazy ZA save (TPIDR2_EL0 != 0) across a switch is not supported.
 *
 * Every instruction is covered by CFI that describes the frame on the stack sp
 * currently points at. Both stacks hold the same layout, so the description
 * stays true when sp moves from the old stack to the new one: a debugger
 * stopped inside the switch, or an unwinder started in the hook, sees the
 * caller of whichever context sp belongs to.
 *
 * Pointer authentication: return addresses are not signed across stacks. The
 * saved x30 is the raw address the caller's `bl` produced, and `ret` uses it
 * unauthenticated. Signing it (paciasp before the save, autiasp after the
 * restore) would work between running contexts, since the modifier is sp and
 * sp comes back exactly, but photon_make_context would then have to forge a
 * signature for a stack it does not run on
 * (pacia1716 on an arbitrary address and modifier), i.e. ship a signing gadget,
 * and it would protect little: the context handle, a bare sp in the
 * scheduler's memory, is as good a target as the saved lr. Compiled callers
 * built with -mbranch-protection=pac-ret keep signing their own return
 * addresses: each is authenticated on the stack and at the sp it was signed
 * with, and the keys are per process, so a coroutine may also resume on
 * another OS thread. The object is therefore not marked PAC in
 * .note.gnu.property (that bit claims all code signs its return addresses, is
 * optional, and is not enforced). It is marked BTI when built with BTI: every
 * function that may be called indirectly starts with a `bti c` landing pad.
 */

#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define PHOTON_BTI_C hint #34 /* bti c, in the hint space so any assembler takes it */
#else
#define PHOTON_BTI_C
#endif

#include "frame.h"

#define FRAME_SIZE PHOTON_FRAME_SIZE /* 176 */

/* Opens the frame on the running stack and saves the running context in it. */
.macro SAVE_FRAME
    stp     x29, x30, [sp, #-FRAME_SIZE]!   /* open the frame, save fp and lr */
    .cfi_def_cfa_offset FRAME_SIZE
    .cfi_offset x29, -FRAME_SIZE
    .cfi_offset x30, -FRAME_SIZE + 0x08
    stp     x19, x20, [sp, #PHOTON_FRAME_X19]       /* callee-saved integer registers */
    stp     x21, x22, [sp, #PHOTON_FRAME_X21]
    stp     x23, x24, [sp, #PHOTON_FRAME_X23]
    stp     x25, x26, [sp, #PHOTON_FRAME_X25]
    stp     x27, x28, [sp, #PHOTON_FRAME_X27]
    stp     d8, d9, [sp, #PHOTON_FRAME_D8]          /* callee-saved low halves of v8-v15 */
    stp     d10, d11, [sp, #PHOTON_FRAME_D10]
    stp     d12, d13, [sp, #PHOTON_FRAME_D12]
    stp     d14, d15, [sp, #PHOTON_FRAME_D14]
    mrs     x9, fpcr                        /* FP control: rounding mode, FZ, DN */
    str     x9, [sp, #PHOTON_FRAME_FPCR]
    .cfi_offset x19, -FRAME_SIZE + 0x10     /* from here on the registers live in */
    .cfi_offset x20, -FRAME_SIZE + 0x18     /* the frame, whichever stack sp is on */
    .cfi_offset x21, -FRAME_SIZE + 0x20
    .cfi_offset x22, -FRAME_SIZE + 0x28
    .cfi_offset x23, -FRAME_SIZE + 0x30
    .cfi_offset x24, -FRAME_SIZE + 0x38
    .cfi_offset x25, -FRAME_SIZE + 0x40
    .cfi_offset x26, -FRAME_SIZE + 0x48
    .cfi_offset x27, -FRAME_SIZE + 0x50
    .cfi_offset x28, -FRAME_SIZE + 0x58
    .cfi_offset d8, -FRAME_SIZE + 0x60
    .cfi_offset d9, -FRAME_SIZE + 0x68
    .cfi_offset d10, -FRAME_SIZE + 0x70
    .cfi_offset d11, -FRAME_SIZE + 0x78
    .cfi_offset d12, -FRAME_SIZE + 0x80
    .cfi_offset d13, -FRAME_SIZE + 0x88
    .cfi_offset d14, -FRAME_SIZE + 0x90
    .cfi_offset d15, -FRAME_SIZE + 0x98
.endm

/* Restores the context whose frame sp points at, closes the frame and returns
 * into that context. */
.macro RESTORE_FRAME_AND_RETURN
    ldr     x9, [sp, #PHOTON_FRAME_FPCR]            /* FPCR of the new context */
    mrs     x10, fpcr
    cmp     x9, x10
    b.eq    1f                              /* writing FPCR may stall the pipeline, and */
    msr     fpcr, x9                        /* it rarely differs between coroutines */
1:
    ldp     d8, d9, [sp, #PHOTON_FRAME_D8]
    ldp     d10, d11, [sp, #PHOTON_FRAME_D10]
    ldp     d12, d13, [sp, #PHOTON_FRAME_D12]
    ldp     d14, d15, [sp, #PHOTON_FRAME_D14]
    ldp     x19, x20, [sp, #PHOTON_FRAME_X19]
    ldp     x21, x22, [sp, #PHOTON_FRAME_X21]
    ldp     x23, x24, [sp, #PHOTON_FRAME_X23]
    ldp     x25, x26, [sp, #PHOTON_FRAME_X25]
    ldp     x27, x28, [sp, #PHOTON_FRAME_X27]
    ldp     x29, x30, [sp], #FRAME_SIZE     /* fp and lr; close the frame */
    .cfi_def_cfa_offset 0                   /* all registers are back in place */
    .cfi_restore x29
    .cfi_restore x30
    .cfi_restore x19
    .cfi_restore x20
    .cfi_restore x21
    .cfi_restore x22
    .cfi_restore x23
    .cfi_restore x24
    .cfi_restore x25
    .cfi_restore x26
    .cfi_restore x27
    .cfi_restore x28
    .cfi_restore d8
    .cfi_restore d9
    .cfi_restore d10
    .cfi_restore d11
    .cfi_restore d12
    .cfi_restore d13
    .cfi_restore d14
    .cfi_restore d15
    ret                                     /* into the new context's caller */
.endm

    .text

/* void photon_switch_context(void** from, void* to)
 * x0 = from, x1 = to. */
    .globl  photon_switch_context
    .hidden photon_switch_context
    .type   photon_switch_context, %function
    .p2align 4
photon_switch_context:
    .cfi_startproc
    PHOTON_BTI_C
    SAVE_FRAME
    mov     x9, sp                          /* x9 = the old context */
    mov     sp, x1                          /* leave the old stack ... */
    str     x9, [x0]                        /* ... before publishing it in *from: a
                                               signal delivered in between must not
                                               land on a stack another vCPU may
                                               already have resumed */
    RESTORE_FRAME_AND_RETURN
    .cfi_endproc
    .size   photon_switch_context, .-photon_switch_context

/* void photon_switch_context_hook(void** from, void* to, void (*hook)(void*), void* arg)
 * x0 = from, x1 = to, x2 = hook, x3 = arg. */
    .globl  photon_switch_context_hook
    .hidden photon_switch_context_hook
    .type   photon_switch_context_hook, %function
    .p2align 4
photon_switch_context_hook:
    .cfi_startproc
    PHOTON_BTI_C
    SAVE_FRAME
    mov     x9, sp
    mov     sp, x1                          /* on the new stack, 16-byte aligned */
    str     x9, [x0]                        /* *from = old context, before the hook
                                               may hand it to someone else */
    mov     x0, x3
    blr     x2                              /* hook(arg), below the new context's
                                               frame; it preserves sp, x19-x29 and
                                               d8-d15, and lr is reloaded below */
    RESTORE_FRAME_AND_RETURN
    .cfi_endproc
    .size   photon_switch_context_hook, .-photon_switch_context_hook

/* void* photon_make_context(void* stack_top, void (*entry)(void*), void* arg)
 * x0 = stack_top, x1 = entry, x2 = arg. Lays out a frame as above whose lr is
 * photon_context_start and whose x19/x20 hold entry/arg; fp and the other
 * registers are zero. FPCR is the creator's, as a new pthread inherits it.
 * Uses at most 15 (alignment) + 16 + 176 = 207 bytes below stack_top. */
    .globl  photon_make_context
    .hidden photon_make_context
    .type   photon_make_context, %function
    .p2align 4
photon_make_context:
    .cfi_startproc
    PHOTON_BTI_C
    and     x9, x0, #-16                    /* 16-byte align the top */
    stp     xzr, xzr, [x9, #-16]!           /* a zero frame record above the first
                                               frame, for walkers that look there */
    sub     x0, x9, #FRAME_SIZE             /* the saved frame, 16-byte aligned */
    adr     x10, .Lcontext_start
    stp     xzr, x10, [x0, #PHOTON_FRAME_FP]        /* fp = 0 ends frame-pointer walks; lr */
    stp     x1, x2, [x0, #PHOTON_FRAME_X19]         /* x19 = entry, x20 = arg */
    stp     xzr, xzr, [x0, #PHOTON_FRAME_X21]       /* x21, x22 */
    stp     xzr, xzr, [x0, #PHOTON_FRAME_X23]       /* x23, x24 */
    stp     xzr, xzr, [x0, #PHOTON_FRAME_X25]       /* x25, x26 */
    stp     xzr, xzr, [x0, #PHOTON_FRAME_X27]       /* x27, x28 */
    stp     xzr, xzr, [x0, #PHOTON_FRAME_D8]        /* d8, d9 */
    stp     xzr, xzr, [x0, #PHOTON_FRAME_D10]       /* d10, d11 */
    stp     xzr, xzr, [x0, #PHOTON_FRAME_D12]       /* d12, d13 */
    stp     xzr, xzr, [x0, #PHOTON_FRAME_D14]       /* d14, d15 */
    mrs     x10, fpcr
    stp     x10, xzr, [x0, #PHOTON_FRAME_FPCR]      /* creator's FPCR; padding */
    ret                                     /* x0 = the new context */
    .cfi_endproc
    .size   photon_make_context, .-photon_make_context

/* First code a new context runs, entered by the `ret` of a switch with sp at
 * the zero pair (16-byte aligned) and entry/arg in x19/x20: calls entry(arg)
 * and traps if it returns. No BTI landing pad: `ret` is not checked by BTI,
 * and nothing branches here indirectly. */
    .type   photon_context_start, %function
    .p2align 4
photon_context_start:
    .cfi_startproc
    .cfi_undefined x30                      /* outermost frame: unwinders stop here */
    nop                                     /* never run: unwinders look up a return
                                               address minus one, which must still
                                               fall in this FDE when a hook on a new
                                               stack is unwound */
.Lcontext_start:
    mov     x29, xzr                        /* fp = 0: frame-pointer walks end here */
    mov     x30, xzr                        /* lr = 0: no caller, for walkers that
                                               read lr before entry saves it */
    mov     x0, x20                         /* arg */
    blr     x19                             /* entry(arg); sp is 16-byte aligned */
    brk     #0x3e8                          /* entry returned: trap (SIGTRAP), as
                                               __builtin_trap does */
    .cfi_endproc
    .size   photon_context_start, .-photon_context_start

#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
/* Tells the linker this object has BTI landing pads (and, by not setting the
 * PAC bit, that it does not sign every return address; see the top). */
    .pushsection .note.gnu.property, "a"
    .p2align 3
    .word   4                               /* n_namesz: "GNU\0" */
    .word   16                              /* n_descsz */
    .word   5                               /* n_type: NT_GNU_PROPERTY_TYPE_0 */
    .asciz  "GNU"
    .word   0xc0000000                      /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
    .word   4                               /* pr_datasz */
    .word   1                               /* GNU_PROPERTY_AARCH64_FEATURE_1_BTI */
    .word   0                               /* pad to 8 bytes */
    .popsection
#endif

    .section .note.GNU-stack,"",%progbits
