// subfs: resolves every path inside the base directory before handing it to
// the underlay. Resolution walks the path a component at a time: "." is
// dropped, ".." pops (never above the root), and each component is lstat'ed;
// a symlink is read and its target spliced in (absolute = from our root), as
// openat2's RESOLVE_IN_ROOT does. The underlay then gets a path without
// symlinks, except a last component that the operation itself does not
// follow (unlink, lstat, rename...).
#include <dirent.h>
#include <climits>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include <photon/common/alog.h>
#include <photon/fs/subfs.h>

namespace photon {
namespace fs {
namespace {

constexpr int kMaxLinks = 40;  // as Linux's MAXSYMLINKS: then ELOOP

void split_into(const char* p, size_t n, std::deque<std::string>& out, bool front) {
    std::vector<std::string> parts;
    size_t i = 0;
    while (i < n) {
        while (i < n && p[i] == '/') i++;
        size_t j = i;
        while (j < n && p[j] != '/') j++;
        if (j > i) parts.emplace_back(p + i, j - i);
        i = j;
    }
    if (front)
        out.insert(out.begin(), parts.begin(), parts.end());
    else
        out.insert(out.end(), parts.begin(), parts.end());
}

class sub_fs : public IFileSystem {
public:
    sub_fs(IFileSystem* under, std::string base, bool own)
        : under_(under), base_(std::move(base)), own_(own) {}
    ~sub_fs() override {
        if (own_) delete under_;
    }

    IFile* open(const char* p, int flags) override { return open(p, flags, 0644); }
    IFile* open(const char* p, int flags, mode_t mode) override {
        bool follow = !(flags & O_NOFOLLOW) && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
        std::string r;
        return resolve(p, follow, r) < 0 ? nullptr : under_->open(r.c_str(), flags, mode);
    }
    IFile* creat(const char* p, mode_t mode) override {
        std::string r;
        return resolve(p, true, r) < 0 ? nullptr : under_->creat(r.c_str(), mode);
    }
    DIR* opendir(const char* p) override {
        std::string r;
        return resolve(p, true, r) < 0 ? nullptr : under_->opendir(r.c_str());
    }
    ssize_t readlink(const char* p, char* buf, size_t n) override {
        std::string r;
        return resolve(p, false, r) < 0 ? -1 : under_->readlink(r.c_str(), buf, n);
    }
    int mkdir(const char* p, mode_t m) override { return on(p, false, &IFileSystem::mkdir, m); }
    int rmdir(const char* p) override { return on(p, false, &IFileSystem::rmdir); }
    int unlink(const char* p) override { return on(p, false, &IFileSystem::unlink); }
    int chmod(const char* p, mode_t m) override { return on(p, true, &IFileSystem::chmod, m); }
    int chown(const char* p, uid_t u, gid_t g) override {
        return on(p, true, &IFileSystem::chown, u, g);
    }
    int lchown(const char* p, uid_t u, gid_t g) override {
        return on(p, false, &IFileSystem::lchown, u, g);
    }
    int statfs(const char* p, struct statfs* b) override {
        return on(p, true, &IFileSystem::statfs, b);
    }
    int statvfs(const char* p, struct statvfs* b) override {
        return on(p, true, &IFileSystem::statvfs, b);
    }
    int stat(const char* p, struct stat* b) override { return on(p, true, &IFileSystem::stat, b); }
    int lstat(const char* p, struct stat* b) override {
        return on(p, false, &IFileSystem::lstat, b);
    }
    int access(const char* p, int m) override { return on(p, true, &IFileSystem::access, m); }
    int truncate(const char* p, off_t n) override { return on(p, true, &IFileSystem::truncate, n); }
    int utime(const char* p, const struct utimbuf* t) override {
        return on(p, true, &IFileSystem::utime, t);
    }
    int utimes(const char* p, const struct timeval t[2]) override {
        return on(p, true, &IFileSystem::utimes, t);
    }
    int lutimes(const char* p, const struct timeval t[2]) override {
        return on(p, false, &IFileSystem::lutimes, t);
    }
    int mknod(const char* p, mode_t m, dev_t d) override {
        return on(p, false, &IFileSystem::mknod, m, d);
    }
    int syncfs() override { return under_->syncfs(); }
    // The target is stored as given: subfs itself reads it from our root.
    int symlink(const char* target, const char* p) override {
        std::string r;
        return resolve(p, false, r) < 0 ? -1 : under_->symlink(target, r.c_str());
    }
    int link(const char* o, const char* n) override { return on2(o, n, &IFileSystem::link); }
    int rename(const char* o, const char* n) override { return on2(o, n, &IFileSystem::rename); }
    Object* get_underlay_object(int i) override { return under_; }

private:
    template <typename... A, typename... B>
    int on(const char* p, bool follow, int (IFileSystem::*op)(const char*, A...), B... args) {
        std::string r;
        return resolve(p, follow, r) < 0 ? -1 : (under_->*op)(r.c_str(), args...);
    }
    int on2(const char* o, const char* n, int (IFileSystem::*op)(const char*, const char*)) {
        std::string ro, rn;
        if (resolve(o, false, ro) < 0 || resolve(n, false, rn) < 0) return -1;
        return (under_->*op)(ro.c_str(), rn.c_str());
    }
    int resolve(const char* path, bool follow_last, std::string& out);
    std::string join(const std::vector<std::string>& parts) const {
        std::string s = base_;
        for (auto& c : parts) s += "/" + c;
        return parts.empty() ? s + "/" : s;
    }

    IFileSystem* under_;
    std::string base_;  // no trailing '/'
    bool own_;
};

int sub_fs::resolve(const char* path, bool follow_last, std::string& out) {
    if (!path) LOG_ERROR_RETURN(EFAULT, -1, "subfs: null path");
    if (!*path) return errno = ENOENT, -1;
    std::vector<std::string> done;
    std::deque<std::string> todo;
    split_into(path, strlen(path), todo, false);
    int links = 0;
    while (!todo.empty()) {
        std::string c = std::move(todo.front());
        todo.pop_front();
        if (c == ".") continue;
        if (c == "..") {
            if (!done.empty()) done.pop_back();
            continue;
        }
        done.push_back(std::move(c));
        if (todo.empty() && !follow_last) break;
        std::string real = join(done);
        struct stat st;
        if (under_->lstat(real.c_str(), &st) < 0 || !S_ISLNK(st.st_mode)) continue;
        if (++links > kMaxLinks) LOG_ERROR_RETURN(ELOOP, -1, "subfs: too many symlinks in ", path);
        char target[PATH_MAX];
        ssize_t n = under_->readlink(real.c_str(), target, sizeof(target));
        if (n < 0) return -1;
        done.pop_back();
        if (n > 0 && target[0] == '/') done.clear();
        split_into(target, (size_t)n, todo, true);
    }
    out = join(done);
    size_t len = strlen(path);
    if (!done.empty() && path[len - 1] == '/') out += '/';  // keeps "must be a directory"
    return 0;
}

}  // namespace

IFileSystem* new_subfs(IFileSystem* underlayfs, const char* base_path, bool ownership) {
    if (!underlayfs || !base_path || !*base_path) {
        if (ownership) delete underlayfs;
        LOG_ERROR_RETURN(EINVAL, nullptr, "subfs: needs an underlay and a base path");
    }
    struct stat st;
    int r = underlayfs->stat(base_path, &st);
    if (r < 0 || !S_ISDIR(st.st_mode)) {
        int e = r < 0 ? errno : ENOTDIR;
        if (ownership) delete underlayfs;
        LOG_ERROR_RETURN(e, nullptr, "subfs: base ", base_path, " is not a directory");
    }
    std::string base = base_path;
    while (base.size() > 1 && base.back() == '/') base.pop_back();
    if (base == "/") base.clear();
    return new sub_fs(underlayfs, std::move(base), ownership);
}

}  // namespace fs
}  // namespace photon
