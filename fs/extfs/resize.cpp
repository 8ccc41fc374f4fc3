// resize_extfs: growing an unmounted ext2/3/4 file system in place, on
// libext2fs primitives (Debian's libext2fs has no resize2fs library).
//
// Growing appends block groups: each gets its descriptor, its bitmaps and
// inode table (ext2fs_allocate_group_table), a superblock and descriptor
// backup where the sparse_super(2) rules put one, and its free counts; the
// old last group is completed first. When the descriptors need more blocks,
// they take them from the reserved GDT blocks that the resize_inode feature
// keeps after every descriptor table (and its backups), and the resize inode
// is rebuilt to map the reserved blocks left. Nothing is written until every
// check has passed; libext2fs writes the result at ext2fs_close.
//
// Not done (-1 with errno, logged, the image untouched): shrinking
// (EOPNOTSUPP), meta_bg and bigalloc file systems (EOPNOTSUPP), more
// descriptor blocks than the reserved GDT blocks hold (ENOSPC), an image not
// marked clean (EUCLEAN: run e2fsck first).
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

#include <photon/common/alog.h>
#include <photon/fs/extfs/extfs.h>

#include "extfs_impl.h"

namespace photon {
namespace fs {
namespace extfs {
namespace {

// Blocks in use in [start, end] of the block bitmap.
errcode_t count_used(ext2_filsys fs, blk64_t start, blk64_t end, blk64_t* used) {
    *used = 0;
    for (blk64_t pos = start; pos <= end;) {
        blk64_t set, zero;
        errcode_t err = ext2fs_find_first_set_block_bitmap2(fs->block_map, pos, end, &set);
        if (err == ENOENT) break;
        if (err) return err;
        err = ext2fs_find_first_zero_block_bitmap2(fs->block_map, set, end, &zero);
        if (err == ENOENT) {
            *used += end - set + 1;
            break;
        }
        if (err) return err;
        *used += zero - set;
        pos = zero + 1;
    }
    return 0;
}

struct geometry {
    blk64_t blocks;
    dgrp_t groups;
    unsigned long desc_blocks;
};

geometry geometry_for(ext2_filsys fs, blk64_t blocks) {
    geometry g;
    g.blocks = blocks;
    g.groups = (dgrp_t)ext2fs_div64_ceil(blocks - fs->super->s_first_data_block,
                                         EXT2_BLOCKS_PER_GROUP(fs->super));
    g.desc_blocks = ext2fs_div_ceil(g.groups, EXT2_DESC_PER_BLOCK(fs->super));
    return g;
}

// sparse_super2 keeps two backups; mkfs puts them in group 1 and the last
// group, so a grown file system moves the second to its new last group.
void move_backups(ext2_super_block* sb, dgrp_t old_groups, dgrp_t new_groups) {
    if (!ext2fs_has_feature_sparse_super2(sb)) return;
    bool follows_last =
        sb->s_backup_bgs[1] == old_groups - 1 || (sb->s_backup_bgs[1] == 0 && old_groups <= 2);
    if (sb->s_backup_bgs[0] == 0 && old_groups == 1 && new_groups > 1) sb->s_backup_bgs[0] = 1;
    if (follows_last && new_groups - 1 > sb->s_backup_bgs[0]) {
        sb->s_backup_bgs[1] = new_groups - 1;
    }
}

class grower {
public:
    explicit grower(ext2_filsys fs) : fs_(fs), sb_(fs->super) {}

    // Checks that the file system can grow to `blocks` and settles the final
    // size (a last group too small for its own tables is left out). 0, or an
    // errno with the reason logged.
    int plan(blk64_t blocks) {
        if (ext2fs_has_feature_meta_bg(sb_) || ext2fs_has_feature_bigalloc(sb_)) {
            LOG_ERROR_RETURN(0, EOPNOTSUPP, "resize_extfs: meta_bg and bigalloc are not supported");
        }
        if ((sb_->s_state & EXT2_ERROR_FS) || !(sb_->s_state & EXT2_VALID_FS)) {
            LOG_ERROR_RETURN(0, EUCLEAN,
                             "resize_extfs: not clean (errors, or not unmounted cleanly): "
                             "e2fsck first");
        }
        if (!ext2fs_has_feature_64bit(sb_) && blocks > 0xffffffffULL) blocks = 0xffffffffULL;
        old_ = geometry_for(fs_, ext2fs_blocks_count(sb_));
        new_ = geometry_for(fs_, blocks);
        // A last group needs room for its tables (and backup) and some data.
        blk64_t rem = (blocks - sb_->s_first_data_block) % EXT2_BLOCKS_PER_GROUP(sb_);
        if (rem && new_.groups > old_.groups) {
            ext2_super_block probe = *sb_;
            move_backups(&probe, old_.groups, new_.groups);
            blk64_t overhead = 2 + fs_->inode_blocks_per_group;
            if (has_super(&probe, new_.groups - 1)) {
                overhead += 1 + new_.desc_blocks + sb_->s_reserved_gdt_blocks;
            }
            if (rem < overhead + 50) new_ = geometry_for(fs_, blocks - rem);
        }
        if (new_.blocks < old_.blocks) {
            LOG_ERROR_RETURN(0, EOPNOTSUPP,
                             "resize_extfs: shrinking (` to ` blocks) is not supported",
                             old_.blocks, new_.blocks);
        }
        if ((uint64_t)new_.groups * sb_->s_inodes_per_group > 0xffffffffULL) {
            LOG_ERROR_RETURN(0, EFBIG, "resize_extfs: ` groups would have more than 2^32 inodes",
                             new_.groups);
        }
        unsigned long extra = new_.desc_blocks - old_.desc_blocks;
        if (extra > 0 &&
            (!ext2fs_has_feature_resize_inode(sb_) || extra > sb_->s_reserved_gdt_blocks)) {
            LOG_ERROR_RETURN(0, ENOSPC,
                             "resize_extfs: ` groups need ` more descriptor blocks, ` are reserved",
                             new_.groups, extra,
                             ext2fs_has_feature_resize_inode(sb_) ? sb_->s_reserved_gdt_blocks : 0);
        }
        // An old group that would gain a backup may have data where it goes.
        ext2_super_block probe = *sb_;
        move_backups(&probe, old_.groups, new_.groups);
        for (dgrp_t g = 0; g < old_.groups; g++) {
            if (!has_super(sb_, g) && has_super(&probe, g)) {
                LOG_ERROR_RETURN(0, EOPNOTSUPP, "resize_extfs: group ` would need a new backup", g);
            }
        }
        return 0;
    }

    bool unchanged() const { return new_.blocks == old_.blocks; }
    blk64_t blocks() const { return new_.blocks; }

    // Grows the in-memory file system; `zero_itables` writes the new inode
    // tables (not needed on a device known to read zeros there).
    errcode_t grow(bool zero_itables) {
        before old = remember_old_groups();
        errcode_t err = resize_super_and_descs(old.r_blocks);
        if (!err) err = resize_bitmaps();
        if (err) return err;
        // Groups whose free block count must be counted again.
        std::vector<bool> recount(new_.groups, false);
        recount[old_.groups - 1] = true;  // the old last group, completed
        free_moved_backups(old, &recount);
        err = add_groups(&recount);
        if (!err) err = recount_free(old, recount);
        if (err) return err;
        if (zero_itables && !ext2fs_has_group_desc_csum(fs_)) {
            err = zero_new_itables();
            if (err) return err;
        }
        if (ext2fs_has_feature_resize_inode(sb_)) {
            err = rebuild_resize_inode();
            if (err) return err;
        }
        ext2fs_mark_super_dirty(fs_);
        ext2fs_mark_bb_dirty(fs_);
        ext2fs_mark_ib_dirty(fs_);
        return 0;
    }

private:
    // What grow() needs of the file system as it was.
    struct before {
        std::vector<bool> had_super;   // per old group
        std::vector<blk64_t> free;     // per old group
        unsigned reserved_gdt_blocks;  // after every descriptor table
        blk64_t r_blocks, free_blocks;
    };

    before remember_old_groups() const {
        before old;
        old.had_super.resize(old_.groups);
        old.free.resize(old_.groups);
        for (dgrp_t g = 0; g < old_.groups; g++) {
            old.had_super[g] = has_super(sb_, g);
            old.free[g] = ext2fs_bg_free_blocks_count(fs_, g);
        }
        old.reserved_gdt_blocks = sb_->s_reserved_gdt_blocks;
        old.r_blocks = ext2fs_r_blocks_count(sb_);
        old.free_blocks = ext2fs_free_blocks_count(sb_);
        return old;
    }

    // The superblock and the in-memory geometry, with room for the new
    // descriptors (zeroed).
    errcode_t resize_super_and_descs(blk64_t old_r) {
        unsigned long extra = new_.desc_blocks - old_.desc_blocks;
        move_backups(sb_, old_.groups, new_.groups);
        ext2fs_blocks_count_set(sb_, new_.blocks);
        ext2fs_r_blocks_count_set(sb_, (blk64_t)((double)old_r * new_.blocks / old_.blocks));
        sb_->s_inodes_count = new_.groups * sb_->s_inodes_per_group;
        sb_->s_free_inodes_count += (new_.groups - old_.groups) * sb_->s_inodes_per_group;
        sb_->s_reserved_gdt_blocks -= extra;
        sb_->s_overhead_clusters = 0;  // stale now: the kernel computes it again
        errcode_t err = ext2fs_resize_mem(old_.desc_blocks * fs_->blocksize,
                                          new_.desc_blocks * fs_->blocksize, &fs_->group_desc);
        if (err) return err;
        memset((char*)fs_->group_desc + old_.desc_blocks * fs_->blocksize, 0,
               extra * fs_->blocksize);
        fs_->group_desc_count = new_.groups;
        fs_->desc_blocks = new_.desc_blocks;
        return 0;
    }

    // Both bitmaps to the new size; the blocks added are free.
    errcode_t resize_bitmaps() {
        blk64_t real_end =
            (blk64_t)EXT2_BLOCKS_PER_GROUP(sb_) * new_.groups - 1 + sb_->s_first_data_block;
        errcode_t err = ext2fs_resize_block_bitmap2(new_.blocks - 1, real_end, fs_->block_map);
        if (!err) {
            err = ext2fs_resize_inode_bitmap2(sb_->s_inodes_count, sb_->s_inodes_count,
                                              fs_->inode_map);
        }
        if (err) return err;
        unmark(old_.blocks, new_.blocks - old_.blocks);
        return 0;
    }

    // sparse_super2's backup that moved away frees its old group's blocks.
    void free_moved_backups(const before& old, std::vector<bool>* recount) {
        for (dgrp_t g = 0; g < old_.groups; g++) {
            if (old.had_super[g] && !has_super(sb_, g)) {
                unmark(ext2fs_group_first_block2(fs_, g),
                       1 + old_.desc_blocks + old.reserved_gdt_blocks);
                (*recount)[g] = true;
            }
        }
    }

    // The new groups' descriptors and tables.
    errcode_t add_groups(std::vector<bool>* recount) {
        for (dgrp_t g = old_.groups; g < new_.groups; g++) {
            ext2fs_bg_flags_zap(fs_, g);
            if (ext2fs_has_group_desc_csum(fs_)) {
                // Unused inode tables: the kernel zeroes them lazily.
                ext2fs_bg_flags_set(fs_, g, EXT2_BG_INODE_UNINIT);
                ext2fs_bg_itable_unused_set(fs_, g, sb_->s_inodes_per_group);
            }
            ext2fs_bg_free_inodes_count_set(fs_, g, sb_->s_inodes_per_group);
            ext2fs_bg_used_dirs_count_set(fs_, g, 0);
            ext2fs_reserve_super_and_bgd(fs_, g, fs_->block_map);
            errcode_t err = ext2fs_allocate_group_table(fs_, g, fs_->block_map);
            if (err) return err;
            auto& r = *recount;
            r[g] = true;
            // flex_bg may place the tables in another group.
            r[ext2fs_group_of_blk2(fs_, ext2fs_block_bitmap_loc(fs_, g))] = true;
            r[ext2fs_group_of_blk2(fs_, ext2fs_inode_bitmap_loc(fs_, g))] = true;
            blk64_t it = ext2fs_inode_table_loc(fs_, g);
            r[ext2fs_group_of_blk2(fs_, it)] = true;
            r[ext2fs_group_of_blk2(fs_, it + fs_->inode_blocks_per_group - 1)] = true;
        }
        return 0;
    }

    // The free block counts of the groups marked, the total, and every
    // descriptor's checksum.
    errcode_t recount_free(const before& old, const std::vector<bool>& recount) {
        blk64_t free_total = old.free_blocks;
        for (dgrp_t g = 0; g < new_.groups; g++) {
            if (!recount[g]) continue;
            blk64_t used;
            errcode_t err = count_used(fs_, ext2fs_group_first_block2(fs_, g),
                                       ext2fs_group_last_block2(fs_, g), &used);
            if (err) return err;
            blk64_t size = ext2fs_group_last_block2(fs_, g) - ext2fs_group_first_block2(fs_, g) + 1;
            blk64_t prior = g < old_.groups ? old.free[g] : 0;
            ext2fs_bg_free_blocks_count_set(fs_, g, size - used);
            ext2fs_bg_flags_clear(fs_, g, EXT2_BG_BLOCK_UNINIT);
            free_total = free_total + (size - used) - prior;
        }
        ext2fs_free_blocks_count_set(sb_, free_total);
        for (dgrp_t g = 0; g < new_.groups; g++) ext2fs_group_desc_csum_set(fs_, g);
        return 0;
    }

    errcode_t zero_new_itables() {
        for (dgrp_t g = old_.groups; g < new_.groups; g++) {
            errcode_t err = ext2fs_zero_blocks2(fs_, ext2fs_inode_table_loc(fs_, g),
                                                fs_->inode_blocks_per_group, nullptr, nullptr);
            if (err) return err;
        }
        return 0;
    }

    void unmark(blk64_t first, blk64_t count) {  // the range call takes an unsigned count
        while (count > 0) {
            unsigned n = (unsigned)std::min<blk64_t>(count, 1u << 30);
            ext2fs_unmark_block_bitmap_range2(fs_->block_map, first, n);
            first += n;
            count -= n;
        }
    }

    static bool has_super(ext2_super_block* sb, dgrp_t g) {
        // ext2fs_bg_has_super's rules, for a superblock that is not fs->super.
        if (g == 0) return true;
        if (ext2fs_has_feature_sparse_super2(sb)) {
            return g == sb->s_backup_bgs[0] || g == sb->s_backup_bgs[1];
        }
        if (g <= 1 || !ext2fs_has_feature_sparse_super(sb)) return true;
        if (!(g & 1)) return false;
        for (dgrp_t base : {3u, 5u, 7u}) {
            dgrp_t p = base;
            while (p < g) p *= base;
            if (p == g) return true;
        }
        return false;
    }

    // The resize inode maps the reserved GDT blocks and their backups; both
    // changed. Emptying its double-indirect block lets libext2fs map them anew.
    errcode_t rebuild_resize_inode() {
        ext2_inode inode;
        errcode_t err = ext2fs_read_inode(fs_, EXT2_RESIZE_INO, &inode);
        if (err) return err;
        blk_t dind = inode.i_block[EXT2_DIND_BLOCK];
        if (dind) {
            err = ext2fs_zero_blocks2(fs_, dind, 1, nullptr, nullptr);
            if (!err) err = ext2fs_iblk_set(fs_, &inode, 1);
            if (!err) err = ext2fs_write_inode(fs_, EXT2_RESIZE_INO, &inode);
            if (err) return err;
        }
        return ext2fs_create_resize_inode(fs_);
    }

    ext2_filsys fs_;
    ext2_super_block* sb_;
    geometry old_{}, new_{};
};

}  // namespace
}  // namespace extfs

int resize_extfs(IFile* file, uint64_t new_size, int flags) {
    (void)flags;
    if (!file) return errno = EINVAL, -1;
    struct stat st;
    if (file->fstat(&st) < 0) LOG_ERRNO_RETURN(0, -1, "resize_extfs: fstat failed");
    extfs::channel_target target{file, nullptr};
    std::string name = extfs::channel_name(&target);
    ext2_filsys fs = nullptr;
    errcode_t err = ext2fs_open2(name.c_str(), nullptr, EXT2_FLAG_RW | EXT2_FLAG_64BITS, 0, 0,
                                 extfs::ifile_io_manager(), &fs);
    if (err) {
        errno = extfs::to_errno(err);
        LOG_ERRNO_RETURN(0, -1, "resize_extfs: no ext file system could be opened (libext2fs `)",
                         err);
    }
    err = ext2fs_check_desc(fs);
    if (!err) err = ext2fs_read_bitmaps(fs);
    if (err) {
        ext2fs_free(fs);
        errno = extfs::to_errno(err);
        LOG_ERRNO_RETURN(0, -1, "resize_extfs: bad group descriptors or bitmaps (libext2fs `)",
                         err);
    }
    extfs::grower g(fs);
    int e = g.plan(new_size / fs->blocksize);
    if (e || g.unchanged()) {
        ext2fs_free(fs);  // nothing written
        if (e) return errno = e, -1;
        return 0;
    }
    uint64_t fs_end = (uint64_t)g.blocks() * fs->blocksize;
    // Space the file gains from this ftruncate reads as zeros: the new inode
    // tables need no writing then.
    bool zeroed = false;
    if ((uint64_t)st.st_size < fs_end) {
        uint64_t old_end = ext2fs_blocks_count(fs->super) * (uint64_t)fs->blocksize;
        if (file->ftruncate((off_t)new_size) < 0) {
            ext2fs_free(fs);
            LOG_ERRNO_RETURN(0, -1, "resize_extfs: growing the file to ` bytes failed", new_size);
        }
        zeroed = (uint64_t)st.st_size <= old_end;
    }
    err = g.grow(!zeroed);
    if (err) {
        ext2fs_free(fs);  // bitmaps and descriptors were not written yet
        errno = extfs::to_errno(err);
        LOG_ERRNO_RETURN(0, -1, "resize_extfs: growing failed (libext2fs `)", err);
    }
    err = ext2fs_close_free(&fs);
    if (err) {
        errno = extfs::to_errno(err);
        LOG_ERRNO_RETURN(0, -1, "resize_extfs: writing the grown file system failed (libext2fs `)",
                         err);
    }
    LOG_INFO("resize_extfs: grown to ` bytes", fs_end);
    return 0;
}

}  // namespace fs
}  // namespace photon
