// A file in memory for the fs tests, on VirtualFile (so it also exercises
// VirtualFile's defaults): pread / pwrite over a std::string, with knobs for
// short transfers and injected failures, and counters of the calls.
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include <photon/fs/virtual-file.h>

namespace photon_test {

class mem_file : public photon::fs::VirtualFile {
public:
    explicit mem_file(std::string data = "") : data(std::move(data)) {}

    std::string data;
    size_t max_io = SIZE_MAX;  // bytes moved per call at most (short transfers)
    int fail_next = 0;         // calls to fail with fail_errno first
    int fail_errno = EIO;
    bool fixed_size = false;  // writes past the end are cut (a device)
    int reads = 0, writes = 0, syncs = 0;
    int closes = 0;

    ssize_t pread(void* buf, size_t count, off_t offset) override {
        reads++;
        if (failing()) return -1;
        if (offset < 0) return errno = EINVAL, -1;
        if ((size_t)offset >= data.size()) return 0;
        size_t n = std::min({count, max_io, data.size() - offset});
        memcpy(buf, data.data() + offset, n);
        return n;
    }
    ssize_t pwrite(const void* buf, size_t count, off_t offset) override {
        writes++;
        if (failing()) return -1;
        if (offset < 0) return errno = EINVAL, -1;
        size_t n = std::min(count, max_io);
        if (fixed_size) n = (size_t)offset >= data.size() ? 0 : std::min(n, data.size() - offset);
        if (offset + n > data.size()) data.resize(offset + n);
        memcpy(&data[offset], buf, n);
        return n;
    }
    int fstat(struct stat* st) override {
        memset(st, 0, sizeof(*st));
        st->st_mode = S_IFREG | 0644;
        st->st_size = data.size();
        return 0;
    }
    int ftruncate(off_t length) override {
        if (fixed_size) return errno = EINVAL, -1;
        data.resize(length);
        return 0;
    }
    int close() override { return closes++, 0; }
    int fsync() override {
        syncs++;
        return failing() ? -1 : 0;
    }
    int fdatasync() override { return fsync(); }
    int fchmod(mode_t) override { return 0; }
    int fchown(uid_t, gid_t) override { return 0; }
    photon::fs::IFileSystem* filesystem() override { return nullptr; }

private:
    bool failing() {
        if (fail_next <= 0) return false;
        fail_next--;
        errno = fail_errno;
        return true;
    }
};

}  // namespace photon_test
