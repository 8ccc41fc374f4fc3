// The out-of-order execution engine: a synchronous interface over
// asynchronous operations whose completions come back in any order, as
// PhotonLibOS's RPC stub uses it. An operation is issued (do_issue, under a
// tag), then its coroutine waits; one waiting coroutine at a time runs
// do_completion, which blocks until any issued operation completes and stores
// that operation's tag in the context it is given; the engine then runs that
// operation's do_collect and wakes its coroutine (or keeps going if it was
// the caller's own). The coroutines may be on any vCPUs; the calls yield
// (do_issue, do_completion and do_collect may sleep). Not used by our own
// RPC stub, which matches replies by tag with a reader coroutine (rpc.md).
#pragma once

#include <cstdint>

#include <photon/common/callback.h>
#include <photon/common/timeout.h>
#include <photon/thread/thread.h>

namespace photon {

struct thread;

namespace rpc {

class OutOfOrder_Execution_Engine;

OutOfOrder_Execution_Engine* new_ooo_execution_engine();
// Waits for the operations being issued and for every issued one to be
// collected (or to fail), then frees the engine.
void delete_ooo_execution_engine(OutOfOrder_Execution_Engine* engine);

enum class OooPhase : int { BEFORE_ISSUE = 0, ISSUED = 1, WAITING = 2, COLLECTED = 3 };

struct OutOfOrderContext {
    OutOfOrder_Execution_Engine* engine;

    // The operation's unique tag: set by the caller (with flag_tag_valid),
    // else by the engine; do_completion stores the completed one's here.
    uint64_t tag = 0;

    // int f(void*, OutOfOrderContext*) or int (T::*)(OutOfOrderContext*).
    typedef Callback<OutOfOrderContext*> CallbackType;

    // Issues the operation under args->tag; < 0 fails it. Never called
    // concurrently on one engine.
    CallbackType do_issue;
    // Waits for any issued operation to complete and stores its tag in
    // args->tag; < 0 fails the waiting caller. Never called concurrently.
    CallbackType do_completion;
    // Collects the completed operation's result (its context is given): the
    // value becomes its `ret`. Optional (unbound: 0).
    CallbackType do_collect;

    // The coroutine that waits for this operation.
    thread* th = nullptr;

    // How long ooo_wait_completion() waits.
    Timeout timeout;

    photon::spinlock phaselock;  // kept for Photon's layout; the engine locks itself
    volatile OooPhase phase = OooPhase::BEFORE_ISSUE;

    // What do_collect returned.
    int ret = -1;

    bool flag_tag_valid = false;

    OutOfOrderContext() = default;
    OutOfOrderContext& operator=(const OutOfOrderContext& rhs) {
        engine = rhs.engine;
        tag = rhs.tag;
        do_issue = rhs.do_issue;
        do_completion = rhs.do_completion;
        do_collect = rhs.do_collect;
        th = rhs.th;
        timeout = rhs.timeout;
        flag_tag_valid = rhs.flag_tag_valid;
        phase = rhs.phase;
        ret = rhs.ret;
        return *this;
    }
};

// Issues an operation: a new tag unless args.flag_tag_valid, then do_issue.
// 0, or -1 with errno: EINVAL (the caller's tag is in use), ESHUTDOWN (the
// engine is being deleted), or do_issue's.
extern "C" int ooo_issue_operation(OutOfOrderContext& args);

// Waits until the operation issued with `args` is collected: its `ret` (what
// do_collect returned), or -1 with errno: EINVAL (not issued, or already
// waited on), ETIMEDOUT (args.timeout; the operation is dropped), the
// interrupter's errno, or do_completion's; -2 with ENOENT when do_completion
// gave a tag nobody waits for (the caller's own operation is dropped).
extern "C" int ooo_wait_completion(OutOfOrderContext& args);

// ooo_issue_operation() then ooo_wait_completion().
extern "C" int ooo_issue_wait(OutOfOrderContext& args);

// Tells the engine the caller is done with the result (nothing to do here,
// as in Photon).
extern "C" void ooo_result_collected(OutOfOrderContext& args);

// Operations issued and not yet collected.
extern "C" int ooo_get_queue_count(OutOfOrder_Execution_Engine* engine);

}  // namespace rpc
}  // namespace photon
