// Backtraces for dumps and slow-turn reports: the frame-pointer walk, and code addresses to
// names (dladdr: the dynamic symbol table). Private header of thread/.
#pragma once

#include <cxxabi.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

namespace photon {

// Follows the frame-pointer chain from fp within the stack [lo, hi): each frame holds the
// caller's frame pointer and the return address. A chain that leaves the stack or does not
// climb ends the walk. Stores up to max return addresses in out; returns how many. Reads only
// the stack (async-signal-safe), which is another coroutine's: not instrumented.
__attribute__((no_sanitize("address"))) inline size_t walk_frames(uintptr_t fp, uintptr_t lo,
                                                                  uintptr_t hi, void** out,
                                                                  size_t max) {
    size_t n = 0;
    while (n < max && fp >= lo && fp + 16 <= hi && !(fp & 7)) {
        auto f = reinterpret_cast<const uintptr_t*>(fp);
        if (!f[1]) break;
        out[n++] = reinterpret_cast<void*>(f[1]);
        if (f[0] <= fp) break;
        fp = f[0];
    }
    return n;
}

// Addresses to names ("function+0xoff", demangled, or "(binary+0xoff)"), each looked up
// once per instance.
class symbol_names {
public:
    const std::string& of(const void* addr, bool return_address) {
        auto it = cache_.find(addr);
        if (it != cache_.end()) return it->second;
        std::string& s = cache_[addr];
        // A return address points after its call, maybe past the function's end.
        auto a = static_cast<const char*>(addr) - (return_address ? 1 : 0);
        Dl_info info;
        char buf[64];
        if (addr && dladdr(a, &info)) {
            const char* base =
                info.dli_sname ? (const char*)info.dli_saddr : (const char*)info.dli_fbase;
            if (info.dli_sname) {
                int status = 0;
                char* d = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
                s = status == 0 && d ? d : info.dli_sname;
                free(d);
            } else {
                const char* slash = info.dli_fname ? strrchr(info.dli_fname, '/') : nullptr;
                s = "(";
                s += slash ? slash + 1 : info.dli_fname ? info.dli_fname : "?";
            }
            if (static_cast<const char*>(addr) != base) {
                snprintf(buf, sizeof(buf), "+0x%tx", static_cast<const char*>(addr) - base);
                s += buf;
            }
            if (!info.dli_sname) s += ")";
        } else {
            snprintf(buf, sizeof(buf), "%p", addr);
            s = buf;
        }
        return s;
    }

private:
    std::unordered_map<const void*, std::string> cache_;
};

}  // namespace photon
