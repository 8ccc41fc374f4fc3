/*
 * The saved frame of a suspended context: offsets from its stack pointer.
 * Shared by the assembly (switch_*.S include it through the C preprocessor)
 * and by context.h, which checks it against a struct, so that the table in
 * each .S file, the code that writes the frame, and any C++ or debugger code
 * that reads it (tools/photon-gdb.py mirrors it) cannot drift apart.
 * Only #defines: this file is read by the assembler.
 */
#ifndef PHOTON_THREAD_ARCH_FRAME_H
#define PHOTON_THREAD_ARCH_FRAME_H

#if defined(__x86_64__)
#define PHOTON_FRAME_MXCSR 0x00 /* 4 bytes */
#define PHOTON_FRAME_FPCW 0x04  /* 2 bytes, then 2 of padding */
#define PHOTON_FRAME_R15 0x08
#define PHOTON_FRAME_R14 0x10
#define PHOTON_FRAME_R13 0x18
#define PHOTON_FRAME_R12 0x20
#define PHOTON_FRAME_RBX 0x28
#define PHOTON_FRAME_RBP 0x30
#define PHOTON_FRAME_RET 0x38  /* the return address the call pushed */
#define PHOTON_FRAME_SIZE 0x38 /* what the switch stores below it */
#elif defined(__aarch64__)
#define PHOTON_FRAME_FP 0x00 /* x29 */
#define PHOTON_FRAME_LR 0x08 /* x30: where the context resumes */
#define PHOTON_FRAME_X19 0x10
#define PHOTON_FRAME_X21 0x20
#define PHOTON_FRAME_X23 0x30
#define PHOTON_FRAME_X25 0x40
#define PHOTON_FRAME_X27 0x50
#define PHOTON_FRAME_D8 0x60
#define PHOTON_FRAME_D10 0x70
#define PHOTON_FRAME_D12 0x80
#define PHOTON_FRAME_D14 0x90
#define PHOTON_FRAME_FPCR 0xa0 /* 8 bytes, then 8 of padding */
#define PHOTON_FRAME_SIZE 0xb0 /* 176: keeps sp 16-byte aligned */
#else
#error "photon: no context switch frame for this architecture"
#endif

#endif
