// Path, mkdir_recursive, Walker and Tree (path.h).
#include <dirent.h>
#include <sys/stat.h>

#include <cstring>
#include <string>

#include <photon/common/alog.h>
#include <photon/fs/path.h>

namespace photon {
namespace fs {

void Path::iterator::set(const char* p) {
    if (!p) return init_view(nullptr, 0);
    while (p < end_ && *p == '/') ++p;
    const char* name = p;
    while (p < end_ && *p != '/') ++p;
    init_view(name, p - name);
}

bool Path::level_valid() {
    int64_t level = 0;
    for (auto& name : *this) {
        int dots = is_dots(name);
        if (dots == 2 && --level < 0) return false;
        if (dots == 0) ++level;
    }
    return true;
}

int mkdir_recursive(const string_view& pathname, IFileSystem* fs, mode_t mode) {
    if (!fs) LOG_ERROR_RETURN(EINVAL, -1, "mkdir_recursive: no file system");
    size_t len = pathname.size();
    if (len == 0) return 0;
    if (len >= PATH_MAX) return errno = ENAMETOOLONG, -1;  // the caller's to report
    std::string path(pathname);
    for (size_t i = 1; i < len; i++) {
        if (path[i] != '/' || path[i - 1] == '/') continue;  // each run of slashes once
        path[i] = '\0';
        int ret = fs->mkdir(path.c_str(), mode);
        if (ret < 0 && errno == EEXIST) {
            struct stat st;
            if (fs->stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
                errno = ENOTDIR;
            else
                ret = 0;
        }
        if (ret < 0) return -1;
        path[i] = '/';
    }
    return 0;
}

// ---- Walker -------------------------------------------------------------------

Walker::Walker(IFileSystem* fs, string_view path) {
    path_buffer_[0] = '\0';
    if (!fs) return;
    filesystem_ = fs;
    if (!path_push_back(path) || enter_dir() < 0) {
        stop(errno);
        return;
    }
    if ((path.empty() || path.back() != '/') && !path_push_back("/")) {
        stop(errno);
        return;
    }
    next();
}

int Walker::stop(int err) {
    path_len_ = 0;
    path_buffer_[0] = '\0';
    while (!stack_.empty()) stack_.pop();
    if (err) errno = err;
    return -1;
}

int Walker::enter_dir() {
    // An empty start is the current directory ("." : a subfs's root).
    auto dir = filesystem_->opendir(path_len_ ? path_buffer_ : ".");
    if (!dir) LOG_ERRNO_RETURN(0, -1, "Walker: cannot open directory ", path_buffer_);
    stack_.emplace(dir);
    return 0;
}

int Walker::is_dir(dirent* entry) {
    if (entry->d_type == DT_DIR) return 1;
    if (entry->d_type != DT_UNKNOWN) return 0;
    struct stat st;
    if (filesystem_->lstat(path_buffer_, &st) < 0)
        LOG_ERRNO_RETURN(0, -1, "Walker: cannot lstat ", path_buffer_);
    return S_ISDIR(st.st_mode);
}

bool Walker::path_push_back(string_view s) {
    if (path_len_ + s.size() >= sizeof(path_buffer_)) {
        errno = ENAMETOOLONG;
        return false;
    }
    memcpy(path_buffer_ + path_len_, s.data(), s.size());
    path_len_ += s.size();
    path_buffer_[path_len_] = '\0';
    return true;
}

void Walker::path_pop_back(size_t len1) {
    path_len_ -= len1 < path_len_ ? len1 : path_len_;
    path_buffer_[path_len_] = '\0';
}

int Walker::next() {
    if (stack_.empty()) return stop(errno);
    // Leaving the entry we stopped at: drop its name, step the directory on.
    if (path_len_ && path_buffer_[path_len_ - 1] != '/') {
        string_view p(path_buffer_, path_len_);
        path_pop_back(p.size() - p.rfind('/') - 1);
        stack_.top()->next();
    }
    for (;;) {
        dirent* entry = stack_.top()->get();
        if (!entry) {  // this directory is done: back to its parent's next entry
            stack_.pop();
            if (stack_.empty()) return stop(0);
            string_view p(path_buffer_, path_len_ - 1);  // without the trailing '/'
            path_pop_back(path_len_ - p.rfind('/') - 1);
            stack_.top()->next();
            continue;
        }
        string_view name = entry->d_name;
        if (is_dots(name)) {
            stack_.top()->next();
            continue;
        }
        if (!path_push_back(name)) {
            LOG_ERROR("Walker: path too long under ", path_buffer_);
            return stop(ENAMETOOLONG);
        }
        int dir = is_dir(entry);
        if (dir < 0) return stop(errno);
        if (dir == 0) return 0;
        if (enter_dir() < 0) return stop(errno);
        if (!path_push_back("/")) return stop(ENAMETOOLONG);
    }
}

// ---- Tree -------------------------------------------------------------------

namespace Tree {

namespace {
int fail(int e) {
    errno = e;
    return -1;
}
bool bad_file_path(string_view path) { return path.empty() || path.back() == '/'; }
}  // namespace

Node* Node::seek2node(string_view path, bool create_path) {
    Node* node = this;
    for (auto& p : Path(path)) {
        if (is_dots(p)) return errno = EINVAL, nullptr;
        std::string name(p);
        auto it = node->find(name);
        if (it == node->end()) {
            if (!create_path) return errno = ENOENT, nullptr;
            it = node->emplace(std::move(name), Value(new Node)).first;
        } else if (!it->second.is_node()) {
            return errno = ENOTDIR, nullptr;
        }
        node = it->second.as_node_ptr();
    }
    return node;
}

Node* Node::locate(string_view path, bool create_path, std::string* name) {
    auto db = Path(path).dir_base_name();
    if (is_dots(db.second)) return errno = EINVAL, nullptr;
    Node* node = seek2node(db.first, create_path);
    if (node) name->assign(db.second);
    return node;
}

int Node::creat(string_view path, void* v, bool create_path) {
    if (bad_file_path(path)) return fail(EINVAL);
    std::string name;
    Node* node = locate(path, create_path, &name);
    if (!node) return -1;
    if (!node->emplace(std::move(name), Value(v)).second) return fail(EEXIST);
    return 0;
}

int Node::read(string_view path, void** v) {
    if (bad_file_path(path)) return fail(EINVAL);
    std::string name;
    Node* node = locate(path, false, &name);
    if (!node) return -1;
    auto it = node->find(name);
    if (it == node->end()) return fail(ENOENT);
    if (it->second.is_node()) return fail(EISDIR);
    *v = it->second.value;
    return 0;
}

int Node::write(string_view path, void* v) {
    if (bad_file_path(path)) return fail(EINVAL);
    std::string name;
    Node* node = locate(path, false, &name);
    if (!node) return -1;
    auto it = node->find(name);
    if (it == node->end()) return fail(ENOENT);
    if (it->second.is_node()) return fail(EISDIR);
    it->second.value = v;
    return 0;
}

int Node::unlink(string_view path) {
    if (bad_file_path(path)) return fail(EINVAL);
    std::string name;
    Node* node = locate(path, false, &name);
    if (!node) return -1;
    auto it = node->find(name);
    if (it == node->end()) return fail(ENOENT);
    if (it->second.is_node()) return fail(EISDIR);
    node->erase(it);
    return 0;
}

int Node::mkdir(string_view path, bool _p) {
    if (path.empty()) return fail(EINVAL);
    std::string name;
    Node* node = locate(path, _p, &name);
    if (!node) return -1;
    if (name.empty() || node->count(name)) return fail(EEXIST);  // "/" exists
    node->emplace(std::move(name), Value(new Node));
    return 0;
}

int Node::rmdir(string_view path) {
    if (path.empty()) return fail(EINVAL);
    std::string name;
    Node* node = locate(path, false, &name);
    if (!node) return -1;
    if (name.empty()) return fail(EBUSY);  // the root
    auto it = node->find(name);
    if (it == node->end()) return fail(ENOENT);
    if (!it->second.is_node()) return fail(ENOTDIR);
    if (!it->second.as_node_ptr()->empty()) return fail(ENOTEMPTY);
    node->erase(it);
    return 0;
}

int Node::stat(string_view path) {
    if (path.empty()) return fail(EINVAL);
    std::string name;
    Node* node = locate(path, false, &name);
    if (!node) return -1;
    if (name.empty()) return 2;  // the root
    auto it = node->find(name);
    if (it == node->end()) return fail(ENOENT);
    return it->second.is_node() ? 2 : 1;
}

Node* Node::chdir(string_view path) {
    if (path.empty()) return errno = EINVAL, nullptr;
    return seek2node(path);
}

}  // namespace Tree
}  // namespace fs
}  // namespace photon
