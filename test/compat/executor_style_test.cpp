// Code written the way PhotonLibOS users write it against executor.h,
// event-loop.h, throttle.h and range-lock.h compiles and runs here: an
// Executor fed from plain threads that open files through photon's fs, heap
// lambdas for async_perform, an exported executor, a self-destroying one,
// the Timer-driven RangeLock of Photon's own test, a throttle in a consume
// loop and an event loop of member-function callbacks. The functions above
// the gtest include see only the photon headers, <thread> and <vector>:
// std::atomic and std::shared_ptr come along with executor.h, as in Photon.
#include <fcntl.h>
#include <photon/common/alog.h>
#include <photon/common/event-loop.h>
#include <photon/common/executor/executor.h>
#include <photon/common/range-lock.h>
#include <photon/common/throttle.h>
#include <photon/common/utility.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/localfs.h>
#include <photon/photon.h>
#include <photon/thread/thread.h>
#include <photon/thread/timer.h>

#include <sys/stat.h>

#include <thread>
#include <vector>

using namespace photon;

namespace {

std::atomic<int> count;

// As Photon's test_std: each plain thread performs fs work on the executor.
int ftask(photon::Executor* eth, int n) {
    for (int i = 0; i < n; i++) {
        auto ret = eth->perform([] {
            auto fs = fs::new_localfs_adaptor();
            if (!fs) return -1;
            DEFER(delete fs);
            auto file = fs->open("/etc/hosts", O_RDONLY);
            if (!file) return -1;
            DEFER(delete file);
            struct stat stat;
            return file->fstat(&stat) == 0 ? 1 : -1;
        });
        if (ret == 1) count--;
    }
    return 0;
}

int run_std_threads(int threads, int per_thread) {
    photon::Executor eth;
    count = threads * per_thread;
    std::vector<std::thread> ths;
    for (int i = 0; i < threads; i++) ths.emplace_back(std::thread(&ftask, &eth, per_thread));
    for (auto& th : ths) th.join();
    return count.load();
}

std::atomic<int> started(0), done(0);

void async_tasks(int n) {
    photon::Executor eth(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE, PhotonOptions(),
                         ExecutorQueueOption{64, 100});
    for (int i = 0; i < n; i++) {
        eth.async_perform(new auto([i] {
            started++;
            photon::thread_usleep(1000UL * (i % 3));
            done++;
        }));
    }
}  // the destructor lets them all finish

bool export_here() {
    photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    DEFER(photon::fini());
    auto vcpu = photon::get_vcpu();
    auto e = photon::Executor::export_as_executor();
    DEFER(delete e);
    std::atomic<bool> same{false}, finished{false};
    std::thread([e, vcpu, &same, &finished] {
        e->perform([vcpu, &same] {
            LOG_INFO("Hello from a normal thread");
            same = photon::get_vcpu() == vcpu;
        });
        finished = true;
    }).detach();
    for (int i = 0; i < 5000 && !finished; i++) photon::thread_usleep(1000);
    return same && finished;
}

bool destroy_from_worker() {
    std::atomic<bool> reached{false};
    auto exec = std::make_shared<Executor>(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    exec->async_perform(new auto([&exec, &reached] {
        exec.reset();  // ~Executor on the worker thread
        reached = true;
    }));
    for (int i = 0; i < 5000 && !reached; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return reached;
}

// Photon's RangeLock test: a Timer unlocks what a lock() waits for.
bool range_lock_with_timer() {
    photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    DEFER(photon::fini());
    RangeLock m;
    m.lock(0, 4096);
    bool alreadUnLock = false;
    struct Data {
        RangeLock* m;
        bool* alreadyUnLock;
    };
    Data data{&m, &alreadUnLock};
    auto lambda = [](void* para) -> uint64_t {
        auto data = static_cast<Data*>(para);
        data->m->unlock(0, 4096);
        *data->alreadyUnLock = true;
        return 0;
    };
    photon::Timer timer(1000, {&data, lambda}, false);
    m.lock(0, 8192);
    bool ok = alreadUnLock;
    m.unlock(0, 8192);
    m.lock(4096, 8192);
    m.lock(12288, 4096);
    m.unlock(4096, 8192);
    m.unlock(12288, 4096);
    ScopedRangeLock g(m, 0, 100);
    return ok;
}

uint64_t throttled_consume() {
    photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    DEFER(photon::fini());
    photon::thread_yield();
    photon::throttle t(1ULL * 1024 * 1024, 100 * 1000);  // 1M per 100 ms
    auto total = 3ULL * 1024 * 1024;
    auto start = photon::now;
    while (total) {
        auto step = rand() % (256ULL * 1024 - 4096) + 4096;
        if (step > total) step = total;
        t.consume(step, photon::throttle::Priority::High);
        total -= step;
    }
    return photon::now - start;
}

class Poller {
public:
    int events = 0, handled = 0;
    int wait(EventLoop*) {
        if (photon::thread_usleep(1000) < 0) return 0;
        return ++events % 2;
    }
    int handle(EventLoop* loop) {
        if (++handled == 3) loop->stop();
        return 0;
    }
};

int event_loop_rounds() {
    photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE);
    DEFER(photon::fini());
    Poller p;
    auto loop = new_event_loop({&p, &Poller::wait}, {&p, &Poller::handle});
    DEFER(delete loop);
    loop->run();
    return loop->state() == EventLoop::STOP ? p.handled : -1;
}

}  // namespace

#include <gtest/gtest.h>

namespace {

TEST(ExecutorStyle, StdThreadsPerformFsWork) { EXPECT_EQ(0, run_std_threads(4, 100)); }

TEST(ExecutorStyle, AsyncPerformOfHeapLambdas) {
    async_tasks(100);
    EXPECT_EQ(100, started.load());
    EXPECT_EQ(100, done.load());
}

TEST(ExecutorStyle, ExportAsExecutor) { EXPECT_TRUE(export_here()); }

TEST(ExecutorStyle, DestroyFromWorkerThread) { EXPECT_TRUE(destroy_from_worker()); }

TEST(ExecutorStyle, RangeLockUnlockedByATimer) { EXPECT_TRUE(range_lock_with_timer()); }

TEST(ExecutorStyle, ThrottleConsumeLoop) {
    // 3M at 1M per 100 ms, the first 1M at once: about 200 ms.
    EXPECT_GE(throttled_consume(), 150 * 1000u);
}

TEST(ExecutorStyle, EventLoopOfMemberCallbacks) { EXPECT_EQ(3, event_loop_rounds()); }

}  // namespace
