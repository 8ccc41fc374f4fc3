// new_fs_handler over both event engines, driven by a small request loop
// over the message layer: files under a localfs (each I/O engine) and under a
// test fs whose files expose their fd (sendfile path) or hide it (copy path);
// status codes, validators and conditionals, ranges, path decoding and
// escapes, keep-alive, pipelining and TLS. The HTTP-date and MIME helpers too.
#include "../util/tls_pair.h"
#include "http_fs_handler_test_util.h"

using namespace photon;
using namespace photon::net;
using namespace photon::net::http;
using namespace photon_test;
using namespace fs_handler_test;

// ---- pure helpers ----------------------------------------------------------

TEST(HttpDate, FormatsImfFixdate) {
    char buf[kHttpDateLength];
    format_http_date(784111777, buf);
    EXPECT_EQ("Sun, 06 Nov 1994 08:49:37 GMT", std::string(buf, sizeof(buf)));
    format_http_date(0, buf);
    EXPECT_EQ("Thu, 01 Jan 1970 00:00:00 GMT", std::string(buf, sizeof(buf)));
    format_http_date(951782400, buf);  // a leap day of a century leap year
    EXPECT_EQ("Tue, 29 Feb 2000 00:00:00 GMT", std::string(buf, sizeof(buf)));
}

TEST(HttpDate, AgreesWithGmtimeOverManyYears) {
    char buf[kHttpDateLength], ref[64];
    for (time_t t = 0; t < 4'200'000'000; t += 86'399 * 37 + 1234) {
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(ref, sizeof(ref), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        format_http_date(t, buf);
        ASSERT_EQ(std::string(ref), std::string(buf, sizeof(buf))) << t;
        time_t back = -1;
        ASSERT_TRUE(parse_http_date(std::string_view(buf, sizeof(buf)), &back)) << ref;
        ASSERT_EQ(t, back) << ref;
    }
}

TEST(HttpDate, ParsesTheThreeFormsAndRejectsTheRest) {
    time_t t = 0;
    EXPECT_TRUE(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT", &t));
    EXPECT_EQ(784111777, t);
    t = 0;
    EXPECT_TRUE(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT", &t));
    EXPECT_EQ(784111777, t);
    t = 0;
    EXPECT_TRUE(parse_http_date("Sun Nov  6 08:49:37 1994", &t));
    EXPECT_EQ(784111777, t);
    const char* bad[] = {
        "",
        "Sun, 06 Nov 1994 08:49:37",        // no GMT
        "Sun, 06 Nov 1994 08:49:37 UTC",    // not GMT
        "Sun, 6 Nov 1994 08:49:37 GMT",     // one-digit day
        "Sun, 30 Feb 1994 08:49:37 GMT",    // no such day
        "Sun, 29 Feb 1900 08:49:37 GMT",    // 1900 is no leap year
        "Sun, 06 Nov 1994 24:00:00 GMT",    // hour
        "Xyz, 06 Nov 1994 08:49:37 GMT",    // day name
        "Sun, 06 Now 1994 08:49:37 GMT",    // month
        " Sun, 06 Nov 1994 08:49:37 GMT",   // leading space
        "Sun, 06 Nov 1994 08:49:37 GMT ",   // trailing space
        "Sun Nov 6 08:49:37 1994",          // asctime day needs two places
        "Sunday, 06-Nov-1994 08:49:37 GMT"  // RFC 850 has two-digit years
    };
    for (const char* b : bad) EXPECT_FALSE(parse_http_date(b, &t)) << b;
}

TEST(MimeType, MapsCommonExtensionsCaseInsensitively) {
    EXPECT_EQ("text/html; charset=utf-8", mime_type("/a/index.html"));
    EXPECT_EQ("text/html; charset=utf-8", mime_type("/A.HTM"));
    EXPECT_EQ("text/css; charset=utf-8", mime_type("/s.css"));
    EXPECT_EQ("text/javascript; charset=utf-8", mime_type("/app.min.js"));
    EXPECT_EQ("application/json", mime_type("/d.json"));
    EXPECT_EQ("text/plain; charset=utf-8", mime_type("/r.txt"));
    EXPECT_EQ("image/png", mime_type("/i.PNG"));
    EXPECT_EQ("image/jpeg", mime_type("/i.jpg"));
    EXPECT_EQ("image/jpeg", mime_type("/i.jpeg"));
    EXPECT_EQ("image/gif", mime_type("/i.gif"));
    EXPECT_EQ("image/svg+xml", mime_type("/i.svg"));
    EXPECT_EQ("image/vnd.microsoft.icon", mime_type("/favicon.ico"));
    EXPECT_EQ("application/wasm", mime_type("/m.wasm"));
    EXPECT_EQ("application/pdf", mime_type("/d.pdf"));
    EXPECT_EQ("application/xml", mime_type("/d.xml"));
    EXPECT_EQ("video/mp4", mime_type("/v.mp4"));
    EXPECT_EQ("font/woff2", mime_type("/f.woff2"));
    EXPECT_EQ("application/octet-stream", mime_type("/f.unknownext"));
    EXPECT_EQ("application/octet-stream", mime_type("/Makefile"));
    EXPECT_EQ("application/octet-stream", mime_type("/dir.html/file"));
    EXPECT_EQ("application/octet-stream", mime_type("/trailing."));
    EXPECT_EQ("application/octet-stream", mime_type("/x.averyveryverylongextension"));
}

TEST(FsHandlerFactory, RefusesANullFileSystem) {
    errno = 0;
    EXPECT_EQ(nullptr, new_fs_handler(nullptr));
    EXPECT_EQ(EINVAL, errno);
}

// ---- through the request loop ----------------------------------------------

TEST_P(FsHandler, ServesFilesWithTypeLengthAndValidatorsUnderEveryFs) {
    for (auto& k : fs_kinds()) {
        if (libaio_unusable(k)) continue;
        SCOPED_TRACE(k.name);
        serve(k.make(t->root));
        auto c = connect();
        ASSERT_TRUE(c->connected());
        struct {
            const char* path;
            const std::string& data;
            const char* type;
        } files[] = {
            {"/a.txt", t->small, "text/plain; charset=utf-8"},
            {"/4k.bin", t->k4, "application/octet-stream"},
            {"/100k.bin", t->k100, "application/octet-stream"},
            {"/big.bin", t->big, "application/octet-stream"},
        };
        for (auto& f : files) {
            SCOPED_TRACE(f.path);
            reply r = c->get(f.path);  // all on one keep-alive connection
            ASSERT_EQ(200, r.status);
            EXPECT_TRUE(r.body == f.data) << "body differs, size " << r.body.size();
            EXPECT_EQ(std::to_string(f.data.size()), r["Content-Length"]);
            EXPECT_EQ(f.type, r["Content-Type"]);
            EXPECT_EQ("bytes", r["Accept-Ranges"]);
            EXPECT_EQ(lm_of(t->root + f.path), r["Last-Modified"]);
            std::string_view etag = r["ETag"];
            EXPECT_TRUE(etag.size() > 2 && etag.front() == '"' && etag.back() == '"') << etag;

            reply h = c->get(f.path, "", Verb::HEAD);
            ASSERT_EQ(200, h.status);
            EXPECT_EQ("", h.body);
            EXPECT_EQ(r["Content-Length"], h["Content-Length"]);
            EXPECT_EQ(r["ETag"], h["ETag"]);
            EXPECT_EQ(r["Content-Type"], h["Content-Type"]);
        }
        reply e = c->get("/empty");
        EXPECT_EQ(200, e.status);
        EXPECT_EQ("0", e["Content-Length"]);
        EXPECT_EQ("", e.body);
    }
}

TEST_P(FsHandler, SendsASmallFileWithItsHeadInOneWrite) {
    for (auto& k : fs_kinds(false)) {
        SCOPED_TRACE(k.name);
        serve(k.make(t->root));
        auto c = connect();
        server->counts = {};
        reply r = c->get("/4k.bin");
        ASSERT_EQ(200, r.status);
        EXPECT_TRUE(r.body == t->k4);
        EXPECT_EQ(1, server->counts.writes);
        EXPECT_EQ(0, server->counts.sendfiles);
    }
}

TEST_P(FsHandler, SendsALargeFileBySendfileOnlyWhenTheFileHasAnFd) {
    serve(new fd_fs(t->root, true));
    auto c = connect();
    server->counts = {};
    reply r = c->get("/big.bin");
    ASSERT_EQ(200, r.status);
    EXPECT_TRUE(r.body == t->big);
    EXPECT_EQ(1, server->counts.sendfiles);
    EXPECT_EQ(kBig, server->counts.sendfile_bytes);
    EXPECT_EQ(1, server->counts.writes);  // the head, with MSG_MORE

    server->counts = {};
    r = c->get("/100k.bin", "Range: bytes=1000-99999\r\n");
    ASSERT_EQ(206, r.status);
    EXPECT_TRUE(r.body == t->k100.substr(1000, 99000));
    EXPECT_EQ(1, server->counts.sendfiles);
    EXPECT_EQ(99000u, server->counts.sendfile_bytes);

    serve(new fd_fs(t->root, false));
    c = connect();
    server->counts = {};
    fd_file::preads = 0;
    r = c->get("/big.bin");
    ASSERT_EQ(200, r.status);
    EXPECT_TRUE(r.body == t->big);
    EXPECT_EQ(0, server->counts.sendfiles);
    EXPECT_EQ((int)(kBig / 65536 + 1), fd_file::preads);  // aligned 64 KiB windows
}

// Local files answer get_underlay_object with their fd (as PhotonLibOS's
// do): then their bodies go by sendfile and they are kept open.
TEST_P(FsHandler, LocalfsFilesGoBySendfileWhenTheyExposeTheirFd) {
    std::unique_ptr<fs::IFileSystem> probe(fs::new_localfs_adaptor(t->root.c_str()));
    ASSERT_NE(nullptr, probe);
    std::unique_ptr<fs::IFile> f(probe->open("/big.bin", O_RDONLY));
    ASSERT_NE(nullptr, f);
    ASSERT_NE(nullptr, f->get_underlay_object(0));  // its fd, as PhotonLibOS's files give
    for (int e : {fs::ioengine_psync, fs::ioengine_iouring, fs::ioengine_posixaio}) {
        SCOPED_TRACE(io_engine_name(e));
        serve(fs::new_localfs_adaptor(t->root.c_str(), e));
        auto c = connect();
        server->counts = {};
        reply r = c->get("/big.bin");
        ASSERT_EQ(200, r.status);
        EXPECT_TRUE(r.body == t->big);
        EXPECT_EQ(1, server->counts.sendfiles);
        EXPECT_EQ(kBig, server->counts.sendfile_bytes);
    }
}

TEST_P(FsHandler, AnswersRanges) {
    for (auto& k : fs_kinds()) {
        if (libaio_unusable(k)) continue;
        SCOPED_TRACE(k.name);
        serve(k.make(t->root));
        auto c = connect();
        const std::string& d = t->k100;
        std::string size = std::to_string(d.size());
        struct {
            const char* range;
            size_t first, last;
        } ok[] = {
            {"bytes=0-0", 0, 0},
            {"bytes=10-19", 10, 19},
            {"bytes=100000-", 100000, d.size() - 1},
            {"bytes=-10", d.size() - 10, d.size() - 1},
            {"bytes=5-999999999999999999999", 5, d.size() - 1},
            {"BYTES=7-8", 7, 8},                // the unit is case-insensitive
            {"bytes=4097-70000", 4097, 70000},  // unaligned, across read windows
            {"bytes= 3-4 ,", 3, 4},             // OWS and empty list elements
        };
        for (auto& o : ok) {
            SCOPED_TRACE(o.range);
            reply r = c->get("/100k.bin", std::string("Range: ") + o.range + "\r\n");
            ASSERT_EQ(206, r.status);
            EXPECT_TRUE(r.body == d.substr(o.first, o.last - o.first + 1));
            EXPECT_EQ(std::to_string(o.last - o.first + 1), r["Content-Length"]);
            EXPECT_EQ(
                "bytes " + std::to_string(o.first) + "-" + std::to_string(o.last) + "/" + size,
                r["Content-Range"]);
        }
        for (const char* bad : {"bytes=200000-", "bytes=-0", "bytes=102400-102400"}) {
            SCOPED_TRACE(bad);
            reply r = c->get("/100k.bin", std::string("Range: ") + bad + "\r\n");
            EXPECT_EQ(416, r.status);
            EXPECT_EQ("bytes */" + size, r["Content-Range"]);
            EXPECT_EQ("0", r["Content-Length"]);
        }
        // Ignored: malformed, other units, several ranges, decreasing.
        for (const char* ign : {"bytes=abc", "items=0-1", "bytes=5-1", "bytes=0-1,5-6", "bytes=1",
                                "bytes=-", "bytes=--1", "bytes=+1-2", "bytes 0-1", "bytes = 0-1"}) {
            SCOPED_TRACE(ign);
            reply r = c->get("/100k.bin", std::string("Range: ") + ign + "\r\n");
            EXPECT_EQ(200, r.status);
            EXPECT_TRUE(r.body == d);
        }
        // The whole file, however asked for: 200, as Photon's.
        for (const char* all : {"bytes=-999999", "bytes=0-", "bytes=0-999999"}) {
            SCOPED_TRACE(all);
            reply r = c->get("/100k.bin", std::string("Range: ") + all + "\r\n");
            EXPECT_EQ(200, r.status);
            EXPECT_EQ("", r["Content-Range"]);
            EXPECT_TRUE(r.body == d);
        }
        // An empty file has no satisfiable range.
        EXPECT_EQ(416, c->get("/empty", "Range: bytes=0-\r\n").status);
        // HEAD: the GET's head, as Photon's.
        reply h = c->get("/100k.bin", "Range: bytes=0-9\r\n", Verb::HEAD);
        EXPECT_EQ(206, h.status);
        EXPECT_EQ("10", h["Content-Length"]);
        EXPECT_EQ("bytes 0-9/" + size, h["Content-Range"]);
    }
}

TEST_P(FsHandler, IfRangeGuardsTheRange) {
    serve(new fd_fs(t->root, true));
    auto c = connect();
    reply full = c->get("/a.txt");
    ASSERT_EQ(200, full.status);
    std::string etag(full["ETag"]), lm(full["Last-Modified"]);
    auto ranged = [&](const std::string& if_range) {
        return c->get("/a.txt", "Range: bytes=0-4\r\nIf-Range: " + if_range + "\r\n");
    };
    reply r = ranged(etag);
    EXPECT_EQ(206, r.status);
    EXPECT_EQ("hello", r.body);
    EXPECT_EQ(206, ranged(lm).status);
    EXPECT_EQ(200, ranged("\"other\"").status);
    EXPECT_EQ(200, ranged("W/" + etag).status);  // weak tags never match If-Range
    EXPECT_EQ(200, ranged("Sun, 06 Nov 1994 08:49:37 GMT").status);
    EXPECT_EQ(200, ranged("garbage").status);
}

TEST_P(FsHandler, AnswersConditionalsWith304) {
    for (auto& k : fs_kinds(false)) {
        SCOPED_TRACE(k.name);
        serve(k.make(t->root));
        auto c = connect();
        reply full = c->get("/4k.bin");
        ASSERT_EQ(200, full.status);
        std::string etag(full["ETag"]), lm(full["Last-Modified"]);
        auto expect_304 = [&](const std::string& hdr, Verb v = Verb::GET) {
            SCOPED_TRACE(hdr);
            reply r = c->get("/4k.bin", hdr + "\r\n", v);
            EXPECT_EQ(304, r.status);
            EXPECT_EQ("", r.body);
            EXPECT_EQ(etag, r["ETag"]);
            EXPECT_EQ(lm, r["Last-Modified"]);
            EXPECT_FALSE(r.headers.has("Content-Length"));
        };
        auto expect_200 = [&](const std::string& hdr) {
            SCOPED_TRACE(hdr);
            reply r = c->get("/4k.bin", hdr + "\r\n");
            EXPECT_EQ(200, r.status);
            EXPECT_TRUE(r.body == t->k4);
        };
        expect_304("If-None-Match: " + etag);
        expect_304("If-None-Match: " + etag, Verb::HEAD);
        expect_304("If-None-Match: W/" + etag);  // weak comparison
        expect_304("If-None-Match: \"a\", \"b,c\" ,W/" + etag);
        expect_304("If-None-Match: \"a\"\r\nIf-None-Match: " + etag);  // split over lines
        expect_304("If-None-Match: *");
        expect_304("If-Modified-Since: " + lm);
        expect_304("If-Modified-Since: Fri, 31 Dec 2100 23:59:59 GMT");
        expect_200("If-None-Match: \"nope\"");
        expect_200("If-None-Match: \"a\", \"b\"");
        // If-None-Match decides alone when present.
        expect_200("If-None-Match: \"nope\"\r\nIf-Modified-Since: " + lm);
        expect_200("If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT");
        expect_200("If-Modified-Since: not a date");

        time_t mtime;
        ASSERT_TRUE(parse_http_date(lm, &mtime));
        char other[kHttpDateLength];
        struct tm tm;
        gmtime_r(&mtime, &tm);
        char rfc850[64], asct[64];
        strftime(rfc850, sizeof(rfc850), "%A, %d-%b-%y %H:%M:%S GMT", &tm);
        strftime(asct, sizeof(asct), "%a %b %e %H:%M:%S %Y", &tm);
        expect_304(std::string("If-Modified-Since: ") + std::string(rfc850));
        expect_304(std::string("If-Modified-Since: ") + std::string(asct));
        format_http_date(mtime - 1, other);
        expect_200("If-Modified-Since: " + std::string(other, sizeof(other)));
    }
}

TEST_P(FsHandler, TheEtagChangesWithTheFile) {
    serve(new fd_fs(t->root, true));
    auto c = connect();
    std::string before(c->get("/a.txt")["ETag"]);
    {
        FILE* f = fopen((t->root + "/a.txt").c_str(), "ab");
        ASSERT_TRUE(f);
        fputs("more", f);
        fclose(f);
    }
    // Until the entry is checked again the cached state (and bytes) stand.
    EXPECT_EQ(t->small, c->get("/a.txt").body);
    photon::thread_usleep(1'100'000);  // past open_file_cache::kValidUs
    reply r = c->get("/a.txt", "If-None-Match: " + before + "\r\n");
    EXPECT_EQ(200, r.status);
    EXPECT_EQ(t->small + "more", r.body);
    EXPECT_NE(before, r["ETag"]);
}

TEST_P(FsHandler, KeepsFilesWithAnFdOpenAcrossRequests) {
    serve(new fd_fs(t->root, true));
    auto c = connect();
    fd_fs::opens = fd_fs::stats = 0;
    for (int i = 0; i < 10; i++) {
        reply r = c->get(i % 2 ? "/4k.bin" : "/100k.bin");
        ASSERT_EQ(200, r.status);
        EXPECT_TRUE(r.body == (i % 2 ? t->k4 : t->k100));
    }
    EXPECT_EQ(2, fd_fs::opens);  // one per file
    // Without an fd nothing is kept: an open per request.
    serve(new fd_fs(t->root, false));
    c = connect();
    fd_fs::opens = 0;
    for (int i = 0; i < 4; i++) EXPECT_EQ(200, c->get("/4k.bin").status);
    EXPECT_EQ(4, fd_fs::opens);
}

TEST_P(FsHandler, SeesAFileReplacedOrRemovedAfterTheCacheWindow) {
    serve(new fd_fs(t->root, true));
    auto c = connect();
    ASSERT_EQ(t->small, c->get("/a.txt").body);
    std::string tmp = t->root + "/a.txt.new";
    FILE* f = fopen(tmp.c_str(), "wb");
    ASSERT_TRUE(f);
    fputs("replaced\n", f);
    fclose(f);
    ASSERT_EQ(0, ::rename(tmp.c_str(), (t->root + "/a.txt").c_str()));
    photon::thread_usleep(1'100'000);  // past open_file_cache::kValidUs
    reply r = c->get("/a.txt");
    EXPECT_EQ(200, r.status);
    EXPECT_EQ("replaced\n", r.body);
    ASSERT_EQ(0, ::unlink((t->root + "/a.txt").c_str()));
    photon::thread_usleep(1'100'000);
    EXPECT_EQ(404, c->get("/a.txt").status);
}

TEST_P(FsHandler, MapsPathsAndErrorsToStatuses) {
    for (auto& k : fs_kinds()) {
        if (libaio_unusable(k)) continue;
        bool real_subfs = k.name.rfind("localfs", 0) == 0;
        SCOPED_TRACE(k.name);
        serve(k.make(t->root));
        auto c = connect();
        struct {
            const char* target;
            int status;
            const char* body;  // nullptr: not checked
        } cases[] = {
            {"/", 200, "<h1>root</h1>"},
            {"/index.html", 200, "<h1>root</h1>"},
            {"/dir/", 200, "<h1>dir</h1>"},
            {"/dir/./", 200, "<h1>dir</h1>"},
            {"/noindex/", 403, nullptr},
            {"/missing", 404, nullptr},
            {"/a.txt/x", 404, nullptr},  // ENOTDIR
            {"/a.txt/", 404, nullptr},
            {"/a.txt/.", 404, nullptr},
            {"/a.txt?x=1&y=../../etc", 200, "hello, world\n"},
            {"//a.txt", 200, "hello, world\n"},
            {"/dir/../a.txt", 200, "hello, world\n"},
            {"/dir/%2e%2E/a.txt", 200, "hello, world\n"},
            {"/%61.txt", 200, "hello, world\n"},
            {"/dir%2Findex.html", 200, "<h1>dir</h1>"},
            {"/sp%20ace.txt", 200, "space"},
            {"/link.txt", 200, "hello, world\n"},
            {"/..", 400, nullptr},
            {"/../a.txt", 400, nullptr},
            {"/%2e%2e/a.txt", 400, nullptr},
            {"/dir/../../a.txt", 400, nullptr},
            {"/dir/%2e%2e/%2E%2E/a.txt", 400, nullptr},
            {"/..%2f..%2fa.txt", 400, nullptr},
            {"/a.txt%00.html", 400, nullptr},
            {"/%00", 400, nullptr},
            {"/fifo", 403, nullptr},  // opened without blocking, then refused
            {"/UPPER.HTML", 200, "<p>"},
        };
        for (auto& cs : cases) {
            SCOPED_TRACE(cs.target);
            reply r = c->get(cs.target);
            ASSERT_EQ(cs.status, r.status);
            if (cs.body) {
                EXPECT_EQ(cs.body, r.body);
            }
            EXPECT_EQ(std::to_string(r.body.size()), r["Content-Length"]);
        }
        reply idx = c->get("/");
        EXPECT_EQ("text/html; charset=utf-8", idx["Content-Type"]);
        reply redir = c->get("/dir?q=1");
        EXPECT_EQ(301, redir.status);
        EXPECT_EQ("/dir/?q=1", redir["Location"]);
        redir = c->get("//dir");
        EXPECT_EQ(301, redir.status);
        EXPECT_EQ("/dir/", redir["Location"]);  // never "//dir/": another host
        // Symlinks out of the root: subfs resolves them inside it.
        if (real_subfs) {
            for (const char* esc : {"/escape_rel", "/escape_abs"}) {
                reply r = c->get(esc);
                EXPECT_EQ(404, r.status) << esc;
                EXPECT_EQ(std::string::npos, r.body.find("OUTSIDE")) << esc;
            }
        }
        if (geteuid() != 0) {
            EXPECT_EQ(403, c->get("/secret.txt").status);
        }
        // Every answer kept the connection.
        EXPECT_EQ(200, c->get("/a.txt").status);
    }
}

TEST_P(FsHandler, ServesPathsLongerThanItsStackBuffer) {
    // Three 200-byte directory names: a 620-byte path, past the handler's
    // 512-byte stack buffer, within PATH_MAX.
    std::string rel;
    for (char c : {'x', 'y', 'z'}) {
        rel += "/" + std::string(200, c);
        ASSERT_EQ(0, ::mkdir((t->root + rel).c_str(), 0755)) << errno;
    }
    {
        FILE* f = fopen((t->root + rel + "/deep.txt").c_str(), "wb");
        ASSERT_TRUE(f);
        fputs("deep", f);
        fclose(f);
    }
    serve(new fd_fs(t->root, true));
    auto c = connect();
    for (int i = 0; i < 2; i++) {  // opened, then from the cache
        reply r = c->get(rel + "/deep.txt");
        EXPECT_EQ(200, r.status);
        EXPECT_EQ("deep", r.body);
    }
    // A long target that decodes to a short path, and a long one with an
    // escaped slash.
    std::string dots;
    for (int i = 0; i < 400; i++) dots += "./";
    reply r = c->get("/" + dots + "a.txt");
    EXPECT_EQ(200, r.status);
    EXPECT_EQ("hello, world\n", r.body);
    std::string y(200, 'y');
    r = c->get("/" + std::string(200, 'x') + "%2F" + y + "/" + std::string(200, 'z') + "/");
    EXPECT_EQ(403, r.status);  // the deep directory itself, which has no index
}

TEST_P(FsHandler, TakesThePathAfterThePatternAndIgnoresTheQuery) {
    serve(new fd_fs(t->root, true));
    server->pattern = "/static/";  // as if added with it
    auto c = connect();
    reply r = c->get("/static/a.txt?download=1");
    EXPECT_EQ(200, r.status);
    EXPECT_EQ(t->small, r.body);
    server->pattern = "/static";  // "/a.txt" remains: the same file
    r = c->get("/static/a.txt");
    EXPECT_EQ(200, r.status);
    EXPECT_EQ(t->small, r.body);
    // The handler's third argument is its pattern (as Photon's): "/static/"
    // on "/static/a.txt" leaves "a.txt", relative to the root all the same.
    Request req;
    Response resp;
    std::string out;
    class sink : public IStream {
    public:
        explicit sink(std::string* s) : s_(s) {}
        int close() override { return 0; }
        ssize_t read(void*, size_t) override { return 0; }
        ssize_t readv(const iovec*, int) override { return 0; }
        ssize_t write(const void* b, size_t n) override { return s_->append((const char*)b, n), n; }
        ssize_t writev(const iovec* v, int n) override {
            ssize_t t = 0;
            for (int i = 0; i < n; i++) t += write(v[i].iov_base, v[i].iov_len);
            return t;
        }

    private:
        std::string* s_;
    } s(&out);
    InputBuffer in(&s);
    resp.reset(&in, &s);
    req.verb(Verb::GET);
    ASSERT_EQ(0, req.target("/static/a.txt"));
    ASSERT_EQ(0, handler->handle_request(req, resp, "/static/"));
    EXPECT_EQ(0, resp.send());
    EXPECT_EQ(0u, out.find("HTTP/1.1 200 OK\r\n"));
    EXPECT_NE(std::string::npos, out.find("\r\n\r\nhello, world\n"));
}

// io_uring fails reads of O_NONBLOCK files with EAGAIN on a page cache miss
// (the handler opens with O_NONBLOCK so that a FIFO cannot block it).
TEST_P(FsHandler, ReadsFilesThatAreNotInThePageCache) {
    for (auto& k : fs_kinds()) {
        if (libaio_unusable(k)) continue;
        SCOPED_TRACE(k.name);
        int fd = ::open((t->root + "/big.bin").c_str(), O_RDONLY);
        ASSERT_GE(fd, 0);
        EXPECT_EQ(0, ::fdatasync(fd));
        EXPECT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
        ::close(fd);
        serve(k.make(t->root));
        auto c = connect();
        reply r = c->get("/big.bin", "Range: bytes=10-300000\r\n");
        ASSERT_EQ(206, r.status);
        EXPECT_TRUE(r.body == t->big.substr(10, 299991));
    }
    serve(new fd_fs(t->root, false, true));  // the handler opens the file again without
    auto c = connect();
    reply r = c->get("/100k.bin");
    ASSERT_EQ(200, r.status);
    EXPECT_TRUE(r.body == t->k100);
}

TEST_P(FsHandler, RefusesOtherMethodsWith405) {
    serve(new fd_fs(t->root, true));
    auto c = connect();
    for (const char* m : {"POST", "PUT", "DELETE", "OPTIONS"}) {
        SCOPED_TRACE(m);
        std::string raw =
            std::string(m) + " /a.txt HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc";
        ASSERT_TRUE(c->send_raw(raw));
        reply r;
        ASSERT_TRUE(c->receive(&r));
        EXPECT_EQ(405, r.status);
        EXPECT_EQ("GET, HEAD", r["Allow"]);
    }
    EXPECT_EQ(200, c->get("/a.txt").status);
}

TEST_P(FsHandler, ServesPipelinedRequestsInOrder) {
    serve(new fd_fs(t->root, true));
    auto c = connect();
    std::string raw;
    const char* paths[] = {"/a.txt", "/big.bin", "/missing", "/4k.bin", "/100k.bin"};
    for (const char* p : paths) raw += std::string("GET ") + p + " HTTP/1.1\r\nHost: t\r\n\r\n";
    ASSERT_TRUE(c->send_raw(raw));
    int want[] = {200, 200, 404, 200, 200};
    for (int i = 0; i < 5; i++) {
        reply r;
        ASSERT_TRUE(c->receive(&r)) << paths[i];
        EXPECT_EQ(want[i], r.status) << paths[i];
    }
}

TEST_P(FsHandler, ManyClientsAtOnce) {
    for (auto& k : fs_kinds(false)) {
        SCOPED_TRACE(k.name);
        serve(k.make(t->root));
        int ok = 0;
        std::vector<join_handle*> hs;
        for (int i = 0; i < 16; i++) {
            auto th = thread_create11([&, i] {
                auto c = connect();
                for (int j = 0; j < 4; j++) {
                    reply r = c->get(i % 2 ? "/100k.bin" : "/big.bin");
                    ok += r.status == 200 && r.body == (i % 2 ? t->k100 : t->big);
                }
            });
            hs.push_back(thread_enable_join(th));
        }
        for (auto h : hs) thread_join(h);
        EXPECT_EQ(64, ok);
    }
}

TEST_P(FsHandler, CopiesThroughTlsInsteadOfSendfile) {
    tls_pair pair;
    PHOTON_TEST_MAKE_TLS_PAIR(pair);
    serve(new fd_fs(t->root, true),
          new_tls_server(pair.server.get(), new_tcp_socket_server(), true));
    client c(new_tls_client(pair.client.get(), new_tcp_socket_client(), true), server->ep());
    ASSERT_TRUE(c.connected());
    server->counts = {};
    reply r = c.get("/big.bin");
    ASSERT_EQ(200, r.status);
    EXPECT_TRUE(r.body == t->big);
    EXPECT_EQ(0, server->counts.sendfiles);
    r = c.get("/100k.bin", "Range: bytes=5-70000\r\n");
    ASSERT_EQ(206, r.status);
    EXPECT_TRUE(r.body == t->k100.substr(5, 69996));
}

PHOTON_INSTANTIATE_ENGINE_TESTS(FsHandler);
