// bucketfs: a bucket as an IFileSystem (<photon/fs/bucketfs.h>).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>
#include <photon/ecosystem/oss.h>
#include <photon/fs/bucketfs.h>
#include <photon/fs/virtual-file.h>

namespace photon {
namespace fs {

namespace {

using objstore::ListObjectsCBParameters;
using objstore::ObjectHeaderMeta;

constexpr size_t kMinPart = 5UL << 20;

// "/a/b/" -> "a/b": the key of a path.
std::string key_of(const char* path) {
    std::string k(path ? path : "");
    size_t b = 0;
    while (b < k.size() && k[b] == '/') b++;
    size_t e = k.size();
    while (e > b && k[e - 1] == '/') e--;
    return k.substr(b, e - b);
}

// st_ino is a hash of the key, never 0: readdir(3) skips entries of inode 0.
void fill_stat(struct stat* st, const std::string& key, bool dir, size_t size, time_t mtime) {
    memset(st, 0, sizeof(*st));
    st->st_ino = (ino_t)(std::hash<std::string>()(key) | 1);
    st->st_mode = dir ? (S_IFDIR | 0755) : (S_IFREG | 0644);
    st->st_nlink = dir ? 2 : 1;
    st->st_size = (off_t)size;
    st->st_blksize = 4096;
    st->st_blocks = (blkcnt_t)((size + 511) / 512);
    st->st_mtime = st->st_ctime = st->st_atime = mtime;
}

class bucket_fs;

class read_file : public VirtualReadOnlyFile {
    bucket_fs* fs_;
    objstore::Client* c_;
    std::string key_;
    size_t size_;
    time_t mtime_;

public:
    read_file(bucket_fs* fs, objstore::Client* c, std::string key, size_t size, time_t mtime)
        : fs_(fs), c_(c), key_(std::move(key)), size_(size), mtime_(mtime) {}
    IFileSystem* filesystem() override;
    ssize_t pread(void* buf, size_t count, off_t offset) override {
        if (offset < 0) return errno = EINVAL, -1;
        if ((size_t)offset >= size_ || count == 0) return 0;
        count = std::min(count, size_ - (size_t)offset);
        return c_->get_object_range(key_, (char*)buf, count, offset);
    }
    int fstat(struct stat* st) override {
        fill_stat(st, key_, false, size_, mtime_);
        return 0;
    }
};

// Sequential writes into part_size buffers, uploaded as parts; the object is
// made on close()/fsync().
class write_file : public VirtualFile {
    bucket_fs* fs_;
    objstore::Client* c_;
    std::string key_;
    size_t part_size_;
    std::string buf_;
    uint64_t written_ = 0;
    void* mp_ = nullptr;
    int next_part_ = 1;
    bool done_ = false, failed_ = false;

public:
    write_file(bucket_fs* fs, objstore::Client* c, std::string key, size_t part_size)
        : fs_(fs), c_(c), key_(std::move(key)), part_size_(part_size) {
        buf_.reserve(part_size_);
    }
    ~write_file() override { close(); }
    IFileSystem* filesystem() override;

    ssize_t pwrite(const void* data, size_t count, off_t offset) override {
        if (done_ || failed_) return errno = EBADF, -1;
        if ((uint64_t)offset != written_)
            LOG_ERROR_RETURN(ENOTSUP, -1, "bucketfs: ` is written in order only (at `, not `)",
                             key_, written_, offset);
        auto p = (const char*)data;
        size_t left = count;
        while (left) {
            size_t n = std::min(left, part_size_ - buf_.size());
            buf_.append(p, n);
            p += n, left -= n;
            if (buf_.size() == part_size_ && flush_part() < 0) return -1;
        }
        written_ += count;
        return (ssize_t)count;
    }
    ssize_t pread(void*, size_t, off_t) override { return errno = EBADF, -1; }
    int fstat(struct stat* st) override {
        fill_stat(st, key_, false, written_, time(nullptr));
        return 0;
    }
    int fsync() override { return finish(); }
    int fdatasync() override { return finish(); }
    int fchmod(mode_t) override { return 0; }
    int fchown(uid_t, gid_t) override { return 0; }
    int ftruncate(off_t length) override {
        if ((uint64_t)length == written_) return 0;
        return errno = ENOTSUP, -1;
    }
    int close() override {
        if (done_) return 0;
        return finish();
    }

private:
    int flush_part() {
        if (!mp_ && c_->init_multipart_upload(key_, &mp_) < 0) return fail();
        objstore::ObjectUploadOptions o;
        if (c_->upload_part(mp_, buf_.data(), buf_.size(), next_part_, o) < 0) return fail();
        next_part_++;
        buf_.clear();
        return 0;
    }
    int fail() {
        int e = errno;
        failed_ = true;
        if (mp_) c_->abort_multipart_upload(mp_);
        mp_ = nullptr;
        return errno = e, -1;
    }
    int finish() {
        if (failed_) return errno = EIO, -1;
        if (done_) return 0;
        // fsync makes the object; later writes would need a new one.
        done_ = true;
        objstore::ObjectUploadOptions o;
        if (!mp_) {
            if (c_->put_object(key_, buf_.data(), buf_.size(), o) < 0) return fail();
        } else {
            if (!buf_.empty() && flush_part() < 0) return -1;
            void* mp = mp_;
            mp_ = nullptr;
            if (c_->complete_multipart_upload(mp, o) < 0) return failed_ = true, -1;
        }
        buf_.clear();
        buf_.shrink_to_fit();
        return 0;
    }
};

class bucket_dir : public DIR {
    std::vector<std::pair<std::string, bool>> entries_;  // name, is_dir
    size_t pos_ = 0;
    struct dirent de_;

public:
    explicit bucket_dir(std::vector<std::pair<std::string, bool>>&& e) : entries_(std::move(e)) {}
    int closedir() override { return 0; }
    struct dirent* get() override {
        if (pos_ >= entries_.size()) return nullptr;
        memset(&de_, 0, sizeof(de_));
        auto& e = entries_[pos_];
        strncpy(de_.d_name, e.first.c_str(), sizeof(de_.d_name) - 1);
        de_.d_type = e.second ? DT_DIR : DT_REG;
        de_.d_ino = pos_ + 2;
        de_.d_off = (off_t)pos_ + 1;
        return &de_;
    }
    int next() override {
        if (pos_ < entries_.size()) pos_++;
        return pos_ < entries_.size() ? 1 : 0;
    }
    void rewinddir() override { pos_ = 0; }
    void seekdir(long long loc) override { pos_ = loc < 0 ? 0 : (size_t)loc; }
    long long telldir() override { return (long long)pos_; }
};

class bucket_fs : public IFileSystem {
    objstore::Client* c_;
    bool own_;
    size_t part_size_;

public:
    bucket_fs(objstore::Client* c, bool own, size_t part)
        : c_(c), own_(own), part_size_(std::max(part, kMinPart)) {}
    ~bucket_fs() override {
        if (own_) delete c_;
    }

    // 1 file, 2 directory, 0 absent, -1 error; meta of a file.
    int kind(const std::string& key, ObjectHeaderMeta* meta) {
        if (key.empty()) return 2;
        if (c_->head_object(key, *meta) == 0) return 1;
        if (errno != ENOENT) return -1;
        int found = 0;
        auto cb = [&](const ListObjectsCBParameters&) { return found = 1, -1; };
        objstore::ListObjectsParameters p;
        p.max_keys = 1;
        std::string marker;
        int r = c_->list_objects(key + "/", cb, p, &marker);
        if (r < 0 && !found) return -1;
        return found ? 2 : 0;
    }

    IFile* open(const char* path, int flags) override { return open(path, flags, 0644); }
    IFile* open(const char* path, int flags, mode_t) override {
        std::string key = key_of(path);
        if (key.empty()) return errno = EISDIR, nullptr;
        int acc = flags & O_ACCMODE;
        if (acc == O_RDWR || (flags & O_APPEND))
            LOG_ERROR_RETURN(ENOTSUP, nullptr, "bucketfs: ` opened for update: not supported", key);
        ObjectHeaderMeta m;
        if (acc == O_WRONLY) {
            if (!(flags & O_TRUNC) || (flags & O_EXCL)) {
                int k = kind(key, &m);
                if (k < 0) return nullptr;
                if (k == 2) return errno = EISDIR, nullptr;
                if (k == 1 && (flags & O_EXCL)) return errno = EEXIST, nullptr;
                if (k == 0 && !(flags & O_CREAT)) return errno = ENOENT, nullptr;
                if (k == 1 && !(flags & O_TRUNC) && m.size > 0)
                    LOG_ERROR_RETURN(ENOTSUP, nullptr, "bucketfs: ` would be updated in place",
                                     key);
            }
            return new write_file(this, c_, key, part_size_);
        }
        int k = kind(key, &m);
        if (k < 0) return nullptr;
        if (k == 0) return errno = ENOENT, nullptr;
        if (k == 2) return errno = EISDIR, nullptr;
        return new read_file(this, c_, key, m.size, m.has_mtime() ? m.mtime : 0);
    }
    IFile* creat(const char* path, mode_t mode) override {
        return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    }

    int mkdir(const char* path, mode_t) override {
        std::string key = key_of(path);
        if (key.empty()) return errno = EEXIST, -1;
        ObjectHeaderMeta m;
        int k = kind(key, &m);
        if (k < 0) return -1;
        if (k) return errno = EEXIST, -1;
        objstore::ObjectUploadOptions o;
        return c_->put_object(key + "/", "", 0, o) < 0 ? -1 : 0;
    }

    // The entries directly under key ("" for the root), without the marker.
    int list_dir(const std::string& key, std::vector<std::pair<std::string, bool>>* out,
                 size_t limit = 0) {
        std::string prefix = key.empty() ? key : key + "/";
        auto cb = [&](const ListObjectsCBParameters& p) -> int {
            std::string_view name = p.key.substr(std::min(prefix.size(), p.key.size()));
            bool dir = p.is_com_prefix;
            if (dir && !name.empty() && name.back() == '/') name.remove_suffix(1);
            if (name.empty()) return 0;  // the directory's own marker
            out->emplace_back(std::string(name), dir);
            return limit && out->size() >= limit ? -1 : 0;
        };
        objstore::ListObjectsParameters p;
        p.slash_delimiter = true;
        int r = c_->list_objects(prefix, cb, p);
        if (r < 0 && !(limit && out->size() >= limit)) return -1;
        return 0;
    }

    int rmdir(const char* path) override {
        std::string key = key_of(path);
        if (key.empty()) return errno = EBUSY, -1;
        ObjectHeaderMeta m;
        int k = kind(key, &m);
        if (k < 0) return -1;
        if (k == 0) return errno = ENOENT, -1;
        if (k == 1) return errno = ENOTDIR, -1;
        // Any key under it but its marker, at any depth (a delimited listing
        // may show prefixes with nothing left under them: SeaweedFS's filer
        // keeps the directories it made implicitly).
        std::string marker_key = key + "/";
        bool found = false;
        auto cb = [&](const ListObjectsCBParameters& p) -> int {
            if (p.key == marker_key) return 0;
            return found = true, -1;
        };
        objstore::ListObjectsParameters p;
        p.max_keys = 2;
        std::string page;
        if (c_->list_objects(marker_key, cb, p, &page) < 0 && !found) return -1;
        if (found) return errno = ENOTEMPTY, -1;
        return c_->delete_object(marker_key);
    }

    int symlink(const char* oldname, const char* newname) override {
        return c_->put_symlink(key_of(newname), oldname);
    }
    ssize_t readlink(const char* path, char* buf, size_t bufsiz) override {
        std::string t;
        if (c_->get_symlink(key_of(path), t) < 0) return -1;
        size_t n = std::min(bufsiz, t.size());
        memcpy(buf, t.data(), n);
        return (ssize_t)n;
    }
    UNIMPLEMENTED(int link(const char*, const char*) override)

    int rename(const char* oldname, const char* newname) override {
        std::string from = key_of(oldname), to = key_of(newname);
        ObjectHeaderMeta m;
        int k = kind(from, &m);
        if (k < 0) return -1;
        if (k == 0) return errno = ENOENT, -1;
        if (k == 2)
            LOG_ERROR_RETURN(ENOTSUP, -1, "bucketfs: renaming directory ` unsupported", from);
        return c_->rename_object(from, to);
    }
    int unlink(const char* path) override {
        std::string key = key_of(path);
        ObjectHeaderMeta m;
        int k = kind(key, &m);
        if (k < 0) return -1;
        if (k == 0) return errno = ENOENT, -1;
        if (k == 2) return errno = EISDIR, -1;
        return c_->delete_object(key);
    }
    int chmod(const char*, mode_t) override { return 0; }
    int chown(const char*, uid_t, gid_t) override { return 0; }
    int lchown(const char*, uid_t, gid_t) override { return 0; }
    int statfs(const char*, struct statfs* buf) override {
        memset(buf, 0, sizeof(*buf));
        buf->f_bsize = 4096;
        buf->f_blocks = buf->f_bfree = buf->f_bavail = 1ULL << 40;
        buf->f_files = buf->f_ffree = 1ULL << 40;
        buf->f_namelen = objstore::OSS_MAX_PATH_LEN;
        return 0;
    }
    int statvfs(const char*, struct statvfs* buf) override {
        memset(buf, 0, sizeof(*buf));
        buf->f_bsize = buf->f_frsize = 4096;
        buf->f_blocks = buf->f_bfree = buf->f_bavail = 1ULL << 40;
        buf->f_files = buf->f_ffree = buf->f_favail = 1ULL << 40;
        buf->f_namemax = objstore::OSS_MAX_PATH_LEN;
        return 0;
    }
    int stat(const char* path, struct stat* st) override {
        std::string key = key_of(path);
        ObjectHeaderMeta m;
        int k = kind(key, &m);
        if (k < 0) return -1;
        if (k == 0) return errno = ENOENT, -1;
        fill_stat(st, key, k == 2, k == 1 ? m.size : 0, k == 1 && m.has_mtime() ? m.mtime : 0);
        return 0;
    }
    int lstat(const char* path, struct stat* st) override { return stat(path, st); }
    int access(const char* path, int) override {
        struct stat st;
        return stat(path, &st);
    }
    int truncate(const char* path, off_t length) override {
        if (length != 0) return errno = ENOTSUP, -1;
        objstore::ObjectUploadOptions o;
        return c_->put_object(key_of(path), "", 0, o) < 0 ? -1 : 0;
    }
    int utime(const char*, const struct utimbuf*) override { return 0; }
    int utimes(const char*, const struct timeval[2]) override { return 0; }
    int lutimes(const char*, const struct timeval[2]) override { return 0; }
    UNIMPLEMENTED(int mknod(const char*, mode_t, dev_t) override)
    int syncfs() override { return 0; }
    DIR* opendir(const char* name) override {
        std::string key = key_of(name);
        ObjectHeaderMeta m;
        int k = kind(key, &m);
        if (k < 0) return nullptr;
        if (k == 0) return errno = ENOENT, nullptr;
        if (k == 1) return errno = ENOTDIR, nullptr;
        std::vector<std::pair<std::string, bool>> e;
        if (list_dir(key, &e) < 0) return nullptr;
        return new bucket_dir(std::move(e));
    }
};

IFileSystem* read_file::filesystem() { return fs_; }
IFileSystem* write_file::filesystem() { return fs_; }

}  // namespace

IFileSystem* new_bucket_fs(objstore::Client* client, bool ownership, size_t part_size) {
    if (!client) LOG_ERROR_RETURN(EINVAL, nullptr, "bucketfs: no client");
    return new bucket_fs(client, ownership, part_size);
}

}  // namespace fs
}  // namespace photon
