// Built instead of net/iouring_*.cpp without liburing (PHOTON_ENABLE_URING=OFF):
// the io_uring socket factories fail with ENOSYS.
#include <cerrno>

#include <photon/net/socket.h>

using namespace photon::net;

extern "C" ISocketClient* new_iouring_tcp_client() { return errno = ENOSYS, nullptr; }
extern "C" ISocketServer* new_iouring_tcp_server() { return errno = ENOSYS, nullptr; }
