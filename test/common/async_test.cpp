// photon/common/async.h and async_stream.h: result conventions, the traits,
// the declaration macros and unimplemented operations, IAsyncStream's member
// helpers, and the blocking wrappers: a coroutine parks (its vCPU keeps
// running others) until an operation completed on another OS thread, gets its
// result and errno, and may return at once, many times over.
#include <photon/common/async.h>
#include <photon/common/async_stream.h>
#include <photon/photon.h>

#include <gtest/gtest.h>

#include <sys/uio.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

static_assert(std::is_same<af_traits<decltype(&IAsyncStream::read)>::result_type, ssize_t>::value,
              "result type from the Done argument");
static_assert(std::is_same<af_traits<decltype(&IAsyncStream::close)>::result_type, int>::value, "");
static_assert(
    std::is_same<af_traits<decltype(&IAsyncStream::read)>::interface_type, IAsyncStream>::value,
    "");
static_assert(af_traits<decltype(&IAsyncStream::writev)>::nargs == 4, "");
static_assert(std::is_same<done_traits<Done<char*>>::result_type, char*>::value, "");

// An in-memory stream whose reads and writes complete on their own OS thread
// after `delay_us`; close() completes at once, inline. After close(), reads
// and writes fail with EBADF.
class ThreadedStream : public IAsyncStream {
public:
    explicit ThreadedStream(int delay_us = 1000) : delay_us_(delay_us) {}
    ~ThreadedStream() override {
        std::lock_guard<std::mutex> l(mu_);
        for (auto& t : workers_) t.join();
    }

    OVERRIDE_ASYNC0(int, close) {
        closed_ = true;
        callback(done, OPID_CLOSE, 0, 0);
    }
    OVERRIDE_ASYNC(ssize_t, read, void* buf, size_t count) {
        last_timeout = timeout;
        later(done, OPID_READ, [=] {
            memset(buf, 'r', count);
            return (ssize_t)count;
        });
    }
    OVERRIDE_ASYNC(ssize_t, readv, const struct iovec* iov, int iovcnt) {
        readv_calls++;
        later(done, OPID_READV, [=] {
            ssize_t n = 0;
            for (int i = 0; i < iovcnt; i++) n += iov[i].iov_len;
            return n;
        });
    }
    OVERRIDE_ASYNC(ssize_t, write, const void* buf, size_t count) {
        later(done, OPID_WRITE, [=] {
            std::lock_guard<std::mutex> l(data_mu_);  // workers run in parallel
            data_.append((const char*)buf, count);
            return (ssize_t)count;
        });
    }
    OVERRIDE_ASYNC(ssize_t, writev, const struct iovec* iov, int iovcnt) {
        writev_calls++;
        later(done, OPID_WRITEV, [=] {
            ssize_t n = 0;
            for (int i = 0; i < iovcnt; i++) n += iov[i].iov_len;
            return n;
        });
    }

    std::mutex data_mu_;
    std::string data_;
    std::atomic<bool> closed_{false};
    uint64_t last_timeout = 0;
    int readv_calls = 0, writev_calls = 0;

private:
    template <typename F>
    void later(Done<ssize_t> done, uint32_t op, F work) {
        std::lock_guard<std::mutex> l(mu_);
        workers_.emplace_back([this, done, op, work] {
            std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
            if (closed_)
                callback(done, op, -1, EBADF);
            else
                callback(done, op, work(), 0);
        });
    }

    int delay_us_;
    std::mutex mu_;
    std::vector<std::thread> workers_;
};

// Binds its own on_done, as Photon's example does.
struct Completion {
    AsyncResult<ssize_t> got;
    std::atomic<bool> done{false};
    int on_done(AsyncResult<ssize_t>* r) {
        got = *r;
        done = true;
        return 0;
    }
};

TEST(AsyncResult, FailureIsANegativeResultOrANullPointerAndFieldsStartZeroed) {
    AsyncResult<ssize_t> r;
    EXPECT_EQ(nullptr, r.object);
    EXPECT_EQ(0u, r.operation);
    EXPECT_EQ(0, r.error_number);
    EXPECT_EQ(0, r.result);
    EXPECT_FALSE(r.is_failure());
    r.result = AsyncResult<ssize_t>::failure();
    EXPECT_TRUE(r.is_failure());
    EXPECT_EQ(-1, r.get_result());

    AsyncResult<int*> p;
    EXPECT_TRUE(p.is_failure());
    EXPECT_EQ(nullptr, AsyncResult<int*>::failure());
    int x = 0;
    p.result = &x;
    EXPECT_FALSE(p.is_failure());

    AsyncResult<void> v;
    EXPECT_FALSE(v.is_failure());
    static_assert(std::is_same<decltype(v.get_result()), void>::value, "");
}

TEST(IAsyncStream, DoneRunsOnTheWorkersThreadWithTheOperationsResult) {
    Completion c;  // outlives the stream, whose destructor joins its workers
    ThreadedStream s(0);
    char buf[8];
    s.read(buf, sizeof(buf), {&c, &Completion::on_done});  // default timeout: -1
    for (int i = 0; i < 5000 && !c.done; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_TRUE(c.done);
    EXPECT_EQ(&s, c.got.object);
    EXPECT_EQ(IAsyncStream::OPID_READ, c.got.operation);
    EXPECT_EQ(8, c.got.result);
    EXPECT_EQ(UINT64_MAX, s.last_timeout);
    EXPECT_EQ(0, memcmp(buf, "rrrrrrrr", 8));
}

TEST(IAsyncStream, MutableVectorOperationsForwardAndHelpersNameTheMembers) {
    Completion rc, wc;
    struct iovec iov[2] = {{nullptr, 3}, {nullptr, 4}};  // read by the workers
    ThreadedStream s(0);
    s.readv_mutable(iov, 2, {&rc, &Completion::on_done});
    s.writev_mutable(iov, 2, {&wc, &Completion::on_done});
    EXPECT_EQ(1, s.readv_calls);
    EXPECT_EQ(1, s.writev_calls);
    for (int i = 0; i < 5000 && !(rc.done && wc.done); i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(7, rc.got.result);
    EXPECT_EQ(IAsyncStream::OPID_READV, rc.got.operation);
    EXPECT_EQ(7, wc.got.result);
    EXPECT_EQ(IAsyncStream::OPID_WRITEV, wc.got.operation);

    EXPECT_TRUE(s.is_readf(s._and_read()));
    EXPECT_FALSE(s.is_writef(s._and_read()));
    EXPECT_TRUE(s.is_writef(s._and_write()));
    EXPECT_FALSE(s.is_readf(s._and_write()));
    EXPECT_TRUE(s.is_readf(s._and_readcv()));
    EXPECT_TRUE(s.is_writef(s._and_writecv()));
    EXPECT_FALSE(s.is_readf(s._and_writecv()));
    EXPECT_TRUE(s.is_readf_mutable(s._and_readv_mutable()));
    EXPECT_FALSE(s.is_writef_mutable(s._and_readv_mutable()));
    EXPECT_TRUE(s.is_writef_mutable(s._and_writev_mutable()));
}

class Partial : public IAsyncBase {
public:
    DEFINE_ASYNC(int, get, int key);
    UNIMPLEMENTED_ASYNC(ssize_t, scan, int from, int to);
    UNIMPLEMENTED_ASYNC0(void, flush);
    UNIMPLEMENTED_ASYNC0(char*, name);
};

class Concrete : public Partial {
public:
    OVERRIDE_ASYNC(int, get, int key) { callback(done, 7, key * 2, 0); }
    OVERRIDE_UNIMPLEMENTED_ASYNC0(void, flush);
};

TEST(IAsyncBase, UnimplementedOperationsFailAtOnceWithEnosys) {
    Concrete c;
    AsyncResult<ssize_t> scan;
    auto on_scan = [&](AsyncResult<ssize_t>* r) { return scan = *r, 0; };
    c.scan(1, 2, on_scan);
    EXPECT_EQ(&c, scan.object);
    EXPECT_EQ(UINT32_MAX, scan.operation);
    EXPECT_EQ(ENOSYS, scan.error_number);
    EXPECT_TRUE(scan.is_failure());

    int flushed = 0, flush_errno = 0;
    auto on_flush = [&](AsyncResult<void>* r) {
        return flushed++, flush_errno = r->error_number, 0;
    };
    c.flush(on_flush);
    EXPECT_EQ(1, flushed);
    EXPECT_EQ(ENOSYS, flush_errno);

    AsyncResult<char*> name;
    auto on_name = [&](AsyncResult<char*>* r) { return name = *r, 0; };
    c.name(on_name, 5);
    EXPECT_TRUE(name.is_failure());
    EXPECT_EQ(ENOSYS, name.error_number);

    AsyncResult<int> got;
    auto on_get = [&](AsyncResult<int>* r) { return got = *r, 0; };
    c.get(21, on_get);
    EXPECT_EQ(42, got.result);
    EXPECT_EQ(7u, got.operation);
}

class AsyncWrapper : public VcpuTest {};

TEST_F(AsyncWrapper, CallParksTheCoroutineWhileItsVcpuRunsOthers) {
    ThreadedStream s(20 * 1000);
    int ticks = 0;
    bool stop = false;
    auto ticker = spawn([&] {
        while (!stop) {
            ticks++;
            photon::thread_usleep(1000);
        }
    });
    char buf[16] = {};
    auto read = async_func<ssize_t, IAsyncStream, void*, size_t>(&s, &IAsyncStream::read, 5000);
    EXPECT_EQ(16, read.call(buf, sizeof(buf)));
    EXPECT_EQ(5000u, s.last_timeout);  // handed to the operation
    EXPECT_EQ('r', buf[15]);
    EXPECT_GT(ticks, 1);  // others ran during the 20 ms wait
    stop = true;
    ticker.join();
}

TEST_F(AsyncWrapper, AFailedOperationSetsErrno) {
    ThreadedStream s(0);
    EXPECT_EQ(0, (AsyncFuncWrapper<int, IAsyncStream>(&s, &IAsyncStream::close, -1).call()));
    EXPECT_TRUE(s.closed_);
    const char msg[] = "hello";
    errno = 0;
    AsyncFuncWrapper<ssize_t, IAsyncStream, const void*, size_t> w(&s, &IAsyncStream::write, -1);
    EXPECT_EQ(-1, w.call(msg, 5));
    EXPECT_EQ(EBADF, errno);
}

TEST_F(AsyncWrapper, AnOperationThatCompletesInlineReturnsAtOnce) {
    ThreadedStream s;
    EXPECT_EQ(0, (AsyncFuncWrapper<int, IAsyncStream>(&s, &IAsyncStream::close, -1).call()));
}

TEST_F(AsyncWrapper, ManyCoroutinesCallAndReturnAsSoonAsTheyAreWoken) {
    ThreadedStream s(0);
    constexpr int kCoroutines = 8, kCalls = 100;
    int right = 0;
    std::vector<task> tasks;
    for (int i = 0; i < kCoroutines; i++) {
        tasks.push_back(spawn([&, i] {
            for (int j = 0; j < kCalls; j++) {
                std::string msg(1 + (i + j) % 7, 'a' + i);
                AsyncFuncWrapper<ssize_t, IAsyncStream, const void*, size_t> w(
                    &s, &IAsyncStream::write, -1);
                if (w.call(msg.data(), msg.size()) == (ssize_t)msg.size()) right++;
            }
        }));
    }
    for (auto& t : tasks) t.join();
    EXPECT_EQ(kCoroutines * kCalls, right);
}

TEST_F(AsyncWrapper, GenericWrapperCarriesResultsErrorsAndCanBeReused) {
    AsyncFuncWrapper_Generic<void*> af;
    std::thread worker;
    void* p = af.call([&] { worker = std::thread([&] { af.put_result(malloc(100), 0); }); });
    worker.join();
    ASSERT_NE(nullptr, p);
    free(p);

    errno = 0;
    void* q = af.call([&] { worker = std::thread([&] { af.put_result(nullptr, ENOMEM); }); });
    worker.join();
    EXPECT_EQ(nullptr, q);
    EXPECT_EQ(ENOMEM, errno);

    AsyncFuncWrapper_Generic<ssize_t> n;
    errno = 0;
    EXPECT_EQ(-1, n.call([&] { n.put_result(-1, 0); }));  // inline; no error number
    EXPECT_EQ(0, errno);                                  // errno is left alone

    AsyncFuncWrapper_Generic<void> v;
    v.call([&] { worker = std::thread([&] { v.put_result(0); }); });
    worker.join();
}

TEST_F(AsyncWrapper, GenericWrapperAdaptsAnAsyncFunctionWithALambdaDone) {
    ThreadedStream s(1000);
    AsyncFuncWrapper_Generic<ssize_t> af;
    auto done = [&](AsyncResult<ssize_t>* ar) {
        return af.put_result(ar->result, ar->error_number), 0;
    };
    char buf[4];
    EXPECT_EQ(4, af.call([&] { s.read(buf, 4, done, -1); }));
    EXPECT_EQ('r', buf[0]);
}

TEST(AsyncWrapperOffVcpu, APlainThreadBlocksUntilDone) {
    ThreadedStream s(5 * 1000);
    char buf[3];
    auto t0 = Clock::now();
    auto read = async_func<ssize_t, IAsyncStream, void*, size_t>(&s, &IAsyncStream::read, -1);
    EXPECT_EQ(3, read.call(buf, 3));
    EXPECT_GE(us_since(t0), 5000u);
}

}  // namespace
