// httpfs-perf: reads a file over HTTP from start to end through httpfs
// (fs/httpfs/httpfs.h), one pread of -bs bytes after another, and reports the
// throughput; tools/httpfs-bench.sh runs it against nginx next to curl.
//   httpfs-perf -url=http://127.0.0.1:8080/big.bin -bs=4M -rounds=3
// Prints one line per round: "httpfs <bytes> bytes <seconds> s <MB/s> MB/s".
#include <gflags/gflags.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <photon/fs/httpfs/httpfs.h>
#include <photon/photon.h>

#include "perf_util.h"

DEFINE_string(url, "", "the file to read (http://host:port/path)");
DEFINE_string(bs, "4M", "bytes per pread (K, M suffixes)");
DEFINE_uint64(rounds, 1, "times to read the whole file");
DEFINE_string(event_engine, "default", "epoll | io_uring | default");

namespace {

uint64_t parse_size(const std::string& s) {
    char* end = nullptr;
    uint64_t v = strtoull(s.c_str(), &end, 10);
    char unit = end && *end ? (*end | 0x20) : 0;
    return unit == 'k' ? v << 10 : unit == 'm' ? v << 20 : unit == 'g' ? v << 30 : v;
}

int run() {
    std::unique_ptr<photon::fs::IFileSystem> fs(photon::fs::new_httpfs(false, 30ULL * 1000 * 1000));
    std::unique_ptr<photon::fs::IFile> f(fs ? fs->open(FLAGS_url.c_str(), O_RDONLY) : nullptr);
    struct stat st;
    if (!f || f->fstat(&st) < 0) {
        perror("httpfs-perf: cannot stat the file");
        return -1;
    }
    size_t bs = parse_size(FLAGS_bs);
    std::unique_ptr<char[]> buf(new char[bs]);
    for (uint64_t r = 0; r < FLAGS_rounds; r++) {
        auto t0 = std::chrono::steady_clock::now();
        uint64_t total = 0;
        for (;;) {
            ssize_t n = f->pread(buf.get(), bs, total);
            if (n < 0) {
                perror("httpfs-perf: pread");
                return -1;
            }
            if (n == 0) break;
            total += n;
        }
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (total != (uint64_t)st.st_size) {
            fprintf(stderr, "httpfs-perf: read %lu of %ld bytes\n", total, (long)st.st_size);
            return -1;
        }
        printf("httpfs %lu bytes %.3f s %.1f MB/s\n", total, s, total / s / 1e6);
        fflush(stdout);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("httpfs-perf -url=http://127.0.0.1:8080/big.bin [-bs=4M] [-rounds=1]");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    if (FLAGS_url.empty() || parse_size(FLAGS_bs) == 0) {
        fprintf(stderr, "httpfs-perf: -url and a nonzero -bs are needed\n");
        return 2;
    }
    return perf::on_vcpus("httpfs-perf", 1, perf::engine_flag(FLAGS_event_engine),
                          [](int) { return run(); }) < 0
               ? 1
               : 0;
}
