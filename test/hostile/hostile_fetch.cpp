// hostile_fetch: our HTTP client (net::http::Client) against the misbehaving
// origin of test/hostile/hostile_origin.py, which starts this program:
//
//   hostile_fetch --engine epoll|iouring --port PORT
//                 [--ca CERT --stall-port PORT --garbage-port PORT]   (HTTPS)
//
// One client object makes every request, with a 1 s timeout per call. Each
// case requests one misbehaving path, states its expected outcome and checks
// it; after each, two normal requests to the same origin through the same
// client must get 200 "ok\n" (the pool must not hand out a poisoned
// connection). Time is only bounded from above, generously (kBound). At the
// end the client is deleted and the open descriptors must be (about) those
// at the start.
//
// Prints PASS/FAIL per case; exits 0 if all passed, 1 otherwise, 77 if the
// engine is not available here (io_uring refused by the kernel).
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/alog.h>
#include <photon/net/http/client.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>

#include "../util/fd_count.h"

namespace {

using namespace photon::net;
using namespace photon::net::http;
using Op = Client::Operation;

constexpr uint64_t kTimeoutMs = 1000;  // every call's (the client's) timeout
constexpr double kBound = 10.0;        // s: a generous upper bound for any case
constexpr int kFdSlack = 2;

struct Env {
    Client* client = nullptr;
    bool tls = false;
    uint16_t port = 0, stall_port = 0, garbage_port = 0;
    std::string url(const std::string& path, uint16_t port_ = 0) const {
        return std::string(tls ? "https" : "http") +
               "://127.0.0.1:" + std::to_string(port_ ? port_ : port) + path;
    }
};

double now_s() {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string err_name(int e) {
    switch (e) {
        case 0:
            return "0";
        case ETIMEDOUT:
            return "ETIMEDOUT";
        case EPROTO:
            return "EPROTO";
        case ECONNRESET:
            return "ECONNRESET";
        case EPIPE:
            return "EPIPE";
        case ELOOP:
            return "ELOOP";
        case ENODATA:
            return "ENODATA";
        default:
            return std::string(strerror(e));
    }
}

// A failed check: appends to *why and returns false.
#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            char msg_[512];                                                          \
            snprintf(msg_, sizeof(msg_), __VA_ARGS__);                               \
            *why += std::string(#cond " failed: ") + std::string(msg_) + " (line " + \
                    std::to_string(__LINE__) + ")";                                  \
            return false;                                                            \
        }                                                                            \
    } while (0)

// One request: the operation (kept for reading the body), call()'s result,
// its errno and how long it took.
struct Fetch {
    std::unique_ptr<Op, void (*)(Op*)> op{nullptr, [](Op* o) { o->destroy(); }};
    int rc = 0, err = 0;
    double secs = 0;
};

Fetch fetch(Env& env, Verb verb, const std::string& url, uint16_t follow = 8,
            const std::string* body = nullptr) {
    Fetch f;
    f.op.reset(env.client->new_operation(verb, url));
    f.op->follow = follow;
    if (body) f.op->set_body(body->data(), body->size());
    double t0 = now_s();
    errno = 0;
    f.rc = f.op->call();
    f.err = f.rc < 0 ? errno : 0;
    f.secs = now_s() - t0;
    return f;
}

Fetch get(Env& env, const std::string& path) { return fetch(env, Verb::GET, env.url(path)); }

// Reads the body to its end or first error: the bytes, and the last read's
// result (0 at the end, -1) with its errno.
struct Body {
    std::string data;
    ssize_t last = 0;
    int err = 0;
    int reads = 0;
};

Body read_body(Op* op) {
    Body b;
    std::unique_ptr<char[]> buf(new char[65536]);
    while (true) {
        errno = 0;
        ssize_t n = op->resp.read(buf.get(), 65536);
        b.reads++;
        if (n <= 0) {
            b.last = n;
            b.err = n < 0 ? errno : 0;
            return b;
        }
        b.data.append(buf.get(), n);
    }
}

bool expect_failure(Env& env, const std::string& path, int want, std::string* why) {
    Fetch f = get(env, path);
    CHECK(f.rc == -1 && f.err == want, "call() = %d errno %s, want -1 %s", f.rc,
          err_name(f.err).c_str(), err_name(want).c_str());
    CHECK(f.secs < kBound, "took %.1f s", f.secs);
    return true;
}

// ---------------------------------------------------------------- cases
// Each: the expected outcome (printed), then the check.

struct Case {
    const char* name;
    const char* expect;
    bool tls_only;
    bool (*run)(Env&, std::string*);
};

bool silent(Env& env, std::string* why) {
    // The origin reads the request and never answers.
    return expect_failure(env, "/silent", ETIMEDOUT, why);
}

bool half_status(Env& env, std::string* why) {
    // "HTTP/1.1 20", then silence.
    return expect_failure(env, "/half-status", ETIMEDOUT, why);
}

bool body_stall(Env& env, std::string* why) {
    // Head with Content-Length: 100, 10 bytes, then silence: the 10 bytes
    // come first, the timeout with the next read.
    double t0 = now_s();
    Fetch f = get(env, "/body-stall");
    CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s", f.rc, err_name(f.err).c_str());
    Body b = read_body(f.op.get());
    CHECK(b.data == "0123456789", "body %zu bytes", b.data.size());
    CHECK(b.last == -1 && b.err == ETIMEDOUT, "last read %zd %s", b.last, err_name(b.err).c_str());
    CHECK(now_s() - t0 < kBound, "took %.1f s", now_s() - t0);
    return true;
}

bool drip(Env& env, std::string* why) {
    // Content-Length: 50 dripped 1 byte per 200 ms (10 s): what came within
    // the 1 s timeout is returned, in order, then ETIMEDOUT.
    double t0 = now_s();
    Fetch f = get(env, "/drip");
    CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s", f.rc, err_name(f.err).c_str());
    Body b = read_body(f.op.get());
    static const std::string pattern = "abcdefghijklmnopqrstuvwxyabcdefghijklmnopqrstuvwxy";
    CHECK(!b.data.empty() && b.data.size() < 50 && pattern.compare(0, b.data.size(), b.data) == 0,
          "got %zu bytes '%s'", b.data.size(), b.data.c_str());
    CHECK(b.last == -1 && b.err == ETIMEDOUT, "last read %zd %s", b.last, err_name(b.err).c_str());
    CHECK(now_s() - t0 < kBound, "took %.1f s", now_s() - t0);
    return true;
}

bool short_body(Env& env, std::string* why) {
    // Content-Length: 1 GB, 10 bytes, then the origin closes: the 10 bytes
    // are read, then an error; nothing is lost. The error: EPROTO (a
    // truncated body); over TLS the stream's own ECONNRESET comes first
    // (closed without close_notify).
    Fetch f = get(env, "/short-body");
    CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s", f.rc, err_name(f.err).c_str());
    CHECK(f.op->resp.body_size() == 1000000000, "body_size %lld",
          (long long)f.op->resp.body_size());
    Body b = read_body(f.op.get());
    CHECK(b.data == "0123456789", "body %zu bytes", b.data.size());
    int want = env.tls ? ECONNRESET : EPROTO;
    CHECK(b.last == -1 && b.err == want, "last read %zd %s", b.last, err_name(b.err).c_str());
    return true;
}

bool cl_overflow(Env& env, std::string* why) {
    // Content-Length: 99999999999999999999 (above 2^64): a malformed response.
    return expect_failure(env, "/cl-overflow", EPROTO, why);
}

bool cl_over_int64(Env& env, std::string* why) {
    // Content-Length: 9999999999999999999 (fits 64 bits unsigned, not signed):
    // a malformed response too, never a negative body size.
    return expect_failure(env, "/cl-over-int64", EPROTO, why);
}

bool two_lengths(Env& env, std::string* why) {
    // Content-Length: 5 and Content-Length: 6: EPROTO (RFC 9112 6.3).
    return expect_failure(env, "/two-lengths", EPROTO, why);
}

bool cl_and_te(Env& env, std::string* why) {
    // Content-Length with Transfer-Encoding: chunked: EPROTO (RFC 9112 6.1
    // lets a recipient treat it as an error; we do).
    return expect_failure(env, "/cl-and-te", EPROTO, why);
}

bool no_content_body(Env& env, std::string* why) {
    // A 204 followed by bytes: the 204 has no body (read gives 0); the
    // bytes are never taken for the answer to a later request.
    Fetch f = get(env, "/no-content-body");
    CHECK(f.rc == 0 && f.op->status_code == 204, "call() = %d %s, status %d", f.rc,
          err_name(f.err).c_str(), f.op->status_code);
    Body b = read_body(f.op.get());
    CHECK(b.data.empty() && b.last == 0, "body '%s', last read %zd %s", b.data.c_str(), b.last,
          err_name(b.err).c_str());
    return true;
}

bool chunk_overflow(Env& env, std::string* why) {
    // Chunk size ffffffffffffffffff (above 2^64): the head is fine, the body
    // read fails with EPROTO and returns no byte.
    Fetch f = get(env, "/chunk-overflow");
    CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s", f.rc, err_name(f.err).c_str());
    Body b = read_body(f.op.get());
    CHECK(b.data.empty() && b.last == -1 && b.err == EPROTO, "%zu bytes, last read %zd %s",
          b.data.size(), b.last, err_name(b.err).c_str());
    return true;
}

bool long_header(Env& env, std::string* why) {
    // A 1 MB header line: EPROTO once the head outgrows the buffer (64 KiB).
    return expect_failure(env, "/long-header", EPROTO, why);
}

bool many_headers(Env& env, std::string* why) {
    // 100,000 short fields: EPROTO (too many fields / too large a head).
    return expect_failure(env, "/many-headers", EPROTO, why);
}

bool bad_status(Env& env, std::string* why) {
    // "HTTP/1.1 2x0 OK": EPROTO.
    return expect_failure(env, "/bad-status", EPROTO, why);
}

bool not_http(Env& env, std::string* why) {
    // "SSH-2.0-OpenSSH_9.2" instead of a status line: EPROTO.
    return expect_failure(env, "/not-http", EPROTO, why);
}

bool until_close(Env& env, std::string* why) {
    // No Content-Length nor chunked: the body is everything up to the
    // origin's close (307,200 bytes, TLS: then close_notify), complete, then 0.
    Fetch f = get(env, "/until-close");
    CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s", f.rc, err_name(f.err).c_str());
    Body b = read_body(f.op.get());
    std::string want;
    for (int i = 0; i < 1200; i++)
        for (int c = 0; c < 256; c++) want.push_back((char)c);
    CHECK(b.data == want, "body %zu bytes of %zu", b.data.size(), want.size());
    CHECK(b.last == 0, "last read %zd %s", b.last, err_name(b.err).c_str());
    return true;
}

bool reset_head(Env& env, std::string* why) {
    // Part of the head, then a reset: ECONNRESET.
    return expect_failure(env, "/reset-head", ECONNRESET, why);
}

bool reset_body(Env& env, std::string* why) {
    // Head (Content-Length: 100000), 5,000 bytes, 300 ms, then a reset: the
    // 5,000 bytes are read, then ECONNRESET.
    Fetch f = get(env, "/reset-body");
    CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s", f.rc, err_name(f.err).c_str());
    Body b = read_body(f.op.get());
    CHECK(b.data == std::string(5000, 'r'), "body %zu bytes", b.data.size());
    CHECK(b.last == -1 && b.err == ECONNRESET, "last read %zd %s", b.last, err_name(b.err).c_str());
    return true;
}

bool early_413(Env& env, std::string* why) {
    // POST of 20 MB; the origin takes 64 KB, answers 413 and closes (a
    // reset): call() returns 0 with the 413 and its body, body_errno says
    // why the upload stopped (EPIPE or ECONNRESET).
    static const std::string upload(20 * 1000 * 1000, 'u');
    Fetch f = fetch(env, Verb::POST, env.url("/early-413"), 8, &upload);
    CHECK(f.rc == 0 && f.op->status_code == 413, "call() = %d %s, status %d", f.rc,
          err_name(f.err).c_str(), f.op->status_code);
    CHECK(f.op->body_errno == EPIPE || f.op->body_errno == ECONNRESET, "body_errno %s",
          err_name(f.op->body_errno).c_str());
    Body b = read_body(f.op.get());
    CHECK(b.data == "too large\n" && b.last == 0, "body '%s', last read %zd %s", b.data.c_str(),
          b.last, err_name(b.err).c_str());
    return true;
}

bool interim(Env& env, std::string* why) {
    // 100 Continue and 103 Early Hints before the 200: the 200 and its body.
    std::string small = "hello";
    Fetch f = fetch(env, Verb::POST, env.url("/interim"), 8, &small);
    CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s, status %d", f.rc,
          err_name(f.err).c_str(), f.op->status_code);
    Body b = read_body(f.op.get());
    CHECK(b.data == "final\n" && b.last == 0, "body '%s'", b.data.c_str());
    return true;
}

bool interim_flood(Env& env, std::string* why) {
    // 1,000 "102 Processing" heads: the client gives up with EPROTO.
    return expect_failure(env, "/interim-flood", EPROTO, why);
}

bool redirect_loop(Env& env, std::string* why) {
    // 302 to itself forever, follow = 3: ELOOP after 4 requests.
    Fetch h = get(env, "/hits/redirect-loop");  // zeroes the count
    Fetch f = fetch(env, Verb::GET, env.url("/redirect-loop"), 3);
    CHECK(f.rc == -1 && f.err == ELOOP, "call() = %d %s", f.rc, err_name(f.err).c_str());
    Fetch hits = get(env, "/hits/redirect-loop");
    CHECK(hits.rc == 0, "hits: %s", err_name(hits.err).c_str());
    Body b = read_body(hits.op.get());
    CHECK(b.data == "4\n", "the origin saw %s requests", b.data.c_str());
    return true;
}

bool ka_close(Env& env, std::string* why) {
    // 200 with keep-alive, then the origin closes that connection: the
    // response is fine, and the next request does not fail on it.
    {
        Fetch f = get(env, "/ka-close");
        CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s", f.rc,
              err_name(f.err).c_str());
        Body b = read_body(f.op.get());
        CHECK(b.data == "ok\n" && b.last == 0, "body '%s'", b.data.c_str());
    }
    photon::thread_usleep(200 * 1000);  // the FIN arrives while it is pooled
    return true;
}

bool stray_with(Env& env, std::string* why) {
    // A response followed by an unasked-for second one in the same write:
    // the first is ours; the second never answers a later request.
    Fetch f = get(env, "/stray-with");
    CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s", f.rc, err_name(f.err).c_str());
    Body b = read_body(f.op.get());
    CHECK(b.data == "ok\n" && b.last == 0, "body '%s'", b.data.c_str());
    return true;
}

bool stray_after(Env& env, std::string* why) {
    // As stray_with, the stray response arriving 50 ms later, once the
    // connection is back in the pool.
    {
        Fetch f = get(env, "/stray-after");
        CHECK(f.rc == 0 && f.op->status_code == 200, "call() = %d %s", f.rc,
              err_name(f.err).c_str());
        Body b = read_body(f.op.get());
        CHECK(b.data == "ok\n" && b.last == 0, "body '%s'", b.data.c_str());
    }
    photon::thread_usleep(300 * 1000);
    return true;
}

bool tls_stall(Env& env, std::string* why) {
    // HTTPS to a port that accepts and never answers the ClientHello: ETIMEDOUT.
    Fetch f = fetch(env, Verb::GET, env.url("/", env.stall_port));
    CHECK(f.rc == -1 && f.err == ETIMEDOUT, "call() = %d %s", f.rc, err_name(f.err).c_str());
    CHECK(f.secs < kBound, "took %.1f s", f.secs);
    return true;
}

bool tls_garbage(Env& env, std::string* why) {
    // HTTPS to a port that answers the ClientHello with an HTTP 400 and
    // random bytes: fails at once with EPROTO (or ECONNRESET), not a timeout.
    Fetch f = fetch(env, Verb::GET, env.url("/", env.garbage_port));
    CHECK(f.rc == -1 && (f.err == EPROTO || f.err == ECONNRESET), "call() = %d %s", f.rc,
          err_name(f.err).c_str());
    CHECK(f.secs < kBound, "took %.1f s", f.secs);
    return true;
}

const Case kCases[] = {
    {"silent", "request read, never answered: -1 ETIMEDOUT within 10 s", false, silent},
    {"half_status", "half a status line, then silence: -1 ETIMEDOUT", false, half_status},
    {"body_stall", "head, 10 of 100 body bytes, silence: the 10 bytes, then ETIMEDOUT", false,
     body_stall},
    {"drip", "body dripped 1 B / 200 ms past the timeout: the bytes so far, then ETIMEDOUT", false,
     drip},
    {"short_body", "Content-Length 1 GB, 10 bytes, close: the 10 bytes, then an error", false,
     short_body},
    {"cl_overflow", "Content-Length above 2^64: -1 EPROTO", false, cl_overflow},
    {"cl_over_int64", "Content-Length above INT64_MAX: -1 EPROTO", false, cl_over_int64},
    {"two_lengths", "two Content-Length fields that disagree: -1 EPROTO", false, two_lengths},
    {"cl_and_te", "Content-Length with chunked: -1 EPROTO", false, cl_and_te},
    {"no_content_body", "a 204 followed by bytes: no body, bytes never a later answer", false,
     no_content_body},
    {"chunk_overflow", "chunk size above 2^64: head ok, body read -1 EPROTO", false,
     chunk_overflow},
    {"long_header", "a 1 MB header line: -1 EPROTO", false, long_header},
    {"many_headers", "100,000 header fields: -1 EPROTO", false, many_headers},
    {"bad_status", "status line 'HTTP/1.1 2x0 OK': -1 EPROTO", false, bad_status},
    {"not_http", "an SSH banner instead of a status line: -1 EPROTO", false, not_http},
    {"until_close", "body delimited by the close: all 307,200 bytes, then 0", false, until_close},
    {"reset_head", "reset in the middle of the head: -1 ECONNRESET", false, reset_head},
    {"reset_body", "reset after 5,000 body bytes: the 5,000 bytes, then ECONNRESET", false,
     reset_body},
    {"early_413", "413 and reset while a 20 MB POST is sent: the 413, body_errno set", false,
     early_413},
    {"interim", "100 and 103 before the 200: the 200 and its body", false, interim},
    {"interim_flood", "1,000 interim 102 heads: -1 EPROTO", false, interim_flood},
    {"redirect_loop", "302 to itself, follow = 3: -1 ELOOP after 4 requests", false, redirect_loop},
    {"ka_close", "keep-alive 200, then the origin closes: next request unaffected", false,
     ka_close},
    {"stray_with", "an unasked-for response after ours: never taken for a later one", false,
     stray_with},
    {"stray_after", "the same, arriving while pooled: never taken for a later one", false,
     stray_after},
    {"tls_stall", "TLS: ClientHello never answered: -1 ETIMEDOUT within 10 s", true, tls_stall},
    {"tls_garbage", "TLS: garbage instead of a ServerHello: -1 EPROTO, no wait", true, tls_garbage},
};

// Two normal requests (the second most likely on a pooled connection).
bool normal_requests(Env& env, std::string* why) {
    for (int i = 0; i < 2; i++) {
        Fetch f = get(env, "/ok");
        CHECK(f.rc == 0 && f.op->status_code == 200, "normal request %d: call() = %d %s, status %d",
              i + 1, f.rc, err_name(f.err).c_str(), f.op->status_code);
        Body b = read_body(f.op.get());
        CHECK(b.data == "ok\n" && b.last == 0, "normal request %d: body '%s' last %zd %s", i + 1,
              b.data.c_str(), b.last, err_name(b.err).c_str());
    }
    return true;
}

int run(Env& env, const char* ca) {
    std::unique_ptr<TLSContext> tls;
    if (env.tls) {
        tls.reset(new_tls_context());
        if (!tls || tls->set_ca_file(ca) < 0) return perror("hostile_fetch: TLS context"), 1;
    }
    int fds0 = photon_test::count_open_fds();
    env.client = new_http_client(nullptr, tls.get());
    env.client->timeout_ms(kTimeoutMs);
    const char* mode = env.tls ? "tls" : "plain";
    int failures = 0;
    double t_all = now_s();
    std::string why;
    if (!normal_requests(env, &why)) {
        printf("FAIL  [%s] normal requests before any case: %s\n", mode, why.c_str());
        failures++;
    }
    for (const Case& c : kCases) {
        if (c.tls_only && !env.tls) continue;
        why.clear();
        double t0 = now_s();
        bool ok = c.run(env, &why);
        if (ok && !normal_requests(env, &why)) ok = false;
        if (!ok) failures++;
        printf("%-5s [%s] %-15s %4.1fs  %s%s%s\n", ok ? "PASS" : "FAIL", mode, c.name, now_s() - t0,
               c.expect, ok ? "" : "\n      ", why.c_str());
        fflush(stdout);
    }
    delete env.client;
    env.client = nullptr;
    photon::thread_usleep(50 * 1000);  // let closes on io_uring complete
    int fds1 = photon_test::count_open_fds();
    bool fds_ok = fds1 <= fds0 + kFdSlack;
    if (!fds_ok) failures++;
    printf("%-5s [%s] descriptors: %d at the start, %d at the end (slack %d)\n",
           fds_ok ? "PASS" : "FAIL", mode, fds0, fds1, kFdSlack);
    printf("[%s] %d failure(s), %.1f s\n", mode, failures, now_s() - t_all);
    return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    Env env;
    const char* engine = "epoll";
    const char* ca = nullptr;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        const char* v = argv[i + 1];
        if (k == "--engine")
            engine = v;
        else if (k == "--port")
            env.port = (uint16_t)atoi(v);
        else if (k == "--ca")
            ca = v;
        else if (k == "--stall-port")
            env.stall_port = (uint16_t)atoi(v);
        else if (k == "--garbage-port")
            env.garbage_port = (uint16_t)atoi(v);
        else {
            fprintf(stderr, "hostile_fetch: unknown option %s\n", k.c_str());
            return 2;
        }
    }
    env.tls = ca != nullptr;
    bool iouring = strcmp(engine, "iouring") == 0;
    if (!env.port || (!iouring && strcmp(engine, "epoll") != 0) ||
        (env.tls && (!env.stall_port || !env.garbage_port))) {
        fprintf(stderr,
                "usage: %s --engine epoll|iouring --port PORT "
                "[--ca CERT --stall-port PORT --garbage-port PORT]\n",
                argv[0]);
        return 2;
    }
    set_log_output(log_output_stderr);
    set_log_output_level(ALOG_WARN);
    signal(SIGPIPE, SIG_IGN);
    uint64_t ev = iouring ? photon::INIT_EVENT_IOURING : photon::INIT_EVENT_EPOLL;
    if (photon::init(ev, photon::INIT_IO_NONE) < 0) {
        if (iouring) {
            printf("SKIP: io_uring unavailable here: %s\n", strerror(errno));
            return 77;
        }
        return perror("hostile_fetch: photon::init"), 1;
    }
    printf("[%s] engine %s, origin port %u\n", env.tls ? "tls" : "plain", engine,
           (unsigned)env.port);
    int r = run(env, ca);
    photon::fini();
    return r;
}
