// lazy_timeout: a deadline that reads the clock only once a wait needs it.
// Private header of net/.
#pragma once

#include <cstdint>

#include <photon/common/timeout.h>

namespace photon {
namespace net {

// A call's deadline, fixed when the call first has to wait. Arming a
// Timeout reads the clock, and most calls on a busy connection never park:
// three reads per request were ~1% of a loaded HTTP server's CPU. The
// deadline counts from the first wait; before it, the call made only
// non-blocking syscalls.
class lazy_timeout {
public:
    explicit lazy_timeout(uint64_t us) : us_(us) {}
    Timeout get() {
        if (!armed_) {
            t_.timeout(us_);
            armed_ = true;
        }
        return t_;
    }

private:
    Timeout t_;
    uint64_t us_;
    bool armed_ = false;
};

}  // namespace net
}  // namespace photon
