// The raw machine context switch of thread/arch/context.h, below the scheduler:
// what a switch preserves, where and when the hook runs, and how a new context
// starts. Register-level checks need inline assembly, one block per ISA.
#include "../../thread/arch/context.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <unwind.h>

#include <array>
#include <cfenv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace photon {
namespace arch {
namespace {

// Loads in[] into the callee-saved registers, calls photon_switch_context(from,
// to), and once resumed stores those registers into out[]. Restores its
// caller's registers before returning, as the ABI requires.
extern "C" void context_test_fill_switch_read(const uint64_t* in, uint64_t* out, void** from,
                                              void* to);

#if defined(__x86_64__)

constexpr size_t kIntegerRegisters = 6;     // rbx, rbp, r12, r13, r14, r15
constexpr size_t kVectorRegisters = 0;      // SysV has none callee-saved
constexpr int kEntryReturnSignal = SIGILL;  // ud2

asm(R"(
    .text
    .globl  context_test_fill_switch_read
    .hidden context_test_fill_switch_read
    .type   context_test_fill_switch_read, @function
    .p2align 4
context_test_fill_switch_read:
    endbr64
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    pushq   %rsi                    /* out; rsp is now 16-byte aligned */
    movq    0(%rdi), %rbx
    movq    8(%rdi), %rbp
    movq    16(%rdi), %r12
    movq    24(%rdi), %r13
    movq    32(%rdi), %r14
    movq    40(%rdi), %r15
    movq    %rdx, %rdi
    movq    %rcx, %rsi
    call    photon_switch_context
    popq    %rsi
    movq    %rbx, 0(%rsi)
    movq    %rbp, 8(%rsi)
    movq    %r12, 16(%rsi)
    movq    %r13, 24(%rsi)
    movq    %r14, 32(%rsi)
    movq    %r15, 40(%rsi)
    popq    %r15
    popq    %r14
    popq    %r13
    popq    %r12
    popq    %rbx
    popq    %rbp
    ret
    .size   context_test_fill_switch_read, .-context_test_fill_switch_read
)");

// The FP control state a context owns: the x87 control word and the MXCSR
// control bits (its low six bits are sticky status flags, not control).
uint64_t read_fp_control() {
    uint32_t mxcsr;
    uint16_t x87_control;
    asm volatile("stmxcsr %0" : "=m"(mxcsr) : : "memory");
    asm volatile("fnstcw %0" : "=m"(x87_control) : : "memory");
    return (uint64_t{x87_control} << 32) | (mxcsr & ~uint32_t{0x3f});
}

#elif defined(__aarch64__)

constexpr size_t kIntegerRegisters = 11;     // x19-x28, x29
constexpr size_t kVectorRegisters = 8;       // d8-d15
constexpr int kEntryReturnSignal = SIGTRAP;  // brk

asm(R"(
    .text
    .globl  context_test_fill_switch_read
    .hidden context_test_fill_switch_read
    .type   context_test_fill_switch_read, %function
    .p2align 2
context_test_fill_switch_read:
    hint    #34                     /* bti c */
    stp     x29, x30, [sp, #-176]!
    stp     x19, x20, [sp, #16]
    stp     x21, x22, [sp, #32]
    stp     x23, x24, [sp, #48]
    stp     x25, x26, [sp, #64]
    stp     x27, x28, [sp, #80]
    stp     d8, d9, [sp, #96]
    stp     d10, d11, [sp, #112]
    stp     d12, d13, [sp, #128]
    stp     d14, d15, [sp, #144]
    str     x1, [sp, #160]          /* out */
    ldp     x19, x20, [x0, #0]
    ldp     x21, x22, [x0, #16]
    ldp     x23, x24, [x0, #32]
    ldp     x25, x26, [x0, #48]
    ldp     x27, x28, [x0, #64]
    ldr     x29, [x0, #80]
    ldp     d8, d9, [x0, #88]
    ldp     d10, d11, [x0, #104]
    ldp     d12, d13, [x0, #120]
    ldp     d14, d15, [x0, #136]
    mov     x0, x2
    mov     x1, x3
    bl      photon_switch_context
    ldr     x9, [sp, #160]
    stp     x19, x20, [x9, #0]
    stp     x21, x22, [x9, #16]
    stp     x23, x24, [x9, #32]
    stp     x25, x26, [x9, #48]
    stp     x27, x28, [x9, #64]
    str     x29, [x9, #80]
    stp     d8, d9, [x9, #88]
    stp     d10, d11, [x9, #104]
    stp     d12, d13, [x9, #120]
    stp     d14, d15, [x9, #136]
    ldp     d14, d15, [sp, #144]
    ldp     d12, d13, [sp, #128]
    ldp     d10, d11, [sp, #112]
    ldp     d8, d9, [sp, #96]
    ldp     x27, x28, [sp, #80]
    ldp     x25, x26, [sp, #64]
    ldp     x23, x24, [sp, #48]
    ldp     x21, x22, [sp, #32]
    ldp     x19, x20, [sp, #16]
    ldp     x29, x30, [sp], #176
    ret
    .size   context_test_fill_switch_read, .-context_test_fill_switch_read
)");

// The FP control state a context owns: all of FPCR.
uint64_t read_fp_control() {
    uint64_t fpcr;
    asm volatile("mrs %0, fpcr" : "=r"(fpcr) : : "memory");
    return fpcr;
}

#else
#error "context_test: no register checks for this ISA"
#endif

// Integer registers first, then vector registers, as the helpers above use them.
using register_values = std::array<uint64_t, kIntegerRegisters + kVectorRegisters>;

// Distinct non-zero bit patterns per register and per side.
register_values register_pattern(uint64_t side) {
    register_values v{};
    for (size_t i = 0; i < v.size(); ++i) v[i] = (side * 0x0101010101010101) ^ ((i + 1) << 8);
    return v;
}

// A coroutine stack: kSize usable bytes above a PROT_NONE guard page.
class test_stack {
public:
    static constexpr size_t kSize = 256 * 1024;

    test_stack() : guard_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
        void* p = mmap(nullptr, guard_ + kSize, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (p == MAP_FAILED || mprotect(p, guard_, PROT_NONE) != 0) {
            std::perror("context_test: stack");
            std::abort();
        }
        base_ = static_cast<char*>(p);
    }
    ~test_stack() { munmap(base_, guard_ + kSize); }
    test_stack(const test_stack&) = delete;
    test_stack& operator=(const test_stack&) = delete;

    char* bottom() const { return base_ + guard_; }
    char* top() const { return bottom() + kSize; }
    bool contains(uintptr_t address) const {
        return address >= reinterpret_cast<uintptr_t>(bottom()) &&
               address < reinterpret_cast<uintptr_t>(top());
    }
    bool contains(const void* p) const { return contains(reinterpret_cast<uintptr_t>(p)); }

    void* make_context(context_entry entry, void* arg) {
        return photon_make_context(top(), entry, arg);
    }

private:
    size_t guard_;
    char* base_;
};

// Restores round-to-nearest however a test ends.
struct rounding_guard {
    ~rounding_guard() { std::fesetround(FE_TONEAREST); }
};

// ---------------------------------------------------------------------------

struct ping_pong {
    void* main = nullptr;
    void* context = nullptr;
    long counter = 0;
    long mismatches = 0;  // counted by the context
};

constexpr long kPingPongRounds = 10000;

void ping_pong_entry(void* arg) {
    auto* s = static_cast<ping_pong*>(arg);
    for (long expected = 1;; expected += 2) {
        if (s->counter != expected) ++s->mismatches;
        ++s->counter;
        photon_switch_context(&s->context, s->main);
    }
}

TEST(ContextSwitch, PingPongsBetweenMainAndAContextManyTimes) {
    test_stack stack;
    ping_pong s;
    s.context = stack.make_context(ping_pong_entry, &s);
    for (long i = 0; i < kPingPongRounds; ++i) {
        ++s.counter;
        photon_switch_context(&s.main, s.context);
        ASSERT_EQ(s.counter, 2 * i + 2);
        ASSERT_TRUE(stack.contains(s.context));
    }
    EXPECT_EQ(s.mismatches, 0);
}

// ---------------------------------------------------------------------------

struct register_exchange {
    void* main = nullptr;
    void* context = nullptr;
    register_values main_in = register_pattern(0xa5);
    register_values main_out{};
    register_values context_in = register_pattern(0x5a);
    register_values context_out{};
};

// Fills the registers with context_in, lets main check its own, then reports
// what it finds in them after main switched back.
void register_entry(void* arg) {
    auto* s = static_cast<register_exchange*>(arg);
    context_test_fill_switch_read(s->context_in.data(), s->context_out.data(), &s->context,
                                  s->main);
    photon_switch_context(&s->context, s->main);
    std::abort();  // never resumed
}

// Runs the exchange both ways: main -> context -> main -> context -> main.
void exchange_registers(register_exchange& s) {
    test_stack stack;
    s.context = stack.make_context(register_entry, &s);
    context_test_fill_switch_read(s.main_in.data(), s.main_out.data(), &s.main, s.context);
    photon_switch_context(&s.main, s.context);
}

TEST(ContextSwitch, PreservesCalleeSavedIntegerRegisters) {
    register_exchange s;
    exchange_registers(s);
    for (size_t i = 0; i < kIntegerRegisters; ++i) {
        EXPECT_EQ(s.main_out[i], s.main_in[i]) << "main, integer register #" << i;
        EXPECT_EQ(s.context_out[i], s.context_in[i]) << "context, integer register #" << i;
    }
}

TEST(ContextSwitch, PreservesCalleeSavedVectorRegisters) {
    if (kVectorRegisters == 0) {
        GTEST_SKIP() << "this ABI has no callee-saved vector registers; "
                        "KeepsFloatingPointControlPerContext covers its FP state";
    }
    register_exchange s;
    exchange_registers(s);
    for (size_t i = kIntegerRegisters; i < s.main_in.size(); ++i) {
        EXPECT_EQ(s.main_out[i], s.main_in[i]) << "main, vector register #" << i;
        EXPECT_EQ(s.context_out[i], s.context_in[i]) << "context, vector register #" << i;
    }
}

// ---------------------------------------------------------------------------

struct fp_exchange {
    void* main = nullptr;
    void* context = nullptr;
    uint64_t at_start = 0;  // as the context first saw it
    uint64_t set = 0;       // after the context chose its own rounding
    uint64_t resumed = 0;   // after main switched back to the context
};

void fp_entry(void* arg) {
    auto* s = static_cast<fp_exchange*>(arg);
    s->at_start = read_fp_control();
    std::fesetround(FE_UPWARD);
    s->set = read_fp_control();
    photon_switch_context(&s->context, s->main);
    s->resumed = read_fp_control();
    photon_switch_context(&s->context, s->main);
    std::abort();  // never resumed
}

TEST(ContextSwitch, KeepsFloatingPointControlPerContext) {
    rounding_guard guard;
    test_stack stack;
    fp_exchange s;
    s.context = stack.make_context(fp_entry, &s);
    ASSERT_EQ(std::fesetround(FE_TOWARDZERO), 0);
    const uint64_t main_control = read_fp_control();

    photon_switch_context(&s.main, s.context);  // the context switches to upward
    EXPECT_NE(s.set, main_control);
    EXPECT_EQ(read_fp_control(), main_control);

    photon_switch_context(&s.main, s.context);
    EXPECT_EQ(s.resumed, s.set);
    EXPECT_EQ(read_fp_control(), main_control);
    EXPECT_EQ(std::fegetround(), FE_TOWARDZERO);
}

TEST(ContextSwitch, NewContextInheritsItsCreatorsFloatingPointControl) {
    rounding_guard guard;
    test_stack stack;
    fp_exchange s;
    ASSERT_EQ(std::fesetround(FE_DOWNWARD), 0);
    const uint64_t at_creation = read_fp_control();
    s.context = stack.make_context(fp_entry, &s);
    ASSERT_EQ(std::fesetround(FE_TONEAREST), 0);

    photon_switch_context(&s.main, s.context);
    EXPECT_EQ(s.at_start, at_creation);
    EXPECT_NE(s.at_start, read_fp_control());
}

// ---------------------------------------------------------------------------

// What a hook saw when it ran.
struct hook_record {
    const test_stack* target = nullptr;  // the stack switched to
    void* const* from = nullptr;         // where the switch stores the old context
    int* clock = nullptr;
    int ran_at = 0;
    uintptr_t local = 0;        // address of a local of the hook
    uintptr_t frame = 0;        // the hook's frame address
    void* published = nullptr;  // *from, as the hook saw it
};

void record_hook(void* arg) {
    auto* r = static_cast<hook_record*>(arg);
    volatile char local = 0;
    r->local = reinterpret_cast<uintptr_t>(&local);
    r->frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    r->published = *r->from;
    r->ran_at = ++*r->clock;
}

// main -> a; a -> b with a hook (b is new); b -> a with a hook (a is
// suspended); a -> main. The clock orders hooks against the code they precede.
struct hook_scenario {
    test_stack a, b;
    void* main = nullptr;
    void* context_a = nullptr;
    void* context_b = nullptr;
    int clock = 0;
    hook_record into_new{&b, &context_a, &clock};
    hook_record into_suspended{&a, &context_b, &clock};
    int b_started_at = 0;
    int a_resumed_at = 0;

    void run() {
        context_a = a.make_context(a_entry, this);
        photon_switch_context(&main, context_a);
    }

    static void a_entry(void* arg) {
        auto* s = static_cast<hook_scenario*>(arg);
        s->context_b = s->b.make_context(b_entry, s);
        s->context_a = nullptr;  // so the hook sees what the switch stored
        photon_switch_context_hook(&s->context_a, s->context_b, record_hook, &s->into_new);
        s->a_resumed_at = ++s->clock;
        photon_switch_context(&s->context_a, s->main);
        std::abort();  // never resumed
    }

    static void b_entry(void* arg) {
        auto* s = static_cast<hook_scenario*>(arg);
        s->b_started_at = ++s->clock;
        s->context_b = nullptr;
        photon_switch_context_hook(&s->context_b, s->context_a, record_hook, &s->into_suspended);
        std::abort();  // never resumed
    }
};

TEST(ContextSwitch, RunsTheHookOnANewContextsStackBeforeItStarts) {
    hook_scenario s;
    s.run();
    EXPECT_EQ(s.into_new.ran_at, 1);
    EXPECT_EQ(s.b_started_at, 2);
    EXPECT_TRUE(s.b.contains(s.into_new.local));
    EXPECT_TRUE(s.b.contains(s.into_new.frame));
    EXPECT_EQ(s.into_new.frame % 16, 0u);
    EXPECT_TRUE(s.a.contains(s.into_new.published)) << "*from is stored before the hook";
}

TEST(ContextSwitch, RunsTheHookOnASuspendedContextsStackBeforeItResumes) {
    hook_scenario s;
    s.run();
    EXPECT_EQ(s.into_suspended.ran_at, 3);
    EXPECT_EQ(s.a_resumed_at, 4);
    EXPECT_TRUE(s.a.contains(s.into_suspended.local));
    EXPECT_TRUE(s.a.contains(s.into_suspended.frame));
    EXPECT_EQ(s.into_suspended.frame % 16, 0u);
    EXPECT_TRUE(s.b.contains(s.into_suspended.published)) << "*from is stored before the hook";
}

// ---------------------------------------------------------------------------

struct start_record {
    void* main = nullptr;
    void* context = nullptr;
    void* arg = nullptr;
    uintptr_t frame = 0;
    uintptr_t aligned_local = 0;
};

void start_entry(void* arg) {
    auto* s = static_cast<start_record*>(arg);
    alignas(16) volatile char local[16] = {};
    s->arg = arg;
    s->frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    s->aligned_local = reinterpret_cast<uintptr_t>(&local[0]);
    photon_switch_context(&s->context, s->main);
    std::abort();  // never resumed
}

TEST(ContextSwitch, CallsTheEntryWithItsArgument) {
    test_stack stack;
    start_record s;
    s.context = stack.make_context(start_entry, &s);
    photon_switch_context(&s.main, s.context);
    EXPECT_EQ(s.arg, &s);
}

TEST(ContextSwitch, CallsTheEntryOnA16ByteAlignedStack) {
    // Also from an unaligned top: photon_make_context aligns it down.
    for (size_t offset : {0, 1, 8, 15}) {
        test_stack stack;
        start_record s;
        s.context = photon_make_context(stack.top() - offset, start_entry, &s);
        EXPECT_TRUE(stack.contains(s.context));
        EXPECT_GE(reinterpret_cast<uintptr_t>(s.context),
                  reinterpret_cast<uintptr_t>(stack.top()) - offset - kInitialFrameBytes)
            << "uses more than kInitialFrameBytes";
        photon_switch_context(&s.main, s.context);
        EXPECT_TRUE(stack.contains(s.frame));
        EXPECT_EQ(s.frame % 16, 0u) << "top - " << offset;
        EXPECT_EQ(s.aligned_local % 16, 0u) << "top - " << offset;
    }
}

// ---------------------------------------------------------------------------

constexpr int kUnwindLimit = 64;

_Unwind_Reason_Code count_frame(_Unwind_Context*, void* arg) {
    return ++*static_cast<int*>(arg) < kUnwindLimit ? _URC_NO_REASON : _URC_NORMAL_STOP;
}

// Frames from here to the outermost one, or -1 if the unwinder did not find an
// end within kUnwindLimit frames (e.g. a loop at a context's first frame).
__attribute__((noinline)) int count_frames_to_the_end() {
    int frames = 0;
    return _Unwind_Backtrace(count_frame, &frames) == _URC_END_OF_STACK ? frames : -1;
}

struct unwind_record {
    void* main = nullptr;
    void* context = nullptr;
    int frames_from_entry = 0;
    int frames_from_hook = 0;
};

void unwind_entry(void* arg) {
    auto* s = static_cast<unwind_record*>(arg);
    s->frames_from_entry = count_frames_to_the_end();
    photon_switch_context(&s->context, s->main);
    std::abort();  // never resumed
}

void unwind_hook(void* arg) {
    static_cast<unwind_record*>(arg)->frames_from_hook = count_frames_to_the_end();
}

TEST(ContextSwitch, UnwindingFromTheEntryStopsAtTheContextsFirstFrame) {
    test_stack stack;
    unwind_record s;
    s.context = stack.make_context(unwind_entry, &s);
    photon_switch_context(&s.main, s.context);
    EXPECT_GT(s.frames_from_entry, 0);
    EXPECT_LE(s.frames_from_entry, 8);  // helper, entry, start, and little else
}

TEST(ContextSwitch, UnwindingFromAHookIntoANewContextStops) {
    test_stack stack;
    unwind_record s;
    s.context = stack.make_context(unwind_entry, &s);
    photon_switch_context_hook(&s.main, s.context, unwind_hook, &s);
    EXPECT_GT(s.frames_from_hook, 0);
    EXPECT_LE(s.frames_from_hook, 8);
}

// ---------------------------------------------------------------------------

void returning_entry(void*) {}

void switch_to_a_returning_entry() {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // the trap is expected: no core file
    test_stack stack;
    void* main = nullptr;
    photon_switch_context(&main, stack.make_context(returning_entry, nullptr));
}

TEST(ContextSwitchDeathTest, TrapsWhenTheEntryReturns) {
    EXPECT_EXIT(switch_to_a_returning_entry(), testing::KilledBySignal(kEntryReturnSignal), "");
}

}  // namespace
}  // namespace arch
}  // namespace photon
