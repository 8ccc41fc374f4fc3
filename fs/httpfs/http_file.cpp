// The file of httpfs.h: fstat() by HEAD, reads by ranged GET, each answer
// checked against the identity the first one gave (see httpfs.h).
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/thread/thread.h>

#include "http_file.h"

namespace photon {
namespace fs {
namespace httpfs_detail {
namespace {

using net::http::Message;
using net::http::Response;
using net::http::Verb;

constexpr uint64_t kFirstPause = 10 * 1000;  // us before the first retry
constexpr uint64_t kMaxPause = 1000 * 1000;
constexpr size_t kPiece = 128 << 10;   // body bytes per read(): what a broken one costs again
constexpr size_t kScratch = 64 << 10;  // for body bytes that are dropped
// Sequential reads ask for up to 64 MiB ahead and read it along (a request
// costs a round trip, and a server that is slow to start its answer stalls
// each); a kept answer is skipped along for at most 256 KiB.
constexpr uint64_t kMaxAhead = 64 << 20;
constexpr uint64_t kMaxSkip = 256 << 10;

// Pauses between attempts: 10 ms, doubling to 1 s, within a deadline.
class pacer {
public:
    // false, with errno ETIMEDOUT, if the deadline passes first.
    bool pause(const Timeout& deadline) {
        if (deadline.expired()) return errno = ETIMEDOUT, false;
        photon::thread_usleep(std::min(pause_, deadline.timeout()));
        pause_ = std::min(pause_ * 2, kMaxPause);
        if (deadline.expired()) return errno = ETIMEDOUT, false;
        return true;
    }
    void reset() { pause_ = kFirstPause; }

private:
    uint64_t pause_ = kFirstPause;
};

// Whether a failed call (no answer) may go better on another try.
bool transport_retryable(int e) {
    return e != EINVAL && e != ELOOP && e != EACCES && e != EPROTO && e != ENOENT && e != ENOMEM;
}

bool transient_status(int code) { return code == 500 || code == 502 || code == 503 || code == 504; }

// errno for an answer that is no success and no retry.
int status_errno(int code) {
    if (code == 401 || code == 403) return EACCES;
    if (code >= 400 && code < 500) return ENOENT;
    return EIO;
}

// Seconds since the epoch of an HTTP-date (RFC 9110 5.6.7, all three
// forms), or -1.
time_t parse_http_date(std::string_view s) {
    static const char* const forms[] = {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT",
                                        "%a %b %e %H:%M:%S %Y"};
    std::string text(s);
    for (const char* f : forms) {
        struct tm tm = {};
        const char* end = strptime(text.c_str(), f, &tm);
        if (end && *end == '\0') return timegm(&tm);
    }
    return -1;
}

// first and last of "bytes first-last/total" (the total is same_file()'s).
bool parse_content_range(std::string_view v, uint64_t* first, uint64_t* last) {
    if (v.substr(0, 6) != "bytes ") return false;
    v.remove_prefix(6);
    auto number = [&](uint64_t* out, char stop) {
        size_t i = 0;
        uint64_t n = 0;
        for (; i < v.size() && v[i] >= '0' && v[i] <= '9' && i < 19; i++) n = n * 10 + v[i] - '0';
        if (i == 0 || i >= v.size() || v[i] != stop) return false;
        *out = n;
        v.remove_prefix(i + 1);
        return true;
    };
    return number(first, '-') && number(last, '/') && *first <= *last;
}

// Reads n body bytes into iov[] from byte `skip` on, in pieces: the bytes
// placed; fewer on failure (errno set, EPROTO if the body ended early).
size_t body_into(Message& m, const struct iovec* iov, int iovcnt, size_t skip, size_t n) {
    size_t placed = 0;
    for (int i = 0; i < iovcnt && placed < n; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        char* p = (char*)iov[i].iov_base + skip;
        size_t room = std::min(iov[i].iov_len - skip, n - placed);
        skip = 0;
        while (room) {
            size_t want = std::min(room, kPiece);
            ssize_t r = m.read(p, want);
            if (r < 0) return placed;
            placed += r;
            if ((size_t)r < want) return errno = EPROTO, placed;
            p += r, room -= r;
        }
    }
    return placed;
}

// Reads and drops n body bytes: 0, or -1 with errno.
int body_skip(Message& m, uint64_t n) {
    if (n == 0) return 0;
    std::unique_ptr<char[]> scratch(new char[kScratch]);
    while (n) {
        size_t want = std::min<uint64_t>(n, kScratch);
        ssize_t r = m.read(scratch.get(), want);
        if (r < 0) return -1;
        if ((size_t)r < want) return errno = EPROTO, -1;
        n -= r;
    }
    return 0;
}

size_t iov_sum(const struct iovec* iov, int iovcnt) {
    size_t n = 0;
    for (int i = 0; i < iovcnt; i++) n += iov[i].iov_len;
    return n;
}

bool strong_etag(const std::string& etag) { return !etag.empty() && etag.compare(0, 2, "W/"); }

}  // namespace

http_file::http_file(std::string url, std::string query, IFileSystem* fs, net::http::Client* client,
                     bool own_client, uint64_t conn_timeout, uint64_t stat_expire)
    : url_(std::move(url)),
      query_(std::move(query)),
      fs_(fs),
      client_(client),
      own_client_(own_client),
      conn_timeout_(conn_timeout),
      stat_expire_(stat_expire) {}

http_file::~http_file() {
    stream_.reset();  // its connection goes back to client_ first
    if (own_client_) delete client_;
}

http_file::op_ptr http_file::new_op(Verb verb, const Timeout& deadline) {
    op_ptr op(client_->new_operation(verb, query_.empty() ? url_ : url_ + "?" + query_));
    op->timeout = deadline;
    auto& h = op->req.headers;
    for (auto f : headers_) h.set(f.first, f.second);
    // Ask the server itself to refuse another version of the file.
    if (strong_etag(id_.etag))
        h.set("If-Match", id_.etag);
    else if (!id_.last_modified.empty())
        h.set("If-Unmodified-Since", id_.last_modified);
    return op;
}

bool http_file::same_file(const Response& resp) {
    std::string etag(resp.headers["ETag"]), lm(resp.headers["Last-Modified"]);
    int64_t size = resp.resource_size();
    if (!id_.known()) {
        id_ = identity{std::move(etag), std::move(lm), size};
        return true;
    }
    bool changed = (!etag.empty() && !id_.etag.empty() && etag != id_.etag) ||
                   (!lm.empty() && !id_.last_modified.empty() && lm != id_.last_modified) ||
                   (size >= 0 && size != id_.size);
    if (changed) {
        LOG_ERROR("httpfs: ` changed on the server (ETag ` -> `, size ` -> `)", url_, id_.etag,
                  etag, id_.size, size);
        stale_ = true;
        errno = EIO;
    }
    return !changed;
}

int http_file::stale_error() {
    errno = EIO;
    return -1;
}

int http_file::refresh_stat() {
    Timeout deadline(conn_timeout_);
    pacer pace;
    bool by_get = false;  // after a server refused HEAD, or gave no size
    for (;;) {
        op_ptr op = new_op(by_get ? Verb::GET : Verb::HEAD, deadline);
        if (by_get) op->req.headers.set("Range", "bytes=0-0");
        if (op->call() < 0) {
            if (!transport_retryable(errno) || !pace.pause(deadline))
                LOG_ERRNO_RETURN(0, -1, "httpfs: cannot stat `", url_);
            continue;
        }
        int sc = op->status_code;
        if (transient_status(sc)) {
            if (!pace.pause(deadline))
                LOG_ERRNO_RETURN(0, -1, "httpfs: stat of ` gave `", url_, sc);
            continue;
        }
        if (!by_get && (sc == 405 || sc == 501)) {
            by_get = true;
            continue;
        }
        if (sc == 412) return stale_ = true, stale_error();
        bool sized = sc == 200 || sc == 206 || (by_get && sc == 416);
        if (!sized) LOG_ERROR_RETURN(status_errno(sc), -1, "httpfs: stat of ` gave `", url_, sc);
        if (op->resp.resource_size() < 0) {
            if (by_get) LOG_ERROR_RETURN(EIO, -1, "httpfs: ` gives no size", url_);
            by_get = true;
            continue;
        }
        if (!same_file(op->resp)) return -1;
        memset(&stat_, 0, sizeof(stat_));
        stat_.st_mode = S_IFREG | 0444;
        stat_.st_nlink = 1;
        stat_.st_size = id_.size;
        stat_.st_blksize = 4096;
        stat_.st_blocks = (id_.size + 511) / 512;
        time_t mtime = parse_http_date(op->resp.headers["Last-Modified"]);
        if (mtime > 0) stat_.st_mtime = stat_.st_ctime = stat_.st_atime = mtime;
        stat_time_ = std::max<uint64_t>((uint64_t)photon::now, 1);
        return 0;
    }
}

int http_file::fstat(struct stat* buf) {
    if (stale_) return stale_error();
    if (!stat_time_ || photon::now - stat_time_ >= stat_expire_) {
        if (refresh_stat() < 0) return -1;
    }
    if (buf) *buf = stat_;
    return 0;
}

ssize_t http_file::pread(void* buf, size_t count, off_t offset) {
    struct iovec v = {buf, count};
    return preadv(&v, 1, offset);
}

ssize_t http_file::preadv(const struct iovec* iov, int iovcnt, off_t offset) {
    if (offset < 0 || iovcnt < 0) LOG_ERROR_RETURN(EINVAL, -1, "httpfs: bad read arguments");
    size_t total = iov_sum(iov, iovcnt);
    if (fstat(nullptr) < 0) return -1;
    if (total == 0 || offset >= id_.size) return 0;
    size_t len = std::min<uint64_t>(total, id_.size - offset);
    // From the second read in a row that starts where the last one ended,
    // ask for more than this read: twice as much each time, up to kMaxAhead.
    if ((uint64_t)offset == next_seq_)
        ahead_ = std::min<uint64_t>(std::max<uint64_t>(ahead_ * 2, len * 2), kMaxAhead);
    else
        ahead_ = 0;
    Timeout deadline(conn_timeout_);
    pacer pace;
    size_t done = 0;
    while (done < len) {
        bool fatal = false;
        ssize_t n = read_once(iov, iovcnt, done, offset + done, len - done, deadline, &fatal);
        if (n > 0) done += n, pace.reset();
        if (done == len) break;
        if (stale_) return stale_error();
        int e = errno;
        if (fatal || (n <= 0 && !pace.pause(deadline))) {
            if (done) break;
            LOG_ERROR_RETURN(fatal ? e : errno, -1, "httpfs: failed to read ` at `", url_,
                             offset + done);
        }
    }
    next_seq_ = offset + done;
    return done;
}

ssize_t http_file::read_once(const struct iovec* iov, int iovcnt, size_t skip, uint64_t pos,
                             size_t len, const Timeout& deadline, bool* fatal) {
    // Going on along the body we have beats a new request, unless that
    // means skipping much of a range (a server that ignores Range would
    // answer a new request from byte 0 again: skip any distance on that).
    if (stream_ && pos >= stream_pos_ && pos < stream_end_ &&
        (stream_whole_ || pos - stream_pos_ <= kMaxSkip))
        return read_stream(iov, iovcnt, skip, pos, len);
    stream_.reset();
    return read_range(iov, iovcnt, skip, pos, len, deadline, fatal);
}

ssize_t http_file::read_stream(const struct iovec* iov, int iovcnt, size_t skip, uint64_t pos,
                               size_t len) {
    op_ptr op = std::move(stream_);
    if (body_skip(op->resp, pos - stream_pos_) < 0) return 0;
    size_t want = std::min<uint64_t>(len, stream_end_ - pos);
    size_t got = body_into(op->resp, iov, iovcnt, skip, want);
    if (got == want && pos + got < stream_end_) {
        stream_ = std::move(op);  // more of it to come: keep it
        stream_pos_ = pos + got;
    }
    return got;
}

ssize_t http_file::read_range(const struct iovec* iov, int iovcnt, size_t skip, uint64_t pos,
                              size_t len, const Timeout& deadline, bool* fatal) {
    uint64_t end = std::min<uint64_t>(id_.size, pos + std::max<uint64_t>(len, ahead_));
    op_ptr op = new_op(Verb::GET, deadline);
    op->req.headers.set("Range", "bytes=" + std::to_string(pos) + "-" + std::to_string(end - 1));
    if (op->call() < 0) {
        *fatal = !transport_retryable(errno);
        return 0;
    }
    Response& resp = op->resp;
    int sc = op->status_code;
    if (sc == 206) {
        uint64_t first, last;
        if (!same_file(resp)) return *fatal = true, -1;
        if (!parse_content_range(resp.headers["Content-Range"], &first, &last) || first != pos ||
            last >= end ||
            (resp.body_size() >= 0 && (uint64_t)resp.body_size() != last - first + 1)) {
            LOG_ERROR("httpfs: ` answered bytes=`-` with Content-Range `", url_, pos, end - 1,
                      resp.headers["Content-Range"]);
            return *fatal = true, errno = EIO, -1;
        }
        stream_end_ = last + 1;
        stream_whole_ = false;
    } else if (sc == 200) {  // Range ignored: the whole body
        if (!same_file(resp)) return *fatal = true, -1;
        stream_end_ = id_.size;
        stream_whole_ = true;
    } else if (sc == 412 || sc == 416) {  // If-Match failed, or the file shrank
        LOG_ERROR("httpfs: ` changed on the server (`)", url_, sc);
        stale_ = true;
        return *fatal = true, errno = EIO, -1;
    } else if (transient_status(sc)) {
        return errno = EIO, 0;
    } else {
        LOG_ERROR("httpfs: GET ` gave `", url_, sc);
        return *fatal = true, errno = status_errno(sc), -1;
    }
    stream_ = std::move(op);
    stream_pos_ = sc == 206 ? pos : 0;
    return read_stream(iov, iovcnt, skip, pos, len);
}

int http_file::vioctl(int request, va_list args) {
    if (request == HTTP_HEADER) {
        const char* k = va_arg(args, const char*);
        const char* v = va_arg(args, const char*);
        if (!k || !v || headers_.set(k, v) < 0)
            LOG_ERROR_RETURN(EINVAL, -1, "httpfs: bad header for ioctl(HTTP_HEADER)");
        stat_time_ = 0;  // e.g. credentials: ask again
        return 0;
    }
    if (request == HTTP_URL_PARAM) {
        const char* q = va_arg(args, const char*);
        std::string query = q ? q : "";
        net::http::URL check;
        if (!query.empty()) (void)check.from_string(url_ + "?" + query);  // empty if bad
        if (!query.empty() && check.host().empty())
            LOG_ERROR_RETURN(EINVAL, -1, "httpfs: bad query for ioctl(HTTP_URL_PARAM)");
        query_ = std::move(query);
        // Another query may name another resource: start afresh.
        id_ = identity();
        stale_ = false;
        stat_time_ = 0;
        stream_.reset();
        return 0;
    }
    LOG_ERROR_RETURN(EINVAL, -1, "httpfs: unknown ioctl ` (HTTP_HEADER or HTTP_URL_PARAM)",
                     request);
}

}  // namespace httpfs_detail
}  // namespace fs
}  // namespace photon
