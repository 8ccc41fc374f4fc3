// Which coroutine a log line names (its "th=" field). The logger sits on the base floor, below
// the scheduler that knows the running coroutine, so the scheduler registers a reader here
// instead of the logger reading the scheduler's state.
#pragma once

namespace photon {
namespace detail {

// Set once, at static initialization, by the scheduler; null while no scheduler is linked in.
extern const void* (*log_current_coroutine)();

}  // namespace detail
}  // namespace photon
