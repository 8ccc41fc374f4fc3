// bucketfs: mounts an object store bucket (S3, OSS, MinIO, SeaweedFS, ...)
// through photon's object storage client, bucketfs and the FUSE adaptor.
//
//   bucketfs ENDPOINT BUCKET MOUNTPOINT [-f] [-o opt,...]
//     ENDPOINT             http://host:port, https://host or host (https)
//     -o sign=s3|oss|oss4  AWS SigV4 (default), OSS V1 or OSS V4 signing
//     -o region=NAME       the region signed for (V4; us-east-1 by default)
//     -o virtual_host      bucket.endpoint URLs (default: path-style)
//     -o part_size=MiB     multipart part size of writes (default 16)
//     -o crc32c            S3 flexible checksums: uploads carry a CRC32C the
//                          service checks; whole reads are checked against it
//     -o cache_dir=DIR     read through fs/cache's full-file cache kept in DIR
//                          (needs -f: the cache lives on this process's vCPU,
//                          and photon does not fork once initialized)
//     -o cache_gib=N       the cache's capacity (default 4)
//     -o refill_kib=K      its refill unit, a power of 2 from 4 (default 1024)
//     the rest are fuser_go's (<photon/fs/fuse_adaptor.h>)
// Credentials come from the environment: AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or OSS_ACCESS_KEY_ID,
// OSS_ACCESS_KEY_SECRET (and OSS_SESSION_TOKEN) with -o sign=oss|oss4.
//
// Files are read with ranged GETs and written as new objects, in order
// (see <photon/fs/bucketfs.h>): `cp -r` into and out of the mount works,
// editing a file in place does not. Unmount with `fusermount3 -u MOUNTPOINT`.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/ecosystem/oss.h>
#include <photon/fs/bucketfs.h>
#include <photon/fs/cache/cache.h>
#include <photon/fs/fuse_adaptor.h>
#include <photon/fs/localfs.h>
#include <photon/photon.h>

using namespace photon;

struct bucketfs_config {
    char* sign = nullptr;
    char* region = nullptr;
    int virtual_host = 0;
    int part_mib = 16;
    int crc32c = 0;
    char* cache_dir = nullptr;
    int cache_gib = 4;
    int refill_kib = 1024;
    char* args[2] = {nullptr, nullptr};  // ENDPOINT, BUCKET
    bool foreground = false;
};

static const struct fuse_opt bucketfs_opts[] = {
    {"sign=%s", offsetof(bucketfs_config, sign), 0},
    {"region=%s", offsetof(bucketfs_config, region), 0},
    {"virtual_host", offsetof(bucketfs_config, virtual_host), 1},
    {"part_size=%d", offsetof(bucketfs_config, part_mib), 0},
    {"crc32c", offsetof(bucketfs_config, crc32c), 1},
    {"cache_dir=%s", offsetof(bucketfs_config, cache_dir), 0},
    {"cache_gib=%d", offsetof(bucketfs_config, cache_gib), 0},
    {"refill_kib=%d", offsetof(bucketfs_config, refill_kib), 0},
    FUSE_OPT_END,
};

// The first two non-option arguments are ENDPOINT and BUCKET: taken out.
static int take_args(void* data, const char* arg, int key, struct fuse_args*) {
    auto cfg = (bucketfs_config*)data;
    if (strcmp(arg, "-f") == 0 || strcmp(arg, "-d") == 0) cfg->foreground = true;
    if (key != FUSE_OPT_KEY_NONOPT) return 1;
    for (auto& a : cfg->args)
        if (!a) return a = strdup(arg), 0;
    return 1;
}

static std::string env(const char* name) {
    auto v = getenv(name);
    return v ? v : "";
}

int main(int argc, char** argv) {
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    DEFER(fuse_opt_free_args(&args));
    bucketfs_config cfg;
    if (fuse_opt_parse(&args, &cfg, bucketfs_opts, take_args) < 0) return 1;
    DEFER(free(cfg.sign); free(cfg.region); free(cfg.cache_dir); free(cfg.args[0]);
          free(cfg.args[1]));
    if (!cfg.args[0] || !cfg.args[1]) {
        fprintf(stderr,
                "usage: %s ENDPOINT BUCKET MOUNTPOINT [-f] [-o sign=s3|oss|oss4,region=R,"
                "virtual_host,part_size=MiB,crc32c,cache_dir=DIR,cache_gib=N,refill_kib=K]\n",
                argv[0]);
        return 1;
    }
    objstore::ClientOptions o;
    o.endpoint = cfg.args[0];
    o.bucket = cfg.args[1];
    o.path_style = !cfg.virtual_host;
    o.s3_crc32c = cfg.crc32c;
    if (cfg.region) o.region = cfg.region;
    std::string sign = cfg.sign ? cfg.sign : "s3";
    objstore::CredentialParameters cred;
    if (sign == "s3") {
        o.sign_version = objstore::SignVersion::S3V4;
        cred = {env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"), env("AWS_SESSION_TOKEN")};
    } else if (sign == "oss" || sign == "oss4") {
        o.sign_version =
            sign == "oss" ? objstore::SignVersion::OssV1 : objstore::SignVersion::OssV4;
        cred = {env("OSS_ACCESS_KEY_ID"), env("OSS_ACCESS_KEY_SECRET"), env("OSS_SESSION_TOKEN")};
    } else {
        fprintf(stderr, "%s: sign=%s: expected s3, oss or oss4\n", argv[0], sign.c_str());
        return 1;
    }
    auto client = objstore::new_oss_client(o, 60, std::move(cred));
    if (!client) LOG_ERRNO_RETURN(0, 1, "cannot make a client for `", o.endpoint);
    auto fs = fs::new_bucket_fs(client, true, (size_t)std::max(cfg.part_mib, 5) << 20);
    DEFER(delete fs);
    log_output_level = ALOG_WARN;
    if (!cfg.cache_dir) return fs::fuser_go(fs, args.argc, args.argv) == 0 ? 0 : 1;
    if (!cfg.foreground) {
        fprintf(stderr, "%s: cache_dir needs -f (photon does not fork once initialized)\n",
                argv[0]);
        return 1;
    }
    // The cache's eviction timer runs on the vCPU that makes it: this thread, which then
    // serves the mount.
    if (photon::init(INIT_EVENT_DEFAULT, INIT_IO_NONE) < 0) LOG_ERRNO_RETURN(0, 1, "photon::init");
    DEFER(photon::fini());
    auto media = fs::new_localfs_adaptor(cfg.cache_dir, fs::ioengine_psync);
    if (!media) LOG_ERRNO_RETURN(0, 1, "cannot open the cache directory `", cfg.cache_dir);
    std::unique_ptr<fs::IFileSystem> cached(
        fs::new_full_file_cached_fs(fs, media, (uint64_t)std::max(cfg.refill_kib, 4) << 10,
                                    std::max(cfg.cache_gib, 1), 1000 * 1000, 0, nullptr, 0));
    if (!cached) LOG_ERRNO_RETURN(0, 1, "cannot make the cache (refill_kib a power of 2?)");
    return fs::fuser_go(cached.get(), args.argc, args.argv) == 0 ? 0 : 1;
}
