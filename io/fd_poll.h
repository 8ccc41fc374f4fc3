// What the engines share about readiness in poll(2) terms. Private header
// of io/.
#pragma once

#include <poll.h>

#include <cerrno>
#include <cstdint>

#include <photon/common/alog.h>
#include <photon/io/fd-events.h>

namespace photon {

// EVENT_* as poll bits, the same for every engine: EVENT_ERROR is urgent
// data; errors and hang-ups are reported for any interest anyway.
inline uint32_t events_to_poll(uint32_t interests) {
    uint32_t m = 0;
    if (interests & EVENT_READ) m |= POLLIN | POLLRDHUP;
    if (interests & EVENT_WRITE) m |= POLLOUT;
    if (interests & EVENT_ERROR) m |= POLLPRI;
    return m;
}

// One look at fd without parking (wait_for_fd with an expired timeout): 0
// when ready, -1 with ETIMEDOUT, or EINVAL if fd is not open.
inline int poll_once(int fd, uint32_t interests) {
    struct pollfd p = {fd, (short)events_to_poll(interests), 0};
    int r = ::poll(&p, 1, 0);
    if (r < 0) return -1;
    if (p.revents & POLLNVAL) LOG_ERROR_RETURN(EINVAL, -1, "wait_for_fd: fd ` is not open", fd);
    if (r == 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    return 0;
}

}  // namespace photon
