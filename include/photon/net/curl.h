// libcurl on photon: cURL, an easy handle whose transfers park the calling
// coroutine (never the vCPU) while the vCPU's curl multi handle, driven by
// its event engine, moves the data. Many coroutines of a vCPU may run
// transfers at once, each with its own cURL.
//
// libcurl_init() prepares the calling vCPU (photon::init does it for
// INIT_IO_LIBCURL, part of INIT_IO_DEFAULT, when it installs an event
// engine); photon::fini() undoes it. A cURL may be used on any vCPU so
// prepared, by one coroutine at a time. Without libcurl in the build
// (PHOTON_HAVE_CURL unset) libcurl_init() fails with ENOSYS and every
// transfer with CURLE_NOT_BUILT_IN.
//
// Writers, readers and header containers are called from the vCPU's curl
// driver coroutine, not from the coroutine running the transfer. They may
// block (e.g. write to a photon socket), but meanwhile no transfer of the
// vCPU makes progress. They must not start transfers themselves.
//
// Differences from PhotonLibOS: doc/compat.md#netcurlh
#pragma once

#if !__has_include(<curl/curl.h>)
#error "<photon/net/curl.h> needs libcurl's headers (Debian: libcurl4-openssl-dev)"
#endif
#include <curl/curl.h>

#ifdef DELETE  // a macro of some platforms' headers; cURL has a DELETE method
#undef DELETE
#endif

#include <cassert>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include <photon/common/alog-functionptr.h>
#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/common/estring.h>
#include <photon/common/iovector.h>
#include <photon/net/http/url.h>

namespace photon {
namespace net {

// Prepares this vCPU for transfers: one curl multi handle, capped at
// `maxconn` connections (0: no cap), HTTP/2 multiplexing if `pipelining` is
// CURLPIPE_MULTIPLEX. The first call in the process runs
// curl_global_init(flags). Idempotent per vCPU (later calls keep the first
// settings). 0, or -1 with errno: ENOSYS if not a vCPU with an event engine,
// or built without libcurl; EIO if curl fails. Does not yield.
int libcurl_init(long flags = CURL_GLOBAL_ALL, long pipelining = 0, long maxconn = 32);

// Ends this vCPU's curl state: transfers in progress end at once with
// CURLE_ABORTED_BY_CALLBACK and errno ESHUTDOWN, later ones fail with
// CURLE_FAILED_INIT / ENOSYS until libcurl_init() again. No-op if not
// initialized. Waits only for a curl callback that is running; not from
// inside one.
void libcurl_fini();

// Set CURLMOPT_PIPELINING / CURLMOPT_MAX_TOTAL_CONNECTIONS of this vCPU's
// multi handle. 0, or -1 with errno (ENOSYS: not initialized, EINVAL: curl
// refused the value).
int libcurl_set_pipelining(long val);
int libcurl_set_maxconnects(long val);

// Runs the transfer set up on `curl` on this vCPU's multi handle, parking
// the caller until it ends or `timeout` us pass. Returns the transfer's
// CURLcode; on failure errno is set: ETIMEDOUT (CURLE_OPERATION_TIMEDOUT),
// the interrupter's errno for a thread_interrupt()ed caller or ESHUTDOWN
// for libcurl_fini() (both CURLE_ABORTED_BY_CALLBACK), ENOSYS
// (CURLE_FAILED_INIT: libcurl_init() missing), the socket's errno (e.g.
// ECONNREFUSED) or EIO for other curl errors. The handle is out of the
// multi handle on return, whatever the outcome.
int curl_perform(CURL* curl, uint64_t timeout);

// Percent-encoding of URL components (every byte but ALPHA DIGIT - . _ ~).
inline std::string url_escape(const char* s) { return http::url_escape(s ? s : ""); }
inline std::string url_unescape(const char* s) { return http::url_unescape(s ? s : ""); }

inline void convert(const std::string& v, uint64_t& value) {
    value = std::strtoull(v.c_str(), nullptr, 10);
}
inline void convert(const std::string& v, ssize_t& value) { value = std::atoll(v.c_str()); }
inline void convert(const std::string& v, std::string& value) { value = v; }
inline void convert(const std::string& v, char* value, size_t size) {
    if (size == 0) return;
    strncpy(value, v.data(), size - 1);
    value[size - 1] = 0;
}
template <size_t N>
inline void convert(const std::string& v, char (&value)[N]) {
    convert(v, value, N);
}

// A header container (set_header_container): response header fields by
// lower-case name; a repeated field keeps its last value, also across the
// responses of followed redirects.
class HeaderMap : public std::unordered_map<std::string, std::string> {
public:
    size_t write(const void* ptr, size_t n) {
        std::string_view line((const char*)ptr, n);
        auto colon = line.find(':');
        if (colon != line.npos)
            (*this)[lower(trim(line.substr(0, colon)))] = trim(line.substr(colon + 1));
        return n;
    }
    bool exists(std::initializer_list<const char*> keys) const {
        for (auto k : keys)
            if (count(lower(k)) == 0) return false;
        return true;
    }
    // 0 with the value converted into `value`, -1 if absent.
    template <typename T>
    int try_get(const char* key, T& value) const {
        auto it = find(lower(key));
        if (it == end()) return -1;
        convert(it->second, value);
        return 0;
    }

protected:
    // Photon's helper: s in lower case (ASCII), moved back out.
    std::string&& str_lower(std::string&& s) {
        for (auto& c : s) c = (char)std::tolower((unsigned char)c);
        return std::move(s);
    }
    static std::string lower(std::string_view s) {
        std::string r(s);
        for (auto& c : r) c = (char)std::tolower((unsigned char)c);
        return r;
    }
    static std::string trim(std::string_view s) {
        while (!s.empty() && std::isspace((unsigned char)s.front())) s.remove_prefix(1);
        while (!s.empty() && std::isspace((unsigned char)s.back())) s.remove_suffix(1);
        return std::string(s);
    }
};

// Writers: any type with size_t write(const void*, size_t) (returning less
// than asked fails the transfer with CURLE_WRITE_ERROR), e.g. IStream.
class BufWriter {
public:
    BufWriter(void* buf, size_t capacity) : m_capacity(capacity), m_buf(buf) {}
    // Keeps what fits; a short count then fails the transfer.
    size_t write(const void* ptr, size_t n) {
        auto room = m_capacity - m_size;
        if (room < n) n = room;
        memcpy((char*)m_buf + m_size, ptr, n);
        m_size += n;
        return n;
    }
    size_t size() const { return m_size; }
    size_t capacity() const { return m_capacity; }
    void add_null_terminator() {
        if (m_capacity == 0) return;
        auto i = m_size < m_capacity ? m_size : m_capacity - 1;
        static_cast<char*>(m_buf)[i] = '\0';
    }
    // What was written, for logging.
    std::string_view alog_string() const { return {(const char*)m_buf, m_size}; }

protected:
    size_t m_size = 0, m_capacity;
    void* m_buf;
};

template <size_t N>
class BufferWriter : public BufWriter {
public:
    char buffer[N];
    BufferWriter() : BufWriter(buffer, N) {}
    BufferWriter(const BufferWriter&) = delete;
    BufferWriter& operator=(const BufferWriter&) = delete;
};

class StringWriter {
public:
    std::string string;
    size_t write(const void* buf, size_t size) {
        string.append((const char*)buf, size);
        return size;
    }
    std::string_view alog_string() const { return string; }
};

// Writes into the buffers of an IOVector, consuming them from the front;
// bytes beyond its room are counted in `drop` and discarded (the transfer
// goes on). `written` counts what was stored.
struct IOVWriter : public IOVector {
    using IOVector::IOVector;
    size_t drop = 0;
    size_t written = 0;
    size_t write(const void* buf, size_t size) {
        size_t n = memcpy_from(buf, size);
        written += n;
        extract_front(n);
        drop += size - n;
        return size;
    }
};

// Readers: any type with size_t read(void*, size_t) returning 0 at the end
// (a negative ssize_t aborts the transfer), e.g. IStream. A reader with
// size() (bytes left) gives the request a Content-Length; without, an
// HTTP/1.1 upload is chunked.
class BufReader {
public:
    BufReader(const void* buf, size_t size)
        : m_size(size), m_capacity(size), m_buf((const char*)buf + size) {}
    size_t read(void* ptr, size_t n) {
        if (n > m_size) n = m_size;
        memcpy(ptr, (const char*)m_buf - m_size, n);
        m_size -= n;
        return n;
    }
    size_t size() const { return m_size; }
    size_t capacity() const { return m_capacity; }

protected:
    size_t m_size, m_capacity;
    const void* m_buf;  // the end of the data
};

template <size_t N>
class BufferReader : public BufReader {
public:
    char buffer[N];
    BufferReader() : BufReader(buffer, N) {}
    BufferReader(const BufferReader&) = delete;
    BufferReader& operator=(const BufferReader&) = delete;
};

// Discards what is written; reads as an empty body.
struct DummyReaderWriter {
    size_t read(void*, size_t) { return 0; }
    size_t write(const void*, size_t n) { return n; }
};

// A URL assembled with printf-style appends into a fixed buffer;
// overflow() tells whether it was cut.
class URL_Buf {
public:
    uint32_t size() const { return m_size; }
    uint32_t capacity() const { return m_capacity; }
    bool overflow() const { return m_size > m_capacity - 1; }
    operator const char*() const { return m_url; }
    template <typename... Ts>
    void snp_append(const char* fmt, const Ts&... xs) {
        if (overflow()) return;
        int n = snprintf(m_url + m_size, m_capacity - m_size, fmt, xs...);
        if (n > 0) m_size += (uint32_t)n;
    }

protected:
    URL_Buf(char* buf, uint32_t capacity) : m_url(buf), m_capacity(capacity) { buf[0] = '\0'; }
    URL_Buf(const URL_Buf&) = delete;
    URL_Buf& operator=(const URL_Buf&) = delete;
    char* m_url;
    uint32_t m_size = 0, m_capacity;
};

template <size_t N>
class URLBuffer : public URL_Buf {
    static_assert(N > 0, "URLBuffer needs room for the terminating NUL");

public:
    URLBuffer() : URL_Buf(m_buf, N) {}

protected:
    char m_buf[N];
};

// An easy handle with PhotonLibOS's cURL interface. Setters return *this
// and remember the first curl_easy_setopt failure, which fails the next
// transfer (-1, errno EINVAL) without running it. Transfer calls (GET, HEAD,
// POST, PUT, DELETE) park the caller; they return the HTTP response code,
// or -1 with errno as curl_perform() (error_code() and error_message() tell
// more). timeout is in us (-1: none). A writer / reader passed to a
// transfer call is used for that transfer only; the header container stays
// until replaced, so it must outlive the transfers.
class cURL {
public:
    // flags: CURL_GLOBAL_ALL, CURL_GLOBAL_SSL, CURL_GLOBAL_DEFAULT, ...
    static int init(long flags = CURL_GLOBAL_ALL, long pipelining = 0, long maxconn = 32) {
        return net::libcurl_init(flags, pipelining, maxconn);
    }
    static int fini() {
        net::libcurl_fini();
        return 0;
    }

    cURL();
    ~cURL();
    cURL(const cURL&) = delete;
    cURL& operator=(const cURL&) = delete;

    void reset_error() { ret = opt_error_ = CURLE_OK; }
    // curl_easy_reset(): every option back to photon's defaults (headers
    // appended with append_header() stay).
    cURL& reset();

    // Integer options (long; curl_off_t for CURLOPT_*_LARGE).
    template <typename T, typename std::enable_if<
                              std::is_integral<T>::value || std::is_enum<T>::value, int>::type = 0>
    cURL& setopt(CURLoption option, T arg) {
        return setopt_integer(option, (curl_off_t)arg);
    }
    cURL& setopt(CURLoption option, void* arg) { return setopt_pointer(option, arg); }
    cURL& setopt(CURLoption option, const char* arg) { return setopt_pointer(option, arg); }
    cURL& setopt(CURLoption option, std::nullptr_t) { return setopt_pointer(option, nullptr); }
    template <typename Ret, typename... Args>
    cURL& setopt(CURLoption option, Ret (*arg)(Args...)) {
        return setopt_function(option, reinterpret_cast<void (*)()>(arg));
    }

    cURL& set_user_passwd(const char* user, const char* passwd) {
        return setopt(CURLOPT_USERNAME, user).setopt(CURLOPT_PASSWORD, passwd);
    }
    // The next transfer asks for no body (as HEAD does).
    cURL& set_nobody() { return setopt(CURLOPT_NOBODY, 1L); }
    // Bytes start..end inclusive.
    cURL& set_range(uint64_t start, uint64_t end) {
        char range[64];
        snprintf(range, sizeof(range), "%llu-%llu", (unsigned long long)start,
                 (unsigned long long)end);
        return setopt(CURLOPT_RANGE, range);  // curl copies it
    }
    // CA bundle to verify peers with; nullptr turns peer verification off.
    cURL& set_cafile(const char* cafile) {
        return setopt(CURLOPT_CAINFO, cafile).setopt(CURLOPT_SSL_VERIFYPEER, cafile ? 1L : 0L);
    }
    // Follow up to max_redir redirects (0: none).
    cURL& set_redirect(uint32_t max_redir) {
        return setopt(CURLOPT_FOLLOWLOCATION, max_redir ? 1L : 0L)
            .setopt(CURLOPT_MAXREDIRS, (long)max_redir);
    }
    cURL& set_proxy(const char* proxy) { return setopt(CURLOPT_PROXY, proxy); }
    cURL& set_noproxy(const char* hosts) { return setopt(CURLOPT_NOPROXY, hosts); }
    // Connects to this unix-domain socket instead of the URL's host.
    cURL& set_unix_socket(const char* path) { return setopt(CURLOPT_UNIX_SOCKET_PATH, path); }
    cURL& set_user_agent(const char* agent) { return setopt(CURLOPT_USERAGENT, agent); }
    // Response header lines go to stream->write(ptr, n) (e.g. a HeaderMap),
    // one line per call, from now on.
    template <typename T>
    cURL& set_header_container(T* stream) {
        return setopt(CURLOPT_HEADERDATA, (void*)stream).setopt(CURLOPT_HEADERFUNCTION, &writer<T>);
    }
    // Logs curl's verbose trace (text and headers) with LOG_INFO.
    cURL& set_verbose(bool on = true);

    // curl_easy_getinfo(); T{} if curl has no such value.
    template <typename T>
    T getinfo(CURLINFO info) {
        T value{};
        if (getinfo_raw(info, &value) != CURLE_OK) value = T{};
        return value;
    }
    // The last transfer's HTTP status, or -1 with its errno if it failed.
    long get_response_code() {
        if (ret == CURLE_OK) return getinfo<long>(CURLINFO_RESPONSE_CODE);
        errno = errno_ ? errno_ : EIO;
        return -1;
    }
    // The last transfer's CURLcode (or the setopt failure that stopped it).
    CURLcode error_code() const { return ret; }
    const char* error_message() const { return m_errmsg; }

    // GET; the body goes to stream->write(ptr, n).
    template <typename T>
    long GET(const char* url, T* stream, uint64_t timeout = -1) {
        prepare(url, verb::get);
        set_write_stream(stream);
        return perform(timeout);
    }
    // GET, discarding the body.
    long GET(const char* url, uint64_t timeout = -1) {
        return GET(url, (DummyReaderWriter*)nullptr, timeout);
    }
    // HEAD; a stream gets nothing (there is no body), as upstream allows one.
    template <typename T>
    long HEAD(const char* url, T* stream, uint64_t timeout = -1) {
        prepare(url, verb::head);
        set_write_stream(stream);
        return perform(timeout);
    }
    long HEAD(const char* url, uint64_t timeout = -1) {
        return HEAD(url, (DummyReaderWriter*)nullptr, timeout);
    }
    // POST with the body set up earlier (CURLOPT_POSTFIELDS), else empty.
    template <typename W>
    long POST(const char* url, W* wstream, uint64_t timeout = -1) {
        return POST(url, (DummyReaderWriter*)nullptr, wstream, timeout);
    }
    // POST of the NUL-terminated post_fields.
    template <typename W>
    long POST(const char* url, const char* post_fields, W* wstream, uint64_t timeout = -1) {
        setopt(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)-1);
        setopt(CURLOPT_POSTFIELDS, post_fields);
        postfields_set_ = true;
        return POST(url, wstream, timeout);
    }
    // POST of what rstream reads (nullptr: as POST(url, wstream)).
    template <typename R, typename W>
    long POST(const char* url, R* rstream, W* wstream, uint64_t timeout = -1) {
        prepare(url, verb::post);
        if (rstream) {
            setopt(CURLOPT_POSTFIELDS, (const char*)nullptr);
            setopt(CURLOPT_POSTFIELDSIZE_LARGE, upload_size(rstream));
        }
        set_read_stream(rstream);
        set_write_stream(wstream);
        return perform(timeout);
    }
    // PUT of what rstream reads (nullptr: an empty body).
    template <typename R = DummyReaderWriter, typename W = DummyReaderWriter>
    long PUT(const char* url, R* rstream = (DummyReaderWriter*)nullptr,
             W* wstream = (DummyReaderWriter*)nullptr, uint64_t timeout = -1) {
        prepare(url, verb::put);
        setopt(CURLOPT_INFILESIZE_LARGE, rstream ? upload_size(rstream) : (curl_off_t)0);
        set_read_stream(rstream);
        set_write_stream(wstream);
        return perform(timeout);
    }
    long DELETE(const char* url, uint64_t timeout = -1) {
        return DELETE(url, (DummyReaderWriter*)nullptr, timeout);
    }
    template <typename W>
    long DELETE(const char* url, W* wstream, uint64_t timeout = -1) {
        prepare(url, verb::del);
        set_write_stream(wstream);
        return perform(timeout);
    }

    // Request headers ("key: val") for every later transfer.
    cURL& append_header(const std::string& key, const std::string& val) {
        headers.append(key + ": " + val);
        return *this;
    }
    cURL& clear_header() {
        headers.clear();
        return *this;
    }
    // Headers for the proxy only (CONNECT requests).
    cURL& append_proxy_header(const std::string& key, const std::string& val) {
        proxy_headers.append(key + ": " + val);
        return *this;
    }
    cURL& clear_proxy_header() {
        proxy_headers.clear();
        return *this;
    }

    // A curl_slist, freed by the destructor.
    struct slist {
        struct curl_slist* list = nullptr;
        slist() = default;
        template <typename... Ts>
        explicit slist(const Ts&... xs) {
            append(xs...);
        }
        slist(const slist&) = delete;
        slist& operator=(const slist&) = delete;
        ~slist() { clear(); }

        template <typename T, typename... Ts>
        void append(const T& x, const Ts&... xs) {
            append(x);
            append(xs...);
        }
        void append(const char* h);
        void append(const std::string& h) { append(h.c_str()); }
        void clear();
    };

protected:
    enum class verb { get, head, post, put, del };

    CURL* m_curl = nullptr;
    char m_errmsg[CURL_ERROR_SIZE];
    CURLcode ret = CURLE_OK;         // the last transfer's result
    CURLcode opt_error_ = CURLE_OK;  // the first setopt failure since then
    int errno_ = 0;                  // errno of the last failed transfer
    bool postfields_set_ = false;    // POST(url, post_fields, ...) set CURLOPT_POSTFIELDS
    bool custom_verb_ = false;       // CURLOPT_CUSTOMREQUEST set by DELETE
    slist headers, proxy_headers;

    // Photon's protected setter, for subclasses: as setopt().
    template <typename T>
    cURL& _setopt(CURLoption option, T arg) {
        return setopt(option, arg);
    }
    cURL& setopt_integer(CURLoption option, curl_off_t arg);
    cURL& setopt_pointer(CURLoption option, const void* arg);
    cURL& setopt_function(CURLoption option, void (*arg)());
    CURLcode getinfo_raw(CURLINFO info, void* out);
    void set_defaults();
    // Method, URL and header lists for the next transfer.
    void prepare(const char* url, verb v);
    // Runs the transfer, then drops the per-transfer writer and reader.
    long perform(uint64_t timeout);

    template <typename T>
    static size_t writer(char* buf, size_t size, size_t num, void* obj) {
        auto n = static_cast<T*>(obj)->write(buf, size * num);
        // (int64_t): n < 0 is false for an unsigned n, without a warning.
        if (std::is_signed<decltype(n)>::value && (int64_t)n < 0) return 0;  // a write error
        return (size_t)n;
    }
    template <typename W>
    void set_write_stream(W* stream) {
        if (!stream) return;
        setopt(CURLOPT_WRITEFUNCTION, &writer<W>);
        setopt(CURLOPT_WRITEDATA, (void*)stream);
    }
    template <typename T>
    static size_t reader(char* buf, size_t size, size_t num, void* obj) {
        auto n = static_cast<T*>(obj)->read(buf, size * num);
        if (std::is_signed<decltype(n)>::value && (int64_t)n < 0) return CURL_READFUNC_ABORT;
        return (size_t)n;
    }
    template <typename R>
    void set_read_stream(R* stream) {
        if (!stream) return;
        setopt(CURLOPT_READFUNCTION, &reader<R>);
        setopt(CURLOPT_READDATA, (void*)stream);
    }
    template <typename R, typename = void>
    struct has_size : std::false_type {};
    template <typename R>
    struct has_size<R, decltype((void)std::declval<R&>().size())> : std::true_type {};
    template <typename R>
    static curl_off_t upload_size(R* r) {
        return upload_size(r, has_size<R>());
    }
    template <typename R>
    static curl_off_t upload_size(R* r, std::true_type /* has size() */) {
        return (curl_off_t)r->size();
    }
    template <typename R>
    static curl_off_t upload_size(R*, std::false_type) {
        return -1;  // unknown: chunked
    }
};

}  // namespace net
}  // namespace photon
