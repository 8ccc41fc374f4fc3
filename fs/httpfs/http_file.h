// Private to fs/httpfs: the file of httpfs.h and what httpfs.cpp needs of it.
// Floor: bridge (tools/floors.txt), above its folder's: it joins net and fs.
#pragma once

#include <cstdarg>
#include <memory>
#include <string>
#include <string_view>

#include <photon/common/timeout.h>
#include <photon/fs/httpfs/httpfs.h>
#include <photon/fs/virtual-file.h>
#include <photon/net/http/client.h>
#include <photon/net/http/headers.h>

namespace photon {
namespace fs {
namespace httpfs_detail {

// "http://host/path" from what open() or new_httpfile() was given (see
// httpfs.h), the query apart. false with errno EINVAL if it is no URL.
bool make_url(std::string_view path, bool default_https, std::string* url, std::string* query);

// What the first answer said the file is; later answers must agree.
struct identity {
    std::string etag, last_modified;
    int64_t size = -1;
    bool known() const { return size >= 0; }
};

class http_file : public VirtualReadOnlyFile {
public:
    // client is owned if own_client; fs (may be null) is filesystem().
    http_file(std::string url, std::string query, IFileSystem* fs, net::http::Client* client,
              bool own_client, uint64_t conn_timeout, uint64_t stat_expire);
    ~http_file() override;

    const std::string& url() const { return url_; }
    IFileSystem* filesystem() override { return fs_; }
    ssize_t pread(void* buf, size_t count, off_t offset) override;
    ssize_t preadv(const struct iovec* iov, int iovcnt, off_t offset) override;
    int fstat(struct stat* buf) override;
    int vioctl(int request, va_list args) override;

private:
    using Operation = net::http::Client::Operation;
    using op_ptr = std::unique_ptr<Operation>;

    int refresh_stat();
    // One try at [pos, pos + len) of the file into the iovecs at byte
    // `skip`: the bytes placed (short, errno set, if it broke off); -1 or
    // 0 with *fatal set for a failure not worth retrying.
    ssize_t read_once(const struct iovec* iov, int iovcnt, size_t skip, uint64_t pos, size_t len,
                      const Timeout& deadline, bool* fatal);
    // A new GET from pos (ahead_ bytes or more), which becomes stream_.
    ssize_t read_range(const struct iovec* iov, int iovcnt, size_t skip, uint64_t pos, size_t len,
                       const Timeout& deadline, bool* fatal);
    // Reads on along stream_, keeping it if more of it is left.
    ssize_t read_stream(const struct iovec* iov, int iovcnt, size_t skip, uint64_t pos, size_t len);
    op_ptr new_op(net::http::Verb verb, const Timeout& deadline);
    // Checks an answer against identity_ (or records it): false, with errno
    // EIO and the file stale, if it is another version of the file.
    bool same_file(const net::http::Response& resp);
    // Fails a call of a file that changed.
    int stale_error();

    std::string url_, query_;
    IFileSystem* fs_;
    net::http::Client* client_;
    bool own_client_;
    uint64_t conn_timeout_, stat_expire_;
    net::http::Headers headers_;  // from ioctl(HTTP_HEADER)
    identity id_;
    struct stat stat_ = {};
    uint64_t stat_time_ = 0;  // photon::now of stat_; 0: none
    bool stale_ = false;
    // Read-ahead: where the last read ended, and how far to ask beyond a read.
    uint64_t next_seq_ = UINT64_MAX, ahead_ = 0;
    // The answer being read along: bytes [stream_pos_, stream_end_) of the
    // file are still to come on it; stream_whole_ if it is the whole file
    // (a 200 from a server that ignores Range).
    op_ptr stream_;
    uint64_t stream_pos_ = 0, stream_end_ = 0;
    bool stream_whole_ = false;
};

}  // namespace httpfs_detail
}  // namespace fs
}  // namespace photon
