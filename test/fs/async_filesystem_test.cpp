// async_filesystem.h: the sync adaptors run blocking calls off the vCPU (its
// other coroutines keep running), the async adaptors wait for a `done` that
// comes from another OS thread, on a vCPU or on a plain thread; results,
// errno and xattrs come through.
#include <dirent.h>
#include <photon/fs/async_filesystem.h>

#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include <photon/fs/filesystem.h>
#include <photon/fs/forwardfs.h>
#include <photon/fs/localfs.h>
#include <photon/thread/thread.h>

#include "../thread/test_util.h"
#include "fs_test_util.h"
#include "mem_file.h"

using namespace photon;
using namespace photon::fs;
using photon_test::mem_file;

namespace {

// A file whose reads block the OS thread (as a synchronous library would);
// counts the reads blocked at once.
struct blocking_file : mem_file {
    using mem_file::mem_file;
    std::atomic<int> blocked_ms{0}, in_flight{0}, max_in_flight{0};
    ssize_t pread(void* buf, size_t n, off_t off) override {
        int mine = ++in_flight, seen = max_in_flight;
        while (mine > seen && !max_in_flight.compare_exchange_weak(seen, mine)) {
        }
        ::usleep(blocked_ms * 1000);
        in_flight--;
        return mem_file::pread(buf, n, off);
    }
};

// Counts 1 ms sleeps until told to stop: proof that the vCPU runs. `during`
// counts those that ended while *busy was above 0: the vCPU ran while a
// call was in progress.
struct ticker {
    int ticks = 0, during = 0;
    bool stop = false;
    const std::atomic<int>* busy;
    join_handle* jh;
    explicit ticker(const std::atomic<int>* busy = nullptr) : busy(busy) {
        jh = thread_enable_join(thread_create(
            [](void* p) -> void* {
                auto t = (ticker*)p;
                while (!t->stop) {
                    thread_usleep(1000);
                    t->ticks++;
                    if (t->busy && *t->busy > 0) t->during++;
                }
                return nullptr;
            },
            this));
    }
    int finish() {
        stop = true;
        thread_join(jh);
        return ticks;
    }
};

// An IAsyncFile over a mem_file whose calls complete on a new OS thread after
// `delay_ms`; records the timeouts it was given.
class threaded_async_file : public IAsyncFile {
public:
    mem_file f{"0123456789"};
    int delay_ms = 5;
    std::atomic<uint64_t> last_timeout{0};

    IAsyncFileSystem* filesystem() override { return nullptr; }
#define ASYNC_VIA_THREAD(T, OP, CALL, ...)               \
    OVERRIDE_ASYNC(T, OP, __VA_ARGS__) {                 \
        later<T>(done, timeout, [=] { return f.CALL; }); \
    }
#define ASYNC_VIA_THREAD0(T, OP, CALL)                   \
    OVERRIDE_ASYNC0(T, OP) {                             \
        later<T>(done, timeout, [=] { return f.CALL; }); \
    }
    ASYNC_VIA_THREAD(ssize_t, read, read(buf, n), void* buf, size_t n)
    ASYNC_VIA_THREAD(ssize_t, readv, readv(iov, c), const struct iovec* iov, int c)
    ASYNC_VIA_THREAD(ssize_t, write, write(buf, n), const void* buf, size_t n)
    ASYNC_VIA_THREAD(ssize_t, writev, writev(iov, c), const struct iovec* iov, int c)
    ASYNC_VIA_THREAD(ssize_t, pread, pread(buf, n, o), void* buf, size_t n, off_t o)
    ASYNC_VIA_THREAD(ssize_t, preadv, preadv(iov, c, o), const struct iovec* iov, int c, off_t o)
    ASYNC_VIA_THREAD(ssize_t, pwrite, pwrite(buf, n, o), const void* buf, size_t n, off_t o)
    ASYNC_VIA_THREAD(ssize_t, pwritev, pwritev(iov, c, o), const struct iovec* iov, int c, off_t o)
    ASYNC_VIA_THREAD(off_t, lseek, lseek(o, w), off_t o, int w)
    ASYNC_VIA_THREAD0(int, fsync, fsync())
    ASYNC_VIA_THREAD0(int, fdatasync, fdatasync())
    ASYNC_VIA_THREAD0(int, close, close())
    ASYNC_VIA_THREAD(int, fchmod, fchmod(m), mode_t m)
    ASYNC_VIA_THREAD(int, fchown, fchown(u, g), uid_t u, gid_t g)
    ASYNC_VIA_THREAD(int, fstat, fstat(st), struct stat* st)
    ASYNC_VIA_THREAD(int, ftruncate, ftruncate(n), off_t n)
#undef ASYNC_VIA_THREAD
#undef ASYNC_VIA_THREAD0

private:
    template <typename T, typename F>
    void later(Done<T> done, uint64_t timeout, F f) {
        last_timeout = timeout;
        int ms = delay_ms;
        std::thread([=]() mutable {
            ::usleep(ms * 1000);
            AsyncResult<T> r;
            r.object = this;
            r.result = f();
            if (r.is_failure()) r.error_number = errno;
            done(&r);
        }).detach();
    }
};

// A localfs with extended attributes kept in memory.
struct xattr_fs : ForwardFS_Ownership, IFileSystemXAttr {
    explicit xattr_fs(IFileSystem* fs) : ForwardFS_Ownership(fs, true) {}
    std::map<std::string, std::string> attrs;
    ssize_t getxattr(const char* path, const char* name, void* value, size_t size) override {
        auto it = attrs.find(std::string(path) + ":" + name);
        if (it == attrs.end()) return errno = ENODATA, -1;
        if (size < it->second.size()) return errno = ERANGE, -1;
        memcpy(value, it->second.data(), it->second.size());
        return it->second.size();
    }
    ssize_t lgetxattr(const char* p, const char* n, void* v, size_t s) override {
        return getxattr(p, n, v, s);
    }
    ssize_t listxattr(const char*, char*, size_t) override { return 0; }
    ssize_t llistxattr(const char*, char*, size_t) override { return 0; }
    int setxattr(const char* path, const char* name, const void* value, size_t size, int) override {
        attrs[std::string(path) + ":" + name].assign((const char*)value, size);
        return 0;
    }
    int lsetxattr(const char* p, const char* n, const void* v, size_t s, int f) override {
        return setxattr(p, n, v, s, f);
    }
    int removexattr(const char* path, const char* name) override {
        return attrs.erase(std::string(path) + ":" + name) ? 0 : (errno = ENODATA, -1);
    }
    int lremovexattr(const char* p, const char* n) override { return removexattr(p, n); }
};

class AsyncFs : public photon_test::VcpuTest {};

}  // namespace

TEST_F(AsyncFs, SyncAdaptorRunsBlockingCallsOffTheVcpu) {
    auto inner = new blocking_file("abcdef");
    inner->blocked_ms = 200;
    std::unique_ptr<IFile> f(new_sync_file_adaptor(inner));
    ASSERT_TRUE(f);
    ticker t(&inner->in_flight);
    char buf[4] = {};
    EXPECT_EQ(3, f->pread(buf, 3, 2));
    EXPECT_EQ(0, memcmp(buf, "cde", 3));
    t.finish();
    // The vCPU went on ticking while the read blocked (a count, not a rate:
    // a loaded machine stretches the ticks). Blocking the vCPU leaves 0.
    EXPECT_GT(t.during, 0);
    inner->blocked_ms = 0;
    inner->fail_next = 1;
    inner->fail_errno = ENOLINK;
    EXPECT_EQ(-1, f->pwrite("x", 1, 0));
    EXPECT_EQ(ENOLINK, errno);
    EXPECT_EQ(inner, f->get_underlay_object());
    EXPECT_EQ(0, f->close());
}

TEST_F(AsyncFs, ManySyncCallsAtOnceAllComplete) {
    auto inner = new blocking_file(std::string(1000, 'z'));
    inner->blocked_ms = 20;
    std::unique_ptr<IFile> f(new_sync_file_adaptor(inner));
    std::vector<join_handle*> jhs;
    std::atomic<int> ok{0};
    struct arg {
        IFile* f;
        std::atomic<int>* ok;
    } a{f.get(), &ok};
    for (int i = 0; i < 16; i++)
        jhs.push_back(thread_enable_join(thread_create(
            [](void* p) -> void* {
                auto a = (arg*)p;
                char c;
                if (a->f->pread(&c, 1, 5) == 1 && c == 'z') (*a->ok)++;
                return nullptr;
            },
            &a)));
    for (auto j : jhs) thread_join(j);
    EXPECT_EQ(16, ok);
    EXPECT_GT(inner->max_in_flight, 1) << "one after another";
}

TEST_F(AsyncFs, SyncFsAdaptorWrapsFilesDirsAndXattrs) {
    photon_test::scratch_dir dir;
    ASSERT_FALSE(dir.path().empty());
    auto local = new_localfs_adaptor(dir.path().c_str(), ioengine_psync);
    ASSERT_TRUE(local);
    std::unique_ptr<IFileSystem> fs(new_sync_fs_adaptor(new xattr_fs(local)));
    ASSERT_TRUE(fs);
    ASSERT_EQ(0, fs->mkdir("d", 0755));
    std::unique_ptr<IFile> f(fs->open("d/f", O_CREAT | O_RDWR, 0644));
    ASSERT_TRUE(f);
    EXPECT_EQ(fs.get(), f->filesystem());
    EXPECT_EQ(5, f->pwrite("hello", 5, 0));
    struct stat st;
    ASSERT_EQ(0, fs->stat("d/f", &st));
    EXPECT_EQ(5, st.st_size);
    EXPECT_EQ(nullptr, fs->open("nope", O_RDONLY));
    EXPECT_EQ(ENOENT, errno);
    std::unique_ptr<photon::fs::DIR> d(fs->opendir("d"));
    ASSERT_TRUE(d);
    std::set<std::string> names;
    for (auto& e : FileList(d.get())) names.insert(e.d_name);
    EXPECT_EQ(1u, names.count("f"));
    auto x = dynamic_cast<IFileSystemXAttr*>(fs.get());
    ASSERT_TRUE(x);
    ASSERT_EQ(0, x->setxattr("d/f", "user.k", "v1", 2, 0));
    char v[8];
    EXPECT_EQ(2, x->getxattr("d/f", "user.k", v, sizeof(v)));
    EXPECT_EQ(-1, x->getxattr("d/f", "user.none", v, sizeof(v)));
    EXPECT_EQ(ENODATA, errno);
    EXPECT_EQ(0, fs->unlink("d/f"));
}

TEST_F(AsyncFs, AsyncAdaptorWaitsForDoneFromAnotherThread) {
    auto af = new threaded_async_file;
    std::unique_ptr<IFile> f(new_async_file_adaptor(af, 123456));
    ASSERT_TRUE(f);
    ticker t;
    char buf[4] = {};
    EXPECT_EQ(4, f->pread(buf, 4, 3));
    EXPECT_EQ(0, memcmp(buf, "3456", 4));
    EXPECT_EQ(123456u, af->last_timeout);
    EXPECT_EQ(2, f->pwrite("ab", 2, 10));
    EXPECT_EQ("0123456789ab", af->f.data);
    struct stat st;
    ASSERT_EQ(0, f->fstat(&st));
    EXPECT_EQ(12, st.st_size);
    EXPECT_EQ(5, f->lseek(5, SEEK_SET));
    EXPECT_EQ(-1, f->lseek(-1, SEEK_SET));  // a failure brings its errno
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(-1, f->fallocate(0, 0, 1));  // not in the async file: ENOSYS
    EXPECT_EQ(ENOSYS, errno);
    // Coroutines ran while we waited: waiting for `done` by blocking the
    // vCPU leaves the ticker no turn before finish(). A count, not a rate.
    EXPECT_GT(t.ticks, 0);
    t.finish();
}

TEST(AsyncFsThreads, AsyncAdaptorWorksOnAPlainOsThread) {
    auto af = new threaded_async_file;
    std::unique_ptr<IFile> f(new_async_file_adaptor(af));
    ssize_t r = -2;
    std::thread([&] {
        char buf[2];
        r = f->pread(buf, 2, 8);
    }).join();
    EXPECT_EQ(2, r);
    // A sync adaptor called off any vCPU just calls through.
    auto inner = new blocking_file("xyz");
    std::unique_ptr<IFile> g(new_sync_file_adaptor(inner));
    std::thread([&] {
        char c;
        r = g->pread(&c, 1, 1);
    }).join();
    EXPECT_EQ(1, r);
}

TEST(AsyncFsArgs, NullObjectsGiveNull) {
    EXPECT_EQ(nullptr, new_async_file_adaptor(nullptr));
    EXPECT_EQ(nullptr, new_async_fs_adaptor(nullptr));
    EXPECT_EQ(nullptr, new_async_dir_adaptor(nullptr));
    EXPECT_EQ(nullptr, new_sync_file_adaptor(nullptr));
    EXPECT_EQ(nullptr, new_sync_fs_adaptor(nullptr));
    EXPECT_EQ(nullptr, new_sync_dir_adaptor(nullptr));
}
