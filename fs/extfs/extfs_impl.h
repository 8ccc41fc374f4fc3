// Helpers shared by extfs' sources: libext2fs error codes, the io manager
// over an IFile, inodes, and path lookup. All of them run with the file
// system's mutex held (or on a file system nobody else sees: mkfs, resize).
#pragma once

#include <ext2fs/ext2fs.h>
#include <sys/stat.h>
#include <time.h>

#include <cerrno>
#include <string>

#include <photon/fs/filesystem.h>

namespace photon {
namespace fs {
namespace extfs {

// errors.cpp: the errno for a libext2fs error code (errno values pass as
// they are; unknown codes are EIO, logged once per call).
int to_errno(errcode_t err);
// Sets errno from `err`, returns -1.
inline int fail(errcode_t err) {
    errno = to_errno(err);
    return -1;
}

class block_cache;

// io_manager.cpp: libext2fs opens channels by name; ifile_io_manager()'s
// names carry the address of a channel_target, whose file (through cache,
// if any) the channel then reads and writes. The target only needs to live
// until ext2fs_open/ext2fs_initialize returns; file and cache must outlive
// the channel.
struct channel_target {
    IFile* file;
    block_cache* cache;
};
io_manager ifile_io_manager();
std::string channel_name(const channel_target* target);

// inode.cpp: inodes as ext2_inode_large (the extra fields hold nanoseconds).
errcode_t read_inode(ext2_filsys fs, ext2_ino_t ino, ext2_inode_large* inode);
errcode_t write_inode(ext2_filsys fs, ext2_ino_t ino, ext2_inode_large* inode);
enum : int { kAtime = 1, kMtime = 2, kCtime = 4 };
// Sets the `which` times to `ts`, or to now when ts is null.
void set_times(ext2_inode_large* inode, int which, const struct timespec* ts = nullptr);
void fill_stat(ext2_filsys fs, ext2_ino_t ino, const ext2_inode_large& inode, struct stat* st);
int file_type_of(mode_t mode);  // EXT2_FT_* for a mode
// Sets the owner; (uid_t)-1 / (gid_t)-1 leave that part as it is.
void set_owner(ext2_inode_large* inode, uid_t uid, gid_t gid);
// Allocates and writes an inode of `mode` (type and permissions) owned by the
// caller's euid/egid, links it as `name` in `dir`; *ino is the new inode.
errcode_t create_inode(ext2_filsys fs, ext2_ino_t dir, const std::string& name, mode_t mode,
                       dev_t rdev, ext2_ino_t* ino);
// ext2fs_link, growing the directory when it is full.
errcode_t link_expanding(ext2_filsys fs, ext2_ino_t dir, const std::string& name, ext2_ino_t ino,
                         int file_type);
// Frees an inode whose links are gone: its blocks, xattr block and bitmap bit.
errcode_t free_inode(ext2_filsys fs, ext2_ino_t ino);
// 1 if `dir` has entries besides "." and "..", 0 if not, or -errno-ish error.
errcode_t dir_is_empty(ext2_filsys fs, ext2_ino_t dir, bool* empty);
// Points the ".." entry of directory `dir` at `parent`.
errcode_t set_dotdot(ext2_filsys fs, ext2_ino_t dir, ext2_ino_t parent);

// namei.cpp: path lookup from the root ("a/b" is "/a/b"); symlinks in the
// middle are followed, the last component only with `follow`.
errcode_t lookup(ext2_filsys fs, const char* path, bool follow, ext2_ino_t* ino);
// The directory holding the last component of `path` and that component;
// EXT2_ET_INVALID_ARGUMENT for the root (no last component), errors of the
// directory's lookup, EXT2_ET_NO_DIRECTORY when it is not a directory.
// `trailing_slash` says whether the path ended in "/".
errcode_t lookup_parent(ext2_filsys fs, const char* path, ext2_ino_t* dir, std::string* name,
                        bool* trailing_slash = nullptr);
// The inode `name` names in `dir` (no symlink followed), or FILE_NOT_FOUND.
errcode_t lookup_in(ext2_filsys fs, ext2_ino_t dir, const std::string& name, ext2_ino_t* ino);

}  // namespace extfs
}  // namespace fs
}  // namespace photon
