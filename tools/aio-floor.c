// The floor of depth-1 libaio reads for a program that waits on more than
// its files: one 4 KiB O_DIRECT random read at a time, each waited for in one
// of three ways, with no runtime around it:
//   getevents  a blocking io_getevents, as fio does (the reference);
//   epoll      io_set_eventfd + epoll_wait on the eventfd (edge-triggered)
//              + the completion taken from the ring in user space, as an
//              event loop that also serves sockets must wait;
//   epoll-tmo  the same with a finite timeout (epoll_pwait2), as an event
//              loop with timers waits.
// Prints IOPS and CPU µs per I/O (user + system) after 1 s of ramp. Random
// writes instead with `write` (the file's contents are overwritten).
//
//   cc -O2 -o aio-floor tools/aio-floor.c -laio
//   ./aio-floor FILE getevents|epoll|epoll-tmo SECONDS [read|write]
// tools/aio-floor.sh runs it beside fio and io-perf in alternating rounds.
#define _GNU_SOURCE
#include <fcntl.h>
#include <libaio.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum wait_kind { GETEVENTS, EPOLL, EPOLL_TIMEOUT };

// fs/aio.c's struct aio_ring, mapped at the context's address.
struct aio_ring {
    unsigned id, nr, head, tail;
    unsigned magic, compat_features, incompat_features, header_length;
    struct io_event events[];
};

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_us(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
}

static int ring_take(io_context_t ctx, struct io_event* ev) {
    struct aio_ring* r = (struct aio_ring*)ctx;
    unsigned tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
    if (r->head == tail) return 0;
    *ev = r->events[r->head];
    __atomic_store_n(&r->head, (r->head + 1) % r->nr, __ATOMIC_RELEASE);
    return 1;
}

static int wait_one(io_context_t ctx, int ep, enum wait_kind kind, struct io_event* ev) {
    if (kind == GETEVENTS) return io_getevents(ctx, 1, 1, ev, NULL) == 1 ? 0 : -1;
    struct timespec tmo = {1, 0};
    struct epoll_event out;
    while (!ring_take(ctx, ev)) {
        int n = kind == EPOLL ? epoll_wait(ep, &out, 1, -1) : epoll_pwait2(ep, &out, 1, &tmo, NULL);
        if (n < 0) return -1;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s FILE getevents|epoll|epoll-tmo SECONDS [read|write]\n", argv[0]);
        return 2;
    }
    enum wait_kind kind = !strcmp(argv[2], "getevents") ? GETEVENTS
                          : !strcmp(argv[2], "epoll")   ? EPOLL
                                                        : EPOLL_TIMEOUT;
    double duration = atof(argv[3]);
    int writes = argc == 5 && !strcmp(argv[4], "write");
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(0, &cpus);
    sched_setaffinity(0, sizeof(cpus), &cpus);
    int fd = open(argv[1], (writes ? O_RDWR : O_RDONLY) | O_DIRECT);
    if (fd < 0) return perror("open"), 1;
    uint64_t blocks = lseek(fd, 0, SEEK_END) / 4096;
    void* buf;
    io_context_t ctx = 0;
    if (!blocks || posix_memalign(&buf, 4096, 4096) || io_setup(32, &ctx) < 0)
        return fprintf(stderr, "aio-floor: empty file or no aio context\n"), 1;
    for (int i = 0; i < 4096; i++)
        ((unsigned char*)buf)[i] = (unsigned char)rand();  // as fio writes
    int efd = eventfd(0, EFD_NONBLOCK), ep = epoll_create1(0);
    struct epoll_event reg = {.events = EPOLLIN | EPOLLET};
    if (efd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &reg) < 0)
        return perror("eventfd/epoll"), 1;

    uint64_t x = 88172645463325252ull, ios = 0;
    double start = seconds(), t0 = 0, c0 = 0;
    for (;;) {
        double t = seconds();
        if (!t0 && t - start >= 1) t0 = t, c0 = cpu_us(), ios = 0;
        if (t0 && t - t0 >= duration) break;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        struct iocb cb, *cbs[1] = {&cb};
        if (writes)
            io_prep_pwrite(&cb, fd, buf, 4096, (x % blocks) * 4096);
        else
            io_prep_pread(&cb, fd, buf, 4096, (x % blocks) * 4096);
        if (kind != GETEVENTS) io_set_eventfd(&cb, efd);
        struct io_event ev;
        if (io_submit(ctx, 1, cbs) != 1 || wait_one(ctx, ep, kind, &ev) < 0)
            return perror("aio-floor: I/O"), 1;
        if (ev.res != 4096) return fprintf(stderr, "aio-floor: I/O gave %ld\n", (long)ev.res), 1;
        ios++;
    }
    printf("aio-floor %s IOPS=%.0f cpu_us_per_io=%.2f\n", argv[2], ios / (seconds() - t0),
           (cpu_us() - c0) / ios);
    return 0;
}
