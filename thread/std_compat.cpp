#include <photon/thread/std-compat.h>

#include <photon/common/alog.h>

namespace photon_std {

namespace detail {

void throw_error(int err, const char* what) {
    LOG_ERROR(what, ": ", ERRNO(err));
    throw ::std::system_error(err, ::std::generic_category(), what);
}

}  // namespace detail

void thread::join() {
    if (!joinable()) detail::throw_error(EINVAL, "photon_std::thread::join: not joinable");
    if (m_th == photon::CURRENT)
        detail::throw_error(EDEADLK, "photon_std::thread::join: joining itself");
    photon::thread_join(reinterpret_cast<photon::join_handle*>(m_th));
    m_th = nullptr;
}

void thread::detach() {
    if (!joinable()) detail::throw_error(EPERM, "photon_std::thread::detach: not joinable");
    photon::thread_enable_join(m_th, false);
    m_th = nullptr;
}

}  // namespace photon_std
