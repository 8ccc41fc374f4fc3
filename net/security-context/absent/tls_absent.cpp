// Built without OpenSSL (PHOTON_ENABLE_TLS=OFF or libssl-dev missing): the
// TLS factories fail with ENOSYS, so callers can fall back at run time.
#include <photon/common/alog.h>
#include <photon/net/security-context/tls-stream.h>

namespace photon {
namespace net {

namespace {
void log_absent() {
    LOG_EVERY_T(60, LOG_ERROR("photon was built without TLS (OpenSSL)"));
    errno = ENOSYS;
}
}  // namespace

TLSContext* new_tls_context(const char*, const char*, const char*, TLSVersion) {
    log_absent();
    return nullptr;
}

TLSContext* new_tls_context_from_files(const char*, const char*, const char*, TLSVersion) {
    log_absent();
    return nullptr;
}

ISocketStream* new_tls_stream(TLSContext*, ISocketStream*, SecurityRole, bool) {
    log_absent();
    return nullptr;
}

ISocketServer* new_tls_server(TLSContext*, ISocketServer*, bool) {
    log_absent();
    return nullptr;
}

ISocketClient* new_tls_client(TLSContext*, ISocketClient*, bool) {
    log_absent();
    return nullptr;
}

int tls_stream_set_hostname(ISocketStream*, const char*) {
    errno = ENOSYS;
    return -1;
}

int tls_stream_set_alpn_protos(ISocketStream*, const std::vector<estring_view>&) {
    errno = ENOSYS;
    return -1;
}

estring_view tls_stream_get_alpn_selected(ISocketStream*) { return {}; }

int tls_stream_handshake(ISocketStream*) {
    errno = ENOSYS;
    return -1;
}

const char* tls_stream_get_version(ISocketStream*) { return nullptr; }

}  // namespace net
}  // namespace photon
