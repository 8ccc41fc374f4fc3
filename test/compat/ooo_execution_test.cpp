// rpc/out-of-order-execution.h as PhotonLibOS's RPC and its own tests use
// it: operations issued by many coroutines complete in a shuffled
// order, one waiter at a time runs do_completion for all, and each caller
// gets its own operation's result.
#include <photon/photon.h>
#include <photon/rpc/out-of-order-execution.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>
#include <photon/thread/workerpool.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <random>
#include <vector>

#include "../util/engine_fixture.h"

using namespace photon::rpc;

namespace {

class OooExecution : public photon_test::VcpuTest {};

// A fake transport: issued tags wait in `issued`; a "server" coroutine
// completes them in a random order into `completed`.
struct transport {
    std::vector<uint64_t> issued;
    std::deque<uint64_t> completed;
    std::mt19937 rng{20150820};
    int completions = 0;
    bool fail_some_issues = false;
    int failed_issues = 0;

    static int issue(void* self, OutOfOrderContext* args) {
        auto t = static_cast<transport*>(self);
        if (t->fail_some_issues && args->tag % 3 == 0) {
            t->failed_issues++;
            errno = EIO;
            return -1;
        }
        t->issued.push_back(args->tag);
        return 0;
    }
    // Waits (yielding) for any completion and reports its tag.
    static int complete(void* self, OutOfOrderContext* args) {
        auto t = static_cast<transport*>(self);
        for (int i = 0; t->completed.empty(); i++) {
            if (i > 100000) return errno = ETIMEDOUT, -1;
            photon::thread_usleep(100);
        }
        args->tag = t->completed.front();
        t->completed.pop_front();
        t->completions++;
        return 0;
    }
    static int collect(void*, OutOfOrderContext* args) { return int(args->tag % 1000) + 1; }

    // Completes everything issued so far, shuffled.
    void serve_all() {
        std::shuffle(issued.begin(), issued.end(), rng);
        for (auto tag : issued) completed.push_back(tag);
        issued.clear();
    }

    void bind(OutOfOrderContext& args, OutOfOrder_Execution_Engine* e) {
        args.engine = e;
        args.do_issue.bind(this, &transport::issue);
        args.do_completion.bind(this, &transport::complete);
        args.do_collect.bind(this, &transport::collect);  // (void*, ctx) functions
    }
};

TEST_F(OooExecution, EachCallerGetsItsOwnResultThoughCompletionsComeShuffled) {
    auto engine = new_ooo_execution_engine();
    transport t;
    const int n = 200;
    int right = 0, wrong = 0, done = 0;
    std::vector<photon::join_handle*> callers;
    for (int i = 0; i < n; i++) {
        auto th = photon::thread_create11([&] {
            OutOfOrderContext args;
            t.bind(args, engine);
            int r = ooo_issue_wait(args);
            const uint64_t tag = args.tag;
            ooo_result_collected(args);
            (r == int(tag % 1000) + 1 ? right : wrong)++;
            done++;
        });
        callers.push_back(photon::thread_enable_join(th));
    }
    for (int round = 0; round < 10000 && done < n; round++) {
        photon::thread_usleep(200);
        t.serve_all();
    }
    for (auto jh : callers) photon::thread_join(jh);
    EXPECT_EQ(n, right);
    EXPECT_EQ(0, wrong);
    EXPECT_EQ(n, t.completions);  // one do_completion per operation, whoever ran it
    EXPECT_EQ(0, ooo_get_queue_count(engine));
    delete_ooo_execution_engine(engine);
}

// Photon's keep_same_tag: issue, then wait apart; the tag is the caller's again.
TEST_F(OooExecution, IssueThenWaitKeepsTheCallersTag) {
    auto engine = new_ooo_execution_engine();
    transport t;
    std::vector<photon::join_handle*> callers;
    int ok = 0;
    for (int i = 0; i < 50; i++) {
        callers.push_back(photon::thread_enable_join(photon::thread_create11([&] {
            OutOfOrderContext args;
            t.bind(args, engine);
            ASSERT_EQ(0, ooo_issue_operation(args));
            const uint64_t mine = args.tag;
            photon::thread_yield();
            int r = ooo_wait_completion(args);
            EXPECT_EQ(mine, args.tag);
            EXPECT_EQ(int(mine % 1000) + 1, r);
            ok++;
        })));
    }
    photon::thread_yield();
    EXPECT_EQ(50, ooo_get_queue_count(engine));
    for (int round = 0; round < 10000 && ok < 50; round++) {
        photon::thread_usleep(200);
        t.serve_all();
    }
    for (auto jh : callers) photon::thread_join(jh);
    EXPECT_EQ(50, ok);
    delete_ooo_execution_engine(engine);
}

TEST_F(OooExecution, AUserTagInUseIsRefused) {
    auto engine = new_ooo_execution_engine();
    transport t;
    OutOfOrderContext args, same;
    t.bind(args, engine);
    args.flag_tag_valid = true;
    args.tag = 20150820;
    same = args;
    EXPECT_EQ(0, ooo_issue_operation(args));
    errno = 0;
    EXPECT_EQ(-1, ooo_issue_operation(same));
    EXPECT_EQ(EINVAL, errno);
    t.serve_all();
    EXPECT_EQ(int(20150820 % 1000) + 1, ooo_wait_completion(args));
    EXPECT_EQ(20150820u, args.tag);
    errno = 0;
    EXPECT_EQ(-1, ooo_wait_completion(same));  // never issued
    EXPECT_EQ(EINVAL, errno);
    delete_ooo_execution_engine(engine);
}

TEST_F(OooExecution, FailedIssuesFailTheirCallersOnly) {
    auto engine = new_ooo_execution_engine();
    transport t;
    t.fail_some_issues = true;
    const int n = 60;
    int failed = 0, right = 0, finished = 0;
    for (int i = 0; i < n; i++) {
        photon::thread_create11([&] {
            OutOfOrderContext args;
            t.bind(args, engine);
            int r = ooo_issue_wait(args);
            if (r < 0) {
                EXPECT_EQ(EIO, errno);
                failed++;
            } else if (r == int(args.tag % 1000) + 1) {
                right++;
            }
            finished++;
        });
    }
    for (int round = 0; round < 10000 && finished < n; round++) {
        photon::thread_usleep(200);
        t.serve_all();
    }
    EXPECT_EQ(n, finished);
    EXPECT_EQ(t.failed_issues, failed);
    EXPECT_EQ(n - failed, right);
    EXPECT_GT(failed, 0);
    delete_ooo_execution_engine(engine);  // nothing left to wait for
}

TEST_F(OooExecution, ACompletionNobodyWaitsForGivesEnoent) {
    auto engine = new_ooo_execution_engine();
    transport t;
    OutOfOrderContext args;
    t.bind(args, engine);
    ASSERT_EQ(0, ooo_issue_operation(args));
    t.issued.clear();
    t.completed.push_back(args.tag + 1000);  // a stray reply
    errno = 0;
    EXPECT_EQ(-2, ooo_wait_completion(args));
    EXPECT_EQ(ENOENT, errno);
    EXPECT_EQ(0, ooo_get_queue_count(engine));  // the caller's operation is dropped
    delete_ooo_execution_engine(engine);
}

TEST_F(OooExecution, AWaiterTimesOutWhileAnotherRunsTheCompletion) {
    auto engine = new_ooo_execution_engine();
    transport t;
    OutOfOrderContext first, second;
    t.bind(first, engine);
    t.bind(second, engine);
    second.timeout = photon::Timeout(20 * 1000);
    ASSERT_EQ(0, ooo_issue_operation(first));
    ASSERT_EQ(0, ooo_issue_operation(second));
    int first_ret = -100;
    auto completer = photon::thread_enable_join(
        photon::thread_create11([&] { first_ret = ooo_wait_completion(first); }));
    photon::thread_yield();  // `first` runs do_completion, which waits
    errno = 0;
    EXPECT_EQ(-1, ooo_wait_completion(second));
    EXPECT_EQ(ETIMEDOUT, errno);
    EXPECT_EQ(1, ooo_get_queue_count(engine));
    t.completed.push_back(first.tag);
    photon::thread_join(completer);
    EXPECT_EQ(int(first.tag % 1000) + 1, first_ret);
    delete_ooo_execution_engine(engine);
}

TEST_F(OooExecution, DeletingTheEngineWaitsForIssuedOperations) {
    auto engine = new_ooo_execution_engine();
    transport t;
    bool collected = false;
    photon::thread_create11([&] {
        OutOfOrderContext args;
        t.bind(args, engine);
        ooo_issue_wait(args);
        collected = true;
    });
    photon::thread_yield();
    photon::thread_create11([&] {
        photon::thread_usleep(20 * 1000);
        t.serve_all();
    });
    delete_ooo_execution_engine(engine);
    EXPECT_TRUE(collected);
}

// A transport shared by vCPUs: its queues under a spinlock.
struct shared_transport {
    photon::spinlock lock;
    std::vector<uint64_t> issued;
    std::deque<uint64_t> completed;

    static int issue(void* p, OutOfOrderContext* a) {
        auto s = static_cast<shared_transport*>(p);
        SCOPED_LOCK(s->lock);
        s->issued.push_back(a->tag);
        return 0;
    }
    static int complete(void* p, OutOfOrderContext* a) {
        auto s = static_cast<shared_transport*>(p);
        for (int k = 0; k < 100000; k++) {
            {
                SCOPED_LOCK(s->lock);
                if (!s->completed.empty()) {
                    a->tag = s->completed.front();
                    s->completed.pop_front();
                    return 0;
                }
            }
            photon::thread_usleep(100);
        }
        return errno = ETIMEDOUT, -1;
    }
    static int collect(void*, OutOfOrderContext* a) { return int(a->tag % 1000) + 1; }
};

// Callers on four vCPUs share one engine and one transport.
TEST(OooExecutionVcpus, CallersOnSeveralVcpusEachGetTheirOwnResult) {
    ASSERT_EQ(0, photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE));
    {
        auto engine = new_ooo_execution_engine();
        shared_transport t;
        std::atomic<int> right{0}, finished{0};
        photon::WorkPool pool(4, photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE, -1);
        const int n = 200;
        for (int i = 0; i < n; i++) {
            pool.async_call(new auto([&] {
                OutOfOrderContext args;
                args.engine = engine;
                args.do_issue.bind(&t, &shared_transport::issue);
                args.do_completion.bind(&t, &shared_transport::complete);
                args.do_collect.bind(&t, &shared_transport::collect);
                int r = ooo_issue_wait(args);
                if (r == int(args.tag % 1000) + 1) right++;
                finished++;
            }));
        }
        std::mt19937 rng(7);
        for (int round = 0; round < 20000 && finished < n; round++) {
            photon::thread_usleep(200);
            SCOPED_LOCK(t.lock);
            std::shuffle(t.issued.begin(), t.issued.end(), rng);
            for (auto tag : t.issued) t.completed.push_back(tag);
            t.issued.clear();
        }
        EXPECT_EQ(n, finished.load());
        EXPECT_EQ(n, right.load());
        delete_ooo_execution_engine(engine);
    }
    EXPECT_EQ(0, photon::fini());
}

}  // namespace
