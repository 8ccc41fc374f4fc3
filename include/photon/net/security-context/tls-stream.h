// TLS over any ISocketStream, on OpenSSL: a context (certificates, keys,
// trust, verification, ALPN, SNI) and streams, clients and servers that wrap
// plain ones. PhotonLibOS's names and semantics, with our extensions marked.
//
// A TLS stream does all its I/O through the base stream, so it parks only the
// calling coroutine (never the vCPU) and layers over TCP, io_uring or
// unix-domain streams alike. One reader and one writer coroutine may use a
// stream at the same time. A stream belongs to the vCPU of its base stream.
// Contexts may be shared by streams of any vCPU once configured; they must
// outlive their streams. Built without OpenSSL (PHOTON_ENABLE_TLS=OFF), the
// factories fail with ENOSYS.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include <photon/common/callback.h>
#include <photon/common/estring.h>
#include <photon/common/object.h>
#include <photon/net/socket.h>

namespace photon {
namespace net {

enum class SecurityRole { Client = 1, Server = 2 };

// OpenSSL's SSL_VERIFY_* bits.
enum class VerifyMode : int { NONE = 0, PEER = 1, FAIL_IF_NO_PEER_CERT = 2, CLIENT_ONCE = 4 };

// The lowest protocol version accepted; TLS 1.3 is always allowed and is
// negotiated when the peer supports it. SSL23: any version OpenSSL permits.
enum class TLSVersion { SSL23, TLS11, TLS12 };

// Setters return 0, or -1 with errno (EINVAL for bad PEM, keys or arguments,
// ENOENT / EACCES for files) and log OpenSSL's reason. Configure a context
// before the first stream uses it.
class TLSContext : public Object {
public:
    // Passphrase for later encrypted keys given without one.
    virtual int set_pass_phrase(const char* pass) = 0;
    // PEM certificate, optionally followed by its chain.
    virtual int set_cert(const char* cert_str) = 0;
    // PEM private key; passphrase nullptr: the one from set_pass_phrase.
    virtual int set_pkey(const char* key_str, const char* passphrase = nullptr) = 0;
    // Client default (never called): PEER, trusting the system CA store
    // unless set_ca_* named CAs. Server default: NONE (no client cert asked).
    virtual int set_verify_mode(VerifyMode mode = VerifyMode::NONE) = 0;
    // Client: the protocols offered, e.g. {"h2", "http/1.1"}. A server context
    // given protos (and no select callback) picks the first one the client
    // offers too.
    virtual int set_alpn_protos(const std::vector<estring_view>& protos) = 0;
    // Server: picks one of the client's protos (return one of the vector's
    // elements); an empty answer negotiates no protocol.
    virtual int set_alpn_select_cb(Delegate<estring_view, const std::vector<estring_view>&> cb) = 0;
    // Trusts the PEM CA certificate(s).
    virtual int set_ca_cert(const char* ca_cert_str) = 0;
    // Trusts the CAs in a PEM file and/or a hashed CA directory (c_rehash).
    virtual int set_ca_file(const char* ca_file, const char* ca_path = nullptr) = 0;

    // -- extensions (not pure, so that a TLSContext written for Photon
    // compiles; the defaults fail with ENOSYS) ----------------------------
    // The PEM certificate (chain) / private key from files.
    virtual int set_cert_file(const char* /*path*/) { return errno = ENOSYS, -1; }
    virtual int set_pkey_file(const char* /*path*/, const char* /*passphrase*/ = nullptr) {
        return errno = ENOSYS, -1;
    }
    // Server SNI: a client asking for `hostname` (case-insensitive, exact)
    // gets ctx's certificate and key instead of this context's. ctx must
    // outlive this context; nullptr removes the entry.
    virtual int add_sni_context(const char* /*hostname*/, TLSContext* /*ctx*/) {
        return errno = ENOSYS, -1;
    }
    // Server streams: the handshake must end within `us` microseconds of
    // the stream's creation, or it fails with ETIMEDOUT (default 30 s, the
    // HTTP server's header_timeout; -1: only the stream's timeout bounds it).
    virtual int set_handshake_timeout(uint64_t /*us*/) { return errno = ENOSYS, -1; }
    // Server: keep up to `entries` sessions in memory so that clients that
    // do not take session tickets can resume by session ID (OpenSSL's
    // server-side session cache, whose own default is 20,480, about 1.1 KiB
    // each). The default, 0, keeps none, as nginx does: resumption with
    // tickets (TLS 1.2 and 1.3) needs no cache and works either way.
    virtual int set_session_cache_size(size_t /*entries*/) { return errno = ENOSYS, -1; }
};

// A context with an optional PEM certificate and key (encrypted keys need the
// passphrase). nullptr with errno on failure.
TLSContext* new_tls_context(const char* cert_str = nullptr, const char* key_str = nullptr,
                            const char* passphrase = nullptr,
                            TLSVersion version = TLSVersion::TLS12);
// Extension: the same from PEM files (either may be nullptr).
TLSContext* new_tls_context_from_files(const char* cert_file, const char* key_file,
                                       const char* passphrase = nullptr,
                                       TLSVersion version = TLSVersion::TLS12);

// A TLS stream over `base`. Server streams handshake here (if it fails, the
// stream's I/O fails with its errno, as Photon's); client streams handshake
// on first I/O or tls_stream_handshake(). nullptr (EINVAL) without ctx or
// base. ownership: deleting the TLS stream deletes base. Its timeout() starts
// as base's; set it on the TLS stream.
// Each call is bounded by it as a whole.
ISocketStream* new_tls_stream(TLSContext* ctx, ISocketStream* base, SecurityRole role,
                              bool ownership = false);
// A server whose accepted streams are TLS. A handler gets its stream at once
// and the handshake runs on the stream's first I/O (or tls_stream_handshake()),
// so that the handler's own deadlines and interruptions (an HTTP server's
// stop()) cover it; a failed handshake fails that I/O. accept() handshakes
// before it returns, and fails with the handshake's errno. Accepted streams
// without a timeout take the server's.
ISocketServer* new_tls_server(TLSContext* ctx, ISocketServer* base, bool ownership = false);
// A client whose connected streams are TLS client streams.
ISocketClient* new_tls_client(TLSContext* ctx, ISocketClient* base, bool ownership = false);

// Client, before the handshake: sends `hostname` as SNI (not for IP
// literals) and, when verifying, checks the certificate against it (DNS name
// or IP address). 0, or -1 EINVAL if `stream` is not a TLS stream.
// Differences from PhotonLibOS: doc/compat.md#netsecurity-contexttls-streamh
int tls_stream_set_hostname(ISocketStream* stream, const char* hostname);
// The protocol ALPN selected; empty if none (or not a TLS stream).
estring_view tls_stream_get_alpn_selected(ISocketStream* stream);

// -- extensions -------------------------------------------------------------
// Client, before the handshake: offers these ALPN protocols on this stream
// instead of the context's list (the HTTP client offers h2 on some of its
// connections and not on others). 0, or -1 EINVAL (not a TLS stream, a name
// outside 1..255 bytes), EISCONN (after the handshake).
int tls_stream_set_alpn_protos(ISocketStream* stream, const std::vector<estring_view>& protos);
// Runs the handshake now if not done; 0, or -1 with errno: EACCES when the
// peer's certificate fails verification, EPROTO for other TLS failures,
// ECONNRESET if the peer closed, or the base stream's error (ETIMEDOUT ...).
int tls_stream_handshake(ISocketStream* stream);
// "TLSv1.3", "TLSv1.2" ... once handshaken; nullptr otherwise.
const char* tls_stream_get_version(ISocketStream* stream);

}  // namespace net
}  // namespace photon
