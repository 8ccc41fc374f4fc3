// Fixtures of the fs handler tests (http_fs_handler_test.cpp through a
// request loop, http_fs_handler_server_test.cpp through new_http_server and
// curl): a test fs whose files expose their fd or hide it, a counting socket
// stream, the request loop and its client, the served tree and FsHandler.
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/alog.h>
#include <photon/fs/localfs.h>
#include <photon/net/http/message.h>
#include <photon/net/http/server.h>
#include <photon/net/security-context/tls-stream.h>
#include <photon/net/socket.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include "../../net/http/http_date.h"
#include "../../net/http/mime_types.h"
#include "../fs/fs_test_util.h"
#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "net_test_util.h"
#include "tls_test_util.h"

namespace fs_handler_test {

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

const uint64_t kClientTimeoutUs = 20'000'000;

// ---- a file system whose files expose their fd, or hide it -----------------

class fd_file : public fs::IFile, public fs::IFileXAttr {
public:
    fd_file(int fd, bool expose, bool eagain = false)
        : fd_(fd), expose_(expose), eagain_(eagain), f_(fs::new_localfile_adaptor(fd)) {}
    fs::IFileSystem* filesystem() override { return nullptr; }
    Object* get_underlay_object(int) override {
        if (expose_) return (Object*)(intptr_t)fd_;
        errno = ENOSYS;
        return nullptr;
    }
    int close() override { return f_->close(); }
    ssize_t read(void* b, size_t n) override { return f_->read(b, n); }
    ssize_t readv(const iovec* v, int n) override { return f_->readv(v, n); }
    ssize_t write(const void* b, size_t n) override { return f_->write(b, n); }
    ssize_t writev(const iovec* v, int n) override { return f_->writev(v, n); }
    ssize_t pread(void* b, size_t n, off_t o) override {
        preads++;
        if (eagain_) {
            errno = EAGAIN;
            return -1;
        }
        return f_->pread(b, n, o);
    }
    ssize_t pwrite(const void* b, size_t n, off_t o) override { return f_->pwrite(b, n, o); }
    ssize_t preadv(const iovec* v, int n, off_t o) override { return f_->preadv(v, n, o); }
    ssize_t pwritev(const iovec* v, int n, off_t o) override { return f_->pwritev(v, n, o); }
    off_t lseek(off_t o, int w) override { return f_->lseek(o, w); }
    int fsync() override { return f_->fsync(); }
    int fdatasync() override { return f_->fdatasync(); }
    int fchmod(mode_t m) override { return f_->fchmod(m); }
    int fchown(uid_t u, gid_t g) override { return f_->fchown(u, g); }
    int fstat(struct stat* st) override { return f_->fstat(st); }
    int ftruncate(off_t l) override { return f_->ftruncate(l); }
    ssize_t fgetxattr(const char*, void*, size_t) override { return enosys(); }
    ssize_t flistxattr(char*, size_t) override { return enosys(); }
    int fsetxattr(const char*, const void*, size_t, int) override { return enosys(); }
    int fremovexattr(const char*) override { return enosys(); }

    static inline int preads = 0;

private:
    static int enosys() {
        errno = ENOSYS;
        return -1;
    }
    int fd_;
    bool expose_, eagain_;
    std::unique_ptr<fs::IFile> f_;
};

// Opens under a root directory with openat (the escape tests use the real
// subfs); everything else is ENOSYS. eagain: reads of files opened
// O_NONBLOCK fail with EAGAIN, as io_uring's do on older kernels on a page
// cache miss.
class fd_fs : public fs::IFileSystem {
public:
    fd_fs(const std::string& root, bool expose, bool eagain = false)
        : root_(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)),
          expose_(expose),
          eagain_(eagain) {}
    ~fd_fs() override { ::close(root_); }

    fs::IFile* open(const char* path, int flags) override {
        opens++;
        while (*path == '/') path++;
        int fd = ::openat(root_, *path ? path : ".", flags);
        return fd < 0 ? nullptr : new fd_file(fd, expose_, eagain_ && (flags & O_NONBLOCK));
    }
    fs::IFile* open(const char* path, int flags, mode_t) override { return open(path, flags); }
    UNIMPLEMENTED_POINTER(fs::IFile* creat(const char*, mode_t) override)
    UNIMPLEMENTED(int mkdir(const char*, mode_t) override)
    UNIMPLEMENTED(int rmdir(const char*) override)
    UNIMPLEMENTED(int symlink(const char*, const char*) override)
    UNIMPLEMENTED(ssize_t readlink(const char*, char*, size_t) override)
    UNIMPLEMENTED(int link(const char*, const char*) override)
    UNIMPLEMENTED(int rename(const char*, const char*) override)
    UNIMPLEMENTED(int unlink(const char*) override)
    UNIMPLEMENTED(int chmod(const char*, mode_t) override)
    UNIMPLEMENTED(int chown(const char*, uid_t, gid_t) override)
    UNIMPLEMENTED(int lchown(const char*, uid_t, gid_t) override)
    UNIMPLEMENTED(int statfs(const char*, struct statfs*) override)
    UNIMPLEMENTED(int statvfs(const char*, struct statvfs*) override)
    int stat(const char* path, struct stat* st) override {
        stats++;
        while (*path == '/') path++;
        return ::fstatat(root_, *path ? path : ".", st, 0);
    }
    UNIMPLEMENTED(int lstat(const char*, struct stat*) override)
    UNIMPLEMENTED(int access(const char*, int) override)
    UNIMPLEMENTED(int truncate(const char*, off_t) override)
    UNIMPLEMENTED(int utime(const char*, const struct utimbuf*) override)
    UNIMPLEMENTED(int utimes(const char*, const struct timeval*) override)
    UNIMPLEMENTED(int lutimes(const char*, const struct timeval*) override)
    UNIMPLEMENTED(int mknod(const char*, mode_t, dev_t) override)
    UNIMPLEMENTED(int syncfs() override)
    UNIMPLEMENTED_POINTER(fs::DIR* opendir(const char*) override)

    static inline int opens = 0, stats = 0;

private:
    int root_;
    bool expose_, eagain_;
};

// ---- a socket stream that counts what the handler sends through it --------

struct counters {
    int writes = 0, sendfiles = 0;
    uint64_t sendfile_bytes = 0;
};

class counting_stream : public ISocketStream {
public:
    counting_stream(ISocketStream* s, counters* c) : s_(s), c_(c) {}
    int close() override { return 0; }
    ssize_t read(void* b, size_t n) override { return s_->read(b, n); }
    ssize_t readv(const iovec* v, int n) override { return s_->readv(v, n); }
    ssize_t write(const void* b, size_t n) override { return c_->writes++, s_->write(b, n); }
    ssize_t writev(const iovec* v, int n) override { return c_->writes++, s_->writev(v, n); }
    ssize_t recv(void* b, size_t n, int f) override { return s_->recv(b, n, f); }
    ssize_t recv(const iovec* v, int n, int f) override { return s_->recv(v, n, f); }
    ssize_t send(const void* b, size_t n, int f) override {
        return c_->writes++, s_->send(b, n, f);
    }
    ssize_t send(const iovec* v, int n, int f) override { return c_->writes++, s_->send(v, n, f); }
    ssize_t sendfile(int fd, off_t off, size_t n) override {
        c_->sendfiles++;
        ssize_t r = s_->sendfile(fd, off, n);
        if (r > 0) c_->sendfile_bytes += (uint64_t)r;
        return r;
    }
    Object* get_underlay_object(uint64_t r) override { return s_->get_underlay_object(r); }
    int setsockopt(int l, int o, const void* v, socklen_t n) override {
        return s_->setsockopt(l, o, v, n);
    }
    int getsockopt(int l, int o, void* v, socklen_t* n) override {
        return s_->getsockopt(l, o, v, n);
    }
    int getsockname(EndPoint& a) override { return s_->getsockname(a); }
    int getpeername(EndPoint& a) override { return s_->getpeername(a); }
    int getsockname(char* p, size_t n) override { return s_->getsockname(p, n); }
    int getpeername(char* p, size_t n) override { return s_->getpeername(p, n); }

private:
    ISocketStream* s_;
    counters* c_;
};

// ---- the request loop and a client -----------------------------------------

// Serves each connection with `handler` through the message layer, the
// handler's pattern being "" (remain = the path, or the whole target).
class loop_server {
public:
    loop_server(HTTPHandler* handler, ISocketServer* server) : handler_(handler), srv_(server) {}
    ~loop_server() { srv_->terminate(); }
    int start() {
        srv_->set_handler({this, &loop_server::serve});
        if (srv_->bind_v4localhost(0) < 0 || srv_->listen() < 0) return -1;
        return srv_->start_loop(false);
    }
    EndPoint ep() { return srv_->getsockname(); }

    counters counts;
    std::string pattern;  // passed to the handler, as an HTTPServer would

private:
    int serve(ISocketStream* s) {
        counting_stream cs(s, &counts);
        InputBuffer in(&cs);
        Request req;
        Response resp;
        req.reset(&in, &cs);
        while (req.receive_header() == 0) {
            resp.reset(&in, &cs);
            resp.for_request(req.verb(), req.minor_version());
            // The pattern "" (a default handler's): the whole path is served.
            if (handler_->handle_request(req, resp, pattern) < 0 || resp.send() < 0) break;
            if (!req.keep_alive()) break;
        }
        return 0;
    }

    HTTPHandler* handler_;
    std::unique_ptr<ISocketServer> srv_;
};

struct reply {
    int status = 0;
    Headers headers;
    std::string body;
    std::string_view operator[](std::string_view name) const { return headers[name]; }
};

// One keep-alive connection; requests are written raw.
class client {
public:
    client(ISocketClient* c, EndPoint ep) : cli_(c) {
        cli_->timeout(kClientTimeoutUs);
        s_.reset(cli_->connect(ep));
        in_.reset(s_.get());
    }
    bool connected() const { return s_ != nullptr; }

    // Sends `raw` (any number of requests) as is.
    bool send_raw(std::string_view raw) {
        return s_->write(raw.data(), raw.size()) == (ssize_t)raw.size();
    }
    // Reads one response to a request of verb v.
    bool receive(reply* r, Verb v = Verb::GET) {
        Response resp;
        resp.reset(&in_, s_.get());
        if (resp.receive_header(v) < 0) return false;
        r->status = resp.status_code();
        r->headers = resp.headers;
        r->body.clear();
        char buf[65536];
        ssize_t n;
        while ((n = resp.read(buf, sizeof(buf))) > 0) r->body.append(buf, n);
        return n == 0;
    }
    reply get(const std::string& target, const std::string& extra = "", Verb v = Verb::GET) {
        std::string verb = v == Verb::GET ? "GET" : v == Verb::HEAD ? "HEAD" : "POST";
        reply r;
        r.status = -1;
        std::string req = verb + " " + target + " HTTP/1.1\r\nHost: t\r\n" + extra + "\r\n";
        if (!send_raw(req) || !receive(&r, v)) r.status = -1;
        return r;
    }

private:
    std::unique_ptr<ISocketClient> cli_;
    std::unique_ptr<ISocketStream> s_;
    InputBuffer in_;
};

// ---- the tree served -------------------------------------------------------

const size_t kBig = 8 * 1024 * 1024 + 123;

struct tree {
    scratch_dir dir;
    std::string root;
    std::string small = "hello, world\n";
    std::string k4 = pattern(4096, 4);
    std::string k100 = pattern(100 * 1024, 100);
    std::string big = pattern(kBig, 8);
    bool ok = false;

    tree() : root(dir / "www") {
        auto put = [&](const std::string& name, const std::string& data) {
            FILE* f = fopen((root + "/" + name).c_str(), "wb");
            if (!f) return false;
            bool w = fwrite(data.data(), 1, data.size(), f) == data.size();
            return fclose(f) == 0 && w;
        };
        ok = !dir.path().empty() && ::mkdir(root.c_str(), 0755) == 0 &&
             ::mkdir((root + "/dir").c_str(), 0755) == 0 &&
             ::mkdir((root + "/noindex").c_str(), 0755) == 0 &&
             put("index.html", "<h1>root</h1>") && put("a.txt", small) && put("4k.bin", k4) &&
             put("100k.bin", k100) && put("big.bin", big) && put("empty", "") &&
             put("UPPER.HTML", "<p>") && put("dir/index.html", "<h1>dir</h1>") &&
             put("noindex/x.txt", "x") && put("secret.txt", "secret") &&
             put("sp ace.txt", "space") && ::chmod((root + "/secret.txt").c_str(), 0) == 0 &&
             ::mkfifo((root + "/fifo").c_str(), 0644) == 0 &&
             ::symlink("../outside.txt", (root + "/escape_rel").c_str()) == 0 &&
             ::symlink((dir / "outside.txt").c_str(), (root + "/escape_abs").c_str()) == 0 &&
             ::symlink("a.txt", (root + "/link.txt").c_str()) == 0;
        FILE* f = fopen((dir / "outside.txt").c_str(), "wb");
        ok = ok && f && fputs("OUTSIDE", f) >= 0 && fclose(f) == 0;
    }
};

struct fs_kind {
    std::string name;
    std::function<fs::IFileSystem*(const std::string& root)> make;
};

inline std::vector<fs_kind> fs_kinds(bool with_localfs = true) {
    std::vector<fs_kind> v = {
        {"fd", [](const std::string& r) { return (fs::IFileSystem*)new fd_fs(r, true); }},
        {"nofd", [](const std::string& r) { return (fs::IFileSystem*)new fd_fs(r, false); }},
    };
    if (!with_localfs) return v;
    int engines[] = {fs::ioengine_psync, fs::ioengine_iouring, fs::ioengine_posixaio,
                     fs::ioengine_libaio};
    for (int e : engines)
        v.push_back({std::string("localfs-") + io_engine_name(e),
                     [e](const std::string& r) { return fs::new_localfs_adaptor(r.c_str(), e); }});
    return v;
}

class FsHandler : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        set_log_output_level(ALOG_ERROR);
        t.reset(new tree);
        ASSERT_TRUE(t->ok) << "could not build the test tree";
    }
    void TearDown() override {
        server.reset();
        handler.reset();
        fs.reset();
        t.reset();
        EngineTest::TearDown();
    }

    // Serves fs (owned) with a fresh handler on a plain TCP loop server.
    void serve(fs::IFileSystem* f, ISocketServer* srv = nullptr) {
        server.reset();
        handler.reset();
        fs.reset(f);
        ASSERT_NE(nullptr, f) << strerror(errno);
        handler.reset(new_fs_handler(f));
        ASSERT_NE(nullptr, handler);
        server.reset(new loop_server(handler.get(), srv ? srv : new_tcp_socket_server()));
        ASSERT_EQ(0, server->start());
    }
    std::unique_ptr<client> connect() {
        return std::unique_ptr<client>(new client(new_tcp_socket_client(), server->ep()));
    }
    // libaio needs O_DIRECT (not on tmpfs) and a kernel AIO that works (not
    // under a user-mode emulator, nor in a build without libaio: ENOSYS).
    bool libaio_unusable(const fs_kind& k) {
        if (k.name != "localfs-libaio") return false;
        if (t->dir.on_tmpfs()) return true;
        static const bool works = [&] {
            std::unique_ptr<fs::IFileSystem> f(k.make(t->root));
            std::unique_ptr<fs::IFile> file(f ? f->open("/4k.bin", O_RDONLY) : nullptr);
            void* buf = nullptr;
            if (!file || posix_memalign(&buf, 4096, 4096) != 0) return false;
            bool ok = file->pread(buf, 4096, 0) == 4096;
            free(buf);
            return ok;
        }();
        return !works;
    }

    std::unique_ptr<tree> t;
    std::unique_ptr<fs::IFileSystem> fs;
    std::unique_ptr<HTTPHandler> handler;
    std::unique_ptr<loop_server> server;
};

inline std::string lm_of(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) < 0) return "";
    char buf[kHttpDateLength];
    format_http_date(st.st_mtim.tv_sec, buf);
    return std::string(buf, sizeof(buf));
}

}  // namespace fs_handler_test
