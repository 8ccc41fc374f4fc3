// tls_context_impl: an SSL_CTX with PEM loading from memory or files, lazy
// system-CA trust for verifying clients, ALPN and SNI callbacks.
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstring>

#include <photon/common/alog.h>

#include "tls_context.h"

namespace photon {
namespace net {

namespace {
// Never let OpenSSL prompt on a terminal: an absent passphrase just fails.
int pem_password(char* buf, int size, int, void* u) {
    const char* pass = static_cast<const char*>(u);
    if (!pass) return 0;
    int n = (int)strlen(pass);
    if (n > size) return 0;
    memcpy(buf, pass, n);
    return n;
}

struct bio_deleter {
    void operator()(BIO* b) const { BIO_free(b); }
};
using bio_ptr = std::unique_ptr<BIO, bio_deleter>;

bio_ptr mem_bio(const char* pem) { return bio_ptr(BIO_new_mem_buf(pem, -1)); }

// errno for a file OpenSSL could not use: why access() fails, else EINVAL.
int file_errno(const char* path) {
    if (path && access(path, R_OK) < 0) return errno;
    return EINVAL;
}
}  // namespace

std::string openssl_errors() {
    char all[512] = "", one[256];
    size_t used = 0;
    while (unsigned long e = ERR_get_error()) {
        ERR_error_string_n(e, one, sizeof(one));
        used += snprintf(all + used, used < sizeof(all) ? sizeof(all) - used : 0, "%s%s",
                         used ? "; " : "", one);
        if (used >= sizeof(all)) used = sizeof(all) - 1;
    }
    return all;
}

void log_openssl_error(const char* what) {
    std::string all = openssl_errors();
    LOG_ERROR(what, ": ", all.empty() ? "no OpenSSL reason" : all.c_str());
}

tls_context_impl::~tls_context_impl() { SSL_CTX_free(ctx_); }

int tls_context_impl::init(TLSVersion version) {
    ctx_ = SSL_CTX_new(TLS_method());
    if (!ctx_) {
        log_openssl_error("SSL_CTX_new failed");
        errno = ENOMEM;
        return -1;
    }
    int min = version == TLSVersion::SSL23   ? 0
              : version == TLSVersion::TLS11 ? TLS1_1_VERSION
                                             : TLS1_2_VERSION;
    SSL_CTX_set_min_proto_version(ctx_, min);
    SSL_CTX_set_options(ctx_, SSL_OP_NO_RENEGOTIATION);  // writes never need to read
    // Servers that verify clients need it, or resumed sessions fail.
    static const unsigned char kSid[] = "photon";
    SSL_CTX_set_session_id_context(ctx_, kSid, sizeof(kSid) - 1);
    // No server-side session cache (set_session_cache_size): OpenSSL's keeps
    // up to 20,480 sessions (about 1.1 KiB each) of clients that do not take
    // tickets. Tickets resume sessions without it, as nginx does by default.
    SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_tlsext_servername_callback(ctx_, &on_servername);
    SSL_CTX_set_tlsext_servername_arg(ctx_, this);
    SSL_CTX_set_alpn_select_cb(ctx_, &on_alpn, this);
    return 0;
}

int tls_context_impl::set_session_cache_size(size_t entries) {
    if (entries == 0) {
        SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_OFF);
        return 0;
    }
    if (entries > (size_t)LONG_MAX)
        LOG_ERROR_RETURN(EINVAL, -1, "set_session_cache_size: too large");
    SSL_CTX_sess_set_cache_size(ctx_, (long)entries);
    SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_SERVER);
    return 0;
}

int tls_context_impl::set_pass_phrase(const char* pass) {
    pass_ = pass ? pass : "";
    return 0;
}

int tls_context_impl::set_cert(const char* cert_str) {
    if (!cert_str) LOG_ERROR_RETURN(EINVAL, -1, "set_cert: no PEM");
    ERR_clear_error();
    auto bio = mem_bio(cert_str);
    X509* x = bio ? PEM_read_bio_X509_AUX(bio.get(), nullptr, &pem_password, nullptr) : nullptr;
    int ok = x && SSL_CTX_use_certificate(ctx_, x) == 1;
    X509_free(x);
    if (!ok) {
        log_openssl_error("set_cert: bad PEM certificate");
        errno = EINVAL;
        return -1;
    }
    SSL_CTX_clear_chain_certs(ctx_);
    while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, &pem_password, nullptr))
        if (SSL_CTX_add0_chain_cert(ctx_, ca) != 1) X509_free(ca);
    ERR_clear_error();  // the loop ends on "no start line"
    return 0;
}

int tls_context_impl::use_pkey_bio(BIO* bio, const char* passphrase, const char* what) {
    const char* pass = passphrase ? passphrase : pass_.c_str();
    EVP_PKEY* key =
        bio ? PEM_read_bio_PrivateKey(bio, nullptr, &pem_password, (void*)pass) : nullptr;
    int ok = key && SSL_CTX_use_PrivateKey(ctx_, key) == 1;
    EVP_PKEY_free(key);
    if (ok && SSL_CTX_get0_certificate(ctx_)) ok = SSL_CTX_check_private_key(ctx_) == 1;
    if (!ok) {
        log_openssl_error(what);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int tls_context_impl::set_pkey(const char* key_str, const char* passphrase) {
    if (!key_str) LOG_ERROR_RETURN(EINVAL, -1, "set_pkey: no PEM");
    ERR_clear_error();
    return use_pkey_bio(mem_bio(key_str).get(), passphrase,
                        "set_pkey: bad key, wrong passphrase or not the cert's key");
}

int tls_context_impl::set_cert_file(const char* path) {
    ERR_clear_error();
    if (!path || SSL_CTX_use_certificate_chain_file(ctx_, path) != 1) {
        log_openssl_error("set_cert_file failed");
        errno = file_errno(path);
        return -1;
    }
    return 0;
}

int tls_context_impl::set_pkey_file(const char* path, const char* passphrase) {
    ERR_clear_error();
    bio_ptr bio(path ? BIO_new_file(path, "r") : nullptr);
    if (!bio) {
        log_openssl_error("set_pkey_file: cannot open the key file");
        errno = file_errno(path);
        return -1;
    }
    return use_pkey_bio(bio.get(), passphrase, "set_pkey_file: bad key or passphrase");
}

int tls_context_impl::set_verify_mode(VerifyMode mode) {
    verify_set_ = true;
    verify_ = mode;
    return 0;
}

int tls_context_impl::verify_bits(SecurityRole role) {
    int bits = (int)verify_;
    if (!verify_set_) bits = role == SecurityRole::Client ? SSL_VERIFY_PEER : SSL_VERIFY_NONE;
    // Clients with no CA of their own trust the system store, loaded once.
    // call_once: a stream on another vCPU must not verify against a half-loaded store.
    if (role == SecurityRole::Client && (bits & SSL_VERIFY_PEER) && !has_ca_)
        std::call_once(system_ca_, [this] {
            if (SSL_CTX_set_default_verify_paths(ctx_) != 1)
                log_openssl_error("cannot load the system CA store");
        });
    return bits;
}

int tls_context_impl::set_ca_cert(const char* ca_cert_str) {
    if (!ca_cert_str) LOG_ERROR_RETURN(EINVAL, -1, "set_ca_cert: no PEM");
    ERR_clear_error();
    auto bio = mem_bio(ca_cert_str);
    X509_STORE* store = SSL_CTX_get_cert_store(ctx_);
    int n = 0;
    while (X509* x =
               bio ? PEM_read_bio_X509(bio.get(), nullptr, &pem_password, nullptr) : nullptr) {
        n += X509_STORE_add_cert(store, x) == 1;
        X509_free(x);
    }
    if (!n) {
        log_openssl_error("set_ca_cert: no usable PEM certificate");
        errno = EINVAL;
        return -1;
    }
    ERR_clear_error();
    has_ca_ = true;
    return 0;
}

int tls_context_impl::set_ca_file(const char* ca_file, const char* ca_path) {
    ERR_clear_error();
    if ((!ca_file && !ca_path) || SSL_CTX_load_verify_locations(ctx_, ca_file, ca_path) != 1) {
        log_openssl_error("set_ca_file failed");
        errno = ca_file ? file_errno(ca_file) : file_errno(ca_path);
        return -1;
    }
    has_ca_ = true;
    return 0;
}

int alpn_wire(const std::vector<estring_view>& protos, std::string* wire) {
    for (auto p : protos) {
        if (p.empty() || p.size() > 255)
            LOG_ERROR_RETURN(EINVAL, -1, "ALPN protocol names are 1..255 bytes");
        wire->push_back((char)p.size());
        wire->append(p);
    }
    return 0;
}

int tls_context_impl::set_alpn_protos(const std::vector<estring_view>& protos) {
    std::string wire;
    if (alpn_wire(protos, &wire) < 0) return -1;
    // SSL_CTX_set_alpn_protos returns 0 on success.
    if (SSL_CTX_set_alpn_protos(ctx_, (const unsigned char*)wire.data(), wire.size()) != 0)
        LOG_ERROR_RETURN(ENOMEM, -1, "SSL_CTX_set_alpn_protos failed");
    alpn_wire_ = std::move(wire);
    return 0;
}

int tls_context_impl::set_alpn_select_cb(alpn_selector cb) {
    alpn_cb_ = cb;
    return 0;
}

int tls_context_impl::on_alpn(SSL*, const unsigned char** out, unsigned char* outlen,
                              const unsigned char* in, unsigned int inlen, void* arg) {
    auto self = static_cast<tls_context_impl*>(arg);
    if (!self->alpn_cb_) {
        if (self->alpn_wire_.empty()) return SSL_TLSEXT_ERR_NOACK;
        auto server = (const unsigned char*)self->alpn_wire_.data();
        unsigned char* o = nullptr;
        int r = SSL_select_next_proto(&o, outlen, server, self->alpn_wire_.size(), in, inlen);
        *out = o;
        return r == OPENSSL_NPN_NEGOTIATED ? SSL_TLSEXT_ERR_OK : SSL_TLSEXT_ERR_NOACK;
    }
    std::vector<estring_view> offered;
    for (unsigned i = 0; i < inlen && i + 1 + in[i] <= inlen; i += 1 + in[i])
        offered.emplace_back((const char*)in + i + 1, in[i]);
    std::string_view pick = self->alpn_cb_(offered);
    for (auto p : offered) {  // answer with the client's bytes: `pick` may not outlive us
        if (pick.empty() || p != pick) continue;
        *out = (const unsigned char*)p.data();
        *outlen = (unsigned char)p.size();
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

int tls_context_impl::add_sni_context(const char* hostname, TLSContext* ctx) {
    if (!hostname || !*hostname) LOG_ERROR_RETURN(EINVAL, -1, "add_sni_context: no hostname");
    std::string key(hostname);
    for (auto& c : key) c = (char)tolower((unsigned char)c);
    if (!ctx) {
        sni_.erase(key);
        return 0;
    }
    auto impl = dynamic_cast<tls_context_impl*>(ctx);
    if (!impl) LOG_ERROR_RETURN(EINVAL, -1, "add_sni_context: not a TLS context of ours");
    sni_[key] = impl;
    return 0;
}

int tls_context_impl::on_servername(SSL* ssl, int*, void* arg) {
    auto self = static_cast<tls_context_impl*>(arg);
    const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    if (!name || self->sni_.empty()) return SSL_TLSEXT_ERR_OK;
    std::string key(name);
    for (auto& c : key) c = (char)tolower((unsigned char)c);
    auto it = self->sni_.find(key);
    // Only the certificate and key switch: the stream set its verify mode.
    if (it != self->sni_.end()) SSL_set_SSL_CTX(ssl, it->second->ctx_);
    return SSL_TLSEXT_ERR_OK;
}

TLSContext* new_tls_context(const char* cert_str, const char* key_str, const char* passphrase,
                            TLSVersion version) {
    std::unique_ptr<tls_context_impl> c(new tls_context_impl);
    if (c->init(version) < 0) return nullptr;
    if (passphrase) c->set_pass_phrase(passphrase);
    if (cert_str && c->set_cert(cert_str) < 0) return nullptr;
    if (key_str && c->set_pkey(key_str, passphrase) < 0) return nullptr;
    return c.release();
}

TLSContext* new_tls_context_from_files(const char* cert_file, const char* key_file,
                                       const char* passphrase, TLSVersion version) {
    std::unique_ptr<tls_context_impl> c(new tls_context_impl);
    if (c->init(version) < 0) return nullptr;
    if (passphrase) c->set_pass_phrase(passphrase);
    if (cert_file && c->set_cert_file(cert_file) < 0) return nullptr;
    if (key_file && c->set_pkey_file(key_file, passphrase) < 0) return nullptr;
    return c.release();
}

}  // namespace net
}  // namespace photon
