// EventLoop (photon/common/event-loop.h): the wait / handle cycle, its
// states, stop() while the loop waits (from run() and async_run()), stop()
// from a callback, ending by a negative wait result, and deletion.
#include <photon/common/event-loop.h>

#include <photon/thread/thread.h>

#include <gtest/gtest.h>

#include <memory>

#include "../thread/test_util.h"

namespace {

using namespace photon_test;

class EventLoopTest : public VcpuTest {};

// Callbacks over a count of pending events; the wait sleeps until one is
// pending, up to `nap` each round.
struct source {
    int pending = 0;
    int handled = 0;
    int waits = 0;
    int interrupted = 0;
    uint64_t nap = 1000;
    int wait(EventLoop*) {
        waits++;
        if (pending > 0) return 1;
        if (photon::thread_usleep(nap) < 0 && errno == EINTR) interrupted++;
        return pending > 0 ? 1 : 0;
    }
    int on_event(EventLoop*) {
        handled += pending;
        pending = 0;
        return 0;
    }
    EventLoop* make() { return new_event_loop({this, &source::wait}, {this, &source::on_event}); }
};

TEST_F(EventLoopTest, HandlesEachEventThatTheWaitReports) {
    source src;
    std::unique_ptr<EventLoop> loop(src.make());
    ASSERT_NE(nullptr, loop);
    EXPECT_EQ(EventLoop::STOP, loop->state());
    EXPECT_EQ(nullptr, loop->loop_thread());
    loop->async_run();
    EXPECT_NE(nullptr, loop->loop_thread());
    for (int i = 0; i < 5; i++) {
        src.pending++;
        EXPECT_TRUE(wait_for([&] { return src.handled == i + 1; }));
    }
    loop->stop();
    EXPECT_EQ(EventLoop::STOP, loop->state());
    EXPECT_EQ(nullptr, loop->loop_thread()) << "no dangling coroutine pointer";
    EXPECT_EQ(5, src.handled);
}

TEST_F(EventLoopTest, StopInterruptsALongWaitOfAnAsyncLoop) {
    source src;
    src.nap = kLongUs;  // the wait would sleep ~10 s
    std::unique_ptr<EventLoop> loop(src.make());
    loop->async_run();
    ASSERT_TRUE(until_sleeping(loop->loop_thread()));
    EXPECT_EQ(EventLoop::WAITING, loop->state());
    auto t0 = Clock::now();
    loop->stop();
    EXPECT_LT(us_since(t0), kLongUs / 2) << "stop() cut the wait short";
    EXPECT_EQ(1, src.interrupted);
    EXPECT_EQ(EventLoop::STOP, loop->state());
    EXPECT_EQ(0, src.handled);
}

TEST_F(EventLoopTest, StopInterruptsALongWaitOfALoopStartedByRun) {
    source src;
    src.nap = kLongUs;
    std::unique_ptr<EventLoop> loop(src.make());
    bool returned = false;
    auto runner = spawn([&] {
        loop->run();
        returned = true;
    });
    ASSERT_TRUE(until_sleeping(runner.th));
    EXPECT_EQ(EventLoop::WAITING, loop->state());
    EXPECT_EQ(runner.th, loop->loop_thread());
    auto t0 = Clock::now();
    loop->stop();
    EXPECT_LT(us_since(t0), kLongUs / 2);
    runner.join();
    EXPECT_TRUE(returned);
    EXPECT_EQ(EventLoop::STOP, loop->state());
}

TEST_F(EventLoopTest, StopFromTheEventHandlerEndsRunAfterItReturns) {
    int handled = 0;
    auto wait = [](EventLoop*) { return 1; };  // always an event
    auto on_event = [&](EventLoop* l) {
        if (++handled == 3) l->stop();
        return 0;
    };
    std::unique_ptr<EventLoop> loop(new_event_loop(wait, on_event));
    loop->run();  // returns: stop() from inside did not wait for itself
    EXPECT_EQ(3, handled);
    EXPECT_EQ(EventLoop::STOP, loop->state());
}

TEST_F(EventLoopTest, ANegativeWaitResultEndsTheLoop) {
    int waits = 0, handled = 0;
    auto wait = [&](EventLoop*) { return ++waits < 4 ? 1 : -1; };
    auto on_event = [&](EventLoop*) { return ++handled; };
    std::unique_ptr<EventLoop> loop(new_event_loop(wait, on_event));
    loop->run();
    EXPECT_EQ(4, waits);
    EXPECT_EQ(3, handled);
    EXPECT_EQ(EventLoop::STOP, loop->state());
    loop->run();  // a stopped loop runs again
    EXPECT_EQ(5, waits);
}

TEST_F(EventLoopTest, StartingARunningLoopAgainDoesNothing) {
    source src;
    std::unique_ptr<EventLoop> loop(src.make());
    loop->async_run();
    auto first = loop->loop_thread();
    loop->async_run();
    loop->run();  // returns at once: the loop runs already
    EXPECT_EQ(first, loop->loop_thread());
    loop->stop();
}

TEST_F(EventLoopTest, StopBeforeTheLoopCoroutineStartsCallsNoCallback) {
    source src;
    std::unique_ptr<EventLoop> loop(src.make());
    loop->async_run();
    loop->stop();  // the loop coroutine has not run yet
    EXPECT_EQ(EventLoop::STOP, loop->state());
    EXPECT_EQ(0, src.waits);
}

TEST_F(EventLoopTest, DeletingAWaitingLoopStopsIt) {
    source src;
    src.nap = kLongUs;
    EventLoop* loop = src.make();
    loop->async_run();
    ASSERT_TRUE(until_sleeping(loop->loop_thread()));
    auto t0 = Clock::now();
    delete loop;
    EXPECT_LT(us_since(t0), kLongUs / 2);
    EXPECT_EQ(1, src.interrupted);
}

TEST_F(EventLoopTest, ASecondStopWhileStoppingAlsoWaitsForTheEnd) {
    bool interrupted = false;
    auto wait = [&](EventLoop*) {
        if (photon::thread_usleep(kLongUs) < 0) {
            interrupted = true;
            photon::thread_usleep(200 * 1000);  // winds down a while
        }
        return 0;
    };
    auto on_event = [](EventLoop*) { return 0; };
    std::unique_ptr<EventLoop> loop(new_event_loop(wait, on_event));
    loop->async_run();
    ASSERT_TRUE(until_sleeping(loop->loop_thread()));
    auto first = spawn([&] { loop->stop(); });
    ASSERT_TRUE(wait_for([&] { return interrupted; }));  // the loop winds down
    EXPECT_EQ(EventLoop::STOPPING, loop->state());
    loop->stop();
    EXPECT_EQ(EventLoop::STOP, loop->state()) << "returned only once the loop ended";
    first.join();
}

}  // namespace
