// A program for tools/photon-gdb.py's test (photon_gdb_test.sh): two vCPUs
// with coroutines parked in known functions, then SIGTRAP for the debugger.
#include <signal.h>

#include <photon/common/alog.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>
#include <photon/thread/workerpool.h>

photon::semaphore g_never(0);

// extern "C" and not inlined: the names the test looks for in the listing
// and in the backtraces.
extern "C" __attribute__((noinline)) void* parked_in_sleep(void*) {
    photon::thread_usleep(-1);
    return nullptr;
}
extern "C" __attribute__((noinline)) void* parked_on_semaphore(void*) {
    g_never.wait(1);
    return nullptr;
}

int main() {
    set_log_output_level(ALOG_WARN);
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) return 1;
    photon::thread_create(&parked_in_sleep, nullptr);
    photon::thread_create(&parked_on_semaphore, nullptr);
    photon::WorkPool pool(1, photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE, 0);
    pool.call([] { photon::thread_create(&parked_in_sleep, nullptr); });
    photon::thread_usleep(10 * 1000);  // let them all park
    raise(SIGTRAP);                    // the debugger takes over here
    return 0;                          // (not reached under the test: gdb kills it)
}
