// Path lookup: every path starts at the root ("a/b" is "/a/b"), "." and ".."
// are the directories' own entries, symlinks in the middle are followed
// (libext2fs's namei, at most 8 deep, then ELOOP).
#include <string.h>

#include "extfs_impl.h"

namespace photon {
namespace fs {
namespace extfs {
namespace {

errcode_t check_names(const char* path) {
    if (!path || !*path) return EXT2_ET_FILE_NOT_FOUND;
    size_t len = 0;
    for (const char* p = path;; p++) {
        if (*p == '/' || *p == 0) {
            if (len > EXT2_NAME_LEN) return ENAMETOOLONG;
            len = 0;
            if (!*p) return 0;
        } else {
            len++;
        }
    }
}

bool is_dir(ext2_filsys fs, ext2_ino_t ino) { return ext2fs_check_directory(fs, ino) == 0; }

}  // namespace

errcode_t lookup(ext2_filsys fs, const char* path, bool follow, ext2_ino_t* ino) {
    errcode_t err = check_names(path);
    if (err) return err;
    size_t len = strlen(path);
    bool slash = len > 1 && path[len - 1] == '/';
    // A trailing slash means "a directory": its last symlink is followed.
    err = follow || slash ? ext2fs_namei_follow(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, ino)
                          : ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, ino);
    if (!err && slash && !is_dir(fs, *ino)) return EXT2_ET_NO_DIRECTORY;
    return err;
}

errcode_t lookup_parent(ext2_filsys fs, const char* path, ext2_ino_t* dir, std::string* name,
                        bool* trailing_slash) {
    errcode_t err = check_names(path);
    if (err) return err;
    std::string p(path);
    bool slash = false;
    while (p.size() > 1 && p.back() == '/') {
        p.pop_back();
        slash = true;
    }
    if (trailing_slash) *trailing_slash = slash;
    size_t cut = p.rfind('/');
    std::string dir_path = cut == std::string::npos ? "" : p.substr(0, cut);
    *name = cut == std::string::npos ? p : p.substr(cut + 1);
    if (name->empty()) return EXT2_ET_INVALID_ARGUMENT;  // the root
    if (dir_path.empty()) {
        *dir = EXT2_ROOT_INO;
        return 0;
    }
    err = ext2fs_namei_follow(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, dir_path.c_str(), dir);
    if (!err && !is_dir(fs, *dir)) return EXT2_ET_NO_DIRECTORY;
    return err;
}

errcode_t lookup_in(ext2_filsys fs, ext2_ino_t dir, const std::string& name, ext2_ino_t* ino) {
    return ext2fs_lookup(fs, dir, name.c_str(), (int)name.size(), nullptr, ino);
}

}  // namespace extfs
}  // namespace fs
}  // namespace photon
