// http-client: downloads a URL twice, with photon's HTTP client and with
// libcurl driven by photon's event engine, and compares the two.
//
//   http-client URL       (e.g. http://127.0.0.1:8080/hello)
//
// Both park only the calling coroutine while they wait; a program can run
// many such downloads at once, one coroutine each.
#include <cstdio>
#include <string>

#include <photon/common/alog.h>
#include <photon/net/curl.h>
#include <photon/net/http/client.h>
#include <photon/photon.h>

using namespace photon::net;

// photon's client: a pooled keep-alive connection; -1 with errno on failure.
static int fetch_with_client(const char* url, std::string* body) {
    auto client = http::new_http_client();
    auto op = client->new_operation(http::Verb::GET, url);
    int r = op->call();
    if (r == 0) {
        printf("client: HTTP %d, Content-Length %llu\n", op->status_code,
               (unsigned long long)op->resp.headers.content_length());
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
    long code = curl.GET(url, &writer, 10 * 1000 * 1000);  // 10 s
    if (curl.error_code() != CURLE_OK) {
        fprintf(stderr, "curl: %s\n", curl.error_message());
        return -1;
    }
    printf("curl:   HTTP %ld, %zu bytes\n", code, writer.string.size());
    *body = std::move(writer.string);
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL\n", argv[0]);
        return 2;
    }
    set_log_output_level(ALOG_WARN);  // photon logs INFO lines by default
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_LIBCURL) != 0) return 1;
    std::string a, b;
    int r = fetch_with_client(argv[1], &a) | fetch_with_curl(argv[1], &b);
    bool same = r == 0 && a == b;
    printf("%zu bytes, %s\n", a.size(), same ? "the same from both" : "DIFFERENT");
    photon::fini();
    return same ? 0 : 1;
}
