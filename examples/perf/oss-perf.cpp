// oss-perf: object GET/PUT load on photon's object storage client
// (<photon/ecosystem/oss.h>), the counterpart of s5cmd and curl in tools/oss-bench.py.
//
//   oss-perf [-endpoint http://127.0.0.1:7070] [-bucket photon] [-access_key AK]
//            [-secret_key SK] [-region us-east-1] [-op get|put|get_small|fill_small]
//            [-key big] [-size 1073741824] [-part_size 16777216] [-parallel 4] [-streams 1]
//            [-single] [-src FILE] [-verify SHA256HEX] [-prefix small/] [-count 10000]
//            [-inflight 64] [-duration 5] [-requests 0] [-event_engine epoll|io_uring|default]
//
// Credentials default to $AWS_ACCESS_KEY_ID / $AWS_SECRET_ACCESS_KEY; requests are signed
// with AWS SigV4, path-style URLs (what local S3 servers want).
// get: streams `key` through the client's streaming GET (a BodyReader reading 1 MiB at a
// time into one buffer, discarded): one whole-object GET, or with -streams N, ranged GETs of
// -part_size bytes, N in flight. The byte count must equal the object's size (HEAD);
// -verify HEX also compares the body's sha256 (one stream only).
// put: a multipart upload of -size bytes from memory (-src FILE: that file, mapped; else a
// pseudo-random pattern made before the clock starts), -part_size parts, -parallel parts
// in flight; -single: one PUT, as curl -T sends it. -sha256 prints the data's sha256 (read
// it back with get -verify to check what was stored).
// fill_small: PUTs -count objects of 4 KiB, -prefix%06d, -inflight at a time; each begins
// with its own key.
// get_small: -inflight coroutines GETting those objects in turn for -duration s (or
// -requests GETs); each answer must be 4 KiB beginning with its key.
// Prints a summary line: bytes or requests, seconds, MiB/s or requests/s, and the process's
// CPU time (user + system, all threads) over the transfer.
#include <fcntl.h>
#include <gflags/gflags.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/checksum/digest.h>
#include <photon/ecosystem/oss.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>

#include "load_window.h"
#include "perf_util.h"

DEFINE_string(endpoint, "http://127.0.0.1:7070", "S3 endpoint (http://host:port)");
DEFINE_string(bucket, "photon", "bucket");
DEFINE_string(access_key, "", "access key id (default $AWS_ACCESS_KEY_ID)");
DEFINE_string(secret_key, "", "secret key (default $AWS_SECRET_ACCESS_KEY)");
DEFINE_string(region, "us-east-1", "SigV4 region");
DEFINE_string(op, "get", "get | put | get_small | fill_small");
DEFINE_string(key, "big", "the object of get and put");
DEFINE_uint64(size, 1ull << 30, "put: bytes uploaded (with -src: the file's size)");
DEFINE_uint64(part_size, 16ull << 20, "put: multipart part size; get -streams N: range size");
DEFINE_uint64(parallel, 4, "put: parts in flight");
DEFINE_bool(single, false, "put: one PUT of the whole object instead of a multipart upload");
DEFINE_uint64(streams, 1, "get: 1 = one whole-object GET; N > 1: ranged GETs, N in flight");
DEFINE_string(src, "", "put: upload this file's bytes (mapped) instead of a generated pattern");
DEFINE_string(verify, "", "get: the sha256 (hex) the body must have");
DEFINE_bool(sha256, false, "put: print the sha256 of the bytes (computed before the clock starts)");
DEFINE_string(prefix, "small/", "get_small / fill_small: key prefix (then %06d)");
DEFINE_uint64(count, 10000, "get_small / fill_small: objects");
DEFINE_uint64(inflight, 64, "get_small / fill_small: coroutines, one request in flight each");
DEFINE_uint64(duration, 5, "get_small: seconds");
DEFINE_uint64(requests, 0, "get_small: stop after this many GETs (0: after -duration)");
DEFINE_string(event_engine, "default", "epoll | io_uring | default (io_uring, else epoll)");
DEFINE_uint64(read_kib, 64,
              "KiB asked of each read of a GET body (64: the buffer stays in cache and the"
              " socket never drains; 1024 was 0.75x as fast)");
DEFINE_bool(md5, true, "check whole bodies against MD5 ETags (ClientOptions::s3_md5_check)");
DEFINE_bool(crc32c, false,
            "S3 flexible checksums: CRC32C trailers on uploads, checked GETs "
            "(ClientOptions::s3_crc32c)");

namespace {

using namespace photon;
namespace objstore = photon::objstore;

constexpr size_t kSmall = 4096;

std::atomic<uint64_t> g_errors{0};

double cpu_now() {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

std::string hex(std::string_view d) {
    static const char* x = "0123456789abcdef";
    std::string s;
    for (unsigned char c : d) s += x[c >> 4], s += x[c & 15];
    return s;
}

std::string small_key(uint64_t i) {
    char k[32];
    snprintf(k, sizeof(k), "%06llu", (unsigned long long)i);
    return std::string(FLAGS_prefix).append(k);
}

// Wall clock and CPU of the transfer.
struct span {
    uint64_t t0 = perf::now_ns();
    double c0 = cpu_now();
    double seconds() const { return (perf::now_ns() - t0) / 1e9; }
    double cpu() const { return cpu_now() - c0; }
};

void summary(const char* what, uint64_t n, const span& s, const char* extra = "") {
    double sec = s.seconds(), cpu = s.cpu();
    bool bytes = FLAGS_op == "get" || FLAGS_op == "put";
    printf("oss-perf summary: op=%s %s=%llu seconds=%.3f ", FLAGS_op.c_str(), what,
           (unsigned long long)n, sec);
    if (bytes)
        printf("MiB/s=%.1f cpu_s=%.3f cpu_us_per_MiB=%.1f", n / 1048576.0 / sec, cpu,
               cpu * 1e6 / (n / 1048576.0));
    else
        printf("requests/s=%.0f cpu_s=%.3f cpu_us_per_req=%.2f", n / sec, cpu, cpu * 1e6 / n);
    printf(" errors=%llu%s\n", (unsigned long long)g_errors.load(), extra);
    fflush(stdout);
}

// Reads everything the stream gives into buf, discarding it; the byte count or -1.
ssize_t drain(IStream* in, char* buf, photon::sha256* sha) {
    ssize_t total = 0;
    for (;;) {
        ssize_t r = in->read(buf, FLAGS_read_kib << 10);
        if (r < 0) return -1;
        if (r == 0) return total;
        if (sha) sha->update(buf, r);
        total += r;
    }
}

// Runs worker in n coroutines of this vCPU and waits for them all.
template <typename F>
void run_workers(uint64_t n, F& worker) {
    std::vector<join_handle*> jh;
    for (uint64_t i = 0; i < n; i++) jh.push_back(thread_enable_join(thread_create11(worker)));
    for (auto j : jh) thread_join(j);
}

int do_get(objstore::Client* c) {
    objstore::ObjectHeaderMeta m;
    if (c->head_object(FLAGS_key, m) < 0 || !m.has_size()) return perror("oss-perf: HEAD"), -1;
    size_t size = m.size;
    if (!FLAGS_verify.empty() && FLAGS_streams != 1) {
        fprintf(stderr, "oss-perf: -verify needs -streams 1\n");
        return -1;
    }
    std::unique_ptr<photon::sha256> sha(FLAGS_verify.empty() ? nullptr : new photon::sha256);
    std::atomic<uint64_t> got{0};
    span s;
    if (FLAGS_streams == 1) {
        std::unique_ptr<char[]> buf(new char[FLAGS_read_kib << 10]);
        auto reader = [&](IStream* in) -> ssize_t {
            if (sha) *sha = photon::sha256();  // a retry starts again
            return drain(in, buf.get(), sha.get());
        };
        ssize_t r = c->get_object_range(FLAGS_key, 0, (size_t)-1, reader);
        if (r < 0) return perror("oss-perf: GET"), -1;
        got = r;
    } else {
        std::atomic<uint64_t> next{0};
        auto worker = [&]() {
            std::unique_ptr<char[]> buf(new char[FLAGS_read_kib << 10]);
            for (;;) {
                uint64_t off = next.fetch_add(FLAGS_part_size);
                if (off >= size) break;
                size_t n = std::min<uint64_t>(FLAGS_part_size, size - off);
                auto reader = [&](IStream* in) -> ssize_t { return drain(in, buf.get(), nullptr); };
                ssize_t r = c->get_object_range(FLAGS_key, off, n, reader);
                if (r != (ssize_t)n) {
                    g_errors++;
                    LOG_ERROR("oss-perf: GET ` at `: ` of ` bytes: `", FLAGS_key, off, r, n,
                              ERRNO());
                    break;
                }
                got += r;
            }
        };
        run_workers(FLAGS_streams, worker);
    }
    std::string extra;
    int ret = 0;
    if (got != size) {
        fprintf(stderr, "oss-perf: read %llu bytes of %zu\n", (unsigned long long)got.load(), size);
        ret = -1;
    }
    if (sha) {
        std::string h = hex(sha->finalize());
        extra = " sha256=" + h;
        if (h != FLAGS_verify) {
            fprintf(stderr, "oss-perf: sha256 %s != -verify %s\n", h.c_str(), FLAGS_verify.c_str());
            ret = -1;
        }
    }
    extra += " streams=" + std::to_string(FLAGS_streams);
    summary("bytes", got, s, extra.c_str());
    return g_errors ? -1 : ret;
}

// The bytes of put: a file mapped, or a pattern made here.
struct source {
    char* data = nullptr;
    size_t size = 0;
    bool mapped = false;
    ~source() {
        if (mapped)
            munmap(data, size);
        else
            free(data);
    }
    int open() {
        if (!FLAGS_src.empty()) {
            int fd = ::open(FLAGS_src.c_str(), O_RDONLY);
            struct stat st;
            if (fd < 0 || fstat(fd, &st) < 0) return perror("oss-perf: -src"), -1;
            size = st.st_size;
            // Not MAP_POPULATE: mapping 1 GiB up front held the upload back by ~0.2 s (3.41
            // against 3.17 s for a 1 GiB PUT); faults while sending overlap the transfer.
            void* p = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
            ::close(fd);
            if (p == MAP_FAILED) return perror("oss-perf: mmap"), -1;
            data = (char*)p, mapped = true;
            return 0;
        }
        size = FLAGS_size;
        data = (char*)malloc(size ? size : 1);
        if (!data) return perror("oss-perf: malloc"), -1;
        uint64_t x = 0x9E3779B97F4A7C15ULL;
        size_t i = 0;
        for (; i + 8 <= size; i += 8) {
            x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
            uint64_t v = x * 2685821657736338717ULL;
            memcpy(data + i, &v, 8);
        }
        for (; i < size; i++) data[i] = (char)i;
        return 0;
    }
};

int do_put(objstore::Client* c) {
    source src;
    if (src.open() < 0) return -1;
    std::string sum;  // before the clock; not by default (the whole run may be timed)
    if (FLAGS_sha256) sum = " sha256=" + hex(photon::sha256(src.data, src.size).finalize());
    size_t part = FLAGS_part_size;
    uint64_t nparts = (src.size + part - 1) / part;
    if (nparts == 0 || nparts > 10000) {
        fprintf(stderr, "oss-perf: %llu parts (1..10000 allowed)\n", (unsigned long long)nparts);
        return -1;
    }
    span s;
    if (FLAGS_single) {
        objstore::ObjectUploadOptions o;
        if (c->put_object(FLAGS_key, src.data, src.size, o) != (ssize_t)src.size)
            return perror("oss-perf: PUT"), -1;
        summary("bytes", src.size, s, (" single_put=1" + sum).c_str());
        return 0;
    }
    void* ctx = nullptr;
    if (c->init_multipart_upload(FLAGS_key, &ctx) < 0) return perror("oss-perf: init upload"), -1;
    std::atomic<uint64_t> next{0}, sent{0};
    auto worker = [&]() {
        for (;;) {
            uint64_t i = next++;
            if (i >= nparts || g_errors) break;
            size_t n = std::min<uint64_t>(part, src.size - i * part);
            objstore::ObjectUploadOptions o;
            if (c->upload_part(ctx, src.data + i * part, n, (int)i + 1, o) != (ssize_t)n) {
                g_errors++;
                LOG_ERROR("oss-perf: part ` failed: `", i + 1, ERRNO());
                break;
            }
            sent += n;
        }
    };
    run_workers(std::min<uint64_t>(FLAGS_parallel, nparts), worker);
    if (g_errors) {
        c->abort_multipart_upload(ctx);
        return -1;
    }
    if (c->complete_multipart_upload(ctx) < 0) return perror("oss-perf: complete"), -1;
    std::string extra = " parts=" + std::to_string(nparts) + " part_size=" + std::to_string(part) +
                        " parallel=" + std::to_string(FLAGS_parallel) + sum;
    summary("bytes", sent, s, extra.c_str());
    return 0;
}

int do_fill_small(objstore::Client* c) {
    std::atomic<uint64_t> next{0}, done{0};
    span s;
    auto worker = [&]() {
        char body[kSmall];
        for (;;) {
            uint64_t i = next++;
            if (i >= FLAGS_count) break;
            std::string k = small_key(i);
            memset(body, 'a' + (int)(i % 26), sizeof(body));
            memcpy(body, k.data(), k.size());
            objstore::ObjectUploadOptions o;
            if (c->put_object(k, body, sizeof(body), o) != (ssize_t)sizeof(body)) {
                g_errors++;
                LOG_EVERY_T(1, LOG_ERROR("oss-perf: PUT ` failed: `", k, ERRNO()));
                if (g_errors > 10) break;
                continue;
            }
            done++;
        }
    };
    run_workers(FLAGS_inflight, worker);
    summary("requests", done, s);
    return g_errors ? -1 : 0;
}

volatile bool g_stop = false;
void on_signal(int) { g_stop = true; }

int do_get_small(objstore::Client* c) {
    std::atomic<uint64_t> next{0}, done{0};
    uint64_t limit = FLAGS_requests ? FLAGS_requests : UINT64_MAX;
    span s;
    uint64_t end = s.t0 + FLAGS_duration * 1000000000ull;
    auto worker = [&]() {
        char body[kSmall + 1];
        for (;;) {
            if (g_stop || perf::now_ns() >= end) break;
            uint64_t n = next++;
            if (n >= limit) break;
            std::string k = small_key(n % FLAGS_count);
            ssize_t r = c->get_object_range(k, body, sizeof(body), 0);
            if (r != (ssize_t)kSmall || memcmp(body, k.data(), k.size()) != 0) {
                g_errors++;
                LOG_EVERY_T(1, LOG_ERROR("oss-perf: GET `: ` bytes: `", k, r, ERRNO()));
                if (g_errors > 100) break;
                continue;
            }
            done++;
        }
    };
    run_workers(FLAGS_inflight, worker);
    std::string extra = " inflight=" + std::to_string(FLAGS_inflight);
    summary("requests", done, s, extra.c_str());
    return g_errors ? -1 : 0;
}

int run() {
    objstore::ClientOptions o;
    o.endpoint = FLAGS_endpoint;
    o.bucket = FLAGS_bucket;
    o.region = FLAGS_region;
    o.path_style = true;
    o.s3_md5_check = FLAGS_md5;
    o.s3_crc32c = FLAGS_crc32c;
    o.sign_version = objstore::SignVersion::S3V4;
    std::string ak = FLAGS_access_key, sk = FLAGS_secret_key;
    if (ak.empty() && getenv("AWS_ACCESS_KEY_ID")) ak = getenv("AWS_ACCESS_KEY_ID");
    if (sk.empty() && getenv("AWS_SECRET_ACCESS_KEY")) sk = getenv("AWS_SECRET_ACCESS_KEY");
    std::unique_ptr<objstore::Client> c(
        objstore::new_oss_client(o, 60, objstore::CredentialParameters{ak, sk, ""}));
    if (!c) return perror("oss-perf: client"), -1;
    if (FLAGS_op == "get") return do_get(c.get());
    if (FLAGS_op == "put") return do_put(c.get());
    if (FLAGS_op == "fill_small") return do_fill_small(c.get());
    return do_get_small(c.get());
}

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("object GET/PUT load on photon's object storage client");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    if ((FLAGS_op != "get" && FLAGS_op != "put" && FLAGS_op != "get_small" &&
         FLAGS_op != "fill_small") ||
        FLAGS_part_size == 0 || FLAGS_parallel == 0 || FLAGS_streams == 0 || FLAGS_inflight == 0 ||
        FLAGS_count == 0 || FLAGS_count > 1000000) {
        fprintf(stderr, "oss-perf: bad flags (see -help)\n");
        return 2;
    }
    signal(SIGINT, &on_signal);
    signal(SIGTERM, &on_signal);
    signal(SIGPIPE, SIG_IGN);
    set_log_output_level(ALOG_WARN);
    int r = perf::on_vcpus("oss-perf", 1, perf::engine_flag(FLAGS_event_engine),
                           [](int) { return run(); });
    return r < 0 ? 1 : 0;
}
