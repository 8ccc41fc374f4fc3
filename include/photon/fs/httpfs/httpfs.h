// httpfs: read-only files over HTTP(S), as PhotonLibOS declares them, on
// photon's HTTP client (net/http/client.h).
//
// A file is a URL. fstat() asks with HEAD (size from Content-Length, mtime
// from Last-Modified; GET of one byte if HEAD is refused) and keeps the
// answer for `stat_expire` us; reads are GETs with a Range, whose
// Content-Range must be exactly the one asked for. A server that ignores
// Range (200 with the whole body) still works: the bytes before the offset
// are read and dropped, and the connection is kept for the next sequential
// read. Failed connections, 5xx answers and bodies cut short are retried,
// from where they stopped, with growing pauses (10 ms doubling to 1 s), until
// `conn_timeout` us after the call began (-1: forever). The first answer
// fixes the file's identity (ETag, Last-Modified, size); later requests carry
// If-Match / If-Unmodified-Since, and an answer of another identity makes
// this and every later call fail with EIO: the file changed under us, and
// mixing its versions would be wrong. Open it again to see the new one.
//
// An httpfs opens "/host/path?query", "host/path", "http://host/path" or
// "https://host/path" (a missing scheme is http://, or https:// with
// default_https). open() sends nothing; a missing file shows at the first
// fstat() or read. ioctl(HTTP_HEADER, name, value) adds a request header,
// ioctl(HTTP_URL_PARAM, "a=b&c=d") sets the query.
//
// Calls block the calling coroutine. Use an httpfs and its files on the
// vCPU of their first call (the client's pool lives there); delete the files
// before their httpfs. Errors: ENOENT (404/410 and other 4xx), EACCES
// (401/403), EIO (changed, a malformed answer, a size we cannot learn, 5xx
// after the retries), ETIMEDOUT (conn_timeout passed), EROFS (open for
// writing; writes are ENOSYS), EINVAL (a bad URL or argument).
//
// Differences from PhotonLibOS: doc/compat.md#fshttpfshttpfsh
// Both forms run the same code: _v2 takes a client, v1 an open callback.
// Floor: bridge (tools/floors.txt), above its folder's: it joins net and fs.
#pragma once

#include <sys/ioctl.h>

#include <cinttypes>
#include <string>
#include <utility>

#include <photon/common/callback.h>
#include <photon/fs/filesystem.h>

namespace photon {
namespace net {
namespace http {
class Client;
}
}  // namespace net

namespace fs {

enum HTTPFileFlags {
    HTTP_HEADER = 0xF01,     // ioctl(HTTP_HEADER, const char* name, const char* value)
    HTTP_URL_PARAM = 0xF02,  // ioctl(HTTP_URL_PARAM, const char* query): after '?'
};

// Called with (url, file) as open() makes a file, before it is returned:
// the place to add headers (credentials) before any request.
using FileOpenCallback = Delegate<void, const char*, IFile*>;

// An httpfs with a client of its own; nullptr with errno on failure.
IFileSystem* new_httpfs(bool default_https = false, uint64_t conn_timeout = -1ULL,
                        uint64_t stat_expire = -1ULL, FileOpenCallback open_cb = {});

// The file at `url`, using httpfs's client (nullptr: a client of its own);
// open_cb is called before it returns. nullptr with errno EINVAL (a null or
// bad URL, or an httpfs that is not one).
IFile* new_httpfile(const char* url, IFileSystem* httpfs = nullptr, uint64_t conn_timeout = -1ULL,
                    uint64_t stat_expire = -1ULL, FileOpenCallback open_cb = {});

// An httpfs over `client` (nullptr: one of its own), deleted with the httpfs
// if client_ownership.
IFileSystem* new_httpfs_v2(bool default_https = false, uint64_t conn_timeout = -1ULL,
                           uint64_t stat_expire = -1ULL, net::http::Client* client = nullptr,
                           bool client_ownership = false);

// As new_httpfile, without the callback.
IFile* new_httpfile_v2(const char* url, IFileSystem* httpfs = nullptr,
                       uint64_t conn_timeout = -1ULL, uint64_t stat_expire = -1ULL);

}  // namespace fs
}  // namespace photon
