// new_fs_handler: static files of an IFileSystem. Files with an fd are kept
// open (open_file_cache) with their stat and, up to kInlineMax, their bytes:
// a hit costs no system call besides the response's one write, and a
// check of the file system once a second. Others cost an open and an fstat
// (plus a second open for a directory's index.html). The head goes out with
// small bodies in one writev, or ahead of sendfile(2) with MSG_MORE. No
// allocation on the hot path beyond the head string and the Headers fields;
// read buffers come from a per-thread free list.
#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <photon/common/alog.h>
#include <photon/fs/filesystem.h>
#include <photon/net/http/server.h>
#include <photon/net/socket.h>

#include "hex.h"
#include "http_date.h"
#include "mime_types.h"
#include "open_file_cache.h"
#include "rfc9110.h"

namespace photon {
namespace net {
namespace http {
namespace {

constexpr size_t kAlign = 4096;  // read windows are aligned: O_DIRECT (libaio) files need it
constexpr size_t kChunk = 64 * 1024;
constexpr size_t kBufSize = kChunk + kAlign;  // kChunk from an unaligned offset fits
// Bodies up to this size are read and sent with the head in one writev;
// larger ones from a local file to a kernel socket go by sendfile.
constexpr uint64_t kInlineMax = 16 * 1024;
constexpr int kOpenFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;  // a FIFO must not block

// Read buffers, kept per thread (each vCPU is one) so that a request takes
// one without allocating once warm. A coroutine holds one across yields,
// so a single shared buffer would not do.
class buffer_pool {
public:
    ~buffer_pool() {
        for (char* p : free_) std::free(p);
    }
    char* get() {
        if (free_.empty()) return (char*)std::aligned_alloc(kAlign, kBufSize);
        char* p = free_.back();
        free_.pop_back();
        return p;
    }
    void put(char* p) {
        if (free_.size() < kKeep) return free_.push_back(p);
        std::free(p);
    }

private:
    static constexpr size_t kKeep = 32;
    std::vector<char*> free_;
};
thread_local buffer_pool t_buffers;

struct pooled_buffer {
    char* p = t_buffers.get();
    ~pooled_buffer() {
        if (p) t_buffers.put(p);
    }
};

size_t put_dec(char* p, uint64_t v) {
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
    return n;
}

bool if_none_match(const Headers& h, std::string_view etag, bool* present) {
    *present = false;
    for (auto f : h) {
        if (!iequals(f.first, "If-None-Match")) continue;
        *present = true;
        if (etag_list_matches(f.second, etag)) return true;
    }
    return false;
}

// A kernel socket (sendfile(2) goes straight to it), or nullptr for
// anything else (TLS, test streams). Kernel streams answer
// get_underlay_object with their fd at any depth; layered ones (TLS) with
// the layer below.
ISocketStream* kernel_socket(IStream* out) {
    auto s = dynamic_cast<ISocketStream*>(out);
    if (!s) return nullptr;
    intptr_t v = (intptr_t)s->get_underlay_object(0);
    return v >= 0 && v <= INT_MAX ? s : nullptr;
}

// The fd of a local file (which answers get_underlay_object with it, as
// PhotonLibOS's local files do), or -1. O_DIRECT files (libaio) count as
// having none: sendfile(2) fails on their unaligned tail, and pread(2) on
// the fd would go to the disk each time; their I/O engine reads them.
int local_fd(fs::IFile* f) {
    if (!dynamic_cast<fs::IFileXAttr*>(f)) return -1;
    errno = 0;
    Object* o = f->get_underlay_object(0);
    intptr_t v = (intptr_t)o;
    if ((!o && errno) || v < 0 || v > INT_MAX) return -1;
    int fl = fcntl((int)v, F_GETFL);
    return fl < 0 || (fl & O_DIRECT) ? -1 : (int)v;
}

ssize_t pread_fd(int fd, void* buf, size_t n, off_t off) {
    ssize_t r;
    do {
        r = ::pread(fd, buf, n, off);
    } while (r < 0 && errno == EINTR);
    return r;
}

int write_all(IStream* out, const struct iovec* iov, int cnt) {
    size_t want = 0;
    for (int i = 0; i < cnt; i++) want += iov[i].iov_len;
    ssize_t r = out->writev(iov, cnt);
    if (r == (ssize_t)want) return 0;
    if (r >= 0) errno = EIO;
    return -1;
}

class fs_handler : public HTTPHandler {
public:
    explicit fs_handler(fs::IFileSystem* fs) : fs_(fs) {}
    int handle_request(Request& req, Response& resp, std::string_view pattern) override;

private:
    struct file_ctx;
    bool from_cache(const char* path, size_t len, file_ctx& f);
    const std::string* small_file_bytes(file_ctx& f);
    int serve(Request& req, Response& resp, file_ctx& f);
    int send_file(Response& resp, file_ctx& f, std::string& head, uint64_t off, uint64_t count);
    int copy_body(IStream* out, file_ctx& f, std::string& head, uint64_t off, uint64_t count);

    fs::IFileSystem* fs_;
    open_file_cache cache_;
};

// An open file and what the request made of it.
struct fs_handler::file_ctx {
    const char* path;
    fs::IFile* file = nullptr;
    int fd = -1;
    struct stat st;
    open_file_cache::entry* cached = nullptr;  // then file is the cache's
    open_file_cache::snapshot_ptr snap;        // of cached: st, maybe the bytes

    ~file_ctx() {
        if (cached)
            open_file_cache::release(cached);
        else
            delete file;
    }
    // Opens path and stats it: 0, or -1 with errno.
    int open(fs::IFileSystem* fs, const char* p, int flags = kOpenFlags) {
        path = p;
        delete file;
        fd = -1;
        file = fs->open(p, flags);
        if (!file) return -1;
        fd = local_fd(file);
        return fd >= 0 ? ::fstat(fd, &st) : file->fstat(&st);
    }
};

int error_status(int e) {
    switch (e) {
        case ENOENT:
        case ENOTDIR:
        case ENAMETOOLONG:
            return 404;
        case EACCES:
        case EPERM:
        case ELOOP:
            return 403;
        default:
            return 500;
    }
}

// A response with no more than a short body: the head and body in one
// writev. Returns the handler's result: 0, or -1 if the stream failed.
int send_small(Response& resp, std::string_view body, bool has_body) {
    std::string head;
    if (resp.take_head(&head) < 0) return -1;
    struct iovec iov[2] = {{&head[0], head.size()}, {(void*)body.data(), body.size()}};
    return write_all(resp.output(), iov, has_body && !body.empty() ? 2 : 1);
}

// An error (or other bodiless status) with a short text body.
int reply_status(Request& req, Response& resp, int code) {
    char body[64];
    std::string_view reason = status_reason(code);
    size_t n = put_dec(body, (uint64_t)code);
    body[n++] = ' ';
    n += reason.copy(body + n, sizeof(body) - n - 1);
    body[n++] = '\n';
    resp.set_result(code);
    (void)resp.headers.insert("Content-Type", "text/plain; charset=utf-8");
    (void)resp.headers.content_length(n);
    return send_small(resp, {body, n}, req.verb() != Verb::HEAD);
}

int fs_handler::handle_request(Request& req, Response& resp, std::string_view pattern) {
    std::string_view remain = pattern_remain(req, pattern);
    if (req.verb() != Verb::GET && req.verb() != Verb::HEAD) {
        (void)resp.headers.insert("Allow", "GET, HEAD");
        return reply_status(req, resp, 405);
    }
    // A decoded path is never longer than the target ("/" + remain). Short
    // ones stay on a small stack buffer: a PATH_MAX frame puts this
    // function's locals on a cold stack page of every request's coroutine.
    const size_t kIndexRoom = sizeof("/index.html");
    char small[512];
    std::unique_ptr<char[]> big;
    char* path = small;
    size_t cap = sizeof(small);
    if (remain.size() + 1 + kIndexRoom > cap) {
        big.reset(new (std::nothrow) char[PATH_MAX]);
        if (!big) return reply_status(req, resp, 500);
        path = big.get();
        cap = PATH_MAX;
    }
    size_t len;
    bool dir;
    int status = decode_path(remain, path, cap - kIndexRoom, &len, &dir);
    if (status) return reply_status(req, resp, status);

    file_ctx f;
    if (!dir && from_cache(path, len, f)) return serve(req, resp, f);
    if (f.open(fs_, path) < 0) {
        // Some file systems refuse to open a directory or a special file
        // (O_DIRECT: EINVAL); those get the answers below.
        int e = errno;
        if ((e != EINVAL && e != EISDIR) || fs_->stat(path, &f.st) < 0 || S_ISREG(f.st.st_mode)) {
            int code = error_status(e);
            if (code == 500)
                LOG_EVERY_T(10, LOG_ERROR("fs handler: open(`) failed ", path, ERRNO(e)));
            return reply_status(req, resp, code);
        }
    }
    if (S_ISDIR(f.st.st_mode)) {
        std::string_view target = req.abs_path();
        if (target.empty() || target.back() != '/') {
            // Relative links in the index need the slash: redirect, keeping
            // the query. Leading slashes are collapsed so that "//host/dir"
            // cannot become a redirect to another host.
            size_t lead = 0;
            while (lead + 1 < target.size() && target[lead + 1] == '/') lead++;
            std::string loc(target.substr(lead));
            loc += '/';
            if (req.target().size() > target.size()) loc += req.target().substr(target.size());
            resp.set_result(301);
            if (resp.headers.insert("Location", loc) < 0) return reply_status(req, resp, 500);
            (void)resp.headers.content_length(0);
            return send_small(resp, {}, false);
        }
        strcpy(path + len, len == 1 ? "index.html" : "/index.html");  // room kept by decode_path
        if (f.open(fs_, path) < 0) {
            int e = errno, code = error_status(e);  // EINVAL: a directory under O_DIRECT
            return reply_status(req, resp, code == 404 || e == EINVAL ? 403 : code);
        }
        if (S_ISDIR(f.st.st_mode)) return reply_status(req, resp, 403);
    } else if (dir) {
        return reply_status(req, resp, 404);  // "file/": as open(2) would say, ENOTDIR
    } else if (S_ISREG(f.st.st_mode) && f.fd >= 0) {
        f.cached = cache_.put({path, len}, f.file, f.fd, f.st, &f.snap);
    }
    if (!S_ISREG(f.st.st_mode)) return reply_status(req, resp, 403);
    return serve(req, resp, f);
}

bool same_file_state(const struct stat& a, const struct stat& b) {
    return a.st_ino == b.st_ino && a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
           a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_ctim.tv_sec == b.st_ctim.tv_sec &&
           a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

// A kept-open file for path, as last seen: checked against the file system
// (path and fd) when due.
bool fs_handler::from_cache(const char* path, size_t len, file_ctx& f) {
    open_file_cache::snapshot_ptr snap;
    open_file_cache::entry* e = cache_.get({path, len}, &snap);
    if (!e) return false;
    if (open_file_cache::due(e)) {
        struct stat st, fst;
        if (fs_->stat(path, &st) < 0 || st.st_dev != e->dev || st.st_ino != e->ino ||
            ::fstat(e->fd, &fst) < 0) {
            cache_.erase(e);
            open_file_cache::release(e);
            return false;
        }
        if (!same_file_state(snap->st, fst)) {
            snap = std::make_shared<open_file_cache::snapshot>(fst);
            cache_.update(e, snap);
        }
        open_file_cache::validated(e);
    }
    f.path = path;
    f.file = e->file;
    f.fd = e->fd;
    f.st = snap->st;
    f.snap = std::move(snap);
    f.cached = e;
    return true;
}

// The bytes of a small kept-open file: from its snapshot, or read now and
// published with it. nullptr if the file is not kept or its size no longer
// matches the snapshot (changed meanwhile: the caller reads it as usual).
const std::string* fs_handler::small_file_bytes(file_ctx& f) {
    if (!f.cached || !f.snap || (uint64_t)f.snap->st.st_size > kInlineMax) return nullptr;
    if (f.snap->loaded) return &f.snap->bytes;
    auto loaded = std::make_shared<open_file_cache::snapshot>(f.snap->st);
    size_t size = (size_t)loaded->st.st_size;
    loaded->bytes.resize(size + 1);  // one more: a file that grew reads long
    ssize_t n = pread_fd(f.fd, &loaded->bytes[0], size + 1, 0);
    if (n != (ssize_t)size) return nullptr;
    loaded->bytes.resize(size);
    loaded->loaded = true;
    f.snap = std::move(loaded);
    cache_.update(f.cached, f.snap);
    return &f.snap->bytes;
}

int fs_handler::serve(Request& req, Response& resp, file_ctx& f) {
    // A kept file's snapshot has them formatted already (copied: the
    // snapshot may be replaced below).
    file_validators val = f.snap ? f.snap->val : file_validators(f.st);
    uint64_t size = (uint64_t)f.st.st_size, first = 0, last = size ? size - 1 : 0;
    bool head_only = req.verb() == Verb::HEAD;

    // Conditionals, RFC 9110 13.2.2: If-None-Match, else If-Modified-Since.
    bool inm;
    bool not_modified = if_none_match(req.headers, val.etag(), &inm);
    if (!inm) {
        std::string_view ims = req.headers["If-Modified-Since"];
        time_t t;
        not_modified = !ims.empty() && parse_http_date(ims, &t) && val.mtime <= t;
    }
    if (not_modified) {
        resp.set_result(304);
        (void)resp.headers.insert("ETag", val.etag());
        (void)resp.headers.insert("Last-Modified", val.last_modified());
        return send_small(resp, {}, false);
    }

    // Range, for HEAD as for GET, as Photon's fs handler (RFC 9110 14.2
    // defines it for GET, and a HEAD answer is the GET's head); If-Range
    // guards it. A range of the whole file is answered 200, as Photon's.
    range_result range = range_result::ignore;
    if (req.headers.count("Range") == 1) {
        std::string_view ir = req.headers["If-Range"];
        if (ir.empty() || if_range_holds(ir, val.etag(), val.mtime))
            range = parse_range(req.headers["Range"], size, &first, &last);
        if (range == range_result::partial && first == 0 && last + 1 == size)
            range = range_result::ignore;
    }
    char cr[64] = "bytes ";  // Content-Range
    size_t crn = 6;
    if (range == range_result::unsatisfiable) {
        cr[crn++] = '*';
        cr[crn++] = '/';
        crn += put_dec(cr + crn, size);
        resp.set_result(416);
        (void)resp.headers.insert("Content-Range", {cr, crn});
        (void)resp.headers.content_length(0);
        return send_small(resp, {}, false);
    }
    uint64_t count = size;
    if (range == range_result::partial) {
        count = last - first + 1;
        crn += put_dec(cr + crn, first);
        cr[crn++] = '-';
        crn += put_dec(cr + crn, last);
        cr[crn++] = '/';
        crn += put_dec(cr + crn, size);
        resp.set_result(206);
    } else {
        resp.set_result(200);
    }
    // Values of our own making: appended without the checks of insert().
    auto& h = resp.headers;
    (void)h.append_valid("Content-Type", f.cached ? f.cached->mime : mime_type(f.path));
    (void)h.content_length(count);
    (void)h.append_valid("Last-Modified", val.last_modified());
    (void)h.append_valid("ETag", val.etag());
    (void)h.append_valid("Accept-Ranges", "bytes");
    if (range == range_result::partial) (void)h.append_valid("Content-Range", {cr, crn});

    std::string head;
    head.reserve(512);
    if (resp.take_head(&head) < 0) return -1;
    if (head_only || count == 0) {
        struct iovec iov = {&head[0], head.size()};
        return write_all(resp.output(), &iov, 1);
    }
    if (const std::string* bytes = small_file_bytes(f)) {
        struct iovec iov[2] = {{&head[0], head.size()}, {(void*)(bytes->data() + first), count}};
        return write_all(resp.output(), iov, 2);
    }
    return send_file(resp, f, head, first, count);
}

// Sends head and count bytes of the file from off. 0, or -1 (the response
// is then incomplete: the connection must close).
int fs_handler::send_file(Response& resp, file_ctx& f, std::string& head, uint64_t off,
                          uint64_t count) {
    IStream* out = resp.output();
    ISocketStream* sock = f.fd >= 0 && count > kInlineMax ? kernel_socket(out) : nullptr;
    if (!sock) return copy_body(out, f, head, off, count);
    // MSG_MORE: the head waits for the first file bytes (one segment).
    size_t sent = 0;
    while (sent < head.size()) {
        ssize_t r = sock->send(&head[sent], head.size() - sent, MSG_MORE);
        if (r <= 0) return -1;
        sent += (size_t)r;
    }
    ssize_t r = sock->sendfile(f.fd, (off_t)off, count);
    if (r == (ssize_t)count) return 0;
    if (r >= 0) LOG_EVERY_T(10, LOG_WARN("fs handler: ` shrank while being sent", f.path));
    return -1;
}

// The copying path: aligned windows of the file into a pooled buffer, the
// first sent with the head. Reads the fd directly when there is one (as
// sendfile would), else through the file (its I/O engine).
int fs_handler::copy_body(IStream* out, file_ctx& f, std::string& head, uint64_t off,
                          uint64_t count) {
    pooled_buffer buf;
    if (!buf.p) return -1;
    bool first = true, reopened = false;
    while (count) {
        uint64_t base = off & ~(uint64_t)(kAlign - 1);
        size_t skip = (size_t)(off - base);
        size_t want = skip + (size_t)std::min<uint64_t>(count, kChunk);
        want = (want + kAlign - 1) & ~(kAlign - 1);  // <= kBufSize
        ssize_t n = f.fd >= 0 ? pread_fd(f.fd, buf.p, want, (off_t)base)
                              : f.file->pread(buf.p, want, (off_t)base);
        if (n < 0 && errno == EAGAIN && f.fd < 0 && !reopened) {
            // io_uring honours O_NONBLOCK on regular files (EAGAIN on a
            // page cache miss); now that the file is known to be regular,
            // open it again without.
            reopened = true;
            dev_t dev = f.st.st_dev;
            ino_t ino = f.st.st_ino;
            if (f.open(fs_, f.path, kOpenFlags & ~O_NONBLOCK) < 0 || f.st.st_dev != dev ||
                f.st.st_ino != ino)
                return -1;
            continue;
        }
        if (n < 0) {
            LOG_EVERY_T(10, LOG_ERROR("fs handler: reading ` failed ", f.path, ERRNO()));
            return -1;
        }
        if ((size_t)n <= skip) {
            LOG_EVERY_T(10, LOG_WARN("fs handler: ` shrank while being sent", f.path));
            return -1;
        }
        size_t got = (size_t)std::min<uint64_t>((uint64_t)n - skip, count);
        struct iovec iov[2] = {{&head[0], head.size()}, {buf.p + skip, got}};
        if (write_all(out, first ? iov : iov + 1, first ? 2 : 1) < 0) return -1;
        first = false;
        off += got;
        count -= got;
    }
    return 0;
}

}  // namespace

HTTPHandler* new_fs_handler(fs::IFileSystem* fs) {
    if (!fs) {
        errno = EINVAL;
        return nullptr;
    }
    return new fs_handler(fs);
}

}  // namespace http
}  // namespace net
}  // namespace photon
