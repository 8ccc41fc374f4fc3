// The public entry points: command line, mount, daemonizing, a vCPU if the
// caller is none, serving (fuse_session_server.h), unmount and cleanup.
#include <photon/fs/fuse_adaptor.h>

#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

#include <photon/common/alog.h>
#include <photon/common/memory_budget.h>
#include <photon/common/utility.h>
#include <photon/fs/filesystem.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include "fuse_exit_hooks.h"
#include "fuse_ll_fs.h"
#include "fuse_metrics.h"
#include "fuse_session_server.h"

namespace photon {
namespace fs {
namespace {

// -o options every run_* call takes (Photon's three, and ours).
struct common_options {
    int threads = 1;
    int force_splice_read = 0;
    char* looptype = nullptr;
    unsigned max_inflight = 1024;
    char* memory_budget = nullptr;  // bytes (K, M, G); else the process-wide budget
};
#define PHOTON_FUSE_OPT(t, f) \
    { t, offsetof(common_options, f), 0 }
const struct fuse_opt common_spec[] = {
    PHOTON_FUSE_OPT("threads=%d", threads),
    PHOTON_FUSE_OPT("force_splice_read=%d", force_splice_read),
    PHOTON_FUSE_OPT("looptype=%s", looptype),
    PHOTON_FUSE_OPT("max_inflight=%u", max_inflight),
    PHOTON_FUSE_OPT("memory_budget=%s", memory_budget),
    FUSE_OPT_END,
};
#undef PHOTON_FUSE_OPT

constexpr uint64_t kEvents = INIT_EVENT_DEFAULT & ~INIT_EVENT_SIGNAL;

// What one kind of run_* call mounts.
struct mount_plan {
    std::function<bool(struct fuse_args*)> parse;  // its own options; false: bad
    std::function<void()> help;
    std::function<fuse_session*(struct fuse_args*)> create;  // nullptr on failure
    std::function<void()> before_serve;
    std::function<void(fuse_session*)> finish;  // unmount (if mounted), destroy
    bool serialize_writers = false;
    fuse_metrics* metrics = nullptr;  // the session's, set by run() before create
};

void print_help(const char* prog, const mount_plan& plan) {
    if (prog && *prog) printf("usage: %s [options] <mountpoint>\n\n", prog);
    printf(
        "photon options:\n"
        "    -o threads=N           serve on N vCPUs (default 1)\n"
        "    -o max_inflight=N      requests in progress at once, per vCPU (1024)\n"
        "    -o memory_budget=SIZE  bytes of requests and replies in progress (K, M, G;\n"
        "                           default: the process-wide budget)\n"
        "\nFUSE options:\n");
    fuse_cmdline_help();
    if (plan.help) plan.help();
    fuse_lowlevel_help();
}

// Mounted: daemonize, become a vCPU if need be, serve, clean up.
int serve_mounted(fuse_session* se, const fuse_cmdline_opts& opts, const common_options& co,
                  mount_plan& plan) {
    if (!opts.foreground) {
        if (get_vcpu_num() > 0) {
            plan.finish(se);
            LOG_ERROR_RETURN(EINVAL, -1,
                             "fuse: will not fork into the background with photon initialized "
                             "(pass -f, or mount before photon::init)");
        }
        if (fuse_daemonize(0) != 0) {
            plan.finish(se);
            LOG_ERROR_RETURN(EIO, -1, "fuse: cannot fork into the background");
        }
    }
    // SIGINT, SIGTERM and SIGHUP end the session from here until it is
    // unmounted: a second signal while unmounting must not kill the process
    // with the mount still in place. exit() detaches it meanwhile.
    int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) {
        int e = errno;
        plan.finish(se);
        LOG_ERROR_RETURN(e, -1, "fuse: eventfd failed");
    }
    int slot = fuse_register_exit(se, wake_fd, opts.mountpoint);
    auto finish = [&] {
        fuse_session_unmount(se);    // (again in plan.finish: a no-op then)
        fuse_unregister_exit(slot);  // before the session goes: the handler uses it
        close(wake_fd);
        plan.finish(se);
    };
    bool own_vcpu = !CURRENT;
    if (own_vcpu && photon::init(kEvents, INIT_IO_LIBAIO) < 0 &&
        photon::init(kEvents, INIT_IO_NONE) < 0) {
        int e = errno;
        finish();
        LOG_ERROR_RETURN(e, -1, "fuse: cannot make this thread a vCPU");
    }
    if (plan.before_serve) plan.before_serve();
    fuse_server_options so;
    so.lanes = opts.singlethread ? 1 : co.threads;
    so.max_inflight = co.max_inflight;
    so.serialize_writers = plan.serialize_writers;
    so.wake_fd = wake_fd;
    so.metrics = plan.metrics;
    std::unique_ptr<MemoryBudget> budget;
    if (co.memory_budget)
        so.budget = (budget.reset(new MemoryBudget(MemoryBudget::parse_size(co.memory_budget))),
                     budget.get());
    int r = fuse_serve_session(se, so);
    int e = errno;
    finish();
    if (own_vcpu) photon::fini();
    if (r < 0) errno = e;
    return r;
}

int run(int argc, char* argv[], mount_plan& plan) {
    if (argc < 1 || !argv) LOG_ERROR_RETURN(EINVAL, -1, "fuse: no command line");
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    DEFER(fuse_opt_free_args(&args));
    common_options co;
    if (fuse_opt_parse(&args, &co, common_spec, nullptr) < 0)
        LOG_ERROR_RETURN(EINVAL, -1, "fuse: bad options");
    DEFER(free(co.looptype));
    DEFER(free(co.memory_budget));
    if (co.looptype || co.force_splice_read)
        LOG_INFO("fuse: looptype and force_splice_read are ignored (one coroutine loop here)");
    if (co.threads < 1 || co.threads > 64 || co.max_inflight < 1)
        LOG_ERROR_RETURN(EINVAL, -1, "fuse: threads must be 1..64, max_inflight at least 1");
    if (co.memory_budget && MemoryBudget::parse_size(co.memory_budget) == 0)
        LOG_ERROR_RETURN(EINVAL, -1, "fuse: memory_budget must be a size (bytes, or with K, M, G)");
    if (plan.parse && !plan.parse(&args)) LOG_ERROR_RETURN(EINVAL, -1, "fuse: bad options");
    struct fuse_cmdline_opts opts;
    memset(&opts, 0, sizeof(opts));
    if (fuse_parse_cmdline(&args, &opts) != 0)
        LOG_ERROR_RETURN(EINVAL, -1, "fuse: bad command line");
    DEFER(free(opts.mountpoint));
    if (opts.show_version) {
        printf("FUSE library version %s\n", fuse_pkgversion());
        fuse_lowlevel_version();
        return 0;
    }
    if (opts.show_help) {
        print_help(args.argv[0], plan);
        return 0;
    }
    if (!opts.mountpoint) LOG_ERROR_RETURN(EINVAL, -1, "fuse: no mount point given");
    fuse_metrics metrics;  // one collector per session, until it is destroyed
    plan.metrics = &metrics;
    fuse_session* se = plan.create(&args);
    if (!se) LOG_ERROR_RETURN(EINVAL, -1, "fuse: cannot create the session (see above)");
    if (fuse_session_mount(se, opts.mountpoint) != 0) {
        plan.finish(se);
        LOG_ERROR_RETURN(EIO, -1, "fuse: cannot mount on ", opts.mountpoint);
    }
    return serve_mounted(se, opts, co, plan);
}

}  // namespace

int fuser_go(IFileSystem* fs, int argc, char* argv[]) {
    if (!fs) LOG_ERROR_RETURN(EINVAL, -1, "fuser_go: no file system");
    fuse_ll_options llo;
    fuse_conn_info_opts* conn = nullptr;
    fuse_ll_fs* llfs = nullptr;
    mount_plan plan;
    plan.parse = [&](struct fuse_args* a) {
        if (fuse_opt_parse(a, &llo, fuse_ll_option_spec, nullptr) < 0) return false;
        conn = fuse_parse_conn_info_opts(a);
        return conn != nullptr;
    };
    plan.help = [] {
        printf(
            "    -o entry_timeout=S     cache names for S seconds (1.0)\n"
            "    -o attr_timeout=S      cache attributes for S seconds (1.0)\n"
            "    -o negative_timeout=S  cache absent names for S seconds (0)\n"
            "    -o direct_io           bypass the page cache\n"
            "    -o kernel_cache        keep the page cache across opens\n"
            "    -o max_write=N, max_readahead=N, max_background=N (128), writeback_cache,\n"
            "       splice_read, splice_write, ...: libfuse's connection options\n");
    };
    plan.create = [&](struct fuse_args* a) -> fuse_session* {
        llfs = new fuse_ll_fs(fs, llo, conn);
        conn = nullptr;  // owned by llfs now
        llfs->set_metrics(plan.metrics);
        return fuse_session_new(a, fuse_ll_fs::ops(), sizeof(struct fuse_lowlevel_ops), llfs);
    };
    plan.finish = [&](fuse_session* se) {
        if (se) {
            fuse_session_unmount(se);
            fuse_session_destroy(se);
        }
        delete llfs;  // closes what the kernel never released
        llfs = nullptr;
    };
    int r = run(argc, argv, plan);
    int e = errno;
    free(conn);
    if (llfs) plan.finish(nullptr);  // the session was never created
    errno = e;
    return r;
}

int fuser_go_exportfs(IFileSystem* fs, int argc, char* argv[]) {
    if (CURRENT) LOG_ERROR_RETURN(EALREADY, -1, "fuser_go_exportfs: photon is initialized already");
    return fuser_go(fs, argc, argv);
}

int run_fuse(int argc, char* argv[], const struct fuse_operations* op, void* user_data) {
    if (!op) LOG_ERROR_RETURN(EINVAL, -1, "run_fuse: no operations");
    struct fuse* f = nullptr;
    mount_plan plan;
    struct fuse_args* help_args = nullptr;
    plan.parse = [&](struct fuse_args* a) {
        help_args = a;
        return true;
    };
    plan.help = [&] { fuse_lib_help(help_args); };
    plan.create = [&](struct fuse_args* a) -> fuse_session* {
        f = fuse_new(a, op, sizeof(*op), user_data);
        return f ? fuse_get_session(f) : nullptr;
    };
    plan.before_serve = [&] {
        if (fuse_start_cleanup_thread(f) != 0) LOG_WARN("fuse: no cleanup thread (-o remember)");
    };
    plan.finish = [&](fuse_session*) {
        if (!f) return;
        fuse_stop_cleanup_thread(f);
        fuse_unmount(f);
        fuse_destroy(f);
        f = nullptr;
    };
    plan.serialize_writers = true;
    return run(argc, argv, plan);
}

int run_fuse_ll(int argc, char* argv[], const struct fuse_lowlevel_ops* llops, void* user_data) {
    if (!llops) LOG_ERROR_RETURN(EINVAL, -1, "run_fuse_ll: no operations");
    mount_plan plan;
    plan.create = [&](struct fuse_args* a) {
        return fuse_session_new(a, llops, sizeof(*llops), user_data);
    };
    plan.finish = [](fuse_session* se) {
        fuse_session_unmount(se);
        fuse_session_destroy(se);
    };
    return run(argc, argv, plan);
}

}  // namespace fs
}  // namespace photon
