// The factories of the kernel-socket flavours over the event engine.
#include <photon/common/alog.h>

#include "kernel_socket.h"

namespace photon {
namespace net {
namespace {
ISocketStream* make_kernel_stream(int fd) { return new kernel_socket_stream(fd); }
}  // namespace
}  // namespace net
}  // namespace photon

using namespace photon::net;

extern "C" ISocketClient* new_tcp_socket_client(IPAddr* bind_ips, uint32_t bind_ips_n) {
    return new kernel_socket_client(AF_INET, &make_kernel_stream, bind_ips, bind_ips_n);
}
extern "C" ISocketServer* new_tcp_socket_server() {
    return new kernel_socket_server(AF_INET, &make_kernel_stream);
}
extern "C" ISocketClient* new_tcp_socket_client_ipv6() { return new_tcp_socket_client(); }
extern "C" ISocketServer* new_tcp_socket_server_ipv6() { return new_tcp_socket_server(); }
extern "C" ISocketClient* new_et_tcp_socket_client() { return new_tcp_socket_client(); }
extern "C" ISocketServer* new_et_tcp_socket_server() { return new_tcp_socket_server(); }
extern "C" ISocketClient* new_uds_client() {
    return new kernel_socket_client(AF_UNIX, &make_kernel_stream);
}
extern "C" ISocketServer* new_uds_server(bool autoremove) {
    return new kernel_socket_server(AF_UNIX, &make_kernel_stream, autoremove);
}
extern "C" ISocketClient* new_smc_socket_client() {
    return new kernel_socket_client(AF_SMC, &make_kernel_stream);
}
extern "C" ISocketServer* new_smc_socket_server() {
    return new kernel_socket_server(AF_SMC, &make_kernel_stream);
}
extern "C" ISocketClient* new_fstack_dpdk_socket_client() {
    LOG_ERROR_RETURN(ENOSYS, nullptr, "photon is built without F-Stack (DPDK)");
}
extern "C" ISocketServer* new_fstack_dpdk_socket_server() {
    LOG_ERROR_RETURN(ENOSYS, nullptr, "photon is built without F-Stack (DPDK)");
}
