// httpfs (httpfs.h): the file system, which turns paths into URLs and makes
// files, and the four factories. Both forms share http_file.
#include <dirent.h>
#include <fcntl.h>

#include <cstring>

#include <photon/common/alog.h>
#include <photon/common/estring.h>
#include <photon/net/http/url.h>

#include "http_file.h"

namespace photon {
namespace fs {
namespace httpfs_detail {

bool make_url(std::string_view path, bool default_https, std::string* url, std::string* query) {
    estring_view p(path);
    while (!p.empty() && p.front() == '/') p.remove_prefix(1);
    std::string u;
    // "http:/host": what a path normaliser leaves of "http://host".
    size_t scheme = p.istarts_with("http:/") ? 6 : p.istarts_with("https:/") ? 7 : 0;
    if (scheme) {
        u.assign(p.substr(0, scheme));
        p.remove_prefix(scheme);
        if (p.empty() || p.front() != '/') u += '/';
    } else {
        u = default_https ? "https://" : "http://";
    }
    size_t q = p.find('?');
    u.append(p.substr(0, q));
    query->assign(q == p.npos ? std::string_view() : p.substr(q + 1));
    std::string full = query->empty() ? u : u + "?" + *query;
    net::http::URL check;
    (void)check.from_string(full);  // a bad URL leaves it empty
    if (check.host().empty()) {
        errno = EINVAL;
        return false;
    }
    *url = std::move(u);
    return true;
}

namespace {

class http_fs : public IFileSystem {
public:
    http_fs(bool default_https, uint64_t conn_timeout, uint64_t stat_expire, FileOpenCallback cb,
            net::http::Client* client, bool own_client)
        : default_https_(default_https),
          conn_timeout_(conn_timeout),
          stat_expire_(stat_expire),
          cb_(cb),
          client_(client),
          own_client_(own_client) {}
    ~http_fs() override {
        if (own_client_) delete client_;
    }

    // A file on our client; the open callback sees it before the caller.
    IFile* make_file(const char* url_or_path, uint64_t conn_timeout, uint64_t stat_expire,
                     FileOpenCallback cb) {
        std::string url, query;
        if (!url_or_path || !make_url(url_or_path, default_https_, &url, &query))
            LOG_ERROR_RETURN(EINVAL, nullptr, "httpfs: not a URL: ", url_or_path);
        auto f =
            new http_file(url, std::move(query), this, client_, false, conn_timeout, stat_expire);
        if (cb) cb(f->url().c_str(), f);
        return f;
    }

    IFile* open(const char* pathname, int flags) override {
        if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND)))
            LOG_ERROR_RETURN(EROFS, nullptr, "httpfs: read-only, cannot open for writing");
        return make_file(pathname, conn_timeout_, stat_expire_, cb_);
    }
    IFile* open(const char* pathname, int flags, mode_t) override { return open(pathname, flags); }
    int stat(const char* path, struct stat* buf) override {
        std::unique_ptr<IFile> f(open(path, O_RDONLY));
        return f ? f->fstat(buf) : -1;
    }
    int lstat(const char* path, struct stat* buf) override { return stat(path, buf); }
    int access(const char* path, int mode) override {
        if (mode & W_OK) return errno = EROFS, -1;
        if (mode & X_OK) return errno = EACCES, -1;
        return stat(path, nullptr);
    }
    Object* get_underlay_object(int) override { return client_; }

    UNIMPLEMENTED_POINTER(IFile* creat(const char*, mode_t) override)
    UNIMPLEMENTED(int mkdir(const char*, mode_t) override)
    UNIMPLEMENTED(int rmdir(const char*) override)
    UNIMPLEMENTED(int link(const char*, const char*) override)
    UNIMPLEMENTED(int symlink(const char*, const char*) override)
    UNIMPLEMENTED(ssize_t readlink(const char*, char*, size_t) override)
    UNIMPLEMENTED(int rename(const char*, const char*) override)
    UNIMPLEMENTED(int chmod(const char*, mode_t) override)
    UNIMPLEMENTED(int chown(const char*, uid_t, gid_t) override)
    UNIMPLEMENTED(int lchown(const char*, uid_t, gid_t) override)
    UNIMPLEMENTED(int statfs(const char*, struct statfs*) override)
    UNIMPLEMENTED(int statvfs(const char*, struct statvfs*) override)
    UNIMPLEMENTED(int truncate(const char*, off_t) override)
    UNIMPLEMENTED(int syncfs() override)
    UNIMPLEMENTED(int unlink(const char*) override)
    UNIMPLEMENTED(int utime(const char*, const struct utimbuf*) override)
    UNIMPLEMENTED(int utimes(const char*, const struct timeval*) override)
    UNIMPLEMENTED(int lutimes(const char*, const struct timeval*) override)
    UNIMPLEMENTED(int mknod(const char*, mode_t, dev_t) override)
    UNIMPLEMENTED_POINTER(DIR* opendir(const char*) override)

private:
    bool default_https_;
    uint64_t conn_timeout_, stat_expire_;
    FileOpenCallback cb_;
    net::http::Client* client_;
    bool own_client_;
};

IFileSystem* make_fs(bool default_https, uint64_t conn_timeout, uint64_t stat_expire,
                     FileOpenCallback cb, net::http::Client* client, bool own_client) {
    if (!client) {
        client = net::http::new_http_client();
        own_client = true;
        if (!client) return nullptr;
    }
    return new http_fs(default_https, conn_timeout, stat_expire, cb, client, own_client);
}

IFile* make_file(const char* url, IFileSystem* httpfs, uint64_t conn_timeout, uint64_t stat_expire,
                 FileOpenCallback cb) {
    if (httpfs) {
        auto fs = dynamic_cast<http_fs*>(httpfs);
        if (!fs) LOG_ERROR_RETURN(EINVAL, nullptr, "new_httpfile: that file system is no httpfs");
        return fs->make_file(url, conn_timeout, stat_expire, cb);
    }
    std::string u, query;
    if (!url || !make_url(url, false, &u, &query))
        LOG_ERROR_RETURN(EINVAL, nullptr, "new_httpfile: not a URL: ", url);
    auto client = net::http::new_http_client();
    if (!client) return nullptr;
    auto f = new http_file(u, std::move(query), nullptr, client, true, conn_timeout, stat_expire);
    if (cb) cb(f->url().c_str(), f);
    return f;
}

}  // namespace
}  // namespace httpfs_detail

IFileSystem* new_httpfs(bool default_https, uint64_t conn_timeout, uint64_t stat_expire,
                        FileOpenCallback open_cb) {
    return httpfs_detail::make_fs(default_https, conn_timeout, stat_expire, open_cb, nullptr,
                                  false);
}

IFile* new_httpfile(const char* url, IFileSystem* httpfs, uint64_t conn_timeout,
                    uint64_t stat_expire, FileOpenCallback open_cb) {
    return httpfs_detail::make_file(url, httpfs, conn_timeout, stat_expire, open_cb);
}

IFileSystem* new_httpfs_v2(bool default_https, uint64_t conn_timeout, uint64_t stat_expire,
                           net::http::Client* client, bool client_ownership) {
    return httpfs_detail::make_fs(default_https, conn_timeout, stat_expire, {}, client,
                                  client_ownership);
}

IFile* new_httpfile_v2(const char* url, IFileSystem* httpfs, uint64_t conn_timeout,
                       uint64_t stat_expire) {
    return httpfs_detail::make_file(url, httpfs, conn_timeout, stat_expire, {});
}

}  // namespace fs
}  // namespace photon
