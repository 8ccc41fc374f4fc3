// The OpenSSL TLSContext behind new_tls_context and what the streams need
// from it. Private header of net/security-context/.
#pragma once

#include <openssl/ssl.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <photon/net/security-context/tls-stream.h>

namespace photon {
namespace net {

// Logs OpenSSL's queued errors (one line) after `what`; drains the queue.
void log_openssl_error(const char* what);
// OpenSSL's queued errors, "; "-separated ("" if none); drains the queue.
std::string openssl_errors();
// ALPN protocol names as the wire (and SSL_set_alpn_protos) wants them:
// each prefixed with its length. 0, or -1 EINVAL (a name empty or over 255).
int alpn_wire(const std::vector<estring_view>& protos, std::string* wire);

class tls_context_impl : public TLSContext {
public:
    using alpn_selector = Delegate<estring_view, const std::vector<estring_view>&>;

    ~tls_context_impl() override;
    int init(TLSVersion version);

    int set_pass_phrase(const char* pass) override;
    int set_cert(const char* cert_str) override;
    int set_pkey(const char* key_str, const char* passphrase) override;
    int set_verify_mode(VerifyMode mode) override;
    int set_alpn_protos(const std::vector<estring_view>& protos) override;
    int set_alpn_select_cb(alpn_selector cb) override;
    int set_ca_cert(const char* ca_cert_str) override;
    int set_ca_file(const char* ca_file, const char* ca_path) override;
    int set_cert_file(const char* path) override;
    int set_pkey_file(const char* path, const char* passphrase) override;
    int add_sni_context(const char* hostname, TLSContext* ctx) override;
    int set_handshake_timeout(uint64_t us) override {
        handshake_timeout_ = us;
        return 0;
    }
    uint64_t handshake_timeout() const { return handshake_timeout_; }
    int set_session_cache_size(size_t entries) override;

    SSL_CTX* ssl_ctx() const { return ctx_; }
    // SSL_VERIFY_* bits for a new stream of `role` (see set_verify_mode).
    int verify_bits(SecurityRole role);

private:
    int use_pkey_bio(BIO* bio, const char* passphrase, const char* what);
    static int on_servername(SSL* ssl, int* alert, void* arg);
    static int on_alpn(SSL* ssl, const unsigned char** out, unsigned char* outlen,
                       const unsigned char* in, unsigned int inlen, void* arg);

    SSL_CTX* ctx_ = nullptr;
    std::string pass_;
    bool verify_set_ = false;  // set_verify_mode called
    VerifyMode verify_ = VerifyMode::NONE;
    bool has_ca_ = false;       // set_ca_* trusted something
    std::once_flag system_ca_;  // default verify paths loaded
    std::string alpn_wire_;     // length-prefixed, as on the wire
    alpn_selector alpn_cb_;
    std::map<std::string, tls_context_impl*> sni_;  // lower-case host -> context
    uint64_t handshake_timeout_ = 30'000'000;       // server streams, from creation
};

}  // namespace net
}  // namespace photon
