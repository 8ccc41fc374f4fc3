// libext2fs reports errno values (from the io channel, its allocations) and
// its own com_err codes (EXT2_ET_*, a table based at EXT2_ET_BASE); the API
// answers in errno only.
#include <photon/common/alog.h>

#include "extfs_impl.h"

namespace photon {
namespace fs {
namespace extfs {

int to_errno(errcode_t err) {
    if (err > 0 && err < 4096) return (int)err;  // an errno value as it is
    if (err == 0) return 0;
    switch (err) {
        case EXT2_ET_FILE_NOT_FOUND:
            return ENOENT;
        case EXT2_ET_EA_KEY_NOT_FOUND:
            return ENODATA;
        case EXT2_ET_NO_DIRECTORY:
            return ENOTDIR;
        case EXT2_ET_DIR_EXISTS:
        case EXT2_ET_FILE_EXISTS:
            return EEXIST;
        case EXT2_ET_DIR_NO_SPACE:
        case EXT2_ET_BLOCK_ALLOC_FAIL:
        case EXT2_ET_INODE_ALLOC_FAIL:
        case EXT2_ET_EA_NO_SPACE:
        case EXT2_ET_INLINE_DATA_NO_SPACE:
        case EXT2_ET_EXTENT_NO_SPACE:
        case EXT2_ET_RES_GDT_BLOCKS:
            return ENOSPC;
        case EXT2_ET_SYMLINK_LOOP:
            return ELOOP;
        case EXT2_ET_FILE_TOO_BIG:
            return EFBIG;
        case EXT2_ET_TOO_MANY_REFS:
            return EMLINK;
        case EXT2_ET_NO_MEMORY:
            return ENOMEM;
        case EXT2_ET_RO_FILSYS:
            return EROFS;
        case EXT2_ET_FILE_RO:
            return EBADF;
        case EXT2_ET_EA_BAD_NAME_LEN:
        case EXT2_ET_EA_BAD_VALUE_SIZE:
            return ERANGE;
        case EXT2_ET_UNIMPLEMENTED:
            return ENOSYS;
        case EXT2_ET_OP_NOT_SUPPORTED:
        case EXT2_ET_UNSUPP_FEATURE:
        case EXT2_ET_RO_UNSUPP_FEATURE:
        case EXT2_ET_EXTENT_NOT_SUPPORTED:
        case EXT2_ET_EXTERNAL_JOURNAL_NOSUPP:
            return EOPNOTSUPP;
        case EXT2_ET_INVALID_ARGUMENT:
        case EXT2_ET_BAD_MAGIC:
        case EXT2_ET_REV_TOO_HIGH:
        case EXT2_ET_UNEXPECTED_BLOCK_SIZE:
        case EXT2_ET_BAD_DESC_SIZE:
        case EXT2_ET_TOOSMALL:
            return EINVAL;
        case EXT2_ET_SHORT_READ:
        case EXT2_ET_SHORT_WRITE:
        case EXT2_ET_LLSEEK_FAILED:
        case EXT2_ET_BLOCK_BITMAP_READ:
        case EXT2_ET_BLOCK_BITMAP_WRITE:
        case EXT2_ET_INODE_BITMAP_READ:
        case EXT2_ET_INODE_BITMAP_WRITE:
        case EXT2_ET_GDESC_READ:
        case EXT2_ET_GDESC_WRITE:
        case EXT2_ET_INODE_TABLE_READ:
        case EXT2_ET_INODE_TABLE_WRITE:
        case EXT2_ET_NEXT_INODE_READ:
            return EIO;
        case EXT2_ET_CORRUPT_SUPERBLOCK:
        case EXT2_ET_SB_CSUM_INVALID:
        case EXT2_ET_BAD_CRC:
        case EXT2_ET_GDESC_BAD_BLOCK_MAP:
        case EXT2_ET_GDESC_BAD_INODE_MAP:
        case EXT2_ET_GDESC_BAD_INODE_TABLE:
        case EXT2_ET_DIR_CORRUPTED:
        case EXT2_ET_DIR_CSUM_INVALID:
        case EXT2_ET_INODE_CORRUPTED:
        case EXT2_ET_INODE_CSUM_INVALID:
        case EXT2_ET_INODE_IS_GARBAGE:
        case EXT2_ET_EXTENT_HEADER_BAD:
        case EXT2_ET_EXTENT_INDEX_BAD:
        case EXT2_ET_EXTENT_LEAF_BAD:
        case EXT2_ET_EXTENT_CSUM_INVALID:
        case EXT2_ET_EXTENT_CYCLE:
        case EXT2_ET_EXTENT_INVALID_LENGTH:
        case EXT2_ET_BAD_EA_HEADER:
        case EXT2_ET_BAD_EA_BLOCK_NUM:
        case EXT2_ET_EXT_ATTR_CSUM_INVALID:
        case EXT2_ET_BLOCK_BITMAP_CSUM_INVALID:
        case EXT2_ET_INODE_BITMAP_CSUM_INVALID:
        case EXT2_ET_RESIZE_INODE_CORRUPT:
        case EXT2_ET_MISSING_INODE_TABLE:
        case EXT2_ET_FILESYSTEM_CORRUPTED:
        case EXT2_ET_BAD_INODE_NUM:
        case EXT2_ET_BAD_BLOCK_NUM:
            return EUCLEAN;  // Linux's EFSCORRUPTED
        default:
            LOG_WARN("extfs: libext2fs error ` taken as EIO (ext2_err.h: EXT2_ET_BASE + `)", err,
                     err - EXT2_ET_BASE);
            return EIO;
    }
}

}  // namespace extfs
}  // namespace fs
}  // namespace photon
