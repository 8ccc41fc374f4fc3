// Between the scheduler and photon::fini (io/init.cpp): a vCPU that is ending takes no more
// stolen work. Not part of the API.
#pragma once

namespace photon {
namespace detail {

// The calling vCPU stops asking for work; none is on its way to it when this returns. It may
// still give its own. No effect off a vCPU; calling it again is harmless.
void vcpu_stop_taking_work();

}  // namespace detail
}  // namespace photon
