// io-perf: a fio-like file I/O benchmark on one vCPU. io_depth coroutines
// each keep one request of io_size bytes in flight on one file through
// photon::fs (an I/O engine of localfs.h); after a ramp it reports IOPS,
// bandwidth and CPU time (user + system, all threads) per I/O.
//   io-perf -disk_path=/data/f -disk_size=4G -rw=randread -io_engine=libaio
// With -compare it runs libaio and io_uring, each beside fio's run of the
// same job when fio is installed, in rounds, and prints the medians and the
// ratios to fio.
// The file is filled with data first if it is smaller than disk_size (a
// sparse file would be "read" without touching the device).
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <photon/fs/localfs.h>
#include <photon/io/aio-wrapper.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

DEFINE_string(disk_path, "io-perf.dat", "file to run on (created and filled if short)");
DEFINE_string(disk_size, "4G", "bytes of the file to use (K, M, G suffixes)");
DEFINE_uint64(io_size, 4096, "bytes per request");
DEFINE_uint64(io_depth, 128, "requests in flight (one coroutine each)");
DEFINE_string(rw, "randread", "randread | randwrite | read | write");
DEFINE_bool(direct, true, "open with O_DIRECT (libaio always does)");
DEFINE_string(io_engine, "libaio", "psync | libaio | posixaio | iouring");
DEFINE_string(event_engine, "auto", "epoll | iouring | auto (iouring for -io_engine=iouring)");
DEFINE_uint64(duration, 15, "seconds measured");
DEFINE_uint64(ramp, 2, "seconds run before measuring");
DEFINE_int32(cpu, -1, "pin the vCPU to this CPU (-1: no pinning)");
DEFINE_bool(compare, false,
            "run libaio and iouring, each beside fio with the same job (if fio is installed), "
            "in alternating rounds, and print the medians and ratios");
DEFINE_uint64(rounds, 3, "rounds of -compare");

namespace {

struct stats {
    uint64_t ios = 0;
    uint64_t errors = 0;
    bool stop = false;
    uint64_t next_seq = 0;  // sequential modes: the next block
};

uint64_t parse_size(const std::string& s) {
    char* end = nullptr;
    uint64_t v = strtoull(s.c_str(), &end, 10);
    switch (end && *end ? (*end | 0x20) : 0) {
        case 'k':
            return v << 10;
        case 'm':
            return v << 20;
        case 'g':
            return v << 30;
        case 't':
            return v << 40;
        default:
            return v;
    }
}

int engine_of(const std::string& name) {
    if (name == "libaio") return photon::fs::ioengine_libaio;
    if (name == "posixaio") return photon::fs::ioengine_posixaio;
    if (name == "iouring") return photon::fs::ioengine_iouring;
    if (name == "psync") return photon::fs::ioengine_psync;
    return -1;
}

// Makes the file at least `size` bytes of real (non-hole) data.
bool prepare_file(const char* path, uint64_t size) {
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    if (fd < 0) return perror("open"), false;
    struct stat st;
    fstat(fd, &st);
    if ((uint64_t)st.st_size >= size) return close(fd), true;
    printf("io-perf: filling %s to %llu bytes\n", path, (unsigned long long)size);
    std::vector<char> chunk(1 << 20);
    for (size_t i = 0; i < chunk.size(); i++) chunk[i] = (char)(i * 131 + 7);
    for (uint64_t off = 0; off < size; off += chunk.size()) {
        size_t n = std::min<uint64_t>(chunk.size(), size - off);
        if (pwrite(fd, chunk.data(), n, off) != (ssize_t)n)
            return perror("pwrite"), close(fd), false;
    }
    fsync(fd);
    close(fd);
    return true;
}

uint64_t cpu_us() {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    auto us = [](const timeval& t) { return (uint64_t)t.tv_sec * 1000000 + t.tv_usec; };
    return us(ru.ru_utime) + us(ru.ru_stime);
}

void worker(photon::fs::IFile* f, stats* st, uint64_t blocks, bool random, bool is_write,
            uint64_t seed) {
    void* buf = nullptr;
    if (posix_memalign(&buf, 4096, FLAGS_io_size)) return (void)st->errors++;
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
    auto next = [&x] { return x ^= x << 13, x ^= x >> 7, x ^= x << 17; };  // xorshift64
    // Random bytes, as fio writes: a storage stack below may compress or
    // deduplicate a constant pattern.
    for (size_t i = 0; i + 8 <= FLAGS_io_size; i += 8) {
        uint64_t v = next();
        memcpy((char*)buf + i, &v, 8);
    }
    while (!st->stop) {
        uint64_t block;
        if (random) {
            block = next() % blocks;
        } else {
            block = st->next_seq++ % blocks;
        }
        off_t off = (off_t)(block * FLAGS_io_size);
        ssize_t r =
            is_write ? f->pwrite(buf, FLAGS_io_size, off) : f->pread(buf, FLAGS_io_size, off);
        if (r != (ssize_t)FLAGS_io_size) {
            if (st->errors++ == 0) fprintf(stderr, "io-perf: I/O failed: %s\n", strerror(errno));
            if (st->errors > 100) st->stop = true;
        } else {
            st->ios++;
        }
    }
    free(buf);
}

// ---- -compare: child runs of io-perf and fio, one result line each ----

struct result {
    double iops = 0, cpu_us_per_io = 0;
    bool ok = false;
};

// Runs argv (argv[0] found on PATH), returns its stdout; *status its exit status.
std::string capture(const std::vector<std::string>& args, int* status) {
    int p[2];
    if (pipe(p) < 0) return *status = -1, "";
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        std::vector<char*> av;
        for (auto& a : args) av.push_back(const_cast<char*>(a.c_str()));
        av.push_back(nullptr);
        execvp(av[0], av.data());
        _exit(127);
    }
    close(p[1]);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(p[0], buf, sizeof(buf))) > 0;) out.append(buf, n);
    close(p[0]);
    waitpid(pid, status, 0);
    return out;
}

// The number after `"key" :` (fio's JSON layout) at or after `from`.
double json_number(const std::string& js, const std::string& key, size_t from) {
    auto at = js.find("\"" + key + "\" :", from);
    return at == std::string::npos ? -1 : atof(js.c_str() + at + key.size() + 4);
}

bool have_fio() {
    int st;
    capture({"fio", "--version"}, &st);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

std::vector<std::string> common_flags() {
    return {"-disk_path=" + FLAGS_disk_path,
            "-disk_size=" + FLAGS_disk_size,
            "-io_size=" + std::to_string(FLAGS_io_size),
            "-io_depth=" + std::to_string(FLAGS_io_depth),
            "-rw=" + FLAGS_rw,
            "-duration=" + std::to_string(FLAGS_duration),
            "-ramp=" + std::to_string(FLAGS_ramp),
            "-cpu=" + std::to_string(FLAGS_cpu)};
}

result run_ours(const std::string& engine) {
    auto args = common_flags();
    args.insert(args.begin(), "/proc/self/exe");
    args.push_back("-io_engine=" + engine);
    args.push_back(FLAGS_direct ? "-direct" : "-nodirect");
    int st;
    std::string out = capture(args, &st);
    result r;
    auto i = out.find("IOPS="), c = out.find("% ");
    if (i == std::string::npos || c == std::string::npos) return r;
    r.iops = atof(out.c_str() + i + 5);
    r.cpu_us_per_io = atof(out.c_str() + c + 2);
    r.ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    return r;
}

// fio's CPU per I/O: (usr + sys)% of the job's runtime over its I/Os, as fio counts them.
result run_fio(const std::string& engine) {
    bool write = FLAGS_rw == "randwrite" || FLAGS_rw == "write";
    std::vector<std::string> args = {
        "fio",
        "--name=io-perf",
        "--filename=" + FLAGS_disk_path,
        "--ioengine=" + std::string(engine == "iouring" ? "io_uring" : "libaio"),
        "--direct=" + std::to_string((int)FLAGS_direct),
        "--rw=" + FLAGS_rw,
        "--bs=" + std::to_string(FLAGS_io_size),
        "--iodepth=" + std::to_string(FLAGS_io_depth),
        "--size=" + FLAGS_disk_size,
        "--time_based=1",
        "--runtime=" + std::to_string(FLAGS_duration),
        "--ramp_time=" + std::to_string(FLAGS_ramp),
        "--randrepeat=0",
        "--norandommap=1",
        "--output-format=json"};
    if (FLAGS_cpu >= 0) args.push_back("--cpus_allowed=" + std::to_string(FLAGS_cpu));
    int st;
    std::string js = capture(args, &st);
    result r;
    size_t dir = js.find(write ? "\"write\" :" : "\"read\" :");
    double iops = json_number(js, "iops", dir), ios = json_number(js, "total_ios", dir);
    double usr = json_number(js, "usr_cpu", 0), sys = json_number(js, "sys_cpu", 0);
    double ms = json_number(js, "job_runtime", 0);
    if (dir == std::string::npos || iops <= 0 || ios <= 0 || ms <= 0) return r;
    r.iops = iops;
    r.cpu_us_per_io = (usr + sys) / 100 * ms * 1000 / ios;
    r.ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    return r;
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Rounds of {ours, fio} x {libaio, iouring}, the order rotated each round.
int compare() {
    if (!prepare_file(FLAGS_disk_path.c_str(), parse_size(FLAGS_disk_size))) return 1;
    bool fio = have_fio();
    if (!fio) printf("io-perf: fio is not installed: photon's engines only\n");
    struct target {
        std::string label, engine;
        bool is_fio;
        std::vector<double> iops, cpu;
    };
    std::vector<target> ts = {{"photon libaio", "libaio", false, {}, {}},
                              {"photon iouring", "iouring", false, {}, {}}};
    if (fio) {
        ts.insert(ts.begin() + 1, {"fio libaio", "libaio", true, {}, {}});
        ts.push_back({"fio io_uring", "iouring", true, {}, {}});
    }
    for (uint64_t round = 0; round < FLAGS_rounds; round++) {
        for (size_t k = 0; k < ts.size(); k++) {
            auto& t = ts[(k + round) % ts.size()];
            result r = t.is_fio ? run_fio(t.engine) : run_ours(t.engine);
            printf("round %llu: %-15s %s IOPS=%.0f %.2fus/IO\n", (unsigned long long)round + 1,
                   t.label.c_str(), r.ok ? "" : "FAILED", r.iops, r.cpu_us_per_io);
            fflush(stdout);
            if (!r.ok) return 1;
            t.iops.push_back(r.iops);
            t.cpu.push_back(r.cpu_us_per_io);
        }
    }
    printf("\n%s bs=%llu depth=%llu direct=%d, median of %llu rounds x %llus\n", FLAGS_rw.c_str(),
           (unsigned long long)FLAGS_io_size, (unsigned long long)FLAGS_io_depth, (int)FLAGS_direct,
           (unsigned long long)FLAGS_rounds, (unsigned long long)FLAGS_duration);
    printf("%-15s %10s %10s %12s %12s\n", "target", "IOPS", "us/IO", "IOPS x fio", "CPU x fio");
    for (auto& t : ts) {
        double iops = median(t.iops), cpu = median(t.cpu);
        printf("%-15s %10.0f %10.2f", t.label.c_str(), iops, cpu);
        auto peer = std::find_if(ts.begin(), ts.end(),
                                 [&](const target& p) { return p.is_fio && p.engine == t.engine; });
        if (!t.is_fio && peer != ts.end())
            printf(" %12.3f %12.3f", iops / median(peer->iops), cpu / median(peer->cpu));
        printf("\n");
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    gflags::SetUsageMessage("fio-like benchmark of photon's file I/O engines");
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    if (FLAGS_compare) return compare();
    int engine = engine_of(FLAGS_io_engine);
    uint64_t size = parse_size(FLAGS_disk_size);
    bool random = FLAGS_rw == "randread" || FLAGS_rw == "randwrite";
    bool is_write = FLAGS_rw == "randwrite" || FLAGS_rw == "write";
    if (engine < 0 || (!random && FLAGS_rw != "read" && FLAGS_rw != "write") || !FLAGS_io_size ||
        size < FLAGS_io_size || !FLAGS_io_depth) {
        fprintf(stderr, "io-perf: bad flags (see --help)\n");
        return 2;
    }
    if (FLAGS_cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(FLAGS_cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0) perror("sched_setaffinity");
    }
    if (!prepare_file(FLAGS_disk_path.c_str(), size)) return 1;

    bool uring = FLAGS_event_engine == "iouring" ||
                 (FLAGS_event_engine == "auto" && engine == photon::fs::ioengine_iouring);
    if (photon::init(uring ? photon::INIT_EVENT_IOURING : photon::INIT_EVENT_EPOLL,
                     photon::INIT_IO_NONE) < 0)
        return perror("photon::init"), 1;
    if (engine == photon::fs::ioengine_libaio &&
        libaio_wrapper_init((int)std::max<uint64_t>(FLAGS_io_depth, 32)) < 0)
        return perror("libaio_wrapper_init"), 1;
    int flags = O_RDWR | (FLAGS_direct ? O_DIRECT : 0);
    std::unique_ptr<photon::fs::IFile> f(
        photon::fs::open_localfile_adaptor(FLAGS_disk_path.c_str(), flags, 0644, engine));
    if (!f) return perror("open"), 1;

    stats st;
    uint64_t blocks = size / FLAGS_io_size;
    std::vector<photon::join_handle*> jhs;
    for (uint64_t i = 0; i < FLAGS_io_depth; i++) {
        auto th = photon::thread_create11(64 * 1024, &worker, f.get(), &st, blocks, random,
                                          is_write, i + 1);
        jhs.push_back(photon::thread_enable_join(th));
    }
    photon::thread_sleep(FLAGS_ramp);
    uint64_t ios0 = st.ios, cpu0 = cpu_us();
    auto t0 = std::chrono::steady_clock::now();
    photon::thread_sleep(FLAGS_duration);
    uint64_t ios = st.ios - ios0, cpu = cpu_us() - cpu0;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    st.stop = true;
    for (auto jh : jhs) photon::thread_join(jh);
    f.reset();

    double iops = ios / secs;
    printf(
        "io-perf: %s %s bs=%llu depth=%llu direct=%d event=%s: IOPS=%.0f BW=%.1fMiB/s "
        "CPU=%.1f%% %.2fus/IO errors=%llu\n",
        FLAGS_io_engine.c_str(), FLAGS_rw.c_str(), (unsigned long long)FLAGS_io_size,
        (unsigned long long)FLAGS_io_depth, (int)FLAGS_direct, uring ? "iouring" : "epoll", iops,
        iops * FLAGS_io_size / (1 << 20), 100.0 * cpu / 1e6 / secs, ios ? (double)cpu / ios : 0.0,
        (unsigned long long)st.errors);
    photon::fini();
    return st.errors ? 1 : 0;
}
