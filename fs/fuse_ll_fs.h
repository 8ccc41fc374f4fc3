// Private: fuser_go's adaptor, libfuse low-level operations over an
// IFileSystem. Node ids map to paths through fuse_inode_table; open files
// and directories are the IFile / DIR objects themselves (fi->fh). Handlers
// run in one coroutine per request (fuse_session_server.h) and may yield in
// the file system; no lock is held across a yield but a directory handle's
// own (readdir on one handle is sequential).
#pragma once

#include <photon/fs/fuse_adaptor.h>

#include <atomic>
#include <mutex>
#include <unordered_set>

#include "fuse_inode_table.h"

namespace photon {
namespace fs {

class IFile;
class IFileSystem;
class IFileSystemXAttr;
struct fuse_dir_handle;
struct fuse_file_handle;
class fuse_metrics;

struct fuse_ll_options {
    double entry_timeout = 1.0;   // seconds the kernel may cache names
    double attr_timeout = 1.0;    // ... attributes
    double negative_timeout = 0;  // ... a name's absence (0: not at all)
    int direct_io = 0;            // open files with FOPEN_DIRECT_IO: no page cache
    int kernel_cache = 0;         // keep the page cache across opens
    unsigned max_read = 0;        // the max_read= mount option, 0 if not given
};

// fuse_opt templates for fuse_ll_options: entry_timeout=, attr_timeout=,
// negative_timeout=, direct_io, kernel_cache (consumed), max_read= (kept for
// the mount).
extern const struct fuse_opt fuse_ll_option_spec[];

class fuse_ll_fs {
public:
    // conn: libfuse's connection options (fuse_parse_conn_info_opts), owned;
    // applied after our defaults (max_background 128). May be nullptr.
    fuse_ll_fs(IFileSystem* fs, const fuse_ll_options& opt, struct fuse_conn_info_opts* conn);
    // Closes the files and directories the kernel never released.
    ~fuse_ll_fs();
    fuse_ll_fs(const fuse_ll_fs&) = delete;
    fuse_ll_fs& operator=(const fuse_ll_fs&) = delete;

    // The operations; their userdata must be this object.
    static const struct fuse_lowlevel_ops* ops();

    size_t open_handles();  // files + directories not released yet
    size_t nodes() { return table_.size(); }
    // Counts error replies and the bytes read and written into m (the session's), before
    // the session starts; nullptr: none.
    void set_metrics(fuse_metrics* m) { metrics_ = m; }

    struct handlers;  // the callbacks (fuse_ll_fs.cpp)

private:
    friend struct handlers;
    // An open handle of node ino, referenced (give back with handlers::unref),
    // or nullptr. A linear search: only unlinked files need it.
    fuse_file_handle* borrow_file(uint64_t ino);
    void track(fuse_file_handle* f);
    void untrack(fuse_file_handle* f);
    void track(fuse_dir_handle* d);
    void untrack(fuse_dir_handle* d);

    IFileSystem* fs_;
    IFileSystemXAttr* xattr_;  // fs_ as such, or nullptr: xattrs are ENOSYS
    fuse_ll_options opt_;
    struct fuse_conn_info_opts* conn_;
    fuse_metrics* metrics_ = nullptr;
    // Set by init (before the kernel sends other requests), read by every lane.
    std::atomic<bool> writeback_{false};  // writeback cache negotiated
    std::atomic<bool> splice_{false};     // FUSE_CAP_SPLICE_WRITE: splice reads of local files
    std::atomic<mode_t> umask_{022};      // the process umask at init: creations undo it
    fuse_inode_table table_;
    std::mutex open_mu_;  // the two sets below; several lanes may serve us
    std::unordered_set<fuse_file_handle*> files_;
    std::unordered_set<fuse_dir_handle*> dirs_;
};

}  // namespace fs
}  // namespace photon
