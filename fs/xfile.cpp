// Composite files (xfile.h): the range of a request is split over the parts
// with range-split.h, and each piece goes to its part in order.
#include <sys/stat.h>

#include <climits>
#include <memory>
#include <new>
#include <vector>

#include <photon/common/alog.h>
#include <photon/fs/range-split-vi.h>
#include <photon/fs/range-split.h>
#include <photon/fs/virtual-file.h>
#include <photon/fs/xfile.h>

namespace photon {
namespace fs {
namespace {

constexpr uint64_t kMaxSize = INT64_MAX;  // an off_t must reach every byte

class xfile : public VirtualFile {
public:
    ~xfile() override {
        if (own_)
            for (auto f : files_) delete f;
    }
    // Parts may be deleted only once the composite was made (see take()).
    void take(bool ownership) { own_ = ownership; }

    ssize_t pread(void* buf, size_t count, off_t offset) override {
        return io(false, (char*)buf, count, offset);
    }
    ssize_t pwrite(const void* buf, size_t count, off_t offset) override {
        return io(true, (char*)buf, count, offset);
    }
    int close() override {
        return own_ ? each([](IFile* f) { return f->close(); }) : 0;
    }
    int fsync() override {
        return each([](IFile* f) { return f->fsync(); });
    }
    int fdatasync() override {
        return each([](IFile* f) { return f->fdatasync(); });
    }
    int fstat(struct stat* buf) override {
        if (files_.front()->fstat(buf) < 0) return -1;
        buf->st_size = size_;
        return 0;
    }
    UNIMPLEMENTED_POINTER(IFileSystem* filesystem() override)
    UNIMPLEMENTED(int fchmod(mode_t mode) override)
    UNIMPLEMENTED(int fchown(uid_t owner, gid_t group) override)
    UNIMPLEMENTED(int ftruncate(off_t length) override)
    Object* get_underlay_object(int i) override {
        return i >= 0 && (size_t)i < files_.size() ? files_[i] : nullptr;
    }

protected:
    explicit xfile(IFile** files, uint64_t n) : files_(files, files + n) {}

    // Runs the pieces of [offset, offset + count), already inside the file.
    virtual ssize_t split_io(bool write, char* buf, size_t count, uint64_t offset) = 0;

    // The pieces of `rs`, each to the (file, position) that map() gives.
    template <typename Split, typename Map>
    static ssize_t run(const Split& rs, Map map, bool write, char* buf) {
        ssize_t done = 0;
        for (auto& x : rs.all_parts()) {
            IFile* f;
            uint64_t pos;
            map(x, f, pos);
            ssize_t n =
                write ? f->pwrite(buf + done, x.length, pos) : f->pread(buf + done, x.length, pos);
            if (n < 0) return done ? done : -1;
            done += n;
            if ((uint64_t)n < x.length) break;
        }
        return done;
    }

    std::vector<IFile*> files_;
    uint64_t size_ = 0;

private:
    ssize_t io(bool write, char* buf, size_t count, off_t offset) {
        if (offset < 0) {
            errno = EINVAL;
            return -1;
        }
        if ((uint64_t)offset >= size_) {
            if (!write || count == 0) return 0;
            errno = ENOSPC;
            return -1;
        }
        count = std::min<uint64_t>(count, size_ - offset);
        return count ? split_io(write, buf, count, offset) : 0;
    }
    template <typename F>
    int each(F f) {
        int ret = 0;
        for (auto x : files_)
            if (f(x) < 0) ret = -1;
        return ret;
    }
    bool own_ = false;
};

class fixed_linear_file : public xfile {
public:
    fixed_linear_file(uint64_t unit, IFile** files, uint64_t n) : xfile(files, n), unit_(unit) {
        size_ = unit * n;
    }

protected:
    ssize_t split_io(bool write, char* buf, size_t count, uint64_t offset) override {
        range_split_power2 rs(offset, count, unit_);  // divides when unit_ is no power of 2
        auto map = [&](const sub_range& x, IFile*& f, uint64_t& pos) {
            f = files_[x.i];
            pos = x.offset;
        };
        return run(rs, map, write, buf);
    }

private:
    uint64_t unit_;
};

class linear_file : public xfile {
public:
    linear_file(IFile** files, uint64_t n) : xfile(files, n) {}
    // Sizes from fstat(); empty parts take no key point. 0, or -1 with errno.
    int init() {
        key_points_.push_back(0);
        for (auto f : files_) {
            struct stat st;
            if (f->fstat(&st) < 0) LOG_ERRNO_RETURN(0, -1, "linear file: fstat of a part failed");
            if (st.st_size == 0) continue;
            if ((uint64_t)st.st_size > kMaxSize - size_)
                LOG_ERROR_RETURN(EINVAL, -1, "linear file: the parts add up past 2^63");
            size_ += st.st_size;
            key_points_.push_back(size_);
            parts_.push_back(f);
        }
        key_points_.push_back(UINT64_MAX);
        return 0;
    }

protected:
    ssize_t split_io(bool write, char* buf, size_t count, uint64_t offset) override {
        range_split_vi rs(offset, count, key_points_.data(), key_points_.size());
        auto map = [&](const sub_range& x, IFile*& f, uint64_t& pos) {
            f = parts_[x.i];
            pos = x.offset;
        };
        return run(rs, map, write, buf);
    }

private:
    std::vector<uint64_t> key_points_;
    std::vector<IFile*> parts_;  // the non-empty files, in order
};

class stripe_file : public xfile {
public:
    stripe_file(uint64_t stripe, IFile** files, uint64_t n) : xfile(files, n), stripe_(stripe) {}
    // Checks the parts' sizes. 0, or -1 with errno.
    int init() {
        uint64_t each = 0;
        for (auto f : files_) {
            struct stat st;
            if (f->fstat(&st) < 0) LOG_ERRNO_RETURN(0, -1, "stripe file: fstat of a part failed");
            uint64_t sz = st.st_size;
            if (sz == 0 || sz % stripe_ || (each && sz != each))
                LOG_ERROR_RETURN(EINVAL, -1, "stripe file: parts must be of one size, a nonzero ",
                                 "multiple of the stripe size ", stripe_, " (got ", sz, ")");
            each = sz;
        }
        if (each > kMaxSize / files_.size())
            LOG_ERROR_RETURN(EINVAL, -1, "stripe file: the parts add up past 2^63");
        size_ = each * files_.size();
        return 0;
    }

protected:
    ssize_t split_io(bool write, char* buf, size_t count, uint64_t offset) override {
        range_split_power2 rs(offset, count, stripe_);
        uint64_t n = files_.size();
        auto map = [&](const sub_range& x, IFile*& f, uint64_t& pos) {
            f = files_[x.i % n];
            pos = rs.multiply(x.i / n, x.offset);
        };
        return run(rs, map, write, buf);
    }

private:
    uint64_t stripe_;
};

bool bad_parts(IFile** files, uint64_t n) {
    if (!files || n == 0) return true;
    for (uint64_t i = 0; i < n; i++)
        if (!files[i]) return true;
    return false;
}

// The composite, owning its parts if asked, or nullptr (parts untouched).
template <typename X>
IFile* finish(X* x, int init_result, bool ownership) {
    if (init_result < 0) {
        int e = errno;
        delete x;
        errno = e;
        return nullptr;
    }
    x->take(ownership);
    return x;
}

}  // namespace

IFile* new_fixed_size_linear_file(uint64_t unit_size, IFile** files, uint64_t n, bool ownership) {
    if (bad_parts(files, n)) LOG_ERROR_RETURN(EINVAL, nullptr, "linear file: no or null parts");
    if (unit_size == 0 || unit_size > kMaxSize / n)
        LOG_ERROR_RETURN(EINVAL, nullptr, "linear file: bad unit size ", unit_size);
    return finish(new fixed_linear_file(unit_size, files, n), 0, ownership);
}

IFile* new_linear_file(IFile** files, uint64_t n, bool ownership) {
    if (bad_parts(files, n)) LOG_ERROR_RETURN(EINVAL, nullptr, "linear file: no or null parts");
    auto x = new linear_file(files, n);
    return finish(x, x->init(), ownership);
}

IFile* new_stripe_file(uint64_t stripe_size, IFile** files, uint64_t n, bool ownership) {
    if (bad_parts(files, n)) LOG_ERROR_RETURN(EINVAL, nullptr, "stripe file: no or null parts");
    if (stripe_size == 0 || !is_power_of_2(stripe_size))
        LOG_ERROR_RETURN(EINVAL, nullptr, "stripe file: stripe size ", stripe_size,
                         " is not a power of 2");
    auto x = new stripe_file(stripe_size, files, n);
    return finish(x, x->init(), ownership);
}

}  // namespace fs
}  // namespace photon
