// exportfs.h: plain OS threads (and coroutines, on the serving vCPU or not)
// use a photon file system through its exports; calls while nothing serves
// fail at once; deleting an export waits for its running calls.
#include <dirent.h>
#include <photon/fs/exportfs.h>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <photon/fs/async_filesystem.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/localfs.h>
#include <photon/thread/thread.h>

#include "../thread/test_util.h"
#include "fs_test_util.h"
#include "mem_file.h"

using namespace photon;
using namespace photon::fs;
using photon_test::mem_file;

namespace {

// Reads take `delay` us of coroutine sleep (a photon file); notes its deletion.
struct photon_slow_file : mem_file {
    std::vector<std::string>* log;
    uint64_t delay = 0;
    photon_slow_file(std::vector<std::string>* l) : mem_file("0123456789"), log(l) {}
    ~photon_slow_file() override { log->push_back("deleted"); }
    ssize_t pread(void* buf, size_t n, off_t off) override {
        if (delay) thread_usleep(delay);
        log->push_back("read");
        return mem_file::pread(buf, n, off);
    }
    int vioctl(int request, va_list args) override { return request + va_arg(args, int); }
};

// The OS threads the tests wait for need this vCPU to serve them: joining
// them at once would deadlock, so the tests first sleep the coroutine
// (wait_for) until they are done, for up to this long.
constexpr int kServeMs = 20000;

class ExportFs : public photon_test::VcpuTest {
protected:
    void SetUp() override {
        VcpuTest::SetUp();
        ASSERT_FALSE(dir_.path().empty());
    }
    void TearDown() override {
        if (serving_) {
            EXPECT_EQ(0, exportfs_fini());
        }
        VcpuTest::TearDown();
    }
    void serve(uint32_t pool = 0) {
        ASSERT_EQ(0, exportfs_init(pool));
        serving_ = true;
    }
    IFileSystem* local() { return new_localfs_adaptor(dir_.path().c_str(), ioengine_psync); }

    photon_test::scratch_dir dir_;
    bool serving_ = false;
};

// What one OS thread does with an exported file system; "" if all went well.
std::string exercise(IFileSystem* fs, int id) {
    std::string name = "t" + std::to_string(id);
    for (int i = 0; i < 30; i++) {
        std::unique_ptr<IFile> f(fs->open(name.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644));
        if (!f) return "open: " + std::string(strerror(errno));
        std::string data = name + ":" + std::to_string(i);
        if (f->pwrite(data.data(), data.size(), 0) != (ssize_t)data.size()) return "pwrite";
        char buf[64] = {};
        if (f->pread(buf, sizeof(buf), 0) != (ssize_t)data.size() || data != buf) return "pread";
        struct stat st;
        if (f->fstat(&st) < 0 || st.st_size != (off_t)data.size()) return "fstat";
        if (f->close() < 0) return "close";
    }
    std::unique_ptr<photon::fs::DIR> d(fs->opendir("."));
    if (!d) return "opendir";
    bool seen = false;
    for (auto& e : FileList(d.get())) seen |= name == e.d_name;
    if (!seen) return "readdir";
    return fs->unlink(name.c_str()) == 0 ? "" : "unlink";
}

}  // namespace

TEST_F(ExportFs, PlainOsThreadsUseAPhotonFileSystem) {
    serve();
    std::unique_ptr<IFileSystem> fs(export_as_sync_fs(local()));
    ASSERT_TRUE(fs);
    std::vector<std::thread> threads;
    std::vector<std::string> results(4, "running");
    std::atomic<int> done{0};
    for (int i = 0; i < 4; i++)
        threads.emplace_back([&, i] {
            results[i] = exercise(fs.get(), i);
            done++;
        });
    bool finished = photon_test::wait_for([&] { return done == 4; }, kServeMs);
    for (auto& t : threads) t.join();
    ASSERT_TRUE(finished);
    for (auto& r : results) EXPECT_EQ("", r);
}

TEST_F(ExportFs, CoroutinesOfTheServingVcpuMayCallToo) {
    serve(4);  // and with a pool of kept coroutines
    std::unique_ptr<IFileSystem> fs(export_as_sync_fs(local()));
    EXPECT_EQ("", exercise(fs.get(), 9));
    struct stat st;
    EXPECT_EQ(-1, fs->stat("missing", &st));
    EXPECT_EQ(ENOENT, errno);
}

TEST_F(ExportFs, AsyncExportsReportThroughDone) {
    serve();
    std::unique_ptr<IAsyncFileSystem> afs(export_as_async_fs(local()));
    struct catcher {
        std::mutex mu;
        std::vector<AsyncResult<int>> results;
        std::atomic<int> n{0};
        int on_done(AsyncResult<int>* r) {
            std::lock_guard<std::mutex> l(mu);
            results.push_back(*r);
            n++;
            return 0;
        }
    } c;
    std::thread([&] {
        afs->mkdir("m", 0755, {&c, &catcher::on_done});
        afs->mkdir("m", 0755, {&c, &catcher::on_done});  // EEXIST
    }).join();
    ASSERT_TRUE(photon_test::wait_for([&] { return c.n == 2; }, kServeMs));
    EXPECT_EQ(0, c.results[0].result);
    EXPECT_EQ((void*)afs.get(), c.results[0].object);
    EXPECT_EQ(IAsyncFileSystem::OPID_MKDIR, c.results[0].operation);
    EXPECT_EQ(-1, c.results[1].result);
    EXPECT_EQ(EEXIST, c.results[1].error_number);
}

TEST_F(ExportFs, DeletingAnExportWaitsForItsRunningCalls) {
    serve();
    std::vector<std::string> log;
    auto f = new photon_slow_file(&log);
    f->delay = 100 * 1000;
    IAsyncFile* af = export_as_async_file(f);
    struct res {
        std::atomic<ssize_t> r{-2};
        int on_done(AsyncResult<ssize_t>* ar) {
            r = ar->result;
            return 0;
        }
    } got;
    char buf[4];
    std::thread([&] {
        af->pread(buf, 4, 0, {&got, &res::on_done});
        delete af;  // the read is still running on the vCPU
    }).join();
    ASSERT_TRUE(photon_test::wait_for([&] { return log.size() == 2; }, kServeMs));
    EXPECT_EQ((std::vector<std::string>{"read", "deleted"}), log);  // Photon: deleted first
    EXPECT_EQ(4, got.r);
}

TEST_F(ExportFs, IoctlsAndDirectoriesGoThroughToo) {
    serve();
    std::vector<std::string> log;
    std::unique_ptr<IFile> f(export_as_sync_file(new photon_slow_file(&log)));
    int r = 0;
    std::atomic<bool> done{false};
    std::thread t([&] {
        r = f->ioctl(40, 2);
        done = true;
    });
    EXPECT_TRUE(photon_test::wait_for([&] { return done.load(); }, kServeMs));
    t.join();
    EXPECT_EQ(42, r);
    EXPECT_EQ(40 + 3, f->ioctl(40, 3));  // from the serving vCPU: called in place
    std::unique_ptr<IFileSystem> l(local());
    ASSERT_EQ(0, l->mkdir("dd", 0755));
    std::unique_ptr<photon::fs::DIR> d(export_as_sync_dir(l->opendir(".")));
    ASSERT_TRUE(d);
    std::set<std::string> names;
    for (auto& e : FileList(d.get())) names.insert(e.d_name);
    EXPECT_EQ(1u, names.count("dd"));
}

TEST_F(ExportFs, FiniRunsWhatWasQueuedThenRefuses) {
    serve();
    std::vector<std::string> log;
    IAsyncFile* af = export_as_async_file(new photon_slow_file(&log));
    std::atomic<int> n{0};
    struct counter {
        std::atomic<int>* n;
        int on_done(AsyncResult<ssize_t>* r) {
            if (r->result == 1) (*n)++;
            return 0;
        }
    } c{&n};
    char buf[8];
    for (int i = 0; i < 5; i++) af->pread(buf + i, 1, i, {&c, &counter::on_done});
    ASSERT_EQ(0, exportfs_fini());
    serving_ = false;
    EXPECT_EQ(5, n);  // all queued before fini ran
    struct failure {
        int err = 0;
        int on_done(AsyncResult<ssize_t>* r) {
            err = r->error_number;
            return r->result == -1 ? 0 : -1;
        }
    } fl;
    af->pread(buf, 1, 0, {&fl, &failure::on_done});
    EXPECT_EQ(ESHUTDOWN, fl.err);  // at once, not queued forever
    delete af;                     // nothing serves: deleted here
    EXPECT_EQ("deleted", log.back());
}

TEST(ExportFsNotServing, CallsFailAtOnceWithEshutdown) {
    std::unique_ptr<IFile> f(export_as_sync_file(new mem_file("abc")));
    char c;
    EXPECT_EQ(-1, f->pread(&c, 1, 0));
    EXPECT_EQ(ESHUTDOWN, errno);
    EXPECT_EQ(-1, exportfs_init());  // not a vCPU
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(-1, exportfs_fini());
    EXPECT_EQ(ENOSYS, errno);
    EXPECT_EQ(nullptr, export_as_sync_fs(nullptr));
    EXPECT_EQ(EINVAL, errno);
    EXPECT_EQ(nullptr, export_as_async_file(nullptr));
    EXPECT_EQ(nullptr, export_as_async_dir(nullptr));
}

TEST_F(ExportFs, InitTwiceOrFiniElsewhereIsRefused) {
    serve();
    EXPECT_EQ(-1, exportfs_init());
    EXPECT_EQ(EALREADY, errno);
    int r = 0, e = 0;
    std::thread([&] {
        photon::init(INIT_EVENT_NONE, INIT_IO_NONE);
        r = exportfs_fini();
        e = errno;
        photon::fini();
    }).join();
    EXPECT_EQ(-1, r);
    EXPECT_EQ(EINVAL, e);
}
