// An object storage client: Alibaba Cloud OSS and S3-compatible services
// (AWS S3, MinIO, SeaweedFS, Ceph RGW), with PhotonLibOS's API. One Client
// talks to one bucket of one endpoint over photon's HTTP client (keep-alive,
// TLS for https endpoints); requests are signed with OSS V1 (Photon's
// default), OSS V4 or AWS SigV4 (ClientOptions::sign_version, an extension).
//
// Calls block the calling coroutine only and may run from many coroutines at
// once (multipart parts in parallel, say). Failed calls return -1 with errno:
// ENOENT (no such key), EACCES (credentials refused: SignatureDoesNotMatch,
// InvalidAccessKeyId, ExpiredToken, AccessDenied), EEXIST (overwrite
// forbidden), EINVAL (bad argument or range), ENOTSUP (not offered by the
// service: append and symlinks on S3), EREMOTE (the bucket lives at another
// endpoint or region: a 301/307), EIO (a checksum or length mismatch, a
// malformed answer), EBUSY (still throttled or failing after the retries),
// ETIMEDOUT, and the HTTP client's network errors. 5xx answers, 429 and
// network failures are retried (retry_times, with exponential backoff from
// retry_base_interval_us; a Retry-After is honoured); throttling (429,
// SlowDown) is retried until request_timeout_us has passed. Bodies stream
// through the BodyReader/BodyWriter callbacks: nothing buffers a whole object.
//
// Differences from PhotonLibOS: doc/compat.md#ecosystemossh
#pragma once

#include <inttypes.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <string>
#include <utility>
#include <vector>

#include <photon/common/callback.h>
#include <photon/common/iovector.h>
#include <photon/common/object.h>
#include <photon/common/ordered_span.h>
#include <photon/common/stream.h>
#include <photon/common/string_view.h>
#include <photon/net/http/headers.h>
#include <photon/net/http/verb.h>

namespace photon {
namespace objstore {

using StringKV = ordered_string_kv;

// The MIME type for a file name's extension ("application/octet-stream" if unknown).
std::string_view lookup_mime_type(std::string_view name);

static constexpr int OSS_MAX_PATH_LEN = 1023;

// Extension: how requests are signed, which also picks the dialect (x-oss-*
// or x-amz-* headers, OSS-only calls).
enum class SignVersion : uint8_t {
    OssV1,  // OSS "Authorization: OSS ak:signature" (HMAC-SHA1)
    OssV4,  // OSS4-HMAC-SHA256 (needs region)
    S3V4,   // AWS Signature Version 4, service "s3" (region "us-east-1" if empty)
};

struct ClientOptions {
    // "host[:port]", "http://host[:port]" or "https://host[:port]" (https if no scheme).
    std::string endpoint;
    std::string bucket;
    std::string region;
    std::string proxy;
    int max_list_ret_cnt = 1000;
    std::string user_agent = "Photon-ObjStore-Client";
    std::string bind_ips;
    uint64_t request_timeout_us = 60ull * 1000 * 1000;
    int retry_times = 2;

    // A request that times out or gets a 5xx is retried after
    // retry_base_interval_us << attempt; throttled ones (429, SlowDown) are
    // retried until request_timeout_us has passed.
    uint64_t retry_base_interval_us = 100000;
    std::vector<std::pair<std::string, std::string>> custom_headers;

    // Extensions.
    SignVersion sign_version = SignVersion::OssV1;
    // Path-style URLs (endpoint/bucket/key) instead of virtual-hosted ones
    // (bucket.endpoint/key); what local servers and IP endpoints need.
    bool path_style = false;
    // S3: check a whole object's body, sent or received, against an ETag that
    // is its MD5 (EIO on a mismatch). MD5 costs about 1.5 ms of CPU per MiB,
    // most of a transfer's CPU on a fast link; CRC-64 (OSS) is always checked.
    bool s3_md5_check = true;
    // S3 flexible checksums, with CRC32C (about 0.03 ms of CPU per MiB): uploads (PUT, parts)
    // go as aws-chunked bodies with an x-amz-checksum-crc32c trailer the service checks (a
    // mismatch is EIO); multipart uploads are created with the full object's CRC32C; GETs ask
    // for the stored checksum and a whole object read is checked against it. The service must
    // offer them (AWS S3, MinIO, versitygw; not every S3-compatible one does).
    bool s3_crc32c = false;
};

#define PHOTON_OSS_OPTIONAL_FIELD(type, name, flag)    \
    type name{};                                       \
    bool has_##name() const { return flags & (flag); } \
    void set_##name() { flags |= (flag); }             \
    void set_##name(const type& value) {               \
        name = value;                                  \
        flags |= (flag);                               \
    }                                                  \
    void reset_##name() {                              \
        name = {};                                     \
        flags &= (uint8_t) ~(flag);                    \
    }

struct ObjectMeta {
    uint8_t flags = 0;
    void reset() { flags = 0; }

    PHOTON_OSS_OPTIONAL_FIELD(size_t, size, 1)
    PHOTON_OSS_OPTIONAL_FIELD(time_t, mtime, 1 << 1)
    PHOTON_OSS_OPTIONAL_FIELD(std::string, etag, 1 << 2)
    PHOTON_OSS_OPTIONAL_FIELD(std::string, type, 1 << 3)  // Appendable/Normal/Symlink/...
};

struct ObjectHeaderMeta : public ObjectMeta {
    PHOTON_OSS_OPTIONAL_FIELD(std::string, storage_class, 1 << 4)
    PHOTON_OSS_OPTIONAL_FIELD(uint64_t, crc64, 1 << 5)
};

#undef PHOTON_OSS_OPTIONAL_FIELD

struct ListObjectsParameters {
    uint8_t ver = 2;  // ListObjectsV2 (continuation-token) or 1 (marker)
    bool slash_delimiter = false;
    uint16_t max_keys = 0;  // per page; 0: ClientOptions::max_list_ret_cnt
    std::string_view start_after = {};
};

// Views valid during the callback only.
struct ListObjectsCBParameters {
    std::string_view key;
    std::string_view etag;
    std::string_view type;
    size_t size = 0;
    time_t mtime = 0;
    bool is_com_prefix = false;
};

// Returns 0 to go on; a negative value stops the listing, which returns it.
using ListObjectsCallback = Delegate<int, const ListObjectsCBParameters&>;

struct CredentialParameters {
    std::string accessKeyId;
    std::string accessKeySecret;
    std::string securityToken;
};

// Signs requests: sets the date header it signs (unless headers already
// carry it: x-oss-date / x-amz-date for V4, Date for V1), the security
// token, and Authorization. headers must hold Host and the headers to send.
class Authenticator : public Object {
public:
    struct SignParameters {
        std::string_view region, endpoint, bucket, object;
        StringKV query_params;  // unescaped, ordered by key
        photon::net::http::Verb verb;
        bool invalidate_cache = false;
    };

    virtual int sign(photon::net::http::Headers& headers, const SignParameters& params) = 0;
    virtual const CredentialParameters* get_credentials() { return nullptr; }
    // May be ignored by some implementations.
    virtual void set_credentials(CredentialParameters&& credentials) = 0;
};

struct GetObjectParameters {
    std::string_view object;
    const iovec* iov = nullptr;
    int iovcnt = 0;
    off_t offset = 0;

    ObjectHeaderMeta* meta = nullptr;
    int result = -1;  // bytes read, or -1 (errno is the call's)
};

struct ObjectUploadOptions {
    // input: checked against the CRC-64 the service returns (OSS), or the
    // client's own CRC-64 of the bytes sent (S3); EIO on a mismatch
    const uint64_t* expected_crc64 = nullptr;
    // output: the object's (or part's) ETag
    std::string* etag = nullptr;
};

// Called again from the start on a retry: it must write the whole body
// (cnt bytes) in one call, looping if needed, and be able to do it again.
using BodyWriter = TempDelegate<ssize_t, IStream* /*output*/>;
// Called again from the start on a retry: it must read the whole body in
// one call, looping if needed.
using BodyReader = TempDelegate<ssize_t, IStream* /*input*/>;

class Client : public Object {
public:
    // Lists keys under prefix, calling cb for each key and common prefix. With
    // marker == nullptr every page is fetched; otherwise one page, starting at
    // *marker, which is set to the next page's token ("" at the end).
    virtual int list_objects(std::string_view prefix, ListObjectsCallback cb,
                             ListObjectsParameters = {}, std::string* marker = nullptr) = 0;

    virtual int head_object(std::string_view object, ObjectHeaderMeta& meta) = 0;

    // The number of bytes read (short at the object's end), or -1.
    ssize_t get_object_range(std::string_view object, char* buf, size_t size, off_t offset,
                             ObjectHeaderMeta* meta = nullptr) {
        auto fn = [buf, size](IStream* input) -> ssize_t { return input->read(buf, size); };
        return get_object_range(object, offset, size, fn, meta);
    }
    ssize_t get_object_range(std::string_view object, const struct iovec* iov, int iovcnt,
                             off_t offset, ObjectHeaderMeta* meta = nullptr) {
        iovector_view view((struct iovec*)iov, iovcnt);
        auto fn = [iov, iovcnt](IStream* input) -> ssize_t { return input->readv(iov, iovcnt); };
        return get_object_range(object, offset, view.sum(), fn, meta);
    }
    // Reads [offset, offset + cnt) through reader; cnt == (size_t)-1 reads
    // to the end. What reader returns, or -1.
    virtual ssize_t get_object_range(std::string_view object, off_t offset, size_t cnt,
                                     BodyReader reader, ObjectHeaderMeta* meta = nullptr) = 0;

    // Gets every object of params (result set per entry), several at a time;
    // the number that succeeded, or -1 if none could be tried.
    virtual int batch_get_objects(std::vector<GetObjectParameters>& params) = 0;

    // The object's size, or -1.
    ssize_t put_object(std::string_view object, const char* buf, size_t size,
                       ObjectUploadOptions& opts) {
        auto fn = [buf, size](IStream* output) -> ssize_t { return output->write(buf, size); };
        return put_object(object, size, fn, opts);
    }
    ssize_t put_object(std::string_view object, const struct iovec* iov, int iovcnt,
                       uint64_t* expected_crc64 = nullptr) {
        ObjectUploadOptions opts;
        opts.expected_crc64 = expected_crc64;
        return put_object(object, iov, iovcnt, opts);
    }
    ssize_t put_object(std::string_view object, const struct iovec* iov, int iovcnt,
                       ObjectUploadOptions& opts) {
        iovector_view view((struct iovec*)iov, iovcnt);
        auto fn = [iov, iovcnt](IStream* output) -> ssize_t { return output->writev(iov, iovcnt); };
        return put_object(object, view.sum(), fn, opts);
    }
    virtual ssize_t put_object(std::string_view object, size_t cnt, BodyWriter writer,
                               ObjectUploadOptions& opts) = 0;

    // OSS appendable objects: the size appended, or -1 (ENOTSUP on S3).
    ssize_t append_object(std::string_view object, const struct iovec* iov, int iovcnt,
                          off_t position, uint64_t* expected_crc64 = nullptr) {
        ObjectUploadOptions opts;
        opts.expected_crc64 = expected_crc64;
        return append_object(object, iov, iovcnt, position, opts);
    }
    virtual ssize_t append_object(std::string_view object, const struct iovec* iov, int iovcnt,
                                  off_t position, ObjectUploadOptions& opts) = 0;

    // Server-side copy; overwrite == false fails with EEXIST if dst exists;
    // set_mime sets dst's Content-Type from its name.
    virtual int copy_object(std::string_view src_object, std::string_view dst_object,
                            bool overwrite = false, bool set_mime = false) = 0;

    // Multipart upload: *context is the upload's until complete or abort.
    // Parts may be uploaded from several coroutines at once.
    virtual int init_multipart_upload(std::string_view object, void** context) = 0;

    ssize_t upload_part(void* context, const char* buf, size_t size, int part_number,
                        ObjectUploadOptions& opts) {
        auto fn = [buf, size](IStream* output) -> ssize_t { return output->write(buf, size); };
        return upload_part(context, size, part_number, fn, opts);
    }
    ssize_t upload_part(void* context, const struct iovec* iov, int iovcnt, int part_number,
                        uint64_t* expected_crc64 = nullptr) {
        ObjectUploadOptions opts;
        opts.expected_crc64 = expected_crc64;
        return upload_part(context, iov, iovcnt, part_number, opts);
    }
    ssize_t upload_part(void* context, const struct iovec* iov, int iovcnt, int part_number,
                        ObjectUploadOptions& opts) {
        iovector_view view((struct iovec*)iov, iovcnt);
        auto fn = [iov, iovcnt](IStream* output) -> ssize_t { return output->writev(iov, iovcnt); };
        return upload_part(context, view.sum(), part_number, fn, opts);
    }
    // The part's size, or -1.
    virtual ssize_t upload_part(void* context, size_t cnt, int part_number, BodyWriter writer,
                                ObjectUploadOptions& opts) = 0;
    // Copies [offset, offset + count) of `from` (default: the upload's own object) as a part.
    virtual int upload_part_copy(void* context, off_t offset, size_t count, int part_number,
                                 std::string_view from = {}) = 0;

    int complete_multipart_upload(void* context, uint64_t* expected_crc64 = nullptr) {
        ObjectUploadOptions opts;
        opts.expected_crc64 = expected_crc64;
        return complete_multipart_upload(context, opts);
    }
    // Frees context, whatever the result.
    virtual int complete_multipart_upload(void* context, ObjectUploadOptions& opts) = 0;
    // Frees context, whatever the result.
    virtual int abort_multipart_upload(void* context) = 0;

    class MultipartUploadContext {
        Client* _client;
        void* _ctx;

    public:
        MultipartUploadContext(Client* client, void* ctx) : _client(client), _ctx(ctx) {}
        ssize_t upload(const struct iovec* iov, int iovcnt, int part_number,
                       uint64_t* expected_crc64 = nullptr) {
            return _client->upload_part(_ctx, iov, iovcnt, part_number, expected_crc64);
        }
        int copy(off_t offset, size_t count, int part_number, std::string_view from = {}) {
            return _client->upload_part_copy(_ctx, offset, count, part_number, from);
        }
        int complete(uint64_t* expected_crc64) {
            return _client->complete_multipart_upload(_ctx, expected_crc64);
        }
        int abort() { return _client->abort_multipart_upload(_ctx); }
        operator bool() { return _ctx; }
    };

    MultipartUploadContext init_multipart_upload(std::string_view object) {
        void* ctx = nullptr;
        init_multipart_upload(object, &ctx);
        return {this, ctx};
    }

    // Deletes prefix + each of objects (no slash is added after prefix).
    virtual int delete_objects(const std::vector<std::string_view>& objects,
                               std::string_view prefix = {}) = 0;
    // Deleting a missing key succeeds, as the services answer.
    virtual int delete_object(std::string_view obj) = 0;
    // Copy then delete (objects larger than 5 GiB are copied in parts).
    virtual int rename_object(std::string_view src_path, std::string_view dst_path,
                              bool set_mime = false) = 0;
    // OSS symlinks (ENOTSUP on S3).
    virtual int put_symlink(std::string_view obj, std::string_view target) = 0;
    virtual int get_symlink(std::string_view obj, std::string& target) = 0;
    // Size, mtime and ETag only (OSS's ?objectMeta; a HEAD on S3).
    virtual int get_object_meta(std::string_view obj, ObjectMeta& meta) = 0;
    virtual void set_credentials(CredentialParameters&& credentials) = 0;
};

// The client takes ownership of auth. nullptr with EINVAL on bad options.
Client* new_oss_client(const ClientOptions& opt, Authenticator* auth);
// An authenticator for opt.sign_version over credentials, cached if cache_ttl_secs > 0.
Client* new_oss_client(const ClientOptions& opt, uint32_t cache_ttl_secs = 60,
                       CredentialParameters&& credentials = {});

// OSS V1 signing.
Authenticator* new_basic_oss_authenticator(CredentialParameters&& credentials = {});
// Extensions: OSS V4 and AWS SigV4 (service "s3") signing.
Authenticator* new_oss_v4_authenticator(CredentialParameters&& credentials = {});
Authenticator* new_s3_authenticator(CredentialParameters&& credentials = {});
// Keeps the V4 signing keys and the formatted date of auth for cache_ttl_secs,
// and owns auth; with 0, auth itself is returned.
Authenticator* new_cached_oss_authenticator(Authenticator* auth, uint32_t cache_ttl_secs = 60);

}  // namespace objstore
}  // namespace photon
