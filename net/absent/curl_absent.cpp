// Built instead of net/curl.cpp without libcurl (PHOTON_ENABLE_CURL=OFF or
// libcurl4-openssl-dev missing): libcurl_init() fails with ENOSYS, cURL
// objects exist but every transfer fails with CURLE_NOT_BUILT_IN / ENOSYS.
// Nothing here calls libcurl, so programs link without it.
#include <cerrno>
#include <cstdint>
#include <cstdio>

#if __has_include(<curl/curl.h>)
#include <photon/net/curl.h>
#define PHOTON_CURL_HEADERS 1
#endif

namespace photon {
namespace net {

int libcurl_init(long, long, long) { return errno = ENOSYS, -1; }
void libcurl_fini() {}
int libcurl_set_pipelining(long) { return errno = ENOSYS, -1; }
int libcurl_set_maxconnects(long) { return errno = ENOSYS, -1; }

#if PHOTON_CURL_HEADERS
int curl_perform(CURL*, uint64_t) { return errno = ENOSYS, CURLE_NOT_BUILT_IN; }

cURL::cURL() {
    ret = opt_error_ = CURLE_NOT_BUILT_IN;
    snprintf(m_errmsg, sizeof(m_errmsg), "photon was built without libcurl");
}
cURL::~cURL() {}
void cURL::set_defaults() {}
cURL& cURL::reset() { return *this; }
cURL& cURL::setopt_integer(CURLoption, curl_off_t) { return *this; }
cURL& cURL::setopt_pointer(CURLoption, const void*) { return *this; }
cURL& cURL::setopt_function(CURLoption, void (*)()) { return *this; }
cURL& cURL::set_verbose(bool) { return *this; }
CURLcode cURL::getinfo_raw(CURLINFO, void*) { return CURLE_NOT_BUILT_IN; }
void cURL::prepare(const char*, verb) {}
long cURL::perform(uint64_t) {
    ret = CURLE_NOT_BUILT_IN;
    errno_ = errno = ENOSYS;
    return -1;
}
void cURL::slist::append(const char*) {}
void cURL::slist::clear() { list = nullptr; }
#else
// libcurl's CURL is `void` outside libcurl itself.
int curl_perform(void*, uint64_t) { return errno = ENOSYS, 4 /* CURLE_NOT_BUILT_IN */; }
#endif

}  // namespace net
}  // namespace photon
