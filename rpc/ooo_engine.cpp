// The out-of-order execution engine (out-of-order-execution.h). One spinlock
// guards the engine's table of issued operations and every context's phase;
// the coroutine running do_completion (the completer) holds that role, not
// the lock, while it blocks. An operation leaves the table when its
// collection starts, and its waiter does not leave (not even on timeout)
// until it is collected; it is woken with an interrupt under the lock, so it
// is still in its wait (it cannot leave without the lock) and its context
// still exists.
#include <photon/rpc/out-of-order-execution.h>

#include <cerrno>
#include <unordered_map>
#include <unordered_set>

#include <photon/common/alog.h>
#include <photon/thread/condition_variable.h>
#include <photon/thread/mutex.h>

namespace photon {
namespace rpc {

class OutOfOrder_Execution_Engine {
public:
    ~OutOfOrder_Execution_Engine() { shutdown(); }

    int issue(OutOfOrderContext& args) {
        SCOPED_LOCK(issue_lock_);  // do_issue is never called concurrently
        {
            SCOPED_LOCK(lock_);
            if (!running_) LOG_ERROR_RETURN(ESHUTDOWN, -1, "ooo: the engine is being deleted");
            if (args.flag_tag_valid) {
                if (table_.count(args.tag))
                    LOG_ERROR_RETURN(EINVAL, -1, "ooo: tag ` is in use", args.tag);
            } else {
                do {
                    args.tag = ++next_tag_;
                } while (table_.count(args.tag));
            }
            args.th = CURRENT;
            args.phase = OooPhase::BEFORE_ISSUE;
            args.ret = 0;
            table_.emplace(args.tag, &args);
        }
        if (args.do_issue(&args) < 0) {
            int e = errno;
            SCOPED_LOCK(lock_);
            drop_locked(args.tag);
            errno = e;
            return -1;  // do_issue's to report
        }
        SCOPED_LOCK(lock_);
        if (args.phase == OooPhase::BEFORE_ISSUE) args.phase = OooPhase::ISSUED;  // else collected
        return 0;
    }

    int wait(OutOfOrderContext& args) {
        {
            SCOPED_LOCK(lock_);
            auto it = table_.find(args.tag);
            if (args.phase == OooPhase::COLLECTED && args.th == CURRENT && it == table_.end())
                return args.ret;  // another completer collected it before we came
            if ((it == table_.end() || it->second != &args) && !collecting_.count(&args))
                LOG_ERROR_RETURN(EINVAL, -1, "ooo: tag ` was not issued here", args.tag);
            if (args.phase != OooPhase::ISSUED)
                LOG_ERROR_RETURN(EINVAL, -1, "ooo: tag ` is not waitable now", args.tag);
            args.th = CURRENT;
            args.phase = OooPhase::WAITING;
            Timeout timeout = args.timeout;
            while (completing_) {
                int r = turn_.wait(lock_, timeout);
                int e = errno;
                if (args.phase == OooPhase::COLLECTED) {
                    pass_turn_locked();
                    return args.ret;
                }
                if (r < 0 && e != EINTR) {  // timed out, or interrupted by someone else
                    if (collecting_.count(&args)) {
                        timeout = {};  // being collected: the result is on its way
                        continue;
                    }
                    drop_locked(args.tag);
                    args.phase = OooPhase::ISSUED;
                    pass_turn_locked();
                    errno = e;
                    return -1;
                }
            }
            completing_ = true;
        }
        return complete(args);
    }

    int shutdown() {
        {
            SCOPED_LOCK(lock_);
            if (!running_) return -1;
            running_ = false;
        }
        { SCOPED_LOCK(issue_lock_); }  // those being issued are done
        SCOPED_LOCK(lock_);
        while (!table_.empty() || !collecting_.empty()) drained_.wait(lock_);
        return 0;
    }

    int queue_count() {
        SCOPED_LOCK(lock_);
        return (int)table_.size();
    }

private:
    // The completer's loop, until its own operation is collected.
    int complete(OutOfOrderContext& args) {
        const uint64_t own = args.tag;
        for (;;) {
            int r = args.do_completion(&args);
            int e = errno;
            OutOfOrderContext* done;
            {
                SCOPED_LOCK(lock_);
                if (r < 0) {
                    return give_up_locked(own, &args, e, -1);  // do_completion's to report
                }
                auto it = table_.find(args.tag);
                if (it == table_.end()) {
                    LOG_WARN("ooo: a completion for tag `, which nobody waits for", args.tag);
                    return give_up_locked(own, &args, ENOENT, -2);
                }
                done = it->second;
                // Out of the table: its waiter now waits for the result.
                collecting_.insert(done);
                drop_locked(args.tag);
            }
            // do_collect may read the completion's data: the completer's turn
            // keeps do_completion from running meanwhile.
            int ret = done->do_collect(done);
            SCOPED_LOCK(lock_);
            const bool waiting = done->phase == OooPhase::WAITING;
            done->ret = ret;
            done->phase = OooPhase::COLLECTED;
            collecting_.erase(done);
            if (table_.empty() && collecting_.empty()) drained_.notify_all();
            if (done == &args) {
                args.tag = own;
                completing_ = false;
                pass_turn_locked();
                return ret;
            }
            // Asleep in wait() (it needs this lock to leave); one that has
            // not called it yet finds the result there.
            if (waiting) thread_interrupt(done->th, EINTR);
        }
    }

    int give_up_locked(uint64_t own, OutOfOrderContext* args, int err, int ret) {
        drop_locked(own);
        args->phase = OooPhase::ISSUED;
        completing_ = false;
        pass_turn_locked();
        errno = err;
        return ret;
    }

    void drop_locked(uint64_t tag) {
        table_.erase(tag);
        if (table_.empty() && collecting_.empty()) drained_.notify_all();
    }

    // Wakes the next waiter to take the completer's turn.
    void pass_turn_locked() {
        if (!completing_) turn_.notify_one();
    }

    photon::spinlock lock_;
    photon::mutex issue_lock_;
    condition_variable turn_;     // waiters for their result or the completer's turn
    condition_variable drained_;  // the table emptied
    std::unordered_map<uint64_t, OutOfOrderContext*> table_;   // issued, not yet collected
    std::unordered_set<const OutOfOrderContext*> collecting_;  // do_collect running
    uint64_t next_tag_ = 0;
    bool completing_ = false;
    bool running_ = true;
};

OutOfOrder_Execution_Engine* new_ooo_execution_engine() { return new OutOfOrder_Execution_Engine; }

void delete_ooo_execution_engine(OutOfOrder_Execution_Engine* engine) { delete engine; }

int ooo_issue_operation(OutOfOrderContext& args) { return args.engine->issue(args); }

int ooo_wait_completion(OutOfOrderContext& args) { return args.engine->wait(args); }

int ooo_issue_wait(OutOfOrderContext& args) {
    int r = ooo_issue_operation(args);
    return r < 0 ? r : ooo_wait_completion(args);
}

void ooo_result_collected(OutOfOrderContext&) {}

int ooo_get_queue_count(OutOfOrder_Execution_Engine* engine) { return engine->queue_count(); }

}  // namespace rpc
}  // namespace photon
