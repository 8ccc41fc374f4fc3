// make_extfs: an ext4 file system without a journal filling a pre-zeroed
// file, with PhotonLibOS's parameters: 4 KiB blocks, one inode per 16 KiB,
// 256-byte inodes, 5% reserved blocks, a resize inode (room to grow ~1024x),
// sparse_super2 backups (group 1 and the last group). The inode tables are
// not written: the file's zeros are their content.
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include <photon/common/alog.h>
#include <photon/common/uuid4.h>
#include <photon/fs/extfs/extfs.h>

#include "extfs_impl.h"

namespace photon {
namespace fs {
namespace extfs {
namespace {

// PhotonLibOS's fixed default UUID, so that images made without one match.
constexpr char kDefaultUuid[] = "bdf7bb2e-c231-43ce-87c2-299792458ef5";
constexpr int kBlockSize = 4096;
constexpr int kInodeRatio = 16384;
constexpr int kInodeSize = 256;
constexpr blk64_t kMinBlocks = 64;  // below that, no room for the tables and root

void set_params(ext2_super_block* sb, blk64_t blocks) {
    memset(sb, 0, sizeof(*sb));
    sb->s_rev_level = EXT2_DYNAMIC_REV;
    ext2fs_set_feature_64bit(sb);
    ext2fs_set_feature_sparse_super(sb);
    ext2fs_set_feature_sparse_super2(sb);
    ext2fs_set_feature_filetype(sb);
    ext2fs_set_feature_resize_inode(sb);
    ext2fs_set_feature_dir_index(sb);
    ext2fs_set_feature_xattr(sb);
    ext2fs_set_feature_dir_nlink(sb);
    ext2fs_set_feature_large_file(sb);
    ext2fs_set_feature_huge_file(sb);
    ext2fs_set_feature_flex_bg(sb);
    ext2fs_set_feature_extents(sb);
    ext2fs_set_feature_extra_isize(sb);
    sb->s_log_block_size = sb->s_log_cluster_size = 2;  // 1024 << 2
    sb->s_desc_size = EXT2_MIN_DESC_SIZE_64BIT;
    sb->s_inode_size = kInodeSize;
    ext2fs_blocks_count_set(sb, blocks);
    uint64_t inodes = blocks * kBlockSize / kInodeRatio;
    sb->s_inodes_count = inodes > UINT_MAX ? UINT_MAX : (__u32)inodes;
    ext2fs_r_blocks_count_set(sb, blocks / 20);
    sb->s_backup_bgs[0] = 1;
    sb->s_backup_bgs[1] = ~0u;  // ext2fs_initialize makes it the last group
}

errcode_t make_lost_found(ext2_filsys fs) {
    fs->umask = 077;
    errcode_t err = ext2fs_mkdir(fs, EXT2_ROOT_INO, 0, "lost+found");
    ext2_ino_t ino;
    if (!err) err = ext2fs_lookup(fs, EXT2_ROOT_INO, "lost+found", 10, nullptr, &ino);
    // e2fsck wants room in it for reconnected inodes without allocating: 16 KiB.
    for (int i = 1; !err && i < 4; i++) err = ext2fs_expand_dir(fs, ino);
    fs->umask = 022;
    return err;
}

int do_mkfs(IFile* file, blk64_t blocks, const char* uuid) {
    ext2_super_block params;
    set_params(&params, blocks);
    channel_target target{file, nullptr};
    std::string name = channel_name(&target);
    ext2_filsys fs = nullptr;
    errcode_t err =
        ext2fs_initialize(name.c_str(), EXT2_FLAG_64BITS, &params, ifile_io_manager(), &fs);
    if (err) {
        errno = to_errno(err);
        LOG_ERRNO_RETURN(0, -1, "make_extfs: setting up the superblock failed (libext2fs `)", err);
    }
    memcpy(fs->super->s_uuid, uuid, 16);
    memcpy(fs->super->s_hash_seed, uuid, 16);
    fs->super->s_def_hash_version = EXT2_HASH_HALF_MD4;
    fs->super->s_max_mnt_count = -1;
    fs->super->s_kbytes_written = 1;
    const char* step = "allocating the group tables";
    err = ext2fs_allocate_tables(fs);
    if (!err) {
        step = "making the root directory";
        err = ext2fs_mkdir(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, nullptr);
    }
    if (!err) {
        step = "making lost+found";
        err = make_lost_found(fs);
    }
    if (!err) {
        step = "reserving the special inodes";
        ext2fs_inode_alloc_stats2(fs, EXT2_BAD_INO, +1, 0);
        for (ext2_ino_t i = EXT2_ROOT_INO + 1; i < EXT2_FIRST_INODE(fs->super); i++) {
            ext2fs_inode_alloc_stats2(fs, i, +1, 0);
        }
        ext2fs_mark_ib_dirty(fs);
        err = ext2fs_update_bb_inode(fs, nullptr);
    }
    if (!err) {
        step = "making the resize inode";
        err = ext2fs_create_resize_inode(fs);
    }
    if (!err) {
        step = "writing it out";
        err = ext2fs_close_free(&fs);
    }
    if (err) {
        if (fs) ext2fs_free(fs);
        errno = to_errno(err);
        LOG_ERRNO_RETURN(0, -1, "make_extfs: ` failed (libext2fs `)", step, err);
    }
    return 0;
}

}  // namespace
}  // namespace extfs

int make_extfs(IFile* file, char* uuid) {
    if (!file) return errno = EINVAL, -1;
    struct stat st;
    if (file->fstat(&st) < 0) LOG_ERRNO_RETURN(0, -1, "make_extfs: fstat failed");
    blk64_t blocks = (uint64_t)st.st_size / extfs::kBlockSize;
    if (blocks < extfs::kMinBlocks) {
        LOG_ERROR_RETURN(EINVAL, -1, "make_extfs: ` bytes is too small for a file system",
                         st.st_size);
    }
    char raw[16];
    if (uuid4_parse(uuid ? uuid : const_cast<char*>(extfs::kDefaultUuid), raw) != 0) {
        LOG_ERROR_RETURN(EINVAL, -1, "make_extfs: invalid uuid `", uuid);
    }
    return extfs::do_mkfs(file, blocks, raw);
}

}  // namespace fs
}  // namespace photon
