#include "fuse_inode_table.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

namespace photon {
namespace fs {

struct fuse_inode_table::node {
    uint64_t id;
    node* parent;  // nullptr for the root and for detached nodes
    std::string name;
    uint64_t nlookup;
    uint64_t children;  // nodes whose parent this is: they need our path
    mode_t type;        // S_IFMT bits
};

size_t fuse_inode_table::key_hash::operator()(const key& k) const {
    return std::hash<std::string>()(k.name) ^ (k.parent * 0x9e3779b97f4a7c15ull);
}

fuse_inode_table::fuse_inode_table() {
    ids_[root_id] = new node{root_id, nullptr, "", 1, 0, S_IFDIR};
}

fuse_inode_table::~fuse_inode_table() {
    for (auto& e : ids_) delete e.second;
}

fuse_inode_table::node* fuse_inode_table::find_locked(uint64_t ino) {
    auto it = ids_.find(ino);
    return it == ids_.end() ? nullptr : it->second;
}

int fuse_inode_table::path_of(uint64_t ino, const char* name, std::string& out) {
    std::lock_guard<std::mutex> lock(mu_);
    node* n = find_locked(ino);
    if (!n) return -ESTALE;
    std::vector<const node*> chain;
    chain.reserve(16);
    size_t len = name ? strlen(name) + 1 : 1;
    for (const node* p = n; p->id != root_id; p = p->parent) {
        if (!p->parent) return -ESTALE;  // p, or an ancestor, was detached
        chain.push_back(p);
        len += p->name.size() + 1;
    }
    out.clear();
    out.reserve(len);
    for (size_t i = chain.size(); i-- > 0;) {
        out += '/';
        out += chain[i]->name;
    }
    if (name) {
        out += '/';
        out += name;
    }
    if (out.empty()) out = "/";
    return 0;
}

uint64_t fuse_inode_table::remember(uint64_t parent, const char* name, mode_t mode) {
    std::lock_guard<std::mutex> lock(mu_);
    node* p = find_locked(parent);
    if (!p || (p->id != root_id && !p->parent)) return 0;
    key k{parent, name};
    auto it = names_.find(k);
    if (it != names_.end()) {
        node* n = it->second;
        if (n->type == (mode & S_IFMT)) {
            n->nlookup++;
            return n->id;
        }
        detach_locked(n);
        p = find_locked(parent);  // the kernel pins it, but do not rely on that
        if (!p) return 0;
    }
    node* n = new node{next_id_++, p, name, 1, 0, mode & S_IFMT};
    p->children++;
    ids_[n->id] = n;
    names_.emplace(std::move(k), n);
    return n->id;
}

void fuse_inode_table::forget(uint64_t ino, uint64_t count) {
    std::lock_guard<std::mutex> lock(mu_);
    node* n = find_locked(ino);
    if (!n || n->id == root_id) return;
    n->nlookup = count >= n->nlookup ? 0 : n->nlookup - count;
    release_locked(n);
}

void fuse_inode_table::removed(uint64_t parent, const char* name) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = names_.find(key{parent, name});
    if (it != names_.end()) detach_locked(it->second);
}

void fuse_inode_table::renamed(uint64_t parent, const char* name, uint64_t newparent,
                               const char* newname) {
    std::lock_guard<std::mutex> lock(mu_);
    auto victim = names_.find(key{newparent, newname});
    auto it = names_.find(key{parent, name});
    if (victim != names_.end() && victim != it) detach_locked(victim->second);
    it = names_.find(key{parent, name});  // detaching may have freed nodes
    if (it == names_.end()) return;       // never looked up: nothing to move
    node* n = it->second;
    node* np = find_locked(newparent);
    if (!np || (np->id != root_id && !np->parent)) {
        detach_locked(n);
        return;
    }
    names_.erase(it);
    node* old_parent = n->parent;
    np->children++;
    n->parent = np;
    n->name = newname;
    names_.emplace(key{newparent, newname}, n);
    old_parent->children--;
    release_locked(old_parent);
}

void fuse_inode_table::detach_locked(node* n) {
    if (!n->parent) return;
    names_.erase(key{n->parent->id, n->name});
    node* p = n->parent;
    n->parent = nullptr;
    n->name.clear();
    p->children--;
    release_locked(p);
    release_locked(n);
}

void fuse_inode_table::release_locked(node* n) {
    while (n && n->id != root_id && n->nlookup == 0 && n->children == 0) {
        node* p = n->parent;
        if (p) names_.erase(key{p->id, n->name});
        ids_.erase(n->id);
        delete n;
        if (!p) return;
        p->children--;
        n = p;
    }
}

size_t fuse_inode_table::size() {
    std::lock_guard<std::mutex> lock(mu_);
    return ids_.size();
}

}  // namespace fs
}  // namespace photon
