// httpfs on both event engines: against nginx, and against our HTTP server
// (net/http/server.h) with its file handler and with an origin handler that
// misbehaves on purpose (ignores Range, drops the connection mid-body,
// answers 503, sends the wrong range, changes the file under us, wants
// credentials).
#include <photon/fs/httpfs/httpfs.h>

#include <sys/stat.h>
#include <utime.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <photon/fs/localfs.h>
#include <photon/net/http/server.h>
#include <photon/net/security-context/tls-stream.h>

#include "../thread/test_util.h"
#include "../util/engine_fixture.h"
#include "../util/tls_pair.h"
#include "../net/http_test_util.h"

using namespace photon;
using namespace photon::fs;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;

namespace {

constexpr uint64_t kSecond = 1000 * 1000;

// A file served by a scripted server, with knobs for misbehaviour.
struct origin {
    std::string data;
    std::string etag = "\"v1\"";
    std::string last_modified = "Mon, 01 Jan 2024 00:00:00 GMT";
    bool ignore_range = false, head_allowed = true, honor_if_match = true, wrong_range = false;
    int drop_next = 0;  // GETs whose body is cut off halfway
    int fail_next = 0;  // answers that are 503
    std::string need_auth;
    int heads = 0, gets = 0;
    std::vector<std::string> ranges, targets;

    int handle(Request& req, Response& resp, ISocketStream*) {
        targets.emplace_back(req.target());
        if (fail_next > 0) return fail_next--, reply(resp, "busy", 503);
        if (!need_auth.empty() && req.headers["Authorization"] != need_auth)
            return reply(resp, "no", 403);
        resp.headers.insert("ETag", etag);
        resp.headers.insert("Last-Modified", last_modified);
        if (honor_if_match && req.headers.has("If-Match") && req.headers["If-Match"] != etag)
            return reply(resp, "", 412);
        if (req.verb() == Verb::HEAD) {
            heads++;
            if (!head_allowed) return reply(resp, "", 405);
            resp.headers.content_length(data.size());
            return 0;
        }
        gets++;
        std::string range(req.headers["Range"]);
        ranges.push_back(range);
        uint64_t a = 0, b = data.size() ? data.size() - 1 : 0;
        bool ranged = !ignore_range && sscanf(range.c_str(), "bytes=%lu-%lu", &a, &b) == 2;
        if (ranged && a >= data.size()) {
            resp.headers.insert("Content-Range", "bytes */" + std::to_string(data.size()));
            return reply(resp, "", 416);
        }
        b = std::min<uint64_t>(b, data.size() - 1);
        std::string body = ranged ? data.substr(a, b - a + 1) : data;
        if (ranged) {
            uint64_t shown = wrong_range ? a + 1 : a;
            resp.headers.insert("Content-Range", "bytes " + std::to_string(shown) + "-" +
                                                     std::to_string(b) + "/" +
                                                     std::to_string(data.size()));
        }
        if (drop_next > 0) {  // half the body, then the connection goes
            drop_next--;
            resp.set_result(ranged ? 206 : 200);
            resp.headers.content_length(body.size());
            resp.write(body.data(), body.size() / 2);
            return -1;
        }
        return reply(resp, body, ranged ? 206 : 200);
    }
};

class HttpFs : public EngineTest {
protected:
    void SetUp() override {
        EngineTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        o_.data = pattern(3 * 1024 * 1024 + 123, 7);
        http_.reset(new_http_server());
        http_->add_handler({this, &HttpFs::serve});
        tcp_.reset(scripted_server::listening_tcp());
        ASSERT_TRUE(tcp_);
        tcp_->set_handler(http_->get_connection_handler());
        ASSERT_EQ(0, tcp_->start_loop(false));
        fs_.reset(new_httpfs(false, 10 * kSecond));
        ASSERT_TRUE(fs_);
    }
    void TearDown() override {
        fs_.reset();
        if (tcp_) tcp_->terminate();
        http_.reset();
        tcp_.reset();
        EngineTest::TearDown();
    }
    int serve(Request& q, Response& r, std::string_view) { return o_.handle(q, r, nullptr); }
    uint16_t port() { return tcp_->getsockname().port; }
    std::string url(const std::string& path = "/f") {
        return "http://127.0.0.1:" + std::to_string(port()) + path;
    }
    IFile* open_file(const std::string& path = "/f") {
        return fs_->open(url(path).c_str(), O_RDONLY);
    }
    // The bytes [off, off + n) read through f, or "<error E>".
    static std::string read_at(IFile* f, off_t off, size_t n) {
        std::string s(n, '\0');
        ssize_t r = f->pread(&s[0], n, off);
        if (r < 0) return "<error " + std::string(strerror(errno)) + ">";
        s.resize(r);
        return s;
    }

    origin o_;
    std::unique_ptr<HTTPServer> http_;
    std::unique_ptr<ISocketServer> tcp_;
    std::unique_ptr<IFileSystem> fs_;
};

// ---- against the origin handler on our HTTP server -------------------------------

TEST_P(HttpFs, StatComesFromHeadAndReadsAreExactRanges) {
    std::unique_ptr<IFile> f(open_file());
    ASSERT_TRUE(f);
    EXPECT_EQ(0, o_.heads + o_.gets);  // open() sends nothing
    struct stat st;
    ASSERT_EQ(0, f->fstat(&st)) << strerror(errno);
    EXPECT_EQ((off_t)o_.data.size(), st.st_size);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(1704067200, st.st_mtime);  // Mon, 01 Jan 2024 00:00:00 GMT
    EXPECT_EQ(1, o_.heads);
    std::mt19937 rng(5);
    for (int i = 0; i < 30; i++) {
        size_t off = rng() % o_.data.size(), n = 1 + rng() % 300000;
        size_t want = std::min(n, o_.data.size() - off);
        ASSERT_EQ(o_.data.substr(off, want), read_at(f.get(), off, n)) << off << "+" << n;
        EXPECT_EQ("bytes=" + std::to_string(off) + "-" + std::to_string(off + want - 1),
                  o_.ranges.back());
    }
    EXPECT_EQ("", read_at(f.get(), o_.data.size(), 10));  // at the end: 0, no request
    EXPECT_EQ(30, o_.gets);
    EXPECT_EQ(1, o_.heads);  // the stat is kept (stat_expire is "never")
}

TEST_P(HttpFs, VectorReadsAndTheFilePositionWork) {
    std::unique_ptr<IFile> f(open_file());
    char a[100], b[5000], c[70000];
    struct iovec iov[] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
    ASSERT_EQ(75100, f->preadv(iov, 3, 1000));
    EXPECT_EQ(0, memcmp(a, &o_.data[1000], sizeof(a)));
    EXPECT_EQ(0, memcmp(b, &o_.data[1100], sizeof(b)));
    EXPECT_EQ(0, memcmp(c, &o_.data[6100], sizeof(c)));
    EXPECT_EQ(1, o_.gets);  // one request for all three
    ASSERT_EQ((off_t)o_.data.size() - 10, f->lseek(-10, SEEK_END));
    char tail[64];
    ASSERT_EQ(10, f->read(tail, sizeof(tail)));
    EXPECT_EQ(0, memcmp(tail, &o_.data[o_.data.size() - 10], 10));
    EXPECT_EQ(0, f->read(tail, sizeof(tail)));
}

TEST_P(HttpFs, SequentialReadsAskAheadAndReadAlong) {
    std::unique_ptr<IFile> f(open_file());
    std::string got;
    char buf[65536];
    for (ssize_t n; (n = f->read(buf, sizeof(buf))) > 0;) got.append(buf, n);
    EXPECT_TRUE(got == o_.data);
    // 49 reads; the windows grow 128K, 256K, ...: a handful of requests.
    EXPECT_LE(o_.gets, 8);
    EXPECT_EQ("bytes=0-65535", o_.ranges[0]);
    EXPECT_EQ("bytes=65536-196607", o_.ranges[1]);
    // A jump ends the read-ahead: exact ranges again, and the right bytes.
    EXPECT_EQ(o_.data.substr(100, 10), read_at(f.get(), 100, 10));
    EXPECT_EQ("bytes=100-109", o_.ranges.back());
    EXPECT_EQ(o_.data.substr(3000000, 10), read_at(f.get(), 3000000, 10));
}

TEST_P(HttpFs, AServerThatIgnoresRangeStillGivesTheRightBytes) {
    o_.ignore_range = true;
    std::unique_ptr<IFile> f(open_file());
    EXPECT_EQ(o_.data.substr(2000000, 5000), read_at(f.get(), 2000000, 5000));
    // Sequential reads go on along the same body: no new request.
    int gets = o_.gets;
    for (size_t off = 2100000; off < 2900000; off += 100000)
        ASSERT_EQ(o_.data.substr(off, 65536), read_at(f.get(), off, 65536)) << off;
    EXPECT_EQ(gets, o_.gets);
    // Going back needs a new request, which starts at byte 0 again.
    EXPECT_EQ(o_.data.substr(10, 100), read_at(f.get(), 10, 100));
    EXPECT_EQ(gets + 1, o_.gets);
}

TEST_P(HttpFs, ABodyCutShortIsResumedWhereItStopped) {
    o_.drop_next = 2;
    std::unique_ptr<IFile> f(open_file());
    std::string got = read_at(f.get(), 1000, 2000000);
    EXPECT_TRUE(got == o_.data.substr(1000, 2000000)) << got.substr(0, 40);
    ASSERT_EQ(3u, o_.ranges.size());
    EXPECT_EQ("bytes=1000-2000999", o_.ranges[0]);
    // Each retry asks only for what is missing (the client reads in pieces,
    // so it may ask again for at most one piece it had).
    uint64_t a1 = 0, a2 = 0, b = 0;
    ASSERT_EQ(2, sscanf(o_.ranges[1].c_str(), "bytes=%lu-%lu", &a1, &b));
    EXPECT_EQ(2000999u, b);
    EXPECT_GT(a1, 1000u);
    ASSERT_EQ(2, sscanf(o_.ranges[2].c_str(), "bytes=%lu-%lu", &a2, &b));
    EXPECT_GT(a2, a1);
}

TEST_P(HttpFs, TransientErrorsAreRetriedWithGrowingPauses) {
    o_.fail_next = 3;
    std::unique_ptr<IFile> f(open_file());
    auto t0 = Clock::now();
    EXPECT_EQ(o_.data.substr(0, 100), read_at(f.get(), 0, 100));
    EXPECT_GE(us_since(t0), (10 + 20 + 40) * 1000u);  // 10 ms, doubling
    EXPECT_EQ(0, o_.fail_next);
}

TEST_P(HttpFs, NobodyListeningTimesOutWithEtimedout) {
    uint16_t port = free_loopback_port();
    std::unique_ptr<IFileSystem> fs(new_httpfs(false, 300 * 1000));
    std::string u = "http://127.0.0.1:" + std::to_string(port) + "/f";
    std::unique_ptr<IFile> f(fs->open(u.c_str(), O_RDONLY));
    ASSERT_TRUE(f);
    auto t0 = Clock::now();
    struct stat st;
    EXPECT_EQ(-1, f->fstat(&st));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_GE(us_since(t0), 290 * 1000u);
    EXPECT_LT(us_since(t0), 5 * kSecond);
}

TEST_P(HttpFs, AWrongContentRangeIsEio) {
    o_.wrong_range = true;
    std::unique_ptr<IFile> f(open_file());
    char buf[100];
    EXPECT_EQ(-1, f->pread(buf, sizeof(buf), 50));
    EXPECT_EQ(EIO, errno);
}

TEST_P(HttpFs, AFileChangedUnderUsIsEioNotMixedData) {
    std::unique_ptr<IFile> f(open_file());
    ASSERT_EQ(o_.data.substr(0, 1000), read_at(f.get(), 0, 1000));
    o_.etag = "\"v2\"";
    o_.data = pattern(o_.data.size(), 8);
    // The server refuses our If-Match: 412.
    EXPECT_EQ("<error " + std::string(strerror(EIO)) + ">", read_at(f.get(), 1000, 1000));
    // A server that ignores If-Match is caught by the ETag it sends.
    std::unique_ptr<IFile> g(open_file());
    ASSERT_EQ(o_.data.substr(0, 10), read_at(g.get(), 0, 10));
    o_.honor_if_match = false;
    o_.etag = "\"v3\"";
    EXPECT_EQ("<error " + std::string(strerror(EIO)) + ">", read_at(g.get(), 10, 10));
    struct stat st;
    EXPECT_EQ(-1, g->fstat(&st));  // and stays failed
    EXPECT_EQ(EIO, errno);
    // Opened again, it is the new file.
    std::unique_ptr<IFile> h(open_file());
    EXPECT_EQ(o_.data.substr(5, 10), read_at(h.get(), 5, 10));
}

TEST_P(HttpFs, TheStatIsKeptUntilItExpires) {
    std::unique_ptr<IFileSystem> fs(new_httpfs(false, 10 * kSecond, 200 * 1000));
    std::unique_ptr<IFile> f(fs->open(url().c_str(), O_RDONLY));
    struct stat st;
    ASSERT_EQ(0, f->fstat(&st));
    ASSERT_EQ(0, f->fstat(&st));
    EXPECT_EQ(1, o_.heads);
    thread_usleep(250 * 1000);
    ASSERT_EQ(0, f->fstat(&st));
    EXPECT_EQ(2, o_.heads);
    // A refresh that finds another version fails from then on.
    thread_usleep(250 * 1000);
    o_.honor_if_match = false;
    o_.data.resize(100);
    EXPECT_EQ(-1, f->fstat(&st));
    EXPECT_EQ(EIO, errno);
}

TEST_P(HttpFs, MissingIsEnoentAndCredentialsComeFromIoctl) {
    o_.need_auth = "Bearer x";
    std::unique_ptr<IFile> f(open_file());
    struct stat st;
    EXPECT_EQ(-1, f->fstat(&st));
    EXPECT_EQ(EACCES, errno);
    ASSERT_EQ(0, f->ioctl(HTTP_HEADER, "Authorization", "Bearer x"));
    ASSERT_EQ(0, f->fstat(&st)) << strerror(errno);
    EXPECT_EQ(o_.data.substr(7, 7), read_at(f.get(), 7, 7));
    EXPECT_EQ(-1, f->ioctl(HTTP_HEADER, "Bad Name", "v"));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, f->ioctl(HTTP_HEADER, "X", "a\r\nInjected: 1"));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, f->ioctl(0x1234));
    EXPECT_EQ(EINVAL, errno);

    std::unique_ptr<IFileSystem> fs(new_httpfs(false, 10 * kSecond));
    auto srv404 = scripted_server(
        [](Request&, Response& r, ISocketStream*) { return reply(r, "none", 404); });
    std::unique_ptr<IFile> g(fs->open(srv404.url("/x").c_str(), O_RDONLY));
    EXPECT_EQ(-1, g->fstat(&st));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(-1, fs->stat(srv404.url("/x").c_str(), &st));
    EXPECT_EQ(ENOENT, errno);
}

TEST_P(HttpFs, AServerWithoutHeadIsAskedForOneByte) {
    o_.head_allowed = false;
    struct stat st;
    ASSERT_EQ(0, fs_->stat(url().c_str(), &st)) << strerror(errno);
    EXPECT_EQ((off_t)o_.data.size(), st.st_size);
    EXPECT_EQ("bytes=0-0", o_.ranges.back());
    o_.data.clear();  // an empty file: 416 with its size, 0
    std::unique_ptr<IFile> f(open_file("/empty"));
    ASSERT_EQ(0, f->fstat(&st)) << strerror(errno);
    EXPECT_EQ(0, st.st_size);
    EXPECT_EQ("", read_at(f.get(), 0, 10));
}

TEST_P(HttpFs, PathsOfEveryFormNameTheSameUrl) {
    std::string hp = "127.0.0.1:" + std::to_string(port());
    for (std::string p : {"/" + hp + "/f", hp + "/f", "http://" + hp + "/f", "http:/" + hp + "/f",
                          "/HTTP://" + hp + "/f"}) {
        struct stat st;
        ASSERT_EQ(0, fs_->stat(p.c_str(), &st)) << p << ": " << strerror(errno);
        EXPECT_EQ("/f", o_.targets.back()) << p;
    }
    std::unique_ptr<IFile> f(fs_->open(("/" + hp + "/f?a=1&b=2").c_str(), O_RDONLY));
    ASSERT_TRUE(f);
    read_at(f.get(), 0, 1);
    EXPECT_EQ("/f?a=1&b=2", o_.targets.back());
    ASSERT_EQ(0, f->ioctl(HTTP_URL_PARAM, "c=3"));
    read_at(f.get(), 0, 1);
    EXPECT_EQ("/f?c=3", o_.targets.back());
}

TEST_P(HttpFs, WritesAndBadArgumentsFailCleanly) {
    EXPECT_EQ(nullptr, fs_->open(url().c_str(), O_RDWR));
    EXPECT_EQ(EROFS, errno);
    EXPECT_EQ(nullptr, fs_->open(url().c_str(), O_RDONLY | O_CREAT));
    EXPECT_EQ(EROFS, errno);
    EXPECT_EQ(nullptr, fs_->open("", O_RDONLY));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, fs_->open("http:// bad host/", O_RDONLY));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, fs_->access(url().c_str(), W_OK));
    EXPECT_EQ(EROFS, errno);
    EXPECT_EQ(0, fs_->access(url().c_str(), R_OK));
    EXPECT_EQ(nullptr, fs_->opendir("/"));
    EXPECT_EQ(ENOSYS, errno);
    std::unique_ptr<IFile> f(open_file());
    EXPECT_EQ(-1, f->pwrite("x", 1, 0));
    EXPECT_EQ(ENOSYS, errno);
    char c;
    EXPECT_EQ(-1, f->pread(&c, 1, -1));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(fs_.get(), f->filesystem());
    EXPECT_EQ(0, f->close());
    // new_httpfile: standalone, or on an httpfs only.
    std::unique_ptr<IFileSystem> local(new_localfs_adaptor());
    EXPECT_EQ(nullptr, new_httpfile(url().c_str(), local.get()));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, new_httpfile(nullptr));
    EXPECT_EQ(EINVAL, errno);
    std::unique_ptr<IFile> alone(new_httpfile_v2(url().c_str(), nullptr, 10 * kSecond));
    ASSERT_TRUE(alone);
    EXPECT_EQ(nullptr, alone->filesystem());
    EXPECT_EQ(o_.data.substr(3, 3), read_at(alone.get(), 3, 3));
}

TEST_P(HttpFs, TheOpenCallbackSeesTheFileFirst) {
    struct seen {
        std::string url;
        int calls = 0;
        void on_open(const char* u, IFile* f) {
            url = u;
            calls++;
            f->ioctl(HTTP_HEADER, "Authorization", "Bearer cb");
        }
    } s;
    o_.need_auth = "Bearer cb";
    std::unique_ptr<IFileSystem> fs(new_httpfs(false, 10 * kSecond, -1ULL, {&s, &seen::on_open}));
    std::unique_ptr<IFile> f(fs->open(url().c_str(), O_RDONLY));
    EXPECT_EQ(1, s.calls);
    EXPECT_EQ(url(), s.url);
    EXPECT_EQ(o_.data.substr(0, 4), read_at(f.get(), 0, 4));
    std::unique_ptr<IFile> g(
        new_httpfile(url().c_str(), fs.get(), 10 * kSecond, -1ULL, {&s, &seen::on_open}));
    EXPECT_EQ(2, s.calls);
    EXPECT_EQ(o_.data.substr(4, 4), read_at(g.get(), 4, 4));
}

TEST_P(HttpFs, AV2FileSystemUsesTheClientItIsGiven) {
    Client* client = new_http_client();
    client->set_user_agent("httpfs-test");
    std::string agent;
    scripted_server srv([&](Request& q, Response& r, ISocketStream*) {
        agent.assign(q.headers["User-Agent"]);
        r.headers.content_length(4);
        return q.verb() == Verb::HEAD ? 0 : reply(r, "abcd", 200);
    });
    std::unique_ptr<IFileSystem> fs(new_httpfs_v2(false, 10 * kSecond, -1ULL, client, true));
    struct stat st;
    ASSERT_EQ(0, fs->stat(srv.url("/x").c_str(), &st));
    EXPECT_EQ(4, st.st_size);
    EXPECT_EQ("httpfs-test", agent);
}

TEST_P(HttpFs, ReadsOverHttpsWhenThatIsTheDefault) {
    tls_pair pair;
    PHOTON_TEST_MAKE_TLS_PAIR(pair);
    {
        scripted_server tls(
            new_tls_server(pair.server.get(), scripted_server::listening_tcp(), true),
            [this](Request& q, Response& r, ISocketStream* s) { return o_.handle(q, r, s); });
        std::unique_ptr<IFileSystem> fs(new_httpfs_v2(
            true, 10 * kSecond, -1ULL, new_http_client(nullptr, pair.client.get()), true));
        std::string p = "/localhost:" + std::to_string(tls.port()) + "/f";  // no scheme: https
        std::unique_ptr<IFile> f(fs->open(p.c_str(), O_RDONLY));
        ASSERT_TRUE(f);
        EXPECT_EQ(o_.data.substr(1000, 300000), read_at(f.get(), 1000, 300000));
        EXPECT_EQ(1, tls.accepts);
    }
}

// ---- against our HTTP server's file handler and nginx --------------------------

void expect_random_reads_match(IFile* f, const std::string& data, int n) {
    std::mt19937 rng(11);
    for (int i = 0; i < n; i++) {
        size_t off = rng() % data.size(), len = 1 + rng() % 500000;
        std::string buf(len, '\0');
        ssize_t r = f->pread(&buf[0], len, off);
        ASSERT_EQ((ssize_t)std::min(len, data.size() - off), r) << strerror(errno);
        ASSERT_TRUE(0 == memcmp(buf.data(), data.data() + off, r)) << off << "+" << len;
    }
}

TEST_P(HttpFs, ReadsFromOurOwnServersFileHandler) {
    temp_dir tmp;
    const std::string data = pattern(2 * 1024 * 1024 + 17, 3);
    tmp.write("www/big.bin", data);
    std::unique_ptr<IFileSystem> local(new_localfs_adaptor(tmp.path("www").c_str()));
    ASSERT_TRUE(local);
    std::unique_ptr<HTTPServer> http(new_http_server());
    http->add_handler(new_fs_handler(local.get()), true, "/");
    std::unique_ptr<ISocketServer> tcp(scripted_server::listening_tcp());
    tcp->set_handler(http->get_connection_handler());
    ASSERT_EQ(0, tcp->start_loop(false));
    std::string u = "http://127.0.0.1:" + std::to_string(tcp->getsockname().port) + "/big.bin";
    std::unique_ptr<IFile> f(fs_->open(u.c_str(), O_RDONLY));
    struct stat st;
    ASSERT_EQ(0, f->fstat(&st)) << strerror(errno);
    EXPECT_EQ((off_t)data.size(), st.st_size);
    struct stat host;
    ASSERT_EQ(0, ::stat(tmp.path("www/big.bin").c_str(), &host));
    EXPECT_EQ(host.st_mtime, st.st_mtime);
    expect_random_reads_match(f.get(), data, 20);
    f.reset();
    tcp->terminate();
}

class HttpFsNginx : public HttpFs {
protected:
    void SetUp() override {
        HttpFs::SetUp();
        if (IsSkipped() || HasFatalFailure()) return;
        if (!have_tool("nginx")) GTEST_SKIP() << "nginx is not installed";
        ngx_.reset(new nginx_server(tmp_, ""));
        ASSERT_TRUE(ngx_->ok()) << ngx_->error_log();
    }
    void TearDown() override {
        ngx_.reset();
        HttpFs::TearDown();
    }
    temp_dir tmp_;
    std::unique_ptr<nginx_server> ngx_;
};

TEST_P(HttpFsNginx, StatsAndReadsAFile) {
    const std::string data = pattern(5 * 1024 * 1024 + 3, 4);
    tmp_.write("www/f.bin", data);
    struct stat host, st;
    ASSERT_EQ(0, ::stat(tmp_.path("www/f.bin").c_str(), &host));
    ASSERT_EQ(0, fs_->stat(ngx_->url("/f.bin").c_str(), &st)) << strerror(errno);
    EXPECT_EQ((off_t)data.size(), st.st_size);
    EXPECT_EQ(host.st_mtime, st.st_mtime);
    std::unique_ptr<IFile> f(fs_->open(ngx_->url("/f.bin").c_str(), O_RDONLY));
    expect_random_reads_match(f.get(), data, 30);
    std::string all(data.size(), '\0');
    for (size_t off = 0; off < data.size();) {
        ssize_t r = f->read(&all[off], 1 << 20);
        ASSERT_GT(r, 0) << strerror(errno);
        off += r;
    }
    EXPECT_TRUE(all == data);
    EXPECT_EQ(-1, fs_->stat(ngx_->url("/missing").c_str(), &st));
    EXPECT_EQ(ENOENT, errno);
    // One kept-alive connection served every request.
    EXPECT_EQ(1u, ngx_->connections("/f.bin").size());
}

TEST_P(HttpFsNginx, AFileReplacedUnderUsIsEio) {
    tmp_.write("www/f.bin", pattern(300000, 1));
    std::unique_ptr<IFile> f(fs_->open(ngx_->url("/f.bin").c_str(), O_RDONLY));
    char buf[1000];
    ASSERT_EQ(1000, f->pread(buf, sizeof(buf), 0));
    const std::string v2 = pattern(300000, 2);  // same size: only the ETag tells
    tmp_.write("www/f.bin", v2);
    struct utimbuf t = {1000000000, 1000000000};
    ASSERT_EQ(0, ::utime(tmp_.path("www/f.bin").c_str(), &t));
    EXPECT_EQ(-1, f->pread(buf, sizeof(buf), 1000));
    EXPECT_EQ(EIO, errno);
    std::unique_ptr<IFile> g(fs_->open(ngx_->url("/f.bin").c_str(), O_RDONLY));
    ASSERT_EQ(1000, g->pread(buf, sizeof(buf), 1000));
    EXPECT_EQ(0, memcmp(buf, &v2[1000], 1000));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(HttpFs);
PHOTON_INSTANTIATE_ENGINE_TESTS(HttpFsNginx);

}  // namespace
