// The object storage client (<photon/ecosystem/oss.h>) on photon's HTTP client.
//
// Every call goes through perform(): it builds the URL (virtual-hosted or
// path-style), adds the dialect's headers, signs, sends, and on a 5xx, a 429 /
// SlowDown, a timeout or a cut connection sends again after a backoff (a body
// comes again from its BodyWriter). Bodies stream through CheckedStream
// (checked_stream.h), which counts them and computes CRC-64 (OSS's
// x-oss-hash-crc64ecma), MD5 (S3's ETag of a single PUT / whole GET) and
// CRC32C (S3's flexible checksums, sent as an aws-chunked trailer:
// aws_chunked.h) on the way.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/checksum/crc32c.h>
#include <photon/common/checksum/crc64ecma.h>
#include <photon/common/checksum/digest.h>
#include <photon/ecosystem/oss.h>
#include <photon/net/http/client.h>
#include <photon/net/utils.h>
#include <photon/thread/mutex.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include "../http/mime_types.h"
#include "aws_chunked.h"
#include "checked_stream.h"
#include "sign.h"
#include "xml.h"

namespace photon {
namespace objstore {

std::string_view lookup_mime_type(std::string_view name) {
    return photon::net::http::mime_type(name);
}

namespace {

using detail::AwsChunkedStream;
using detail::CheckedStream;

using namespace photon::net::http;
using detail::uri_encode;
using KVs = std::vector<std::pair<std::string, std::string>>;
using HttpOp = photon::net::http::Client::Operation;

constexpr size_t kXmlLimit = 16 << 20;          // biggest XML answer read
constexpr uint64_t kMaxCopySize = 5ULL << 30;   // one CopyObject at most
constexpr uint64_t kCopyPartSize = 1ULL << 30;  // parts of a bigger rename
constexpr int kBatchConcurrency = 8;
constexpr char kCrc32cHeader[] = "x-amz-checksum-crc32c";
// "x-amz-checksum-crc32c:" and the 8 characters of a CRC32C in base64.
constexpr size_t kCrc32cTrailerLen = sizeof(kCrc32cHeader) - 1 + 1 + 8;

// S3's form of a CRC32C: base64 of its 4 bytes, most significant first.
std::string crc32c_base64(uint32_t crc) {
    char b[4] = {(char)(crc >> 24), (char)(crc >> 16), (char)(crc >> 8), (char)crc};
    return detail::base64(std::string_view(b, 4));
}

bool is_md5_etag(std::string_view e) {
    if (e.size() >= 2 && e.front() == '"') e = e.substr(1, e.size() - 2);
    if (e.size() != 32) return false;
    for (char c : e)
        if (!isxdigit((unsigned char)c)) return false;
    return true;
}

std::string unquote(std::string_view e) {
    if (e.size() >= 2 && e.front() == '"' && e.back() == '"') e = e.substr(1, e.size() - 2);
    return std::string(e);
}

std::string xml_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

// One request as perform() sends it.
struct Call {
    Verb verb = Verb::GET;
    std::string_view object;
    bool with_object = true;  // false: the bucket itself (list, delete, ...)
    KVs query;
    KVs headers;
    std::string_view body;         // a small body (XML), or
    BodyWriter* writer = nullptr;  // a streamed one of body_size bytes
    size_t body_size = 0;
    bool retry_body_errors = true;  // false: not sent again once the body went (append)
    // Handles a 2xx: >= 0 is the result; -1 with errno fails, and *retry
    // asks for another attempt (a truncated body, say).
    std::function<ssize_t(HttpOp*, CheckedStream* sent, bool* retry)> on_ok;
    // Handles other statuses before the generic mapping; return 1 if not handled.
    std::function<int(HttpOp*, ssize_t* result)> on_status;
};

struct MultipartContext {
    std::string object, upload_id;
    photon::mutex mu;
    struct Part {
        std::string etag;
        uint64_t crc = 0, size = 0;
        bool has_crc = false;
        std::string crc32c;  // base64, S3 with ClientOptions::s3_crc32c
    };
    std::map<int, Part> parts;
};

class ObjectClient : public photon::objstore::Client {
    ClientOptions opt_;
    std::unique_ptr<Authenticator> auth_;
    photon::net::http::Client* http_ = nullptr;
    bool s3_ = false, https_ = true;
    std::string host_;  // host[:port] of the endpoint
    std::string hp_;    // "x-oss-" or "x-amz-"

public:
    using photon::objstore::Client::append_object;
    using photon::objstore::Client::complete_multipart_upload;
    using photon::objstore::Client::get_object_range;
    using photon::objstore::Client::init_multipart_upload;
    using photon::objstore::Client::put_object;
    using photon::objstore::Client::upload_part;

    ObjectClient(const ClientOptions& opt, Authenticator* auth) : opt_(opt), auth_(auth) {
        s3_ = opt_.sign_version == SignVersion::S3V4;
        hp_ = s3_ ? "x-amz-" : "x-oss-";
        std::string_view ep = opt_.endpoint;
        if (ep.substr(0, 8) == "https://") {
            ep.remove_prefix(8);
        } else if (ep.substr(0, 7) == "http://") {
            ep.remove_prefix(7);
            https_ = false;
        }
        while (!ep.empty() && ep.back() == '/') ep.remove_suffix(1);
        host_ = std::string(ep);
        if (s3_ && opt_.region.empty()) opt_.region = "us-east-1";
        http_ = photon::net::http::new_http_client();
        http_->timeout(opt_.request_timeout_us);
        http_->set_user_agent(opt_.user_agent);
        if (!opt_.proxy.empty()) http_->set_proxy(opt_.proxy);
    }
    ~ObjectClient() override { delete http_; }
    bool valid() const { return http_ && !host_.empty() && auth_; }

    // --- requests -------------------------------------------------------

    std::string url_of(const Call& c) const {
        std::string url = https_ ? "https://" : "http://";
        std::string path = "/";
        if (opt_.path_style || opt_.bucket.empty()) {
            url += host_;
            if (!opt_.bucket.empty()) path += opt_.bucket + "/";
        } else {
            url += opt_.bucket + "." + host_;
        }
        if (c.with_object) path += uri_encode(c.object, true);
        url += path;
        char sep = '?';
        for (auto& kv : c.query) {
            url += sep;
            url += uri_encode(kv.first, false);
            if (!kv.second.empty()) url += "=" + uri_encode(kv.second, false);
            sep = '&';
        }
        return url;
    }

    // errno for an error answer; logs it (rate-limited).
    int map_error(int status, const std::string& code, const std::string& msg) {
        if (code == "NoSuchKey" || code == "NoSuchBucket" || code == "NoSuchUpload" ||
            status == 404)
            return ENOENT;
        if (code == "FileAlreadyExists" || code == "PreconditionFailed" || status == 412)
            return EEXIST;
        if (code == "InvalidRange" || status == 416) return EINVAL;
        if (code == "NotImplemented" || code == "MethodNotAllowed" || status == 405 ||
            status == 501)
            return ENOTSUP;
        if (status == 403 || status == 401) return EACCES;
        if (code == "PositionNotEqualToLength" || code == "ObjectNotAppendable") return EINVAL;
        if (code == "BadDigest" || code == "InvalidDigest" || code == "InvalidPart") return EIO;
        return status >= 500 ? EBUSY : EINVAL;
    }

    static bool throttled(int status, const std::string& code) {
        return status == 429 || code == "SlowDown" || code == "Throttling" ||
               code == "RequestLimitExceeded" || code == "QpsLimitExceeded";
    }

    std::string read_small_body(HttpOp* op, size_t limit = kXmlLimit) {
        std::string body;
        char buf[16384];
        while (body.size() < limit) {
            ssize_t r = op->resp.read(buf, std::min(sizeof(buf), limit - body.size()));
            if (r <= 0) break;
            body.append(buf, r);
        }
        return body;
    }

    ssize_t perform(Call& c) {
        std::string url = url_of(c);
        std::string sha = s3_ ? hp_ + "content-sha256" : std::string();
        uint64_t start = photon::__update_now(), deadline = start + opt_.request_timeout_us;
        CheckedStream sent;
        for (int attempt = 0;; attempt++) {
            HttpOp* op = http_->new_operation(c.verb, url);
            if (!op) return -1;
            DEFER(http_->destroy_operation(op));
            op->follow = 0;  // a redirect names another region: an error, not followed
            auto& h = op->req.headers;
            for (auto& kv : opt_.custom_headers) h.set(kv.first, kv.second);
            for (auto& kv : c.headers) h.set(kv.first, kv.second);
            bool trailer = s3_ && opt_.s3_crc32c && c.writer;
            if (trailer) {
                h.set(sha, "STREAMING-UNSIGNED-PAYLOAD-TRAILER");
                h.set("Content-Encoding", "aws-chunked");
                h.set(hp_ + "decoded-content-length", std::to_string(c.body_size));
                h.set(hp_ + "trailer", kCrc32cHeader);
            } else if (s3_) {
                h.set(sha, "UNSIGNED-PAYLOAD");
            }
            bool has_body =
                c.writer || !c.body.empty() || c.verb == Verb::PUT || c.verb == Verb::POST;
            // The body goes writer -> sent (counts, hashes) [-> chunked framing] -> request.
            AwsChunkedStream chunked;
            struct WriterCtx {
                BodyWriter* w;
                CheckedStream* cs;
                AwsChunkedStream* chunked;  // null: the body as it is
                size_t size;
                bool md5;
                ssize_t fire(Request* req) {
                    if (chunked) chunked->reset(req, size);
                    cs->reset(chunked ? (IStream*)chunked : req, md5, true, chunked != nullptr);
                    ssize_t r = w->fire(cs);
                    if (r >= 0 && (size_t)r != size) return errno = EIO, -1;
                    if (r >= 0 && chunked) {
                        std::string t = kCrc32cHeader;
                        t += ":" + crc32c_base64(cs->crc32c());
                        if (chunked->finish(t) < 0) return -1;
                    }
                    return r;
                }
            } wctx{c.writer, &sent, trailer ? &chunked : nullptr, c.body_size,
                   s3_ && opt_.s3_md5_check};
            if (c.writer) {
                op->req.headers.content_length(
                    trailer ? AwsChunkedStream::encoded_size(c.body_size, kCrc32cTrailerLen)
                            : c.body_size);
                op->body_writer = HttpOp::BodyWriter(&wctx, &WriterCtx::fire);
            } else if (has_body) {
                op->set_body(c.body.data(), c.body.size());
            }
            // The signer's view of the request.
            std::vector<SKV> q;
            for (auto& kv : c.query) q.emplace_back(kv.first, kv.second);
            std::sort(q.begin(), q.end(), SKVLess());
            Authenticator::SignParameters sp;
            sp.region = opt_.region;
            sp.endpoint = host_;
            sp.bucket = opt_.bucket;
            sp.object = c.with_object ? c.object : std::string_view();
            sp.query_params = StringKV(q.data(), q.size());
            sp.verb = c.verb;
            if (auth_->sign(h, sp) < 0) return -1;

            bool retry = false, slow = false;
            uint64_t retry_after_us = 0;
            ssize_t result = -1;
            int err = 0;
            int r = op->call();
            if (r < 0) {
                err = errno ? errno : EIO;
                retry = c.retry_body_errors || !c.writer;
                LOG_EVERY_T(1, LOG_WARN("oss: ` ` failed: `", verbstr[c.verb], url, ERRNO(err)));
            } else if (op->status_code >= 200 && op->status_code < 300) {
                errno = 0;
                result = c.on_ok ? c.on_ok(op, &sent, &retry) : 0;
                if (result >= 0) return result;
                err = errno ? errno : EIO;
            } else {
                int st = op->status_code;
                if (c.on_status && c.on_status(op, &result) == 0) return result;
                std::string body =
                    c.verb == Verb::HEAD ? std::string() : read_small_body(op, 1 << 20);
                std::string code, msg, where;
                detail::parse_error(body, &code, &msg, &where);
                if (code.empty() && c.verb == Verb::HEAD)
                    code = std::string(op->resp.headers[hp_ + "error-code"]);
                if (st >= 300 && st < 400) {
                    std::string loc(op->resp.headers["Location"]);
                    std::string region(op->resp.headers[hp_ + "bucket-region"]);
                    LOG_EVERY_T(1, LOG_WARN("oss: ` ` answered ` ` (`): the bucket is at `",
                                            verbstr[c.verb], url, st, code, msg,
                                            !where.empty()    ? where
                                            : !region.empty() ? region
                                                              : loc));
                    errno = EREMOTE;
                    return -1;
                }
                if (throttled(st, code)) {
                    slow = true;
                    retry = true;
                } else if (st >= 500 || code == "RequestTimeout" || code == "InternalError") {
                    retry = c.retry_body_errors || !c.writer;
                }
                auto ra = op->resp.headers["Retry-After"];
                if (!ra.empty()) retry_after_us = (uint64_t)estring_view(ra).to_int64(0) * 1000000;
                err = map_error(st, code, msg);
                if (!retry || attempt >= opt_.retry_times)
                    LOG_EVERY_T(1, LOG_WARN("oss: ` ` answered ` `: `", verbstr[c.verb], url, st,
                                            code, msg));
            }
            uint64_t now = photon::__update_now();
            bool more = retry && (slow ? now < deadline : attempt < opt_.retry_times);
            if (!more) {
                if (retry && err != EACCES && err != ENOENT && err != EIO && err != ETIMEDOUT)
                    err = r < 0 ? err : EBUSY;
                errno = err;
                return -1;
            }
            uint64_t wait =
                std::min<uint64_t>(opt_.retry_base_interval_us << std::min(attempt, 10), 10000000);
            if (retry_after_us) wait = retry_after_us;
            if (slow && now + wait > deadline) wait = deadline > now ? deadline - now : 0;
            if (!slow && wait > opt_.request_timeout_us) wait = opt_.request_timeout_us;
            if (wait) photon::thread_usleep(wait);
        }
    }

    // A 2xx whose XML body is read whole into *out.
    std::function<ssize_t(HttpOp*, CheckedStream*, bool*)> read_xml(std::string* out) {
        return [this, out](HttpOp* op, CheckedStream*, bool* retry) -> ssize_t {
            *out = read_small_body(op);
            auto n = op->resp.body_size();
            if (n >= 0 && (int64_t)out->size() != n) {
                *retry = true;
                return errno = EIO, -1;
            }
            return 0;
        };
    }

    void meta_from(HttpOp* op, ObjectHeaderMeta* m) {
        m->reset();
        auto& h = op->resp.headers;
        auto cr = h["Content-Range"];
        auto slash = cr.rfind('/');
        if (!cr.empty() && slash != cr.npos && cr.substr(slash + 1) != "*")
            m->set_size((size_t)estring_view(cr.substr(slash + 1)).to_int64(0));
        else if (!h["Content-Length"].empty())  // a HEAD's too, which has no body
            m->set_size((size_t)estring_view(h["Content-Length"]).to_int64(0));
        auto lm = h["Last-Modified"];
        if (!lm.empty()) {
            time_t t = detail::parse_time(lm);
            if (t >= 0) m->set_mtime(t);
        }
        auto etag = h["ETag"];
        if (!etag.empty()) m->set_etag(unquote(etag));
        auto type = h[hp_ + "object-type"];
        m->set_type(type.empty() ? std::string("Normal") : std::string(type));
        auto sc = h[hp_ + "storage-class"];
        if (!sc.empty()) m->set_storage_class(std::string(sc));
        auto crc = h["x-oss-hash-crc64ecma"];
        if (!crc.empty()) m->set_crc64(strtoull(std::string(crc).c_str(), nullptr, 10));
    }

    // The whole object's CRC32C the service stored, if asked for and sent: not a composite of
    // its parts' ("<base64>-<parts>", COMPOSITE), which no read of the body can be checked against.
    std::string full_object_crc32c(HttpOp* op) const {
        if (!s3_ || !opt_.s3_crc32c) return {};
        auto& h = op->resp.headers;
        auto v = h[kCrc32cHeader];
        if (v.size() != 8 || h["x-amz-checksum-type"] == "COMPOSITE") return {};
        return std::string(v);
    }

    // Checks what a PUT / part / append sent against the service's answer and
    // the caller's expectation; fills opts.etag.
    int check_upload(HttpOp* op, CheckedStream* sent, ObjectUploadOptions& opts, bool whole_put) {
        auto& h = op->resp.headers;
        std::string etag = unquote(h["ETag"]);
        if (opts.etag) *opts.etag = etag;
        if (opts.expected_crc64 && *opts.expected_crc64 != sent->crc)
            LOG_ERROR_RETURN(EIO, -1, "oss: crc64 of the bytes sent ` != expected `", sent->crc,
                             *opts.expected_crc64);
        auto crc = h["x-oss-hash-crc64ecma"];
        if (!crc.empty() && strtoull(std::string(crc).c_str(), nullptr, 10) != sent->crc)
            LOG_ERROR_RETURN(EIO, -1, "oss: the service's crc64 ` != ours `", crc, sent->crc);
        if (sent->want_md5 && whole_put && is_md5_etag(etag) &&
            etag != detail::hex(sent->md5.finalize()))
            LOG_ERROR_RETURN(EIO, -1, "oss: ETag ` is not the MD5 of the bytes sent", etag);
        auto c32 = h[kCrc32cHeader];
        if (sent->want_crc32c && !c32.empty() && c32 != crc32c_base64(sent->crc32c()))
            LOG_ERROR_RETURN(EIO, -1, "oss: the service's crc32c ` != ours `", c32,
                             crc32c_base64(sent->crc32c()));
        return 0;
    }

    std::string copy_source(std::string_view object) const {
        return "/" + opt_.bucket + "/" + uri_encode(object, true);
    }

    // --- the API ----------------------------------------------------------

    int list_objects(std::string_view prefix, ListObjectsCallback cb, ListObjectsParameters params,
                     std::string* marker) override {
        std::string token = marker ? *marker : std::string();
        int max_keys = params.max_keys ? params.max_keys : opt_.max_list_ret_cnt;
        bool first = true;
        do {
            Call c;
            c.with_object = false;
            if (params.ver == 2) c.query.emplace_back("list-type", "2");
            c.query.emplace_back("prefix", std::string(prefix));
            c.query.emplace_back("max-keys", std::to_string(max_keys));
            if (params.slash_delimiter) c.query.emplace_back("delimiter", "/");
            if (params.ver == 2) {
                if (!token.empty()) c.query.emplace_back("continuation-token", token);
                if (first && !params.start_after.empty())
                    c.query.emplace_back("start-after", std::string(params.start_after));
            } else if (!token.empty()) {
                c.query.emplace_back("marker", token);
            }
            std::string body;
            c.on_ok = read_xml(&body);
            if (perform(c) < 0) return -1;
            detail::ListPage page;
            int r = detail::parse_list(body, params.ver == 2, cb, &page);
            if (r < 0) {
                if (errno == EIO) LOG_EVERY_T(1, LOG_WARN("oss: malformed listing of `", prefix));
                return r;
            }
            token = page.truncated ? page.next : std::string();
            first = false;
        } while (!marker && !token.empty());
        if (marker) *marker = token;
        return 0;
    }

    int head_object(std::string_view object, ObjectHeaderMeta& meta) override {
        Call c;
        c.verb = Verb::HEAD;
        c.object = object;
        c.on_ok = [&](HttpOp* op, CheckedStream*, bool*) -> ssize_t {
            meta_from(op, &meta);
            return 0;
        };
        return (int)perform(c);
    }

    int get_object_meta(std::string_view obj, ObjectMeta& meta) override {
        ObjectHeaderMeta m;
        Call c;
        c.verb = Verb::HEAD;
        c.object = obj;
        if (!s3_) c.query.emplace_back("objectMeta", "");
        c.on_ok = [&](HttpOp* op, CheckedStream*, bool*) -> ssize_t {
            meta_from(op, &m);
            return 0;
        };
        if (perform(c) < 0) return -1;
        meta = m;
        return 0;
    }

    ssize_t get_object_range(std::string_view object, off_t offset, size_t cnt, BodyReader reader,
                             ObjectHeaderMeta* meta) override {
        if (offset < 0) return errno = EINVAL, -1;
        if (cnt == 0) return 0;
        Call c;
        c.object = object;
        bool ranged = offset > 0 || cnt != (size_t)-1;
        if (ranged) {
            std::string range = "bytes=" + std::to_string(offset) + "-";
            if (cnt != (size_t)-1) range += std::to_string(offset + cnt - 1);
            c.headers.emplace_back("Range", range);
            if (!s3_) c.headers.emplace_back("x-oss-range-behavior", "standard");
        }
        if (s3_ && opt_.s3_crc32c) c.headers.emplace_back("x-amz-checksum-mode", "ENABLED");
        CheckedStream in;
        c.on_ok = [&](HttpOp* op, CheckedStream*, bool* retry) -> ssize_t {
            ObjectHeaderMeta m;
            meta_from(op, &m);
            if (meta) *meta = m;
            int64_t expect = op->resp.body_size();
            bool whole = op->status_code == 200 || (m.has_size() && expect == (int64_t)m.size);
            if (op->status_code == 200 && offset > 0)
                LOG_ERROR_RETURN(EIO, -1, "oss: a ranged GET of ` got the whole object", object);
            std::string etag = m.has_etag() ? m.etag : std::string();
            std::string c32 = whole ? full_object_crc32c(op) : std::string();
            in.reset(&op->resp, s3_ && opt_.s3_md5_check && whole && is_md5_etag(etag),
                     m.has_crc64(), !c32.empty());
            ssize_t r = reader.fire(&in);
            if (r < 0) {
                *retry = true;
                return -1;
            }
            if (expect >= 0 && in.bytes < (uint64_t)expect) {
                // The reader stopped early by choice, or the body was cut short.
                char probe;
                if (op->resp.read(&probe, 1) != 1) {
                    *retry = true;
                    LOG_EVERY_T(1, LOG_WARN("oss: GET ` ended after ` of ` bytes", object, in.bytes,
                                            expect));
                    return errno = EIO, -1;
                }
                return r;
            }
            if (whole && expect >= 0 && in.bytes == (uint64_t)expect) {
                if (m.has_crc64() && m.crc64 != in.crc) {
                    *retry = true;
                    LOG_EVERY_T(1, LOG_WARN("oss: GET `: crc64 ` != the service's `", object,
                                            in.crc, m.crc64));
                    return errno = EIO, -1;
                }
                if (in.want_md5 && etag != detail::hex(in.md5.finalize())) {
                    *retry = true;
                    LOG_EVERY_T(1, LOG_WARN("oss: GET `: MD5 of the body != ETag `", object, etag));
                    return errno = EIO, -1;
                }
                if (in.want_crc32c && crc32c_base64(in.crc32c()) != c32) {
                    *retry = true;
                    LOG_EVERY_T(1, LOG_WARN("oss: GET `: crc32c ` != the service's `", object,
                                            crc32c_base64(in.crc32c()), c32));
                    return errno = EIO, -1;
                }
            }
            return r;
        };
        c.on_status = [&](HttpOp* op, ssize_t* result) -> int {
            if (op->status_code != 416) return 1;
            *result = 0;  // reading at or past the end, as pread does
            return 0;
        };
        return perform(c);
    }

    int batch_get_objects(std::vector<GetObjectParameters>& params) override {
        if (params.empty()) return 0;
        size_t next = 0;
        int ok = 0;
        auto worker = [&]() {
            while (next < params.size()) {
                auto& p = params[next++];
                iovector_view v((struct iovec*)p.iov, p.iovcnt);
                ssize_t r = get_object_range(p.object, p.iov, p.iovcnt, p.offset, p.meta);
                p.result = (int)r;
                if (r >= 0) ok++;
            }
            return nullptr;
        };
        std::vector<photon::join_handle*> jh;
        int n = std::min<int>(kBatchConcurrency, (int)params.size());
        for (int i = 0; i < n; i++) {
            auto th = photon::thread_create11(worker);
            if (th) jh.push_back(photon::thread_enable_join(th));
        }
        for (auto j : jh) photon::thread_join(j);
        return ok;
    }

    ssize_t put_object(std::string_view object, size_t cnt, BodyWriter writer,
                       ObjectUploadOptions& opts) override {
        Call c;
        c.verb = Verb::PUT;
        c.object = object;
        c.writer = &writer;
        c.body_size = cnt;
        c.on_ok = [&](HttpOp* op, CheckedStream* sent, bool*) -> ssize_t {
            if (check_upload(op, sent, opts, true) < 0) return -1;
            return (ssize_t)cnt;
        };
        return perform(c);
    }

    ssize_t append_object(std::string_view object, const struct iovec* iov, int iovcnt,
                          off_t position, ObjectUploadOptions& opts) override {
        if (s3_) LOG_ERROR_RETURN(ENOTSUP, -1, "oss: S3 has no appendable objects");
        iovector_view view((struct iovec*)iov, iovcnt);
        size_t cnt = view.sum();
        auto fn = [iov, iovcnt](IStream* out) -> ssize_t { return out->writev(iov, iovcnt); };
        BodyWriter writer(fn);  // fn outlives the call
        Call c;
        c.verb = Verb::POST;
        c.object = object;
        c.query = {{"append", ""}, {"position", std::to_string(position)}};
        c.writer = &writer;
        c.body_size = cnt;
        c.retry_body_errors = false;  // a second append would land twice
        c.on_ok = [&](HttpOp* op, CheckedStream* sent, bool*) -> ssize_t {
            if (check_upload(op, sent, opts, false) < 0) return -1;
            return (ssize_t)cnt;
        };
        return perform(c);
    }

    int exists(std::string_view object) {
        ObjectHeaderMeta m;
        if (head_object(object, m) == 0) return 1;
        return errno == ENOENT ? 0 : -1;
    }

    int copy_object(std::string_view src, std::string_view dst, bool overwrite,
                    bool set_mime) override {
        if (!overwrite && s3_) {
            int e = exists(dst);
            if (e < 0) return -1;
            if (e) LOG_ERROR_RETURN(EEXIST, -1, "oss: copy to `: it exists", dst);
        }
        Call c;
        c.verb = Verb::PUT;
        c.object = dst;
        c.headers.emplace_back(hp_ + "copy-source", copy_source(src));
        if (!overwrite && !s3_) c.headers.emplace_back("x-oss-forbid-overwrite", "true");
        if (set_mime) {
            c.headers.emplace_back("Content-Type", std::string(lookup_mime_type(dst)));
            c.headers.emplace_back(hp_ + "metadata-directive", "REPLACE");
        }
        std::string body;
        c.on_ok = read_xml(&body);
        if (perform(c) < 0) return -1;
        // S3 may answer 200 with an <Error> body.
        std::string etag, root;
        if (detail::parse_field(body, "ETag", &etag, &root) < 0)
            LOG_ERROR_RETURN(EIO, -1, "oss: copy ` to `: answer ` is no CopyObjectResult", src, dst,
                             root);
        return 0;
    }

    int init_multipart_upload(std::string_view object, void** context) override {
        if (!context) return errno = EINVAL, -1;
        *context = nullptr;
        Call c;
        c.verb = Verb::POST;
        c.object = object;
        c.query = {{"uploads", ""}};
        if (s3_ && opt_.s3_crc32c) {
            c.headers.emplace_back("x-amz-checksum-algorithm", "CRC32C");
            c.headers.emplace_back("x-amz-checksum-type", "FULL_OBJECT");
        }
        std::string body;
        c.on_ok = read_xml(&body);
        if (perform(c) < 0) return -1;
        auto ctx = new MultipartContext;
        ctx->object = std::string(object);
        if (detail::parse_field(body, "UploadId", &ctx->upload_id) < 0 || ctx->upload_id.empty()) {
            delete ctx;
            LOG_ERROR_RETURN(EIO, -1, "oss: no UploadId for `", object);
        }
        *context = ctx;
        return 0;
    }

    ssize_t upload_part(void* context, size_t cnt, int part_number, BodyWriter writer,
                        ObjectUploadOptions& opts) override {
        auto ctx = (MultipartContext*)context;
        if (!ctx || part_number < 1 || part_number > 10000) return errno = EINVAL, -1;
        Call c;
        c.verb = Verb::PUT;
        c.object = ctx->object;
        c.query = {{"partNumber", std::to_string(part_number)}, {"uploadId", ctx->upload_id}};
        c.writer = &writer;
        c.body_size = cnt;
        MultipartContext::Part part;
        c.on_ok = [&](HttpOp* op, CheckedStream* sent, bool*) -> ssize_t {
            std::string etag;
            ObjectUploadOptions o = opts;
            o.etag = &etag;
            if (check_upload(op, sent, o, true) < 0) return -1;
            if (opts.etag) *opts.etag = etag;
            part.etag = etag;
            part.crc = sent->crc;
            part.size = cnt;
            part.has_crc = true;
            if (sent->want_crc32c) part.crc32c = crc32c_base64(sent->crc32c());
            return (ssize_t)cnt;
        };
        ssize_t r = perform(c);
        if (r < 0) return -1;
        photon::scoped_lock lock(ctx->mu);
        ctx->parts[part_number] = part;
        return r;
    }

    int upload_part_copy(void* context, off_t offset, size_t count, int part_number,
                         std::string_view from) override {
        auto ctx = (MultipartContext*)context;
        if (!ctx || part_number < 1 || part_number > 10000 || count == 0) return errno = EINVAL, -1;
        Call c;
        c.verb = Verb::PUT;
        c.object = ctx->object;
        c.query = {{"partNumber", std::to_string(part_number)}, {"uploadId", ctx->upload_id}};
        c.headers.emplace_back(hp_ + "copy-source",
                               copy_source(from.empty() ? std::string_view(ctx->object) : from));
        c.headers.emplace_back(hp_ + "copy-source-range", "bytes=" + std::to_string(offset) + "-" +
                                                              std::to_string(offset + count - 1));
        std::string body;
        c.on_ok = read_xml(&body);
        if (perform(c) < 0) return -1;
        MultipartContext::Part part;
        if (detail::parse_field(body, "ETag", &part.etag) < 0)
            LOG_ERROR_RETURN(EIO, -1, "oss: no ETag in the answer to a part copy");
        part.etag = unquote(part.etag);
        if (s3_ && opt_.s3_crc32c) detail::parse_field(body, "ChecksumCRC32C", &part.crc32c);
        part.size = count;
        photon::scoped_lock lock(ctx->mu);
        ctx->parts[part_number] = part;
        return 0;
    }

    int complete_multipart_upload(void* context, ObjectUploadOptions& opts) override {
        auto ctx = (MultipartContext*)context;
        if (!ctx) return errno = EINVAL, -1;
        std::unique_ptr<MultipartContext> own(ctx);
        std::string xml = "<CompleteMultipartUpload>";
        uint64_t crc = 0;
        bool all_crc = true;
        for (auto& p : ctx->parts) {
            xml += "<Part><PartNumber>" + std::to_string(p.first) + "</PartNumber><ETag>\"" +
                   xml_escape(p.second.etag) + "\"</ETag>";
            if (!p.second.crc32c.empty())
                xml += "<ChecksumCRC32C>" + xml_escape(p.second.crc32c) + "</ChecksumCRC32C>";
            xml += "</Part>";
            if (!p.second.has_crc || p.second.size > UINT32_MAX) all_crc = false;
            if (all_crc) crc = crc64ecma_combine(crc, p.second.crc, (uint32_t)p.second.size);
        }
        std::string want_crc32c = parts_crc32c(*ctx);
        xml += "</CompleteMultipartUpload>";
        if (all_crc && opts.expected_crc64 && *opts.expected_crc64 != crc) {
            abort_multipart_upload(own.release());
            LOG_ERROR_RETURN(EIO, -1, "oss: crc64 of the parts ` != expected `", crc,
                             *opts.expected_crc64);
        }
        Call c;
        c.verb = Verb::POST;
        c.object = ctx->object;
        c.query = {{"uploadId", ctx->upload_id}};
        c.body = xml;
        c.headers.emplace_back("Content-Type", "application/xml");
        c.headers.emplace_back("Content-MD5", detail::base64(photon::md5(xml).finalize()));
        std::string body, server_crc;
        c.on_ok = [&](HttpOp* op, CheckedStream*, bool* retry) -> ssize_t {
            server_crc = std::string(op->resp.headers["x-oss-hash-crc64ecma"]);
            return read_xml(&body)(op, nullptr, retry);
        };
        if (perform(c) < 0) return -1;
        std::string etag, root;
        if (detail::parse_field(body, "ETag", &etag, &root) < 0)
            LOG_ERROR_RETURN(EIO, -1, "oss: completing ` got ` instead of its result", ctx->object,
                             root);
        if (opts.etag) *opts.etag = unquote(etag);
        if (all_crc && !server_crc.empty() && strtoull(server_crc.c_str(), nullptr, 10) != crc)
            LOG_ERROR_RETURN(EIO, -1, "oss: the service's crc64 ` of ` != the parts' `", server_crc,
                             ctx->object, crc);
        std::string got_crc32c;
        if (!want_crc32c.empty() && detail::parse_field(body, "ChecksumCRC32C", &got_crc32c) == 0 &&
            got_crc32c.size() == 8 && got_crc32c != want_crc32c)
            LOG_ERROR_RETURN(EIO, -1, "oss: the service's crc32c ` of ` != the parts' `",
                             got_crc32c, ctx->object, want_crc32c);
        return 0;
    }

    // The whole object's CRC32C (base64) from its parts', or "" if a part has none or is too
    // big for crc32c_combine.
    static std::string parts_crc32c(const MultipartContext& ctx) {
        uint32_t crc = 0;
        for (auto& p : ctx.parts) {
            std::string raw;
            if (!photon::net::Base64Decode(p.second.crc32c, raw) || raw.size() != 4 ||
                p.second.size > UINT32_MAX)
                return {};
            auto* b = (const unsigned char*)raw.data();
            uint32_t part = (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
            crc = crc32c_combine(crc, part, (uint32_t)p.second.size);
        }
        return ctx.parts.empty() ? std::string() : crc32c_base64(crc);
    }

    int abort_multipart_upload(void* context) override {
        auto ctx = (MultipartContext*)context;
        if (!ctx) return errno = EINVAL, -1;
        std::unique_ptr<MultipartContext> own(ctx);
        Call c;
        c.verb = Verb::DELETE;
        c.object = ctx->object;
        c.query = {{"uploadId", ctx->upload_id}};
        return (int)perform(c);
    }

    int delete_objects(const std::vector<std::string_view>& objects,
                       std::string_view prefix) override {
        for (size_t i = 0; i < objects.size(); i += 1000) {
            std::string xml = "<Delete><Quiet>true</Quiet>";
            for (size_t j = i; j < objects.size() && j < i + 1000; j++)
                xml += "<Object><Key>" + xml_escape(std::string(prefix) + std::string(objects[j])) +
                       "</Key></Object>";
            xml += "</Delete>";
            Call c;
            c.verb = Verb::POST;
            c.with_object = false;
            c.query = {{"delete", ""}};
            c.body = xml;
            c.headers.emplace_back("Content-Type", "application/xml");
            c.headers.emplace_back("Content-MD5", detail::base64(photon::md5(xml).finalize()));
            std::string body;
            c.on_ok = read_xml(&body);
            if (perform(c) < 0) return -1;
            if (body.empty()) continue;  // quiet and all deleted
            std::string first;
            int n = detail::parse_delete_errors(body, &first);
            if (n < 0) LOG_ERROR_RETURN(EIO, -1, "oss: malformed DeleteResult");
            if (n > 0) LOG_ERROR_RETURN(EIO, -1, "oss: ` keys not deleted, first: `", n, first);
        }
        return 0;
    }

    int delete_object(std::string_view obj) override {
        Call c;
        c.verb = Verb::DELETE;
        c.object = obj;
        return (int)perform(c);
    }

    int rename_object(std::string_view src, std::string_view dst, bool set_mime) override {
        ObjectHeaderMeta m;
        if (head_object(src, m) < 0) return -1;
        if (m.has_size() && m.size > kMaxCopySize) {
            void* ctx = nullptr;
            if (init_multipart_upload(dst, &ctx) < 0) return -1;
            int part = 1;
            for (uint64_t off = 0; off < m.size; off += kCopyPartSize, part++) {
                size_t n = (size_t)std::min<uint64_t>(kCopyPartSize, m.size - off);
                if (upload_part_copy(ctx, off, n, part, src) < 0) {
                    int e = errno;
                    abort_multipart_upload(ctx);
                    return errno = e, -1;
                }
            }
            ObjectUploadOptions o;
            if (complete_multipart_upload(ctx, o) < 0) return -1;
        } else if (copy_object(src, dst, true, set_mime) < 0) {
            return -1;
        }
        return delete_object(src);
    }

    int put_symlink(std::string_view obj, std::string_view target) override {
        if (s3_) LOG_ERROR_RETURN(ENOTSUP, -1, "oss: S3 has no symlinks");
        Call c;
        c.verb = Verb::PUT;
        c.object = obj;
        c.query = {{"symlink", ""}};
        c.headers.emplace_back("x-oss-symlink-target", uri_encode(target, true));
        return (int)perform(c);
    }

    int get_symlink(std::string_view obj, std::string& target) override {
        if (s3_) LOG_ERROR_RETURN(ENOTSUP, -1, "oss: S3 has no symlinks");
        Call c;
        c.object = obj;
        c.query = {{"symlink", ""}};
        c.on_ok = [&](HttpOp* op, CheckedStream*, bool*) -> ssize_t {
            target = url_unescape(op->resp.headers["x-oss-symlink-target"]);
            return 0;
        };
        return (int)perform(c);
    }

    void set_credentials(CredentialParameters&& credentials) override {
        auth_->set_credentials(std::move(credentials));
    }
};

}  // namespace

Client* new_oss_client(const ClientOptions& opt, Authenticator* auth) {
    if (!auth || opt.endpoint.empty()) {
        delete auth;
        LOG_ERROR_RETURN(EINVAL, nullptr, "oss: an endpoint and an authenticator are needed");
    }
    auto c = new ObjectClient(opt, auth);
    if (!c->valid()) {
        delete c;
        LOG_ERROR_RETURN(EINVAL, nullptr, "oss: bad endpoint `", opt.endpoint);
    }
    return c;
}

Client* new_oss_client(const ClientOptions& opt, uint32_t cache_ttl_secs,
                       CredentialParameters&& credentials) {
    Authenticator* a;
    switch (opt.sign_version) {
        case SignVersion::OssV4:
            a = new_oss_v4_authenticator(std::move(credentials));
            break;
        case SignVersion::S3V4:
            a = new_s3_authenticator(std::move(credentials));
            break;
        default:
            a = new_basic_oss_authenticator(std::move(credentials));
    }
    return new_oss_client(opt, new_cached_oss_authenticator(a, cache_ttl_secs));
}

}  // namespace objstore
}  // namespace photon
