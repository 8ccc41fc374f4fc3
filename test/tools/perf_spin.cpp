// A program for perf_callgraph.sh: coroutines that burn CPU in a known function and
// switch among themselves, so that perf's samples in that function must unwind through
// the coroutine's entry (thread_stub, photon_context_start) and stop there.
//   perf_spin SECONDS
#include <cstdlib>

#include <photon/common/alog.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

static volatile unsigned long g_sink;

// extern "C" and not inlined: the names the test looks for in perf's call chains. The
// state lives on the stack so that the function has a frame: gcc leaves the frame pointer
// out of a leaf that needs none, and a frame-pointer walk then skips the leaf's caller.
extern "C" __attribute__((noinline)) void perf_spin_work() {
    volatile unsigned long x[2] = {g_sink, 0};
    for (int i = 0; i < 20000; i++) x[0] = x[0] * 6364136223846793005ul + 1442695040888963407ul;
    g_sink = x[0];
}

static photon::Timeout g_until;

extern "C" __attribute__((noinline)) void* perf_spin_handler(void*) {
    // Yield between bursts: the samples then come from coroutines that have been switched
    // out and back in, not only from the first run of a fresh stack.
    while (!g_until.expired()) {
        perf_spin_work();
        photon::thread_yield();
    }
    return nullptr;
}

int main(int argc, char** argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    set_log_output_level(ALOG_WARN);
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) return 1;
    g_until = photon::Timeout((uint64_t)(seconds * 1e6));
    photon::join_handle* jh[4];
    for (auto& j : jh) {
        auto th = photon::thread_create(&perf_spin_handler, nullptr);
        if (!th || !(j = photon::thread_enable_join(th))) return 1;
    }
    for (auto j : jh) photon::thread_join(j);
    photon::fini();
    return 0;
}
