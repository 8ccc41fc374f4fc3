/*
 * Coroutine context switch for x86-64, System V ABI, ELF. See context.h.
 *
 * A suspended context is its stack pointer; the frame it points at (offsets in
 * frame.h, checked against a struct in context.h) is:
 *
 *   offset  content              why it is saved
 *   0x00    MXCSR (4 bytes)      its control bits (rounding, FTZ/DAZ, exception
 *                                masks) are callee-saved in the SysV ABI; stmxcsr
 *                                stores the whole register, so the status
 *                                (exception flag) bits are switched too
 *   0x04    x87 control word     callee-saved in the SysV ABI (precision, rounding)
 *   0x06    (2 bytes padding)
 *   0x08    r15                  callee-saved
 *   0x10    r14                  callee-saved
 *   0x18    r13                  callee-saved; arg of a new context
 *   0x20    r12                  callee-saved; entry of a new context
 *   0x28    rbx                  callee-saved
 *   0x30    rbp                  callee-saved (frame pointer)
 *   0x38    return address       pushed by the call into the switch
 *
 * rsp itself is the context handle. Not saved: rax, rcx, rdx, rsi, rdi, r8-r11,
 * xmm0-15, ymm/zmm, k-masks, rflags, the x87 stack and status word: all
 * caller-saved, so the compiler assumes the call clobbers them anyway. The saved
 * rsp is 16-byte aligned (the caller's rsp was 16-byte aligned before its call
 * pushed 8 bytes; the frame adds 0x38 = 56, so 64 in all), which lets the hook
 * variant call C on the target stack right away.
 *
 * Both switch functions build this same frame: photon_switch_context with
 * moves below rsp, photon_switch_context_hook with pushes (whose order lands
 * each register in its slot of the table, noted on each push). A context
 * saved by either can be resumed by either.
 *
 * Shadow stacks (CET SHSTK) are not supported, since `ret` lands on another
 * stack: this file deliberately emits no .note.gnu.property, so the linker does
 * not mark the program as SHSTK-compatible. It does carry ENDBR for IBT builds.
 */

#include "frame.h"

#if defined(__CET__) && (__CET__ & 1)
#define _CET_ENDBR endbr64
#else
#define _CET_ENDBR
#endif

    .text

/* void photon_switch_context(void** from, void* to)
 * rdi = from, rsi = to. Plain moves instead of push/pop (no stack-engine
 * chain), and the FP control restored unconditionally: comparing first needs a
 * load of what stmxcsr just stored, which costs more than the ldmxcsr it saves
 * (see doc/performance-notebook.md). */
    .globl  photon_switch_context
    .hidden photon_switch_context
    .type   photon_switch_context, @function
    .p2align 4
photon_switch_context:
    .cfi_startproc
    _CET_ENDBR                                  /* landing pad for indirect calls (IBT) */
    leaq    -PHOTON_FRAME_SIZE(%rsp), %rsp      /* open the frame below the return address */
    .cfi_adjust_cfa_offset PHOTON_FRAME_SIZE
    stmxcsr PHOTON_FRAME_MXCSR(%rsp)            /* SSE control and status */
    fnstcw  PHOTON_FRAME_FPCW(%rsp)             /* x87 control word */
    movq    %r15, PHOTON_FRAME_R15(%rsp)        /* the callee-saved registers */
    .cfi_rel_offset %r15, PHOTON_FRAME_R15
    movq    %r14, PHOTON_FRAME_R14(%rsp)
    .cfi_rel_offset %r14, PHOTON_FRAME_R14
    movq    %r13, PHOTON_FRAME_R13(%rsp)
    .cfi_rel_offset %r13, PHOTON_FRAME_R13
    movq    %r12, PHOTON_FRAME_R12(%rsp)
    .cfi_rel_offset %r12, PHOTON_FRAME_R12
    movq    %rbx, PHOTON_FRAME_RBX(%rsp)
    .cfi_rel_offset %rbx, PHOTON_FRAME_RBX
    movq    %rbp, PHOTON_FRAME_RBP(%rsp)
    .cfi_rel_offset %rbp, PHOTON_FRAME_RBP
    movq    %rsp, (%rdi)                        /* *from = the old context */
    movq    %rsi, %rsp                          /* onto the new stack: same frame layout,
                                                   so the CFI above still describes it */
    ldmxcsr PHOTON_FRAME_MXCSR(%rsp)            /* the new context's SSE control */
    fldcw   PHOTON_FRAME_FPCW(%rsp)             /* and x87 control word */
    movq    PHOTON_FRAME_R15(%rsp), %r15        /* its callee-saved registers */
    movq    PHOTON_FRAME_R14(%rsp), %r14
    movq    PHOTON_FRAME_R13(%rsp), %r13
    movq    PHOTON_FRAME_R12(%rsp), %r12
    movq    PHOTON_FRAME_RBX(%rsp), %rbx
    movq    PHOTON_FRAME_RBP(%rsp), %rbp
    leaq    PHOTON_FRAME_SIZE(%rsp), %rsp       /* close the frame: rsp at its return address */
    .cfi_adjust_cfa_offset -PHOTON_FRAME_SIZE
    ret                                         /* into the new context's caller */
    .cfi_endproc
    .size   photon_switch_context, .-photon_switch_context

/* void photon_switch_context_hook(void** from, void* to, void (*hook)(void*), void* arg)
 * rdi = from, rsi = to, rdx = hook, rcx = arg. */
    .globl  photon_switch_context_hook
    .hidden photon_switch_context_hook
    .type   photon_switch_context_hook, @function
    .p2align 4
photon_switch_context_hook:
    .cfi_startproc
    _CET_ENDBR                                  /* landing pad for indirect calls (IBT) */
    pushq   %rbp                                /* lands at PHOTON_FRAME_RBP (0x30) */
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbp, 0
    pushq   %rbx                                /* PHOTON_FRAME_RBX (0x28) */
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbx, 0
    pushq   %r12                                /* PHOTON_FRAME_R12 (0x20) */
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r12, 0
    pushq   %r13                                /* PHOTON_FRAME_R13 (0x18) */
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r13, 0
    pushq   %r14                                /* PHOTON_FRAME_R14 (0x10) */
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r14, 0
    pushq   %r15                                /* PHOTON_FRAME_R15 (0x08) */
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r15, 0
    subq    $8, %rsp                            /* the MXCSR/x87 word at 0x00: the frame
                                                   is complete, PHOTON_FRAME_SIZE bytes */
    .cfi_adjust_cfa_offset 8
    stmxcsr PHOTON_FRAME_MXCSR(%rsp)            /* SSE control and status */
    fnstcw  PHOTON_FRAME_FPCW(%rsp)             /* x87 control word */
    movq    %rsp, (%rdi)                        /* *from = the old context */
    movq    %rsi, %rsp                          /* onto the new stack, 16-byte aligned */
    movq    %rcx, %rdi                          /* hook's argument */
    call    *%rdx                               /* hook(arg), below the new context's frame;
                                                   it preserves rsp and the callee-saved
                                                   registers, which are reloaded anyway */
    ldmxcsr PHOTON_FRAME_MXCSR(%rsp)            /* the new context's SSE control */
    fldcw   PHOTON_FRAME_FPCW(%rsp)             /* and x87 control word */
    addq    $8, %rsp                            /* past the MXCSR/x87 word */
    .cfi_adjust_cfa_offset -8
    popq    %r15                                /* its callee-saved registers, in the */
    .cfi_adjust_cfa_offset -8                   /* reverse order of the pushes */
    .cfi_restore %r15
    popq    %r14
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r14
    popq    %r13
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r13
    popq    %r12
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r12
    popq    %rbx
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbx
    popq    %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbp
    ret                                         /* into the new context's caller */
    .cfi_endproc
    .size   photon_switch_context_hook, .-photon_switch_context_hook

/* void* photon_make_context(void* stack_top, void (*entry)(void*), void* arg)
 * rdi = stack_top, rsi = entry, rdx = arg. Lays out a frame as above whose
 * return address is photon_context_start and whose r12/r13 hold entry/arg. The
 * FP control state is the creator's, as a new pthread inherits it. Uses at
 * most 15 (alignment) + 16 + 64 = 95 bytes below stack_top. */
    .globl  photon_make_context
    .hidden photon_make_context
    .type   photon_make_context, @function
    .p2align 4
photon_make_context:
    .cfi_startproc
    _CET_ENDBR                                  /* landing pad for indirect calls (IBT) */
    movq    %rdi, %rax                          /* rax walks down from the top */
    andq    $-16, %rax                          /* 16-byte align the top */
    subq    $16, %rax                           /* keep a null pair above the first frame, */
    movq    $0, 8(%rax)                         /* for walkers that look past the */
    movq    $0, (%rax)                          /* outermost return address */
    subq    $(PHOTON_FRAME_SIZE + 8), %rax      /* the frame and its return address */
    stmxcsr PHOTON_FRAME_MXCSR(%rax)            /* the creator's SSE control */
    fnstcw  PHOTON_FRAME_FPCW(%rax)             /* and x87 control word */
    movw    $0, PHOTON_FRAME_FPCW + 2(%rax)     /* padding */
    movq    $0, PHOTON_FRAME_R15(%rax)          /* r15 */
    movq    $0, PHOTON_FRAME_R14(%rax)          /* r14 */
    movq    %rdx, PHOTON_FRAME_R13(%rax)        /* r13 = arg */
    movq    %rsi, PHOTON_FRAME_R12(%rax)        /* r12 = entry */
    movq    $0, PHOTON_FRAME_RBX(%rax)          /* rbx */
    movq    $0, PHOTON_FRAME_RBP(%rax)          /* rbp = 0 ends frame-pointer walks */
    leaq    .Lcontext_start(%rip), %rcx         /* where the first switch returns to */
    movq    %rcx, PHOTON_FRAME_RET(%rax)
    ret                                         /* rax = the new context */
    .cfi_endproc
    .size   photon_make_context, .-photon_make_context

/* First code a new context runs, entered by the `ret` of a switch with rsp at
 * the null pair (16-byte aligned, as the frame below it was) and entry/arg in
 * r12/r13: calls entry(arg) and traps if it returns. */
    .type   photon_context_start, @function
    .p2align 4
photon_context_start:
    .cfi_startproc
    .cfi_undefined rip                          /* outermost frame: unwinders stop here */
    nop                                         /* never run: unwinders look up a return
                                                   address minus one, which must still
                                                   fall in this FDE */
.Lcontext_start:
    _CET_ENDBR                                  /* reached by `ret`, but harmless */
    movq    %r13, %rdi                          /* arg */
    call    *%r12                               /* entry(arg) */
    ud2                                         /* entry returned: trap (SIGILL) */
    .cfi_endproc
    .size   photon_context_start, .-photon_context_start

    .section .note.GNU-stack,"",%progbits
