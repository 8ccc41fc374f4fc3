// The object storage client (<photon/ecosystem/oss.h>) on photon's HTTP client: each call of
// the API as the requests it sends and the answers it checks. Every request goes through
// requester::perform() (request.h): URL, dialect's headers, signing, retries with backoff.
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
#include "request.h"
#include "sign.h"
#include "xml.h"

namespace photon {
namespace objstore {

std::string_view lookup_mime_type(std::string_view name) {
    return photon::net::http::mime_type(name);
}

namespace {

using namespace detail;
using namespace photon::net::http;

constexpr uint64_t kMaxCopySize = 5ULL << 30;   // one CopyObject at most
constexpr uint64_t kCopyPartSize = 1ULL << 30;  // parts of a bigger rename
constexpr int kBatchConcurrency = 8;

struct multipart_context {
    std::string object, upload_id;
    photon::mutex mu;
    struct uploaded_part {
        std::string etag;
        uint64_t crc = 0, size = 0;
        bool has_crc = false;
        std::string crc32c;  // base64, S3 with ClientOptions::s3_crc32c
    };
    std::map<int, uploaded_part> parts;
};

class object_client : public photon::objstore::Client, private requester {
public:
    using photon::objstore::Client::append_object;
    using photon::objstore::Client::complete_multipart_upload;
    using photon::objstore::Client::get_object_range;
    using photon::objstore::Client::init_multipart_upload;
    using photon::objstore::Client::put_object;
    using photon::objstore::Client::upload_part;

    object_client(const ClientOptions& opt, Authenticator* auth) : requester(opt, auth) {}
    using requester::valid;

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
            detail::list_page page;
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
        c.on_ok = [&](http_op* op, checked_stream*, bool*) -> ssize_t {
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
        c.on_ok = [&](http_op* op, checked_stream*, bool*) -> ssize_t {
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
        checked_stream in;
        c.on_ok = [&](http_op* op, checked_stream*, bool* retry) -> ssize_t {
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
        c.on_status = [&](http_op* op, ssize_t* result) -> int {
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
        c.on_ok = [&](http_op* op, checked_stream* sent, bool*) -> ssize_t {
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
        c.on_ok = [&](http_op* op, checked_stream* sent, bool*) -> ssize_t {
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
        auto ctx = new multipart_context;
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
        auto ctx = (multipart_context*)context;
        if (!ctx || part_number < 1 || part_number > 10000) return errno = EINVAL, -1;
        Call c;
        c.verb = Verb::PUT;
        c.object = ctx->object;
        c.query = {{"partNumber", std::to_string(part_number)}, {"uploadId", ctx->upload_id}};
        c.writer = &writer;
        c.body_size = cnt;
        multipart_context::uploaded_part part;
        c.on_ok = [&](http_op* op, checked_stream* sent, bool*) -> ssize_t {
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
        auto ctx = (multipart_context*)context;
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
        multipart_context::uploaded_part part;
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
        auto ctx = (multipart_context*)context;
        if (!ctx) return errno = EINVAL, -1;
        std::unique_ptr<multipart_context> own(ctx);
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
        c.on_ok = [&](http_op* op, checked_stream*, bool* retry) -> ssize_t {
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
    static std::string parts_crc32c(const multipart_context& ctx) {
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
        auto ctx = (multipart_context*)context;
        if (!ctx) return errno = EINVAL, -1;
        std::unique_ptr<multipart_context> own(ctx);
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
        c.on_ok = [&](http_op* op, checked_stream*, bool*) -> ssize_t {
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
    auto c = new object_client(opt, auth);
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
