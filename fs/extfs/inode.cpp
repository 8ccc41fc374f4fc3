// Inodes: reading and writing them whole (with the large inode's nanosecond
// fields), stat, creating, linking and freeing them.
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>

#include "extfs_impl.h"

namespace photon {
namespace fs {
namespace extfs {
namespace {

ext2_inode* small(ext2_inode_large* inode) { return reinterpret_cast<ext2_inode*>(inode); }

int inode_bytes(ext2_filsys fs) {
    return std::min<int>(sizeof(ext2_inode_large), EXT2_INODE_SIZE(fs->super));
}

// Whether the large inode's i_extra_isize covers `field` (an offset in it).
bool has_extra(const ext2_inode_large& inode, size_t field_end) {
    return EXT2_GOOD_OLD_INODE_SIZE + (size_t)inode.i_extra_isize >= field_end;
}

__u32 encode_extra(const struct timespec& ts) {
    // Bits 0-1: epoch (seconds beyond 32 signed bits), 2-31: nanoseconds.
    __u32 epoch = (__u32)(((int64_t)ts.tv_sec - (int32_t)ts.tv_sec) >> 32) & 3;
    return epoch | ((__u32)ts.tv_nsec << 2);
}

struct timespec decode(__u32 sec, const __u32* extra) {
    struct timespec ts;
    ts.tv_sec = (int32_t)sec;
    ts.tv_nsec = 0;
    if (extra) {
        ts.tv_sec += (int64_t)(*extra & 3) << 32;
        ts.tv_nsec = *extra >> 2;
    }
    return ts;
}

}  // namespace

errcode_t read_inode(ext2_filsys fs, ext2_ino_t ino, ext2_inode_large* inode) {
    memset(inode, 0, sizeof(*inode));
    return ext2fs_read_inode_full(fs, ino, small(inode), inode_bytes(fs));
}

errcode_t write_inode(ext2_filsys fs, ext2_ino_t ino, ext2_inode_large* inode) {
    return ext2fs_write_inode_full(fs, ino, small(inode), inode_bytes(fs));
}

void set_times(ext2_inode_large* inode, int which, const struct timespec* ts) {
    struct timespec now;
    if (!ts) {
        clock_gettime(CLOCK_REALTIME, &now);
        ts = &now;
    }
    auto put = [&](__u32* sec, __u32* extra, size_t end) {
        *sec = (__u32)ts->tv_sec;
        if (has_extra(*inode, end)) *extra = encode_extra(*ts);
    };
    if (which & kAtime) {
        put(&inode->i_atime, &inode->i_atime_extra, offsetof(ext2_inode_large, i_atime_extra) + 4);
    }
    if (which & kMtime) {
        put(&inode->i_mtime, &inode->i_mtime_extra, offsetof(ext2_inode_large, i_mtime_extra) + 4);
    }
    if (which & kCtime) {
        put(&inode->i_ctime, &inode->i_ctime_extra, offsetof(ext2_inode_large, i_ctime_extra) + 4);
    }
}

void fill_stat(ext2_filsys fs, ext2_ino_t ino, const ext2_inode_large& in, struct stat* st) {
    auto& inode = const_cast<ext2_inode_large&>(in);
    memset(st, 0, sizeof(*st));
    st->st_ino = ino;
    st->st_mode = inode.i_mode;
    st->st_nlink = inode.i_links_count;
    st->st_uid = inode_uid(inode);
    st->st_gid = inode_gid(inode);
    st->st_size = EXT2_I_SIZE(&inode);
    st->st_blksize = fs->blocksize;
    st->st_blocks = ext2fs_get_stat_i_blocks(fs, small(&inode));
    if (LINUX_S_ISCHR(inode.i_mode) || LINUX_S_ISBLK(inode.i_mode)) {
        __u32 old = inode.i_block[0], now = inode.i_block[1];
        if (old) {
            st->st_rdev = makedev((old >> 8) & 0xff, old & 0xff);
        } else {
            st->st_rdev = makedev((now & 0xfff00) >> 8, (now & 0xff) | ((now >> 12) & 0xfff00));
        }
    }
    auto extra = [&](const __u32* field) -> const __u32* {
        size_t end = (const char*)field - (const char*)&inode + 4;
        return has_extra(inode, end) ? field : nullptr;
    };
    st->st_atim = decode(inode.i_atime, extra(&inode.i_atime_extra));
    st->st_mtim = decode(inode.i_mtime, extra(&inode.i_mtime_extra));
    st->st_ctim = decode(inode.i_ctime, extra(&inode.i_ctime_extra));
}

void set_owner(ext2_inode_large* inode, uid_t uid, gid_t gid) {
    if (uid != (uid_t)-1) {
        inode->i_uid = uid & 0xffff;
        ext2fs_set_i_uid_high(*inode, uid >> 16);
    }
    if (gid != (gid_t)-1) {
        inode->i_gid = gid & 0xffff;
        ext2fs_set_i_gid_high(*inode, gid >> 16);
    }
}

int file_type_of(mode_t mode) {
    switch (mode & S_IFMT) {
        case S_IFREG:
            return EXT2_FT_REG_FILE;
        case S_IFDIR:
            return EXT2_FT_DIR;
        case S_IFLNK:
            return EXT2_FT_SYMLINK;
        case S_IFCHR:
            return EXT2_FT_CHRDEV;
        case S_IFBLK:
            return EXT2_FT_BLKDEV;
        case S_IFIFO:
            return EXT2_FT_FIFO;
        case S_IFSOCK:
            return EXT2_FT_SOCK;
        default:
            return EXT2_FT_UNKNOWN;
    }
}

errcode_t link_expanding(ext2_filsys fs, ext2_ino_t dir, const std::string& name, ext2_ino_t ino,
                         int file_type) {
    for (int tries = 0;; tries++) {
        errcode_t err = ext2fs_link(fs, dir, name.c_str(), ino, file_type);
        if (err != EXT2_ET_DIR_NO_SPACE || tries == 2) return err;
        err = ext2fs_expand_dir(fs, dir);
        if (err) return err;
    }
}

errcode_t create_inode(ext2_filsys fs, ext2_ino_t dir, const std::string& name, mode_t mode,
                       dev_t rdev, ext2_ino_t* ino_out) {
    ext2_ino_t ino;
    errcode_t err = ext2fs_new_inode(fs, dir, mode, nullptr, &ino);
    if (err) return err;
    ext2_inode_large inode;
    memset(&inode, 0, sizeof(inode));
    inode.i_mode = mode;
    inode.i_links_count = 1;
    set_owner(&inode, geteuid(), getegid());
    if (S_ISCHR(mode) || S_ISBLK(mode)) {
        unsigned ma = major(rdev), mi = minor(rdev);
        if (ma < 256 && mi < 256) {
            inode.i_block[0] = ma * 256 + mi;
        } else {
            inode.i_block[1] = (mi & 0xff) | (ma << 8) | ((mi & ~0xffu) << 12);
        }
    } else if (S_ISREG(mode) && ext2fs_has_feature_extents(fs->super)) {
        ext2_extent_handle_t handle;  // opening it writes an empty extent tree's header
        err = ext2fs_extent_open2(fs, ino, small(&inode), &handle);
        if (err) return err;
        ext2fs_extent_free(handle);
    }
    err = ext2fs_write_new_inode(fs, ino, small(&inode));
    if (!err) err = read_inode(fs, ino, &inode);  // now with i_extra_isize set
    if (err) return err;
    set_times(&inode, kAtime | kMtime | kCtime);
    err = write_inode(fs, ino, &inode);
    if (!err) err = link_expanding(fs, dir, name, ino, file_type_of(mode));
    if (err) return err;  // the inode was never counted as used: nothing to undo
    ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
    *ino_out = ino;
    return 0;
}

errcode_t free_inode(ext2_filsys fs, ext2_ino_t ino) {
    ext2_inode_large inode;
    errcode_t err = read_inode(fs, ino, &inode);
    if (err) return err;
    if (ext2fs_file_acl_block(fs, small(&inode))) {
        err = ext2fs_free_ext_attr(fs, ino, &inode);
        if (!err) err = read_inode(fs, ino, &inode);
        if (err) return err;
    }
    if (ext2fs_inode_has_valid_blocks2(fs, small(&inode))) {
        err = ext2fs_punch(fs, ino, small(&inode), nullptr, 0, ~0ULL);
        if (!err) err = read_inode(fs, ino, &inode);
        if (err) return err;
    }
    int is_dir = LINUX_S_ISDIR(inode.i_mode);
    inode.i_links_count = 0;
    inode.i_dtime = (__u32)time(nullptr);
    err = write_inode(fs, ino, &inode);
    if (err) return err;
    ext2fs_inode_alloc_stats2(fs, ino, -1, is_dir);
    return 0;
}

namespace {

struct empty_check {
    bool empty = true;
};

int check_entry(ext2_ino_t, int entry, struct ext2_dir_entry* dirent, int, int, char*, void* priv) {
    if (entry == DIRENT_DOT_FILE || entry == DIRENT_DOT_DOT_FILE || dirent->inode == 0) return 0;
    static_cast<empty_check*>(priv)->empty = false;
    return DIRENT_ABORT;
}

int point_dotdot(ext2_ino_t, int entry, struct ext2_dir_entry* dirent, int, int, char*,
                 void* priv) {
    if (entry != DIRENT_DOT_DOT_FILE) return 0;
    dirent->inode = *static_cast<ext2_ino_t*>(priv);
    return DIRENT_CHANGED | DIRENT_ABORT;
}

}  // namespace

errcode_t dir_is_empty(ext2_filsys fs, ext2_ino_t dir, bool* empty) {
    empty_check check;
    errcode_t err = ext2fs_dir_iterate2(fs, dir, 0, nullptr, check_entry, &check);
    *empty = check.empty;
    return err;
}

errcode_t set_dotdot(ext2_filsys fs, ext2_ino_t dir, ext2_ino_t parent) {
    return ext2fs_dir_iterate2(fs, dir, DIRENT_FLAG_INCLUDE_EMPTY, nullptr, point_dotdot, &parent);
}

}  // namespace extfs
}  // namespace fs
}  // namespace photon
