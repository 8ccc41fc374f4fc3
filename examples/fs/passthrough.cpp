// passthrough: mounts a directory somewhere else through photon's local file
// system and its FUSE adaptor, written as a PhotonLibOS program would be.
//
//   passthrough SRC MOUNTPOINT [-f] [-o opt,...]
//     -o ioengine=iouring|psync|posixaio|libaio   how file data moves
//        (default iouring, psync where io_uring is missing; libaio adds
//        O_DIRECT, with bounce buffers for unaligned requests)
//     -o no_splice_write   read through the I/O engine only (by default,
//        reads of 32-512 KiB are spliced from the file: one copy less)
//     the rest are fuser_go's (<photon/fs/fuse_adaptor.h>): -f (foreground),
//     -o threads=N, direct_io, kernel_cache, attr_timeout=S, max_background=N,
//     auto_unmount, allow_other, ...
//
// Unmount with `fusermount3 -u MOUNTPOINT`, or Ctrl-C / kill (SIGINT,
// SIGTERM) in the foreground. After a crash (kill -9), `fusermount3 -u
// MOUNTPOINT` clears the dead mount; -o auto_unmount does it by itself.
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/fs/aligned-file.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/fuse_adaptor.h>
#include <photon/fs/localfs.h>

using namespace photon;

struct passthrough_config {
    char* ioengine = nullptr;
    char* src = nullptr;
};

static const struct fuse_opt passthrough_opts[] = {
    {"ioengine=%s", offsetof(passthrough_config, ioengine), 0},
    FUSE_OPT_END,
};

// The first non-option argument is SRC: taken out; the mount point stays.
static int take_src(void* data, const char* arg, int key, struct fuse_args*) {
    auto cfg = (passthrough_config*)data;
    if (key != FUSE_OPT_KEY_NONOPT || cfg->src) return 1;
    cfg->src = strdup(arg);
    return 0;
}

// io_uring where the kernel offers it (not too old, not filtered out).
static bool have_io_uring() {
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    int fd = (int)syscall(__NR_io_uring_setup, 1, &p);
    if (fd < 0) return false;
    close(fd);
    return true;
}

static int engine_of(const char* name) {
    if (!name) return have_io_uring() ? fs::ioengine_iouring : fs::ioengine_psync;
    if (!strcmp(name, "iouring") || !strcmp(name, "io_uring")) return fs::ioengine_iouring;
    if (!strcmp(name, "psync")) return fs::ioengine_psync;
    if (!strcmp(name, "posixaio")) return fs::ioengine_posixaio;
    if (!strcmp(name, "libaio")) return fs::ioengine_libaio;
    return -1;
}

int main(int argc, char** argv) {
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    DEFER(fuse_opt_free_args(&args));
    passthrough_config cfg;
    if (fuse_opt_parse(&args, &cfg, passthrough_opts, take_src) < 0) return 1;
    DEFER(free(cfg.src); free(cfg.ioengine));
    bool help = false;
    for (int i = 1; i < args.argc; i++)
        help |= !strcmp(args.argv[i], "-h") || !strcmp(args.argv[i], "--help");
    if (help) {
        printf("usage: %s SRC MOUNTPOINT [-f] [-o ioengine=iouring|psync|posixaio|libaio]\n\n",
               argv[0]);
        auto host = fs::new_localfs_adaptor();  // fuser_go prints its options and returns
        DEFER(delete host);
        char empty[] = "", dash_h[] = "-h";
        char* help_argv[] = {empty, dash_h, nullptr};  // argv[0] "": no second usage line
        return fs::fuser_go(host, 2, help_argv);
    }
    int engine = engine_of(cfg.ioengine);
    if (!cfg.src || engine < 0) {
        fprintf(stderr, "usage: %s SRC MOUNTPOINT [-f] [-o ioengine=...] (-h for more)\n", argv[0]);
        return 1;
    }
    // libfuse changes to / when it forks into the background: use a full path.
    char src[PATH_MAX];
    if (!realpath(cfg.src, src)) {
        fprintf(stderr, "%s: %s: %s\n", argv[0], cfg.src, strerror(errno));
        return 1;
    }
    // Reads of 32-512 KiB are spliced from the files' descriptors: a copy
    // less for sequential reads (-o no_splice_write turns it off).
    fuse_opt_insert_arg(&args, 1, "-osplice_write,splice_move");
    auto local = fs::new_localfs_adaptor(src, engine);
    if (!local) LOG_ERRNO_RETURN(0, 1, "cannot use ", src);
    fs::IFileSystem* fs = local;
    if (engine == fs::ioengine_libaio) fs = fs::new_aligned_fs_adaptor(local, 4096, true, true);
    DEFER(delete fs);
    log_output_level = ALOG_WARN;
    return fs::fuser_go(fs, args.argc, args.argv) == 0 ? 0 : 1;
}
