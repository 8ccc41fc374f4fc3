// The object storage client's request engine: see request.h.
#include "request.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/estring.h>
#include <photon/thread/thread.h>

#include "aws_chunked.h"
#include "sign.h"
#include "xml.h"

namespace photon {
namespace objstore {
namespace detail {

using namespace photon::net::http;

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

requester::requester(const ClientOptions& opt, Authenticator* auth) : opt_(opt), auth_(auth) {
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

std::string requester::url_of(const Call& c) const {
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

int requester::map_error(int status, const std::string& code) {
    if (code == "NoSuchKey" || code == "NoSuchBucket" || code == "NoSuchUpload" || status == 404)
        return ENOENT;
    if (code == "FileAlreadyExists" || code == "PreconditionFailed" || status == 412) return EEXIST;
    if (code == "InvalidRange" || status == 416) return EINVAL;
    if (code == "NotImplemented" || code == "MethodNotAllowed" || status == 405 || status == 501)
        return ENOTSUP;
    if (status == 403 || status == 401) return EACCES;
    if (code == "PositionNotEqualToLength" || code == "ObjectNotAppendable") return EINVAL;
    if (code == "BadDigest" || code == "InvalidDigest" || code == "InvalidPart") return EIO;
    return status >= 500 ? EBUSY : EINVAL;
}

bool requester::throttled(int status, const std::string& code) {
    return status == 429 || code == "SlowDown" || code == "Throttling" ||
           code == "RequestLimitExceeded" || code == "QpsLimitExceeded";
}

std::string requester::read_small_body(http_op* op, size_t limit) {
    std::string body;
    char buf[16384];
    while (body.size() < limit) {
        ssize_t r = op->resp.read(buf, std::min(sizeof(buf), limit - body.size()));
        if (r <= 0) break;
        body.append(buf, r);
    }
    return body;
}

// A streamed body as one attempt sends it: the caller's writer -> sent (counts, hashes)
// [-> aws-chunked framing with a CRC32C trailer] -> the request.
struct body_source {
    BodyWriter* w;
    checked_stream* sent;
    size_t size;
    bool md5, framed;
    aws_chunked_stream chunked;

    ssize_t fire(Request* req) {
        if (framed) chunked.reset(req, size);
        sent->reset(framed ? (IStream*)&chunked : req, md5, true, framed);
        ssize_t r = w->fire(sent);
        if (r >= 0 && (size_t)r != size) return errno = EIO, -1;
        if (r >= 0 && framed) {
            std::string t = kCrc32cHeader;
            t += ":" + crc32c_base64(sent->crc32c());
            if (chunked.finish(t) < 0) return -1;
        }
        return r;
    }
};

int requester::prepare(Call& c, http_op* op, body_source* body) {
    op->follow = 0;  // a redirect names another region: an error, not followed
    auto& h = op->req.headers;
    for (auto& kv : opt_.custom_headers) h.set(kv.first, kv.second);
    for (auto& kv : c.headers) h.set(kv.first, kv.second);
    std::string sha = hp_ + "content-sha256";
    if (body->framed) {
        h.set(sha, "STREAMING-UNSIGNED-PAYLOAD-TRAILER");
        h.set("Content-Encoding", "aws-chunked");
        h.set(hp_ + "decoded-content-length", std::to_string(c.body_size));
        h.set(hp_ + "trailer", kCrc32cHeader);
    } else if (s3_) {
        h.set(sha, "UNSIGNED-PAYLOAD");
    }
    if (c.writer) {
        h.content_length(body->framed
                             ? aws_chunked_stream::encoded_size(c.body_size, kCrc32cTrailerLen)
                             : c.body_size);
        op->body_writer = http_op::BodyWriter(body, &body_source::fire);
    } else if (!c.body.empty() || c.verb == Verb::PUT || c.verb == Verb::POST) {
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
    return auth_->sign(h, sp);
}

requester::Attempt requester::answer(Call& c, http_op* op, int r, checked_stream* sent,
                                     const std::string& url, bool last) {
    Attempt a;
    if (r < 0) {
        a.err = errno ? errno : EIO;
        a.retry = c.retry_body_errors || !c.writer;
        a.net_error = true;
        LOG_EVERY_T(1, LOG_WARN("oss: ` ` failed: `", verbstr[c.verb], url, ERRNO(a.err)));
        return a;
    }
    int st = op->status_code;
    if (st >= 200 && st < 300) {
        errno = 0;
        a.result = c.on_ok ? c.on_ok(op, sent, &a.retry) : 0;
        a.done = a.result >= 0;
        a.err = errno ? errno : EIO;
        return a;
    }
    if (c.on_status && c.on_status(op, &a.result) == 0) return a.done = true, a;
    std::string body = c.verb == Verb::HEAD ? std::string() : read_small_body(op, 1 << 20);
    std::string code, msg, where;
    detail::parse_error(body, &code, &msg, &where);
    if (code.empty() && c.verb == Verb::HEAD)
        code = std::string(op->resp.headers[hp_ + "error-code"]);
    if (st >= 300 && st < 400) {
        std::string loc(op->resp.headers["Location"]);
        std::string region(op->resp.headers[hp_ + "bucket-region"]);
        LOG_EVERY_T(1, LOG_WARN("oss: ` ` answered ` ` (`): the bucket is at `", verbstr[c.verb],
                                url, st, code, msg,
                                !where.empty()    ? where
                                : !region.empty() ? region
                                                  : loc));
        a.err = EREMOTE;
        return a;  // not retried: the signature would not hold elsewhere
    }
    if (throttled(st, code)) {
        a.slow = a.retry = true;
    } else if (st >= 500 || code == "RequestTimeout" || code == "InternalError") {
        a.retry = c.retry_body_errors || !c.writer;
    }
    auto ra = op->resp.headers["Retry-After"];
    if (!ra.empty()) a.retry_after_us = (uint64_t)estring_view(ra).to_int64(0) * 1000000;
    a.err = map_error(st, code);
    if (!a.retry || last)
        LOG_EVERY_T(1, LOG_WARN("oss: ` ` answered ` `: `", verbstr[c.verb], url, st, code, msg));
    return a;
}

bool requester::back_off(const Attempt& a, int attempt, uint64_t deadline) {
    uint64_t now = photon::__update_now();
    bool more = a.retry && (a.slow ? now < deadline : attempt < opt_.retry_times);
    if (!more) {
        int err = a.err;
        if (a.retry && err != EACCES && err != ENOENT && err != EIO && err != ETIMEDOUT)
            err = a.net_error ? err : EBUSY;
        errno = err;
        return false;
    }
    uint64_t wait =
        std::min<uint64_t>(opt_.retry_base_interval_us << std::min(attempt, 10), 10000000);
    if (a.retry_after_us) wait = a.retry_after_us;
    if (a.slow && now + wait > deadline) wait = deadline > now ? deadline - now : 0;
    if (!a.slow && wait > opt_.request_timeout_us) wait = opt_.request_timeout_us;
    if (wait) photon::thread_usleep(wait);
    return true;
}

ssize_t requester::perform(Call& c) {
    std::string url = url_of(c);
    uint64_t deadline = photon::__update_now() + opt_.request_timeout_us;
    checked_stream sent;
    for (int attempt = 0;; attempt++) {
        http_op* op = http_->new_operation(c.verb, url);
        if (!op) return -1;
        DEFER(http_->destroy_operation(op));
        body_source body{c.writer,
                         &sent,
                         c.body_size,
                         s3_ && opt_.s3_md5_check,
                         s3_ && opt_.s3_crc32c && c.writer,
                         {}};
        if (prepare(c, op, &body) < 0) return -1;
        Attempt a = answer(c, op, op->call(), &sent, url, attempt >= opt_.retry_times);
        if (a.done) return a.result;
        if (!a.retry && a.err == EREMOTE) return errno = EREMOTE, -1;
        if (!back_off(a, attempt, deadline)) return -1;
    }
}

std::function<ssize_t(http_op*, checked_stream*, bool*)> requester::read_xml(std::string* out) {
    return [this, out](http_op* op, checked_stream*, bool* retry) -> ssize_t {
        *out = read_small_body(op);
        auto n = op->resp.body_size();
        if (n >= 0 && (int64_t)out->size() != n) {
            *retry = true;
            return errno = EIO, -1;
        }
        return 0;
    };
}

void requester::meta_from(http_op* op, ObjectHeaderMeta* m) {
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

std::string requester::full_object_crc32c(http_op* op) const {
    if (!s3_ || !opt_.s3_crc32c) return {};
    auto& h = op->resp.headers;
    auto v = h[kCrc32cHeader];
    if (v.size() != 8 || h["x-amz-checksum-type"] == "COMPOSITE") return {};
    return std::string(v);
}

int requester::check_upload(http_op* op, checked_stream* sent, ObjectUploadOptions& opts,
                            bool whole_put) {
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

std::string requester::copy_source(std::string_view object) const {
    return "/" + opt_.bucket + "/" + uri_encode(object, true);
}

}  // namespace detail
}  // namespace objstore
}  // namespace photon
