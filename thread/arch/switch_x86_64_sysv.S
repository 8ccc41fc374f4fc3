/*
 * Coroutine context switch for x86-64, System V ABI, ELF. See context.h.
 *
 * A suspended context is its stack pointer; the frame it points at is:
 *
 *   offset  content              why it is saved
 *   0x00    MXCSR (4 bytes)      its control bits (rounding, FTZ/DAZ, masks) are
 *                                callee-saved in the SysV ABI; status bits ride along
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
 * rsp is 16-byte aligned (8 for the return address + 48 + 8 = 64 bytes), which
 * lets the hook variant call C on the target stack right away.
 *
 * Shadow stacks (CET SHSTK) are not supported, since `ret` lands on another
 * stack: this file deliberately emits no .note.gnu.property, so the linker does
 * not mark the program as SHSTK-compatible. It does carry ENDBR for IBT builds.
 */

#if defined(__CET__) && (__CET__ & 1)
#define _CET_ENDBR endbr64
#else
#define _CET_ENDBR
#endif

    .text

/* void photon_switch_context(void** from, void* to)
 * Plain moves instead of push/pop (no stack-engine chain), and the FP control
 * restored unconditionally: comparing first needs a load of what stmxcsr
 * just stored, which costs more than the ldmxcsr it saves (see
 * doc/performance.md). */
    .globl  photon_switch_context
    .hidden photon_switch_context
    .type   photon_switch_context, @function
    .p2align 4
photon_switch_context:
    .cfi_startproc
    _CET_ENDBR
    leaq    -0x38(%rsp), %rsp   /* the frame, below the return address */
    .cfi_adjust_cfa_offset 0x38
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
    movq    %r15, 0x08(%rsp)
    .cfi_rel_offset %r15, 0x08
    movq    %r14, 0x10(%rsp)
    .cfi_rel_offset %r14, 0x10
    movq    %r13, 0x18(%rsp)
    .cfi_rel_offset %r13, 0x18
    movq    %r12, 0x20(%rsp)
    .cfi_rel_offset %r12, 0x20
    movq    %rbx, 0x28(%rsp)
    .cfi_rel_offset %rbx, 0x28
    movq    %rbp, 0x30(%rsp)
    .cfi_rel_offset %rbp, 0x30
    movq    %rsp, (%rdi)        /* *from = old context */
    movq    %rsi, %rsp          /* now on the new stack, same frame layout */
    ldmxcsr (%rsp)
    fldcw   4(%rsp)
    movq    0x08(%rsp), %r15
    movq    0x10(%rsp), %r14
    movq    0x18(%rsp), %r13
    movq    0x20(%rsp), %r12
    movq    0x28(%rsp), %rbx
    movq    0x30(%rsp), %rbp
    leaq    0x38(%rsp), %rsp
    .cfi_adjust_cfa_offset -0x38
    ret                         /* into the new context's caller */
    .cfi_endproc
    .size   photon_switch_context, .-photon_switch_context

/* void photon_switch_context_hook(void** from, void* to, void (*hook)(void*), void* arg) */
    .globl  photon_switch_context_hook
    .hidden photon_switch_context_hook
    .type   photon_switch_context_hook, @function
    .p2align 4
photon_switch_context_hook:
    .cfi_startproc
    _CET_ENDBR
    pushq   %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbp, 0
    pushq   %rbx
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbx, 0
    pushq   %r12
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r12, 0
    pushq   %r13
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r13, 0
    pushq   %r14
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r14, 0
    pushq   %r15
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r15, 0
    subq    $8, %rsp
    .cfi_adjust_cfa_offset 8
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
    movq    %rsp, (%rdi)
    movq    %rsi, %rsp          /* on the new stack; rsp is 16-byte aligned */
    movq    %rcx, %rdi
    call    *%rdx               /* hook(arg), below the new context's frame */
    ldmxcsr (%rsp)
    fldcw   4(%rsp)
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %r15
    .cfi_adjust_cfa_offset -8
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
    ret
    .cfi_endproc
    .size   photon_switch_context_hook, .-photon_switch_context_hook

/* void* photon_make_context(void* stack_top, void (*entry)(void*), void* arg)
 * Lays out a frame as above whose return address is photon_context_start and
 * whose r12/r13 hold entry/arg. The FP control state is the creator's, as a
 * new pthread inherits it. */
    .globl  photon_make_context
    .hidden photon_make_context
    .type   photon_make_context, @function
    .p2align 4
photon_make_context:
    .cfi_startproc
    _CET_ENDBR
    movq    %rdi, %rax
    andq    $-16, %rax          /* 16-byte align the top */
    subq    $16, %rax           /* keep a null word above the first frame */
    movq    $0, 8(%rax)
    movq    $0, (%rax)
    subq    $64, %rax           /* the saved frame, 16-byte aligned */
    stmxcsr (%rax)
    fnstcw  4(%rax)
    movw    $0, 6(%rax)
    movq    $0, 0x08(%rax)      /* r15 */
    movq    $0, 0x10(%rax)      /* r14 */
    movq    %rdx, 0x18(%rax)    /* r13 = arg */
    movq    %rsi, 0x20(%rax)    /* r12 = entry */
    movq    $0, 0x28(%rax)      /* rbx */
    movq    $0, 0x30(%rax)      /* rbp = 0 ends frame-pointer walks */
    leaq    .Lcontext_start(%rip), %rcx
    movq    %rcx, 0x38(%rax)
    ret
    .cfi_endproc
    .size   photon_make_context, .-photon_make_context

/* First code a new context runs: entry(arg) on an aligned stack (rsp is
 * 16-byte aligned here, as the frame above was). `entry` never returns. */
    .type   photon_context_start, @function
    .p2align 4
photon_context_start:
    .cfi_startproc
    .cfi_undefined rip          /* outermost frame: unwinders stop here */
    nop                         /* return address - 1 must fall in this FDE */
.Lcontext_start:
    _CET_ENDBR
    movq    %r13, %rdi
    call    *%r12
    ud2
    .cfi_endproc
    .size   photon_context_start, .-photon_context_start

    .section .note.GNU-stack,"",%progbits
