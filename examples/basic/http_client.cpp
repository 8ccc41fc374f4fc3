// http-client: downloads a URL twice, with photon's HTTP client and with
// libcurl driven by photon's event engine, and compares the two.
//
//   http-client [-v] [--h2c] URL     (e.g. https://example.com/)
//
// photon's client speaks HTTP/2 to an https URL whose server picks h2 in
// ALPN, else HTTP/1.1; --h2c makes it try h2c (prior knowledge) on an http
// URL as well. -v prints the protocol each client used.
//
// Both park only the calling coroutine while they wait; a program can run
// many such downloads at once, one coroutine each.
#include <cstdio>
#include <cstring>
#include <string>

#include <photon/common/alog.h>
#include <photon/net/curl.h>
#include <photon/net/http/client.h>
#include <photon/photon.h>

using namespace photon::net;

static bool verbose = false;

// photon's client: a pooled keep-alive connection (an HTTP/2 one where the
// server speaks it); -1 with errno on failure.
static int fetch_with_client(const char* url, bool h2c, std::string* body) {
    auto client = http::new_http_client();
    if (h2c) client->http_version(http::HttpVersion::Http2);
    auto op = client->new_operation(http::Verb::GET, url);
    int r = op->call();
    if (r == 0) {
        printf("client: HTTP %d, Content-Length %llu\n", op->status_code,
               (unsigned long long)op->resp.headers.content_length());
        if (verbose)
            printf("client: protocol %s\n",
                   op->http_version() == http::HttpVersion::Http2
                       ? (strncmp(url, "https:", 6) == 0 ? "HTTP/2 (h2)" : "HTTP/2 (h2c)")
                       : "HTTP/1.1");
        char buf[16384];
        for (ssize_t n; (n = op->resp.read(buf, sizeof(buf))) > 0;) body->append(buf, n);
    } else {
        perror("client: request failed");
    }
    op->destroy();
    delete client;
    return r;
}

// libcurl: photon::init(..., INIT_IO_LIBCURL) prepared this vCPU for it.
static int fetch_with_curl(const char* url, std::string* body) {
    cURL curl;
    StringWriter writer;
    long code = curl.GET(url, &writer, 10 * 1000 * 1000);  // 10 s (curl's own protocol choice)
    if (curl.error_code() != CURLE_OK) {
        fprintf(stderr, "curl: %s\n", curl.error_message());
        return -1;
    }
    printf("curl:   HTTP %ld, %zu bytes\n", code, writer.string.size());
    *body = std::move(writer.string);
    return 0;
}

int main(int argc, char** argv) {
    bool h2c = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-v") == 0)
            verbose = true;
        else if (strcmp(argv[i], "--h2c") == 0)
            h2c = true;
        else
            break;
    }
    if (i != argc - 1) {
        fprintf(stderr, "usage: %s [-v] [--h2c] URL\n", argv[0]);
        return 2;
    }
    const char* url = argv[i];
    set_log_output_level(ALOG_WARN);  // photon logs INFO lines by default
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_LIBCURL) != 0) return 1;
    std::string a, b;
    int r = fetch_with_client(url, h2c, &a) | fetch_with_curl(url, &b);
    bool same = r == 0 && a == b;
    printf("%zu bytes, %s\n", a.size(), same ? "the same from both" : "DIFFERENT");
    photon::fini();
    return same ? 0 : 1;
}
