// event-perf: fd-event wait/wake round trips through the master event engine,
// against the same exchange done by two plain OS threads.
//
//   event-perf [--rounds R] [--iters N]
//
// A round trip: A writes eventfd 1 and waits for eventfd 2; B, woken by
// eventfd 1, writes eventfd 2. Coroutines A and B share one vCPU and wait
// with wait_for_fd (edge-triggered after EAGAIN, as the sockets do, and the
// level-triggered public form); the threads block in read(2) on blocking
// eventfds, or in a std::condition_variable. Prints medians of R rounds.
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <photon/io/fd-events.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

namespace {

using clock_type = std::chrono::steady_clock;

double ns_per(clock_type::time_point t0, uint64_t n) {
    return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / double(n);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Reads one eventfd count, parking on EAGAIN; false on error.
bool take(int fd, uint32_t mode) {
    uint64_t v;
    while (read(fd, &v, sizeof(v)) < 0) {
        if (errno != EAGAIN || photon::wait_for_fd(fd, photon::EVENT_READ | mode, -1) < 0)
            return false;
    }
    return true;
}

bool give(int fd) {
    uint64_t one = 1;
    return write(fd, &one, sizeof(one)) == sizeof(one);
}

double coroutine_round(uint64_t n, uint32_t mode) {
    int a = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), b = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    auto th = photon::thread_create11([=] {
        for (uint64_t i = 0; i < n; i++)
            if (!take(a, mode) || !give(b)) abort();
    });
    auto jh = photon::thread_enable_join(th);
    auto t0 = clock_type::now();
    for (uint64_t i = 0; i < n; i++)
        if (!give(a) || !take(b, mode)) abort();
    double r = ns_per(t0, n);
    photon::thread_join(jh);
    // Edge-triggered waits keep fds registered: forget them before close.
    photon::get_vcpu()->master_event_engine->forget_fd(a);
    photon::get_vcpu()->master_event_engine->forget_fd(b);
    close(a);
    close(b);
    return r;
}

double eventfd_threads_round(uint64_t n) {
    int a = eventfd(0, EFD_CLOEXEC), b = eventfd(0, EFD_CLOEXEC);
    uint64_t v;
    std::thread peer([&] {
        for (uint64_t i = 0; i < n; i++)
            if (read(a, &v, 8) != 8 || !give(b)) abort();
    });
    auto t0 = clock_type::now();
    uint64_t w;
    for (uint64_t i = 0; i < n; i++)
        if (!give(a) || read(b, &w, 8) != 8) abort();
    double r = ns_per(t0, n);
    peer.join();
    close(a);
    close(b);
    return r;
}

double condvar_threads_round(uint64_t n) {
    std::mutex m;
    std::condition_variable cv;
    uint64_t turn = 0;  // even: A's move, odd: B's
    std::thread peer([&] {
        std::unique_lock<std::mutex> l(m);
        for (uint64_t i = 0; i < n; i++) {
            cv.wait(l, [&] { return turn == 2 * i + 1; });
            turn++;
            cv.notify_one();
        }
    });
    auto t0 = clock_type::now();
    {
        std::unique_lock<std::mutex> l(m);
        for (uint64_t i = 0; i < n; i++) {
            turn++;
            cv.notify_one();
            cv.wait(l, [&] { return turn == 2 * i + 2; });
        }
    }
    double r = ns_per(t0, n);
    peer.join();
    return r;
}

template <typename F>
double measure(const char* name, int rounds, F f) {
    std::vector<double> v;
    for (int i = 0; i < rounds; i++) v.push_back(f());
    double m = median(v);
    std::sort(v.begin(), v.end());
    printf("%-58s median %9.0f ns/round trip  (min %.0f, max %.0f)\n", name, m, v.front(),
           v.back());
    fflush(stdout);
    return m;
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 5;
    uint64_t iters = 200000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = std::max(1, atoi(argv[++i]));
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = strtoull(argv[++i], nullptr, 10);
        else {
            fprintf(stderr, "usage: %s [--rounds R] [--iters N]\n", argv[0]);
            return 2;
        }
    }
    double threads_efd = measure("2 OS threads, blocking eventfd read/write", rounds,
                                 [&] { return eventfd_threads_round(iters); });
    double threads_cv = measure("2 OS threads, std::mutex + std::condition_variable", rounds,
                                [&] { return condvar_threads_round(iters); });
    struct {
        const char* name;
        uint64_t flag;
    } engines[] = {{"epoll", photon::INIT_EVENT_EPOLL}, {"io_uring", photon::INIT_EVENT_IOURING}};
    for (auto& e : engines) {
        if (photon::init(e.flag, photon::INIT_IO_NONE) < 0) {
            printf("%s: unavailable (%s)\n", e.name, strerror(errno));
            continue;
        }
        char name[96];
        snprintf(name, sizeof(name), "2 coroutines, %s, wait_for_fd edge-triggered", e.name);
        double et =
            measure(name, rounds, [&] { return coroutine_round(iters, photon::EDGE_TRIGGERED); });
        snprintf(name, sizeof(name), "2 coroutines, %s, wait_for_fd level-triggered", e.name);
        double lt = measure(name, rounds, [&] { return coroutine_round(iters, 0); });
        printf(
            "  ratios (threads / coroutines): eventfd threads %.2fx, condvar threads %.2fx "
            "(edge); %.2fx, %.2fx (level)\n",
            threads_efd / et, threads_cv / et, threads_efd / lt, threads_cv / lt);
        photon::fini();
    }
    return 0;
}
