// The object storage client against a real S3 server: versitygw started on
// 127.0.0.1 (test/net/oss_s3_server.h; skipped without `versitygw`). Every call of the API: put,
// head, get (whole, ranged, past the end, streamed), batch get, copy (with and without overwrite),
// rename, multipart (1 GiB in 16 MiB parts from 4 coroutines, sha256 checked; 64 MiB under
// sanitizers), part copy, abort, listings of 10,000 keys (pages, markers, v1, delimiter,
// start-after), batched delete, wrong credentials.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <photon/common/checksum/digest.h>
#include <photon/ecosystem/oss.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include "../../net/oss/sign.h"
#include "oss_s3_server.h"

using namespace photon::objstore;
using photon_test::s3_server;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

s3_server* server() {
    static std::unique_ptr<s3_server> s;
    if (!s) s.reset(new s3_server);
    return s.get();
}

class OssS3 : public ::testing::Test {
protected:
    std::unique_ptr<Client> c_;
    void SetUp() override {
        ASSERT_EQ(0, photon::init(photon::INIT_EVENT_EPOLL, photon::INIT_IO_NONE));
        if (!photon_test::have_tool("versitygw"))
            GTEST_SKIP() << "versitygw not installed: tools/install-deps.sh builds it";
        auto s = server();
        ASSERT_TRUE(s->ok()) << "versitygw did not start:\n" << s->log();
        c_.reset(s->new_client());
        ASSERT_TRUE(c_);
    }
    void TearDown() override {
        c_.reset();
        if (photon::CURRENT) photon::fini();
    }
};

// Bytes of a deterministic pseudo-random stream at `off`.
void fill(char* p, size_t n, uint64_t off, uint64_t seed) {
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (off + i) / 8 * 0x9E3779B97F4A7C15ULL ^ seed;
        x ^= x >> 29;
        p[i] = (char)(x >> (((off + i) % 8) * 8));
    }
}

}  // namespace

TEST_F(OssS3, PutHeadGetRangeAndDelete) {
    std::string data(300000, 0);
    fill(&data[0], data.size(), 0, 1);
    ObjectUploadOptions o;
    std::string etag;
    o.etag = &etag;
    ASSERT_EQ((ssize_t)data.size(), c_->put_object("dir/a b+c.bin", data.data(), data.size(), o));
    EXPECT_EQ(detail::hex(photon::md5(data).finalize()), etag);

    ObjectHeaderMeta m;
    ASSERT_EQ(0, c_->head_object("dir/a b+c.bin", m));
    EXPECT_TRUE(m.has_size() && m.size == data.size());
    EXPECT_TRUE(m.has_mtime() && m.mtime > 1700000000);
    EXPECT_EQ(etag, m.etag);
    ObjectMeta om;
    ASSERT_EQ(0, c_->get_object_meta("dir/a b+c.bin", om));
    EXPECT_EQ(data.size(), om.size);

    std::string whole(data.size(), 0);
    EXPECT_EQ((ssize_t)data.size(),
              c_->get_object_range("dir/a b+c.bin", &whole[0], whole.size(), 0));
    EXPECT_EQ(data, whole);
    char part[1000];
    EXPECT_EQ(1000, c_->get_object_range("dir/a b+c.bin", part, sizeof(part), 12345, &m));
    EXPECT_EQ(0, memcmp(part, data.data() + 12345, 1000));
    EXPECT_EQ(data.size(), m.size);  // from Content-Range
    // A read that runs over the end is short; one at the end reads nothing.
    EXPECT_EQ(500, c_->get_object_range("dir/a b+c.bin", part, sizeof(part), data.size() - 500));
    EXPECT_EQ(0, c_->get_object_range("dir/a b+c.bin", part, sizeof(part), data.size()));
    struct iovec iov[2] = {{part, 10}, {part + 10, 20}};
    EXPECT_EQ(30, c_->get_object_range("dir/a b+c.bin", iov, 2, 7));
    EXPECT_EQ(0, memcmp(part, data.data() + 7, 30));

    ASSERT_EQ(0, c_->delete_object("dir/a b+c.bin"));
    errno = 0;
    EXPECT_EQ(-1, c_->head_object("dir/a b+c.bin", m));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, c_->get_object_range("dir/a b+c.bin", part, sizeof(part), 0));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(0, c_->delete_object("dir/a b+c.bin"));  // deleting a missing key succeeds
}

TEST_F(OssS3, CopyRenameAndBatchGet) {
    ObjectUploadOptions o;
    ASSERT_EQ(5, c_->put_object("cp/src.txt", "hello", 5, o));
    ASSERT_EQ(3, c_->put_object("cp/other", "abc", 3, o));
    ASSERT_EQ(0, c_->copy_object("cp/src.txt", "cp/dst.txt", false, true));
    errno = 0;
    EXPECT_EQ(-1, c_->copy_object("cp/src.txt", "cp/other", false));
    EXPECT_EQ(EEXIST, errno);
    ASSERT_EQ(0, c_->copy_object("cp/src.txt", "cp/other", true));
    ASSERT_EQ(0, c_->rename_object("cp/dst.txt", "cp/moved.txt"));
    ObjectHeaderMeta m;
    EXPECT_EQ(-1, c_->head_object("cp/dst.txt", m));

    char b1[5] = {}, b2[5] = {}, b3[5] = {};
    struct iovec v1 = {b1, 5}, v2 = {b2, 5}, v3 = {b3, 5};
    std::vector<GetObjectParameters> ps(3);
    ps[0].object = "cp/moved.txt", ps[0].iov = &v1, ps[0].iovcnt = 1;
    ps[1].object = "cp/other", ps[1].iov = &v2, ps[1].iovcnt = 1, ps[1].offset = 1;
    ps[2].object = "cp/missing", ps[2].iov = &v3, ps[2].iovcnt = 1;
    EXPECT_EQ(2, c_->batch_get_objects(ps));
    EXPECT_EQ(5, ps[0].result);
    EXPECT_EQ(4, ps[1].result);
    EXPECT_EQ(-1, ps[2].result);
    EXPECT_EQ(std::string("hello"), std::string(b1, 5));
    EXPECT_EQ(std::string("ello"), std::string(b2, 4));

    // S3 has no appendable objects nor symlinks.
    struct iovec a = {b1, 1};
    errno = 0;
    EXPECT_EQ(-1, c_->append_object("cp/x", &a, 1, 0));
    EXPECT_EQ(ENOTSUP, errno);
    EXPECT_EQ(-1, c_->put_symlink("cp/l", "cp/other"));
    EXPECT_EQ(ENOTSUP, errno);
}

TEST_F(OssS3, WrongSecretIsEacces) {
    std::unique_ptr<Client> bad(server()->new_client("not-the-secret"));
    ObjectUploadOptions o;
    errno = 0;
    EXPECT_EQ(-1, bad->put_object("denied", "x", 1, o));
    EXPECT_EQ(EACCES, errno);
    ObjectHeaderMeta m;
    EXPECT_EQ(-1, c_->head_object("denied", m));  // nothing was written
    EXPECT_EQ(ENOENT, errno);
}

TEST_F(OssS3, MultipartUploadOfParallelPartsKeepsSha256) {
    const uint64_t total = kSanitized ? (64ULL << 20) : (1ULL << 30);
    const size_t part = 16 << 20;
    const int nparts = (int)(total / part), workers = 4;
    void* ctx = nullptr;
    ASSERT_EQ(0, c_->init_multipart_upload("big/object", &ctx));
    std::atomic<int> next{1}, failed{0};
    auto worker = [&]() -> void* {
        std::string buf(part, 0);
        for (int n; (n = next++) <= nparts;) {
            fill(&buf[0], part, (uint64_t)(n - 1) * part, 7);
            ObjectUploadOptions o;
            if (c_->upload_part(ctx, buf.data(), part, n, o) != (ssize_t)part) failed++;
        }
        return nullptr;
    };
    std::vector<photon::join_handle*> jh;
    for (int i = 0; i < workers; i++)
        jh.push_back(photon::thread_enable_join(photon::thread_create11(worker)));
    for (auto j : jh) photon::thread_join(j);
    ASSERT_EQ(0, failed.load());
    ASSERT_EQ(0, c_->complete_multipart_upload(ctx, nullptr));

    photon::sha256 want;
    {
        std::string buf(part, 0);
        for (uint64_t off = 0; off < total; off += part) {
            fill(&buf[0], part, off, 7);
            want.update(buf);
        }
    }
    ObjectHeaderMeta m;
    ASSERT_EQ(0, c_->head_object("big/object", m));
    EXPECT_EQ(total, m.size);
    photon::sha256 got;
    uint64_t seen = 0;
    auto reader = [&](IStream* in) -> ssize_t {
        std::string buf(1 << 20, 0);
        got = photon::sha256();
        seen = 0;
        ssize_t n;
        while ((n = in->read(&buf[0], buf.size())) > 0) {
            got.update(buf.data(), n);
            seen += n;
        }
        return n < 0 ? n : (ssize_t)seen;
    };
    EXPECT_EQ((ssize_t)total, c_->get_object_range("big/object", 0, (size_t)-1, reader));
    EXPECT_EQ(total, seen);
    EXPECT_EQ(detail::hex(want.finalize()), detail::hex(got.finalize()));
    EXPECT_EQ(0, c_->delete_object("big/object"));
}

TEST_F(OssS3, PartCopyAndAbort) {
    std::string data(6 << 20, 0);
    fill(&data[0], data.size(), 0, 3);
    ObjectUploadOptions o;
    ASSERT_EQ((ssize_t)data.size(), c_->put_object("pc/src", data.data(), data.size(), o));
    auto up = c_->init_multipart_upload("pc/dst");
    bool up_ok = up;
    ASSERT_TRUE(up_ok);
    ASSERT_EQ(0, up.copy(0, 5 << 20, 1, "pc/src"));
    ASSERT_EQ(0, up.copy(5 << 20, data.size() - (5 << 20), 2, "pc/src"));
    ASSERT_EQ(0, up.complete(nullptr));
    std::string back(data.size(), 0);
    EXPECT_EQ((ssize_t)data.size(), c_->get_object_range("pc/dst", &back[0], back.size(), 0));
    EXPECT_EQ(data, back);

    auto ab = c_->init_multipart_upload("pc/aborted");
    bool ab_ok = ab;
    ASSERT_TRUE(ab_ok);
    struct iovec v = {&data[0], 1 << 20};
    EXPECT_EQ(1 << 20, ab.upload(&v, 1, 1));
    EXPECT_EQ(0, ab.abort());
    ObjectHeaderMeta m;
    EXPECT_EQ(-1, c_->head_object("pc/aborted", m));  // never half written
}

// With s3_crc32c, versitygw checks each upload's aws-chunked trailer (it answers a wrong one
// with 400 BadDigest) and stores the CRC32C that GETs then check. Sizes that end on, before and
// after a chunk's boundary, an empty body, and a writer whose pieces cross the boundaries.
TEST_F(OssS3, Crc32cTrailerUploadsAreCheckedAndReadBack) {
    auto o = server()->options();
    o.s3_crc32c = true;
    std::unique_ptr<Client> c(new_oss_client(o, 0, server()->credentials()));
    ASSERT_TRUE(c);
    for (size_t size : {0ul, 1ul, 65535ul, 65536ul, 65537ul, 300000ul, 3ul << 20}) {
        std::string data(size, 0);
        fill(&data[0], data.size(), 0, size);
        std::string key = "c32/" + std::to_string(size);
        ObjectUploadOptions uo;
        ASSERT_EQ((ssize_t)size, c->put_object(key, data.data(), data.size(), uo)) << size;
        std::string back(size + 1, 0);
        ASSERT_EQ((ssize_t)size, c->get_object_range(key, &back[0], back.size(), 0)) << size;
        back.resize(size);
        EXPECT_EQ(data, back) << size;
    }
    // Pieces of 1, 70,000 and the rest: the framing follows the size, not the writes.
    std::string data(200000, 0);
    fill(&data[0], data.size(), 0, 11);
    auto writer = [&](IStream* out) -> ssize_t {
        size_t cuts[] = {0, 1, 70001, data.size()};
        for (int i = 0; i < 3; i++)
            if (out->write(data.data() + cuts[i], cuts[i + 1] - cuts[i]) < 0) return -1;
        return (ssize_t)data.size();
    };
    ObjectUploadOptions uo;
    ASSERT_EQ((ssize_t)data.size(), c->put_object("c32/pieces", data.size(), writer, uo));
    std::string back(data.size(), 0);
    ASSERT_EQ((ssize_t)data.size(), c->get_object_range("c32/pieces", &back[0], back.size(), 0));
    EXPECT_EQ(data, back);
    // A client without the option reads what one with it wrote, and the other way round.
    ASSERT_EQ((ssize_t)data.size(), c_->get_object_range("c32/pieces", &back[0], back.size(), 0));
    EXPECT_EQ(data, back);
    ASSERT_EQ((ssize_t)data.size(), c_->put_object("c32/plain", data.data(), data.size(), uo));
    ASSERT_EQ((ssize_t)data.size(), c->get_object_range("c32/plain", &back[0], back.size(), 0));
    EXPECT_EQ(data, back);
}

// A multipart upload created with the full object's CRC32C: each part carries its own, the
// completion lists them, and a whole GET is checked against the object's.
TEST_F(OssS3, Crc32cMultipartUploadWithACopiedPart) {
    auto o = server()->options();
    o.s3_crc32c = true;
    std::unique_ptr<Client> c(new_oss_client(o, 0, server()->credentials()));
    ASSERT_TRUE(c);
    std::string data((11 << 20) + 12345, 0);
    fill(&data[0], data.size(), 0, 21);
    ObjectUploadOptions uo;
    ASSERT_EQ(5 << 20, c->put_object("c32mp/src", data.data(), 5 << 20, uo));
    auto up = c->init_multipart_upload("c32mp/dst");
    bool ok = up;
    ASSERT_TRUE(ok);
    ASSERT_EQ(0, up.copy(0, 5 << 20, 1, "c32mp/src"));
    struct iovec v2 = {&data[5 << 20], 5 << 20}, v3 = {&data[10 << 20], data.size() - (10 << 20)};
    ASSERT_EQ(5 << 20, up.upload(&v2, 1, 2));
    ASSERT_EQ((ssize_t)v3.iov_len, up.upload(&v3, 1, 3));
    ASSERT_EQ(0, up.complete(nullptr));
    std::string back(data.size(), 0);
    ASSERT_EQ((ssize_t)data.size(), c->get_object_range("c32mp/dst", &back[0], back.size(), 0));
    EXPECT_EQ(data, back);
}

TEST_F(OssS3, ListingsOfTenThousandKeys) {
    const int n = 10000, workers = 16;
    std::atomic<int> next{0}, failed{0};
    auto name = [](int i) {
        char b[64];
        snprintf(b, sizeof(b), "many/d%d/k%05d", i % 10, i);
        return std::string(b);
    };
    auto worker = [&]() -> void* {
        for (int i; (i = next++) < n;) {
            ObjectUploadOptions o;
            if (c_->put_object(name(i), "x", 1, o) != 1) failed++;
        }
        return nullptr;
    };
    std::vector<photon::join_handle*> jh;
    for (int i = 0; i < workers; i++)
        jh.push_back(photon::thread_enable_join(photon::thread_create11(worker)));
    for (auto j : jh) photon::thread_join(j);
    ASSERT_EQ(0, failed.load());

    std::set<std::string> keys;
    auto collect = [&](const ListObjectsCBParameters& p) {
        if (!p.is_com_prefix && p.size == 1) keys.insert(std::string(p.key));
        return 0;
    };
    ASSERT_EQ(0, c_->list_objects("many/", collect));  // all pages, 1000 a page
    EXPECT_EQ((size_t)n, keys.size());

    // One page at a time through the marker, v2 and v1.
    for (uint8_t ver : {2, 1}) {
        std::string marker;
        int pages = 0;
        size_t count = 0;
        auto counter = [&](const ListObjectsCBParameters&) { return count++, 0; };
        ListObjectsParameters p;
        p.ver = ver;
        p.max_keys = 700;
        do {
            ASSERT_EQ(0, c_->list_objects("many/", counter, p, &marker));
            pages++;
        } while (!marker.empty() && pages < 100);
        EXPECT_EQ((size_t)n, count) << "v" << (int)ver;
        EXPECT_EQ((n + 699) / 700, pages) << "v" << (int)ver;
    }

    // The delimiter makes the ten directories common prefixes.
    std::vector<std::string> dirs;
    auto prefixes = [&](const ListObjectsCBParameters& p) {
        if (p.is_com_prefix) dirs.push_back(std::string(p.key));
        return 0;
    };
    ListObjectsParameters d;
    d.slash_delimiter = true;
    ASSERT_EQ(0, c_->list_objects("many/", prefixes, d));
    EXPECT_EQ(10u, dirs.size());
    EXPECT_EQ("many/d0/", dirs.front());

    // start-after, and a callback that stops the walk.
    size_t after = 0;
    ListObjectsParameters sa;
    sa.start_after = "many/d9/k09000";
    auto count_after = [&](const ListObjectsCBParameters&) { return after++, 0; };
    ASSERT_EQ(0, c_->list_objects("many/d9/", count_after, sa));
    EXPECT_EQ(100u, after);  // k09009 ... k09999
    int seen = 0;
    auto stop_at_3 = [&](const ListObjectsCBParameters&) { return ++seen == 3 ? -7 : 0; };
    EXPECT_EQ(-7, c_->list_objects("many/", stop_at_3));
    EXPECT_EQ(3, seen);

    std::vector<std::string> names;
    for (int i = 0; i < n; i++) names.push_back(name(i).substr(5));
    std::vector<std::string_view> views(names.begin(), names.end());
    ASSERT_EQ(0, c_->delete_objects(views, "many/"));
    size_t left = 0;
    auto count_left = [&](const ListObjectsCBParameters&) { return left++, 0; };
    ASSERT_EQ(0, c_->list_objects("many/", count_left));
    EXPECT_EQ(0u, left);
}
