// Private: the FUSE adaptor's inode table. The kernel names files by node
// ids; an IFileSystem by paths. Each node remembers its parent and name, so
// its path is rebuilt on demand and follows renames. Ids are never reused.
// A node lives while the kernel holds lookups on it or it has children; an
// unlinked or replaced one is detached: kept for its id, without a path.
//
// Safe from several vCPUs: a std::mutex guards the table, held for no more
// than a hash lookup or a path build, never across a yield.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace photon {
namespace fs {

class fuse_inode_table {
public:
    static constexpr uint64_t root_id = 1;  // FUSE_ROOT_ID

    fuse_inode_table();
    ~fuse_inode_table();
    fuse_inode_table(const fuse_inode_table&) = delete;
    fuse_inode_table& operator=(const fuse_inode_table&) = delete;

    // Sets `out` to the path of `ino`, plus "/name" if name. 0, or -ESTALE
    // for an unknown or detached node.
    int path_of(uint64_t ino, const char* name, std::string& out);
    // Records one kernel lookup of `name` in `parent`, whose file type is
    // that of `mode`; returns its node id, 0 if parent is gone. A node of
    // another type under that name is detached first (the file was
    // replaced behind our back).
    uint64_t remember(uint64_t parent, const char* name, mode_t mode);
    // Drops n kernel lookups (FORGET).
    void forget(uint64_t ino, uint64_t n);
    // The name was unlinked / replaced: detaches its node, if any.
    void removed(uint64_t parent, const char* name);
    // Moves a node after a successful rename (detaching the one it replaced).
    void renamed(uint64_t parent, const char* name, uint64_t newparent, const char* newname);
    size_t size();  // nodes, the root included

private:
    struct node;
    struct key {
        uint64_t parent;
        std::string name;
        bool operator==(const key& o) const { return parent == o.parent && name == o.name; }
    };
    struct key_hash {
        size_t operator()(const key& k) const;
    };

    node* find_locked(uint64_t ino);
    void detach_locked(node* n);
    void release_locked(node* n);  // frees n (and parents) once unreferenced

    std::mutex mu_;
    std::unordered_map<uint64_t, node*> ids_;
    std::unordered_map<key, node*, key_hash> names_;
    uint64_t next_id_ = root_id + 1;
};

}  // namespace fs
}  // namespace photon
