// Coroutine dumps (include/photon/thread/dump.h). The requester posts a part to every vCPU;
// each vCPU fills its own from its list of coroutines (vcpu_t::all_head), a slice at a time, in
// serve_dump() (called between its coroutines' turns), and marks it done. The requester waits
// for the parts or its timeout, then names the addresses and formats the report. A part whose
// requester gave up is deleted by whichever side finishes with it last.
#include <photon/thread/dump.h>

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <photon/common/alog.h>

#include "arch/frame.h"
#include "symbols.h"
#include "vcpu.h"
#include "wait_note.h"

namespace photon {

struct dump_record {
    const void* id;
    const void* wq;
    thread_entry start;
    uint64_t slept_at, deadline, wait_note;
    uint64_t stack_size, stack_used;
    uint32_t flags;
    uint32_t frame0, nframes;  // in dump_part::frames
    uint8_t state;
    bool running;  // its vCPU's running coroutine
};

struct dump_part {
    ThreadDumpOptions opt;
    int vcpu_id = -1;
    uint64_t copied_at = 0;  // `now` when the copy began
    std::vector<dump_record> recs;
    std::vector<void*> frames;
    uint64_t slices = 0, max_slice_ns = 0;
    bool started = false;
    bool ended = false;        // its vCPU ended first
    bool busy_before = false;  // an earlier dump's part is still posted there
    std::mutex mu;             // held while a slice is copied, and to give up
    bool abandoned = false;    // the requester left: the vCPU deletes it
    std::atomic<bool> done{false};
};

namespace {

std::mutex g_dump_mu;  // one dump at a time

// The saved frame pointer and resume address of a parked context. Reading another coroutine's
// stack is what a dump is for: not instrumented.
__attribute__((no_sanitize("address"))) void saved_frame(const thread* th, uintptr_t* fp,
                                                         void** pc) {
    auto sp = static_cast<const char*>(th->sp);
#if defined(__x86_64__)
    *fp = *reinterpret_cast<const uintptr_t*>(sp + PHOTON_FRAME_RBP);
    *pc = *reinterpret_cast<void* const*>(sp + PHOTON_FRAME_RET);
#else
    *fp = *reinterpret_cast<const uintptr_t*>(sp + PHOTON_FRAME_FP);
    *pc = *reinterpret_cast<void* const*>(sp + PHOTON_FRAME_LR);
#endif
}

// Appends the return addresses of the chain from fp (symbols.h) to p's frames.
void walk(dump_part* p, uintptr_t fp, uintptr_t lo, uintptr_t hi) {
    void* pcs[256];
    size_t room = (size_t)p->opt.max_frames - (p->frames.size() - p->recs.back().frame0);
    size_t n = walk_frames(fp, lo, hi, pcs, std::min(room, sizeof(pcs) / sizeof(pcs[0])));
    p->frames.insert(p->frames.end(), pcs, pcs + n);
}

void copy(dump_part* p, thread* th, thread* on_stack) {
    p->recs.emplace_back();
    dump_record& r = p->recs.back();
    r.id = th;
    r.wq = th->wq;
    r.start = th->start;
    r.slept_at = th->slept_at;
    r.deadline = th->deadline;
    r.wait_note = th->wait_note;
    r.flags = th->flags;
    r.state = (uint8_t)(states)th->state;
    r.running = th == on_stack && r.state == READY;
    auto lo = reinterpret_cast<uintptr_t>(th->stack_lo);
    auto hi = reinterpret_cast<uintptr_t>(th->stack_hi);
    r.stack_size = hi - lo;
    r.frame0 = (uint32_t)p->frames.size();
    uintptr_t sp = 0, fp = 0;
    if (th == on_stack) {  // its saved context is stale: walk from here
        fp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
        sp = fp;
    } else if (r.state != DONE && th->sp) {
        void* pc;
        saved_frame(th, &fp, &pc);
        sp = reinterpret_cast<uintptr_t>(th->sp);
        if (p->opt.max_frames > 0) p->frames.push_back(pc);
    }
    r.stack_used = sp >= lo && sp < hi ? hi - sp : 0;
    if (sp && lo && p->opt.max_frames > 0) walk(p, fp, lo, hi);
    r.nframes = (uint32_t)(p->frames.size() - r.frame0);
}

void finish(dump_part* p, std::unique_lock<std::mutex>& lock) {
    if (p->abandoned) {
        lock.unlock();
        delete p;
        return;
    }
    p->done.store(true, std::memory_order_release);
}

}  // namespace

void serve_dump(vcpu_t* v, thread* on_stack) {
    dump_part* p = v->dump.load(std::memory_order_acquire);
    if (!p) return;
    std::unique_lock<std::mutex> lock(p->mu);
    uint64_t t0 = monotonic_ns();
    if (!p->started && !p->abandoned) {
        p->started = true;
        p->copied_at = clock_now();
        size_t n = v->nthreads.load(std::memory_order_relaxed) + 16;
        p->recs.reserve(n);  // no reallocation (a copy of all so far) inside a slice
        p->frames.reserve(n * (size_t)std::min(std::max(p->opt.max_frames, 0), 8));
        v->dump_cursor = v->all_head;
    }
    uint64_t budget = p->opt.slice_us * 1000;
    size_t n = 0;
    while (v->dump_cursor && !p->abandoned) {
        thread* th = v->dump_cursor;
        v->dump_cursor = th->all_next;
        copy(p, th, on_stack);
        if ((++n & 255) == 0 && monotonic_ns() - t0 >= budget) break;
    }
    uint64_t took = monotonic_ns() - t0;
    p->slices++;
    if (took > p->max_slice_ns) p->max_slice_ns = took;
    if (v->dump_cursor && !p->abandoned) return;  // more at its next turn
    v->dump_cursor = nullptr;
    v->dump.store(nullptr, std::memory_order_relaxed);
    finish(p, lock);
}

void end_dump(vcpu_t* v) {
    dump_part* p = v->dump.exchange(nullptr);
    if (!p) return;
    std::unique_lock<std::mutex> lock(p->mu);
    p->ended = true;
    finish(p, lock);
}

namespace {

const char* state_name(const dump_record& r) {
    if (r.running) return "running";
    switch (r.state) {
        case READY:
            return "ready";
        case SLEEPING:
            return "sleeping";
        case STANDBY:
            return "waking";
        case DONE:
            return "done";
        default:
            return "?";
    }
}

// What a sleeper waits on, or "".
std::string waits_on(const dump_record& r) {
    char buf[96];
    uint64_t kind = r.wait_note >> 56;
    uint32_t high = (uint32_t)(r.wait_note >> 32) & 0xffffff, low = (uint32_t)r.wait_note;
    if (r.state != SLEEPING) return "";
    if (kind == kWaitNoteFd) {
        snprintf(buf, sizeof(buf), "fd %d (%s%s%s)", (int)low, high & 1 ? "read" : "",
                 (high & 3) == 3 ? "+" : "",
                 high & 2   ? "write"
                 : high & 1 ? ""
                            : "error");
    } else if (r.wq) {
        snprintf(buf, sizeof(buf), "wait queue %p (a lock, semaphore or condition)", r.wq);
    } else {
        return "";
    }
    return buf;
}

void append_json_string(std::string* out, const std::string& s) {
    out->push_back('"');
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out->push_back('\\');
            out->push_back((char)c);
        } else if (c < 0x20) {
            char buf[8];
            snprintf(buf, sizeof(buf), "\\u%04x", c);
            out->append(buf);
        } else {
            out->push_back((char)c);
        }
    }
    out->push_back('"');
}

void put_dec(std::string* out, uint64_t v) {
    char buf[24];
    char* p = buf + sizeof(buf);
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    out->append(p, buf + sizeof(buf) - p);
}

void put_hex(std::string* out, uintptr_t v) {
    char buf[24];
    char* p = buf + sizeof(buf);
    do {
        *--p = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    out->append("0x").append(p, buf + sizeof(buf) - p);
}

// Microseconds as seconds with three decimals (rounded).
void put_seconds(std::string* out, int64_t us) {
    if (us < 0) out->push_back('-');
    uint64_t ms = ((us < 0 ? (uint64_t)-us : (uint64_t)us) + 500) / 1000;
    put_dec(out, ms / 1000);
    char frac[4] = {'.', (char)('0' + ms % 1000 / 100), (char)('0' + ms % 100 / 10),
                    (char)('0' + ms % 10)};
    out->append(frac, 4);
}

// Bytes as KiB with one decimal (rounded).
void put_kib(std::string* out, uint64_t bytes) {
    uint64_t tenths = (bytes * 10 + 512) / 1024;
    put_dec(out, tenths / 10);
    out->push_back('.');
    out->push_back((char)('0' + tenths % 10));
}

struct dump_view {
    dump_part* part;  // nullptr: given up, not done in time
    int vcpu_id;
};

struct formatter {
    formatter(const ThreadDumpOptions& o, std::string* s) : opt(o), out(s) {}

    const ThreadDumpOptions& opt;
    std::string* out;
    symbol_names names;

    // Per pc, the frame as text ("0x... name") and as JSON ({"pc":..,"symbol":..}).
    std::unordered_map<const void*, std::string> frame_text, frame_json;

    const std::string& entry(const dump_record& r) {
        static const std::string kMain = "(the vCPU's own thread)";
        if (r.flags & TF_MAIN) return kMain;
        return names.of(reinterpret_cast<const void*>(r.start), false);
    }

    const std::string& frame(const void* pc, bool json) {
        auto& cache = json ? frame_json : frame_text;
        auto it = cache.find(pc);
        if (it != cache.end()) return it->second;
        std::string& f = cache[pc];
        if (json) {
            f = "{\"pc\":\"";
            put_hex(&f, (uintptr_t)pc);
            f += "\",\"symbol\":";
            append_json_string(&f, names.of(pc, true));
            f += "}";
        } else {
            put_hex(&f, (uintptr_t)pc);
            f += ' ';
            f += names.of(pc, true);
        }
        return f;
    }

    static uint64_t slept_us(const dump_part& p, const dump_record& r) {
        return p.copied_at > r.slept_at ? p.copied_at - r.slept_at : 0;
    }

    void text(const dump_part& p, const dump_record& r) {
        out->append("  ");
        put_hex(out, (uintptr_t)r.id);
        out->append(" ").append(state_name(r));
        if (r.state == SLEEPING) {
            out->push_back(' ');
            put_seconds(out, (int64_t)slept_us(p, r));
            out->append(" s");
            if (r.deadline != UINT64_MAX) {
                out->append(", deadline in ");
                put_seconds(out, (int64_t)(r.deadline - p.copied_at));
                out->append(" s");
            }
            std::string on = waits_on(r);
            if (!on.empty()) out->append(", on ").append(on);
        }
        if (r.flags & TF_DAEMON) out->append(" [daemon]");
        out->append("  entry ").append(entry(r)).append("  stack ");
        put_kib(out, r.stack_used);
        out->append(" KiB of ");
        put_kib(out, r.stack_size);
        out->append(" KiB\n");
        for (uint32_t i = 0; i < r.nframes; i++) {
            out->append("      #");
            put_dec(out, i);
            out->append(i < 10 ? "  " : " ").append(frame(p.frames[r.frame0 + i], false));
            out->push_back('\n');
        }
    }

    void json(const dump_part& p, const dump_record& r) {
        out->append("{\"id\":\"");
        put_hex(out, (uintptr_t)r.id);
        out->append("\",\"state\":\"").append(state_name(r));
        out->append(r.flags & TF_MAIN ? "\",\"main\":true" : "\",\"main\":false");
        out->append(r.flags & TF_DAEMON ? ",\"daemon\":true" : ",\"daemon\":false");
        out->append(",\"entry\":");
        append_json_string(out, entry(r));
        if (r.state == SLEEPING) {
            out->append(",\"sleeping_us\":");
            put_dec(out, slept_us(p, r));
            if (r.deadline != UINT64_MAX) {
                out->append(",\"deadline_in_us\":");
                int64_t left = (int64_t)(r.deadline - p.copied_at);
                if (left < 0) out->push_back('-');
                put_dec(out, left < 0 ? (uint64_t)-left : (uint64_t)left);
            }
            std::string on = waits_on(r);
            if (!on.empty()) {
                out->append(",\"waits_on\":");
                append_json_string(out, on);
            }
        }
        out->append(",\"stack_used\":");
        put_dec(out, r.stack_used);
        out->append(",\"stack_size\":");
        put_dec(out, r.stack_size);
        out->append(",\"backtrace\":[");
        for (uint32_t i = 0; i < r.nframes; i++) {
            if (i) out->push_back(',');
            out->append(frame(p.frames[r.frame0 + i], true));
        }
        out->append("]}");
    }

    void run(const std::vector<dump_view>& parts, uint64_t took_ns) {
        size_t total = 0, frames = 0;
        uint64_t max_slice = 0;
        for (auto& w : parts) {
            if (!w.part) continue;
            total += w.part->recs.size();
            frames += w.part->frames.size();
            if (w.part->max_slice_ns > max_slice) max_slice = w.part->max_slice_ns;
        }
        out->reserve(out->size() + total * (opt.json ? 200 : 120) + frames * (opt.json ? 100 : 70));
        char buf[256];
        if (opt.json) {
            snprintf(buf, sizeof(buf),
                     "{\"vcpus\":%zu,\"coroutines\":%zu,\"took_us\":%" PRIu64
                     ",\"max_slice_us\":%" PRIu64 ",\"parts\":[",
                     parts.size(), total, took_ns / 1000, max_slice / 1000);
        } else {
            snprintf(buf, sizeof(buf),
                     "photon coroutine dump: %zu vCPU(s), %zu coroutine(s), %.3f ms; the "
                     "longest slice held a vCPU %.3f ms\n",
                     parts.size(), total, took_ns / 1e6, max_slice / 1e6);
        }
        out->append(buf);
        for (size_t i = 0; i < parts.size(); i++) {
            const dump_part* p = parts[i].part;
            const char* problem = !p               ? "did not answer in time: a coroutine there "
                                                     "has not yielded"
                                  : p->busy_before ? "still busy with an earlier dump"
                                  : p->ended       ? "ended during the dump"
                                                   : nullptr;
            if (opt.json) {
                snprintf(buf, sizeof(buf), "%s{\"vcpu\":%d,", i ? "," : "", parts[i].vcpu_id);
                out->append(buf);
                if (problem) {
                    out->append("\"problem\":");
                    append_json_string(out, problem);
                    out->append(",");
                }
                out->append("\"coroutines\":[");
            } else {
                snprintf(buf, sizeof(buf), "vCPU %d: ", parts[i].vcpu_id);
                out->append(buf);
                if (problem) {
                    out->append(problem).push_back('\n');
                } else {
                    snprintf(buf, sizeof(buf), "%zu coroutine(s), copied in %" PRIu64 " slice(s)\n",
                             p->recs.size(), p->slices);
                    out->append(buf);
                }
            }
            if (p && !p->busy_before) {
                for (size_t k = 0; k < p->recs.size(); k++) {
                    if (opt.json) {
                        if (k) out->push_back(',');
                        json(*p, p->recs[k]);
                    } else {
                        text(*p, p->recs[k]);
                    }
                }
            }
            if (opt.json) out->append("]}");
        }
        if (opt.json) out->append("]}\n");
    }
};

struct post_ctx {
    std::vector<dump_part*> parts;
    const ThreadDumpOptions* opt;
};

void post(vcpu_t* v, void* arg) {
    auto c = static_cast<post_ctx*>(arg);
    auto p = new dump_part;
    p->opt = *c->opt;
    p->vcpu_id = v->id;
    c->parts.push_back(p);
    dump_part* expected = nullptr;
    if (!v->dump.compare_exchange_strong(expected, p, std::memory_order_seq_cst)) {
        p->busy_before = true;  // a part abandoned by an earlier dump is still there
        p->done.store(true);
        return;
    }
    notify_vcpu(v);
}

int g_sig_pipe[2] = {-1, -1};
std::atomic<bool> g_sig_installed{false};

void on_dump_signal(int) {
    int e = errno;
    char c = 1;
    ssize_t r = write(g_sig_pipe[1], &c, 1);  // full: a dump is pending anyway
    (void)r;
    errno = e;
}

}  // namespace

int thread_dump(std::string* out, const ThreadDumpOptions& opt) {
    if (!out) LOG_ERROR_RETURN(EINVAL, -1, "thread_dump: null out");
    std::unique_lock<std::mutex> busy(g_dump_mu, std::try_to_lock);
    if (!busy.owns_lock()) LOG_ERROR_RETURN(EBUSY, -1, "thread_dump: another dump is running");
    uint64_t t0 = monotonic_ns();
    post_ctx ctx;
    ctx.opt = &opt;
    for_each_vcpu_locked(&post, &ctx);
    uint64_t deadline = t0 + opt.timeout_us * 1000;
    for (;;) {
        bool all = true;
        for (auto p : ctx.parts) all = all && p->done.load(std::memory_order_acquire);
        if (all || monotonic_ns() >= deadline) break;
        // On a vCPU, its own part is copied while this sleeps.
        if (CURRENT)
            thread_usleep(200);
        else
            usleep(200);
    }
    // Parts not done are given up (their vCPUs delete them): only their ids are kept.
    std::vector<dump_view> views;
    for (auto p : ctx.parts) {
        std::unique_lock<std::mutex> lock(p->mu);
        bool done = p->done.load(std::memory_order_acquire);
        if (!done) p->abandoned = true;
        views.push_back({done ? p : nullptr, p->vcpu_id});
    }
    formatter f(opt, out);
    f.run(views, monotonic_ns() - t0);
    for (auto& w : views) delete w.part;
    return 0;
}

int thread_dump_to_fd(int fd, const ThreadDumpOptions& opt) {
    std::string s;
    if (thread_dump(&s, opt) < 0) return -1;
    for (size_t off = 0; off < s.size();) {
        ssize_t n = write(fd, s.data() + off, s.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        off += n;
    }
    return 0;
}

int thread_dump_on_signal(int signo, int fd) {
    if (signo <= 0 || signo >= NSIG || signo == SIGKILL || signo == SIGSTOP)
        LOG_ERROR_RETURN(EINVAL, -1, "thread_dump_on_signal: cannot catch signal `", signo);
    bool expected = false;
    if (!g_sig_installed.compare_exchange_strong(expected, true))
        LOG_ERROR_RETURN(EALREADY, -1, "thread_dump_on_signal: already installed");
    if (pipe2(g_sig_pipe, O_CLOEXEC) < 0 || fcntl(g_sig_pipe[1], F_SETFL, O_NONBLOCK) < 0) {
        g_sig_installed = false;
        LOG_ERRNO_RETURN(0, -1, "thread_dump_on_signal: pipe");
    }
    // The helper is born with every signal blocked: signals sent to the process go to the
    // program's threads.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
        std::thread([fd] {
            char buf[64];
            for (;;) {
                ssize_t n = read(g_sig_pipe[0], buf, sizeof(buf));
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) return;
                thread_dump_to_fd(fd);
            }
        }).detach();
    } catch (const std::exception& e) {
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        g_sig_installed = false;
        LOG_ERROR_RETURN(EAGAIN, -1, "thread_dump_on_signal: cannot start its thread: `", e.what());
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    struct sigaction sa = {};
    sa.sa_handler = &on_dump_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, nullptr) < 0)
        LOG_ERRNO_RETURN(0, -1, "thread_dump_on_signal: sigaction(`)", signo);
    return 0;
}

}  // namespace photon
