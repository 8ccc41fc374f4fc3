// Message digests and HMACs over OpenSSL's EVP interface, as PhotonLibOS
// declares them: photon::sha1 / sha256 / sha512 / md5 (incremental), and
// photon::HMAC_SHA1 / HMAC_SHA256 / HMAC_SHA512 (one shot). Header-only; the
// program links libcrypto (photon::photon does when built with TLS). No
// call yields; one object belongs to one thread or coroutine at a time.
//
// Differences from PhotonLibOS: doc/compat.md#commonchecksumdigesth
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include <photon/common/string_view.h>

extern "C" {
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/md5.h>
#include <openssl/sha.h>
}

static_assert(OPENSSL_VERSION_NUMBER >= 0x10100000L,
              "photon/common/checksum/digest.h needs OpenSSL 1.1 or later");

namespace photon {

template <size_t LENGTH, const EVP_MD* (*MD)()>
struct Digest {
    enum { DIGEST_LENGTH = LENGTH };

    Digest() : _ctx(EVP_MD_CTX_new()) {
        ok_ = _ctx && EVP_DigestInit_ex(_ctx, MD(), nullptr) == 1;
        if (!_ctx) errno = ENOMEM;
    }
    Digest(std::string_view data) : Digest() { update(data); }
    Digest(const void* data, size_t len) : Digest() { update(data, len); }
    Digest(const Digest& rhs) : _ctx(EVP_MD_CTX_new()) {
        ok_ = rhs.ok_ && _ctx && EVP_MD_CTX_copy_ex(_ctx, rhs._ctx) == 1;
        if (!_ctx) errno = ENOMEM;
    }
    Digest(Digest&& rhs) noexcept : _ctx(std::exchange(rhs._ctx, nullptr)), ok_(rhs.ok_) {
        rhs.ok_ = false;
    }
    Digest& operator=(Digest rhs) noexcept {
        std::swap(_ctx, rhs._ctx);
        std::swap(ok_, rhs.ok_);
        return *this;
    }
    ~Digest() { EVP_MD_CTX_free(_ctx); }

    void update(std::string_view data) { update(data.data(), data.size()); }
    void update(const void* data, size_t len) {
        if (ok_ && len) ok_ = EVP_DigestUpdate(_ctx, data, len) == 1;
    }

    // The digest of everything updated so far, LENGTH bytes in this object
    // (valid until the next finalize or the object's end).
    std::string_view finalize() const {
        finalize_into(_md);
        return {_md, LENGTH};
    }
    operator std::string_view() const { return finalize(); }

    // Writes the LENGTH-byte digest of everything so far to buf.
    void finalize(void* buf) { finalize_into(buf); }

    // False once anything failed; the digest then reads as zeros.
    bool ok() const { return ok_; }

    EVP_MD_CTX* _ctx;  // Photon's name; the running state
    mutable char _md[LENGTH];

private:
    // Finishes a copy of the running state, which stays open for updates.
    void finalize_into(void* buf) const {
        unsigned int len = 0;
        EVP_MD_CTX* tmp = ok_ ? EVP_MD_CTX_new() : nullptr;
        bool done = tmp && EVP_MD_CTX_copy_ex(tmp, _ctx) == 1 &&
                    EVP_DigestFinal_ex(tmp, (unsigned char*)buf, &len) == 1 && len == LENGTH;
        EVP_MD_CTX_free(tmp);
        if (!done) memset(buf, 0, LENGTH), ok_ = false;
    }

    mutable bool ok_;
};

using sha1 = Digest<SHA_DIGEST_LENGTH, &EVP_sha1>;
using sha256 = Digest<SHA256_DIGEST_LENGTH, &EVP_sha256>;
using sha512 = Digest<SHA512_DIGEST_LENGTH, &EVP_sha512>;
using md5 = Digest<MD5_DIGEST_LENGTH, &EVP_md5>;

// HMAC of data under key, computed in the constructor.
template <size_t LENGTH, const EVP_MD* (*MD)()>
struct HMAC {
    enum { DIGEST_LENGTH = LENGTH };
    char _md[LENGTH];

    HMAC(std::string_view key, std::string_view data) { compute(key, data); }
    // Also writes the LENGTH-byte HMAC to md.
    HMAC(std::string_view key, std::string_view data, char* md) {
        compute(key, data);
        memcpy(md, _md, LENGTH);
    }
    operator std::string_view() const { return {_md, LENGTH}; }
    std::string_view finalize() const { return *this; }
    bool ok() const { return ok_; }

private:
    void compute(std::string_view key, std::string_view data) {
        unsigned int len = 0;
        ok_ = key.size() <= size_t(INT32_MAX) &&
              ::HMAC(MD(), key.data(), (int)key.size(), (const unsigned char*)data.data(),
                     data.size(), (unsigned char*)_md, &len) != nullptr &&
              len == LENGTH;
        if (!ok_) memset(_md, 0, LENGTH);
    }

    bool ok_;
};

using HMAC_SHA1 = HMAC<SHA_DIGEST_LENGTH, EVP_sha1>;
using HMAC_SHA256 = HMAC<SHA256_DIGEST_LENGTH, EVP_sha256>;
using HMAC_SHA512 = HMAC<SHA512_DIGEST_LENGTH, EVP_sha512>;

}  // namespace photon
