// An S3 server for the object storage tests: versitygw (Apache-2.0) serving a
// temporary directory through its posix backend on a free 127.0.0.1 port,
// with one identity (kAccessKey / kSecretKey) and the bucket "photon". Tests
// skip where `versitygw` is not installed (tools/install-deps.sh builds it).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include <photon/ecosystem/oss.h>
#include <photon/net/http/client.h>

#include "../util/temp_dir.h"
#include "http_test_util.h"

namespace photon_test {

constexpr const char* kAccessKey = "photonak";
constexpr const char* kSecretKey = "photonsecretkey";

inline bool port_free(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a = {};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    int r = ::bind(fd, (sockaddr*)&a, sizeof(a));
    ::close(fd);
    return r == 0;
}

// A free port in [20000, 45000), or 0.
inline int pick_port(std::mt19937& rng) {
    for (int i = 0; i < 1000; i++) {
        int p = 20000 + (int)(rng() % 25000);
        if (port_free(p)) return p;
    }
    return 0;
}

class s3_server {
public:
    s3_server() : tmp_("photon-s3") {
        if (!have_tool("versitygw") || !tmp_.ok()) return;
        std::mt19937 rng(std::random_device{}());
        int port = pick_port(rng);
        if (!port) return;
        std::filesystem::create_directories(tmp_ / "data");
        proc_.reset(new child_process(
            {"versitygw", "--access", kAccessKey, "--secret", kSecretKey, "--port",
             "127.0.0.1:" + std::to_string(port), "posix", tmp_ / "data"},
            "", tmp_ / "versitygw.log"));
        if (!proc_->started() || !wait_until_listening((uint16_t)port, 30000)) return;
        port_ = (uint16_t)port;
        for (int i = 0; i < 100 && !make_bucket("photon"); i++) photon::thread_usleep(100 * 1000);
    }
    bool ok() const { return ready_; }
    uint16_t port() const { return port_; }
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
    std::string log() const { return slurp(tmp_ / "versitygw.log"); }
    const char* bucket() const { return "photon"; }

    photon::objstore::ClientOptions options() const {
        photon::objstore::ClientOptions o;
        o.endpoint = endpoint();
        o.bucket = bucket();
        o.path_style = true;
        o.sign_version = photon::objstore::SignVersion::S3V4;
        o.retry_base_interval_us = 20000;
        return o;
    }
    photon::objstore::CredentialParameters credentials() const {
        return {kAccessKey, kSecretKey, ""};
    }
    photon::objstore::Client* new_client(const char* secret = kSecretKey) const {
        return photon::objstore::new_oss_client(
            options(), 0, photon::objstore::CredentialParameters{kAccessKey, secret, ""});
    }

    // CreateBucket, signed with our own SigV4 authenticator: true once it exists.
    bool make_bucket(const std::string& name) {
        using namespace photon::net::http;
        std::unique_ptr<photon::objstore::Authenticator> auth(
            photon::objstore::new_s3_authenticator(
                photon::objstore::CredentialParameters{kAccessKey, kSecretKey, ""}));
        std::unique_ptr<Client> http(new_http_client());
        auto op = http->new_operation(Verb::PUT, endpoint() + "/" + name);
        DEFER(http->destroy_operation(op));
        op->set_body("", 0);
        photon::objstore::Authenticator::SignParameters p{};
        p.region = "us-east-1";
        p.object = name;
        p.verb = Verb::PUT;
        auth->sign(op->req.headers, p);
        if (op->call() < 0) return false;
        op->resp.skip_body();
        // 409 BucketAlreadyOwnedByYou / BucketAlreadyExists: there already.
        ready_ = op->status_code == 200 || op->status_code == 409;
        return ready_;
    }

private:
    temp_dir tmp_;
    std::unique_ptr<child_process> proc_;
    uint16_t port_ = 0;
    bool ready_ = false;
};

}  // namespace photon_test
