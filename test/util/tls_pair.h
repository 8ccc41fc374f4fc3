// The throw-away PKI that TLS tests share (made once per process with the
// openssl CLI) and the TLS context pair most of them set up from it.
#pragma once

#include <errno.h>
#include <string.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <photon/net/security-context/tls-stream.h>

#include "temp_dir.h"

namespace photon_test {

inline std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline bool have_tool(const char* name) {
    std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
    return system(cmd.c_str()) == 0;
}

// A CA and certificates signed by it, in a temporary directory removed at
// exit. srv: localhost + 127.0.0.1; wrong: wrong.example; expired: localhost,
// expired yesterday; a / b: a.test / b.test; self: self-signed localhost;
// srv_enc.key: srv.key under passphrase "secret"; cadir: hashed CA dir.
class test_pki {
public:
    static test_pki& get() {
        static test_pki pki;
        return pki;
    }
    bool ok() const { return ok_; }
    std::string path(const std::string& name) const { return dir_ / name; }
    std::string pem(const std::string& name) const { return slurp(path(name)); }

private:
    test_pki() {
        if (!dir_.ok()) return;
        std::ofstream(path("gen.sh")) << R"(set -e
K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'
gen() {
    openssl req $K -keyout $1.key -out $1.csr -subj /CN=$2
    printf 'subjectAltName=%s\n' "$3" > $1.ext
    openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
        -out $1.pem -days $4 -extfile $1.ext
}
openssl req -x509 $K -keyout ca.key -out ca.pem -days 2 -subj /CN=photon-test-ca
gen srv localhost DNS:localhost,IP:127.0.0.1 2
gen wrong wrong.example DNS:wrong.example 2
gen expired localhost DNS:localhost,IP:127.0.0.1 -1
gen a a.test DNS:a.test 2
gen b b.test DNS:b.test 2
openssl req -x509 $K -keyout self.key -out self.pem -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost
openssl pkey -in srv.key -aes256 -passout pass:secret -out srv_enc.key
mkdir cadir && cp ca.pem cadir/ && openssl rehash cadir
echo done > ok
)";
        std::string cmd = "cd " + dir_.path() + " && sh gen.sh > log 2>&1";
        ok_ = system(cmd.c_str()) == 0 && std::filesystem::exists(path("ok"));
    }

    temp_dir dir_{"photon-tls"};  // removed at exit
    bool ok_ = false;
};

// A server context with the PKI's srv certificate (localhost, 127.0.0.1) and
// a client context that trusts the test CA. Declare it before the servers
// and clients that use it: they go first, the contexts after them.
struct tls_pair {
    std::unique_ptr<photon::net::TLSContext> server, client;

    // Makes both: "" when made, else why not, with *skip set when that is
    // this build or machine (photon without TLS, no openssl CLI) rather than
    // a failure.
    std::string make(bool* skip) {
        using photon::net::new_tls_context;
        *skip = true;
        std::unique_ptr<photon::net::TLSContext> probe(new_tls_context());
        if (!probe && errno == ENOSYS) return "built without TLS (OpenSSL)";
        if (!have_tool("openssl")) return "the openssl CLI makes the test certificates";
        *skip = false;
        auto& pki = test_pki::get();
        if (!pki.ok()) return "certificate generation failed";
        server.reset(new_tls_context(pki.pem("srv.pem").c_str(), pki.pem("srv.key").c_str()));
        if (!server) return std::string("no server context: ").append(strerror(errno));
        client.reset(new_tls_context());
        if (!client) return std::string("no client context: ").append(strerror(errno));
        if (client->set_ca_cert(pki.pem("ca.pem").c_str()) != 0)
            return "the client context refused the test CA";
        return "";
    }
};

}  // namespace photon_test

// In a test body or a fixture's SetUp: makes `pair` (a tls_pair), skipping
// the test where TLS cannot run here and failing it where it should.
#define PHOTON_TEST_MAKE_TLS_PAIR(pair)         \
    do {                                        \
        bool skip_ = false;                     \
        std::string why_ = (pair).make(&skip_); \
        if (skip_) GTEST_SKIP() << why_;        \
        ASSERT_TRUE(why_.empty()) << why_;      \
    } while (0)
