// A SeaweedFS S3 gateway for the object storage tests: `weed server` with a
// master, a volume server, a filer and the S3 API on free 127.0.0.1 ports
// (each port + 10000 free too: SeaweedFS puts its gRPC ports there), data in
// a temporary directory, one identity (kAccessKey / kSecretKey). Tests skip
// where `weed` is not installed (tools/install-deps.sh builds it).
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

// A port p in [20000, 45000) with p and p + 10000 free (not `avoid`).
inline int pick_port(std::mt19937& rng, int avoid1 = 0, int avoid2 = 0, int avoid3 = 0) {
    for (int i = 0; i < 1000; i++) {
        int p = 20000 + (int)(rng() % 25000);
        if (p == avoid1 || p == avoid2 || p == avoid3) continue;
        if (port_free(p) && port_free(p + 10000)) return p;
    }
    return 0;
}

class seaweed_s3 {
public:
    seaweed_s3() : tmp_("photon-seaweed") {
        if (!have_tool("weed") || !tmp_.ok()) return;
        std::mt19937 rng(std::random_device{}());
        int master = pick_port(rng), volume = pick_port(rng, master);
        int filer = pick_port(rng, master, volume), s3 = pick_port(rng, master, volume, filer);
        if (!master || !volume || !filer || !s3) return;
        std::ofstream(tmp_ / "s3.json")
            << "{\"identities\":[{\"name\":\"photon\",\"credentials\":[{\"accessKey\":\""
            << kAccessKey << "\",\"secretKey\":\"" << kSecretKey
            << "\"}],\"actions\":[\"Admin\",\"Read\",\"List\",\"Tagging\",\"Write\"]}]}\n";
        std::filesystem::create_directories(tmp_ / "data");
        proc_.reset(new child_process(
            {"weed", "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=" + (tmp_ / "data"),
             "-master.port=" + std::to_string(master), "-volume.port=" + std::to_string(volume),
             "-master.volumeSizeLimitMB=1024", "-volume.max=64", "-filer",
             "-filer.port=" + std::to_string(filer), "-s3", "-s3.port=" + std::to_string(s3),
             "-s3.config=" + (tmp_ / "s3.json")},
            "", tmp_ / "weed.log"));
        if (!proc_->started()) return;
        // The S3 port opens before the filer answers: retry the bucket
        // creation until it succeeds (within about 60 s).
        if (!wait_until_listening((uint16_t)s3, 60000)) return;
        port_ = (uint16_t)s3;
        for (int i = 0; i < 600 && !make_bucket("photon"); i++) photon::thread_usleep(100 * 1000);
    }
    bool ok() const { return ready_; }
    uint16_t port() const { return port_; }
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
    std::string log() const { return slurp(tmp_ / "weed.log"); }
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
