// Path helpers, as PhotonLibOS declares them:
// - Path: a view of a path string with its components ("a", "b" of
//   "/a//b/"), basename / dirname, and level_valid() (".." never climbs
//   above the start);
// - mkdir_recursive(): makes the directories of a path on an IFileSystem;
// - Walker: walks a directory tree on an IFileSystem, yielding the path of
//   every entry that is not a directory (for enumerable(), common/enumerable.h);
// - Tree::Node: an in-memory tree of named values (void*) and directories.
// Path and Tree are plain data (any thread, never yield); mkdir_recursive and
// Walker block as the file system's calls do.
//
// Differences from PhotonLibOS: doc/compat.md#fspathh
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <stack>
#include <string>
#include <unordered_map>
#include <utility>

#include <photon/common/string_view.h>
#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {

using string_view = std::string_view;

class Path {
public:
    template <typename T, typename A>
    Path(const std::basic_string<char, T, A>& path) : path_(path) {}
    Path(string_view path) : path_(path) {}
    Path(const char* path) : path_(path ? path : "") {}

    // Walks the components: non-empty names between slashes.
    struct iterator {
        explicit iterator(string_view path) {
            end_ = path.data() + path.size();
            set(path.data());
        }
        iterator() : end_(nullptr) { init_view(nullptr, 0); }  // end()
        iterator& operator++() {
            set(view_.data() + view_.size());
            return *this;
        }
        const string_view& operator*() const { return view_; }
        string_view& operator*() { return view_; }
        // What follows the current component, from the slash on.
        string_view following_part() const {
            const char* p = view_.data() + view_.size();
            return {p, (size_t)(end_ - p)};
        }
        const string_view* operator->() const { return &view_; }
        string_view* operator->() { return &view_; }
        // Every iterator past the last component equals end().
        bool operator==(const iterator& rhs) const {
            if (view_.empty() || rhs.view_.empty()) return view_.empty() == rhs.view_.empty();
            return view_.data() == rhs.view_.data() && view_.size() == rhs.view_.size();
        }
        bool operator!=(const iterator& rhs) const { return !(*this == rhs); }

    protected:
        const char* end_;
        string_view view_;
        void set(const char* p);
        void init_view(const char* ptr, size_t len) { view_ = {ptr, len}; }
    };

    iterator begin() const { return iterator(path_); }
    iterator end() const { return iterator(); }

    // The last component ("c" of "/a/b/c//"); "" if there is none.
    string_view basename() {
        auto last = path_.find_last_not_of('/');
        if (last == path_.npos) return string_view();
        auto slash = path_.find_last_of('/', last);
        size_t first = slash == path_.npos ? 0 : slash + 1;
        return path_.substr(first, last - first + 1);
    }
    // (everything before the basename, the basename): "/a/" and "b" of
    // "/a/b/"; (the path, "") when there is no basename.
    std::pair<string_view, string_view> dir_base_name() {
        auto bn = basename();
        if (bn.empty()) return {path_, string_view()};
        return {path_.substr(0, bn.data() - path_.data()), bn};
    }
    string_view dirname() { return dir_base_name().first; }
    // The path up to its last slash (exclusive): "/a" of "/a/b", "" of "b".
    Path directory() {
        auto pos = path_.find_last_of('/');
        return path_.substr(0, pos == string_view::npos ? 0 : pos);
    }
    bool ends_with_slash() { return !path_.empty() && path_.back() == '/'; }

    // Whether no ".." climbs above where the path starts.
    bool level_valid();

protected:
    string_view path_;
};

// 1 for ".", 2 for "..", 0 otherwise.
inline int is_dots(const string_view& name) {
    if (name.empty() || name[0] != '.') return 0;
    if (name.size() == 1) return 1;
    return name.size() == 2 && name[1] == '.' ? 2 : 0;
}

inline bool path_level_valid(const char* path) { return Path(path).level_valid(); }

// Makes every directory of pathname that is followed by a slash, as mkdir -p
// ("a/b/c" makes a and a/b: the last component is taken as a file name; say
// "a/b/c/" for c too). Existing directories are fine. 0, or -1 with errno
// (ENAMETOOLONG, EINVAL for a null fs, ENOTDIR where a non-directory is in
// the way, or mkdir's).
int mkdir_recursive(const string_view& pathname, IFileSystem* fs, mode_t mode = 0755);

// Walks the tree under `path` depth first, stopping at each entry that is
// not a directory (symlinks are not followed); path() is its full path,
// NUL-terminated: `path` + "/" + names (a single "/" joins them). An empty
// `path` walks "." (the root of a subfs) and yields "/" + names. For
// enumerable(): valid(), get(), next() (0, or -1 at the end or on error).
class Walker {
public:
    Walker(IFileSystem* fs, string_view path);
    string_view path() { return {path_buffer_, path_len_}; }
    string_view get() { return path(); }
    bool valid() { return path_len_; }
    int next();

protected:
    size_t path_len_ = 0;
    IFileSystem* filesystem_ = nullptr;
    std::stack<std::unique_ptr<DIR>> stack_;
    char path_buffer_[PATH_MAX];
    int is_dir(dirent* entry);
    int enter_dir();
    // false (errno ENAMETOOLONG) if s does not fit.
    bool path_push_back(string_view s);
    void path_pop_back(size_t len1);
    int stop(int err);
};

namespace Tree {

class Node;

// A user value (void*) or a sub-directory (Node*, owned).
struct Value {
    Value() {}
    explicit Value(void* val) { value = val; }
    explicit Value(Node* node) : value(node), node_(true) {}
    bool is_node() { return node_; }
    Node* as_node_ptr() { return node_ ? (Node*)value : nullptr; }
    void* as_ptr() { return value; }

    void operator=(Value&& rhs) {
        if (this != &rhs) {
            reset();
            value = rhs.value;
            node_ = rhs.node_;
            rhs.value = nullptr;
            rhs.node_ = false;
        }
    }
    void operator=(Value& rhs) = delete;
    void operator=(const Value& rhs) = delete;
    Value(Value&& rhs) : value(rhs.value), node_(rhs.node_) {
        rhs.value = nullptr;
        rhs.node_ = false;
    }
    Value(Value& rhs) = delete;
    Value(const Value& rhs) = delete;
    ~Value() { reset(); }

    // PhotonLibOS tagged directories with this bit; kept for its users.
    const static uint64_t MASK = 1ULL << 63;
    void* value = nullptr;

private:
    void reset();
    bool node_ = false;
};

// A directory: names to values or sub-directories. Paths are relative to
// it; "." and ".." are not allowed (EINVAL). -1 with errno on failure.
class Node : public std::unordered_map<std::string, Value> {
public:
    // A file `path` holding v; intermediate directories made if create_path.
    int creat(string_view path, void* v, bool create_path = false);
    // The value of file `path` (EISDIR for a directory).
    int read(string_view path, void** v);
    // Replaces the value of an existing file.
    int write(string_view path, void* v);
    // Removes a file (EISDIR for a directory).
    int unlink(string_view path);
    // A directory; intermediate ones made if _p.
    int mkdir(string_view path, bool _p = false);
    // Removes an empty directory (ENOTDIR, ENOTEMPTY).
    int rmdir(string_view path);
    // The sub-directory at path, or nullptr with errno.
    Node* chdir(string_view path);
    // 1 for a file, 2 for a directory, -1 with errno if absent or on error.
    int stat(string_view path);
    bool is_dir(string_view path) { return stat(path) == 2; }
    bool is_file(string_view path) { return stat(path) == 1; }

protected:
    Node* seek2node(string_view path, bool create_path = false);
    // The directory holding path's last component, and that name.
    Node* locate(string_view path, bool create_path, std::string* name);
};

inline void Value::reset() {
    if (node_) delete (Node*)value;
    node_ = false;
    value = nullptr;
}

}  // namespace Tree
}  // namespace fs
}  // namespace photon
