// epoll_wait with a microsecond timeout (epoll_pwait2 where the kernel has
// it, else rounded up to milliseconds). Private header of io/.
#pragma once

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <ctime>

namespace photon {

// timeout in us, UINT64_MAX = no limit. Returns as epoll_wait(2).
inline int epoll_wait_us(int epfd, struct epoll_event* events, int max, uint64_t timeout) {
#ifdef SYS_epoll_pwait2
    static std::atomic<bool> no_pwait2{false};
    if (timeout != UINT64_MAX && timeout % 1000 && !no_pwait2.load(std::memory_order_relaxed)) {
        struct timespec ts;
        ts.tv_sec = (time_t)(timeout / 1000000);
        ts.tv_nsec = (long)(timeout % 1000000) * 1000;
        int n = (int)syscall(SYS_epoll_pwait2, epfd, events, max, &ts, nullptr, 0);
        if (n >= 0 || errno != ENOSYS) return n;
        no_pwait2.store(true, std::memory_order_relaxed);
    }
#endif
    int ms = timeout == UINT64_MAX       ? -1
             : timeout / 1000 >= INT_MAX ? INT_MAX
                                         : (int)((timeout + 999) / 1000);
    return epoll_wait(epfd, events, max, ms);
}

}  // namespace photon
