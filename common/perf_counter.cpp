// perf_counter.h: the registry of counters and the thread that writes them to
// ./perf.log. The registry and the file are never freed, so the detached
// thread stays safe while the process exits.
#include <photon/common/perf_counter.h>

#include <sys/time.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <mutex>
#include <string_view>
#include <thread>

#include <photon/common/alog.h>

namespace {

struct registry {
    std::mutex mtx;  // guards the list and each counter's _next / _last
    __perf_counter* head = nullptr;
    std::ofstream* out = nullptr;
};

registry& the_registry() {
    static registry* r = new registry;  // never destroyed: see the file comment
    return *r;
}

// Writes "YYYY-MM-DD HH:MM:SS" (local time) to date; returns ms since the epoch.
uint64_t wall_clock(char* date, size_t n) {
    struct timeval tv;
    gettimeofday(&tv, nullptr);
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    strftime(date, n, "%Y-%m-%d %H:%M:%S", &tm);
    return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

template <typename T>
void write_line(std::ofstream& out, const char* date, std::string_view name, T value) {
    out << date << ' ' << name << " : " << value << std::endl;
}

// One line for every counter whose interval has passed.
void report_due(registry& r) {
    char date[32];
    uint64_t now_ms = wall_clock(date, sizeof(date));
    std::lock_guard<std::mutex> lock(r.mtx);
    for (auto pc = r.head; pc; pc = pc->_next) {
        if (now_ms < pc->_last + (uint64_t)pc->_interval * 1000) continue;
        pc->_last = now_ms;
        std::string_view name(pc->_name, (size_t)pc->_name_length);
        switch (pc->_type) {
            case TOTAL:
                write_line(*r.out, date, name, pc->_value.load(std::memory_order_relaxed));
                break;
            case ACCUMULATE:
                write_line(*r.out, date, name, pc->_value.exchange(0, std::memory_order_relaxed));
                break;
            case AVERAGE: {
                // A value reported between the two exchanges counts in one
                // interval's sum and the next one's count: a negligible skew.
                uint64_t sum = pc->_value.exchange(0, std::memory_order_relaxed);
                uint64_t count = pc->count_.exchange(0, std::memory_order_relaxed);
                write_line(*r.out, date, name, count ? (double)sum / (double)count : 0.0);
                break;
            }
        }
    }
}

}  // namespace

void init_perf_counter(__perf_counter* pc) {
    if (!pc) return;
    auto& r = the_registry();
    static std::once_flag started;
    std::call_once(started, [&r] {
        static const char kPath[] = "./perf.log";
        auto out = new std::ofstream(kPath, std::ios_base::out | std::ios_base::app);
        if (!out->is_open()) {
            LOG_ERROR("perf counters: cannot open `: `", kPath, ERRNO());
            delete out;
            return;
        }
        std::lock_guard<std::mutex> lock(r.mtx);
        r.out = out;
        std::thread([&r] {
            for (;;) {
                std::this_thread::sleep_for(std::chrono::seconds(1));
                report_due(r);
            }
        }).detach();
    });
    std::lock_guard<std::mutex> lock(r.mtx);
    for (auto x = r.head; x; x = x->_next)
        if (x == pc) return;  // registered already
    pc->_next = r.head;
    r.head = pc;
}
