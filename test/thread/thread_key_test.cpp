// Coroutine-local storage (photon/thread/thread-key.h, thread-local.h): per-
// coroutine values, destructors at exit, deleted and reused keys, and
// thread_local_ptr.
#include <photon/photon.h>
#include <photon/thread/thread-key.h>
#include <photon/thread/thread-local.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test_util.h"

namespace {

class ThreadKey : public photon_test::VcpuTest {};

// What destructors saw, in call order.
std::vector<void*> g_destroyed;
void record_dtor(void* v) { g_destroyed.push_back(v); }

int g_values[8];
void* val(int i) { return &g_values[i]; }

TEST_F(ThreadKey, EachCoroutineSeesOnlyItsOwnValue) {
    photon::thread_key_t key;
    ASSERT_EQ(0, photon::thread_key_create(&key, nullptr));
    std::vector<std::pair<void*, void*>> seen;  // (set, got back after others ran)
    for (int i = 0; i < 4; i++) {
        photon::thread_create11([&, i] {
            EXPECT_EQ(nullptr, photon::thread_getspecific(key));
            EXPECT_EQ(0, photon::thread_setspecific(key, val(i)));
            photon::thread_yield();  // the others set theirs meanwhile
            seen.emplace_back(val(i), photon::thread_getspecific(key));
        });
    }
    ASSERT_EQ(0, photon::thread_setspecific(key, val(7)));
    photon::wait_all();
    ASSERT_EQ(4u, seen.size());
    for (auto& p : seen) EXPECT_EQ(p.first, p.second);
    EXPECT_EQ(val(7), photon::thread_getspecific(key));
    EXPECT_EQ(0, photon::thread_key_delete(key));
}

TEST_F(ThreadKey, DestructorRunsAtCoroutineExitWithTheValue) {
    g_destroyed.clear();
    photon::thread_key_t key;
    ASSERT_EQ(0, photon::thread_key_create(&key, &record_dtor));
    bool destroyed_before_exit = true;
    photon::thread_create11([&] {
        photon::thread_setspecific(key, val(1));
        photon::thread_usleep(1000);
        destroyed_before_exit = !g_destroyed.empty();
    });
    photon::thread_create11([&] { photon::thread_setspecific(key, nullptr); });  // no call
    photon::wait_all();
    EXPECT_FALSE(destroyed_before_exit);
    EXPECT_EQ(std::vector<void*>{val(1)}, g_destroyed);
    EXPECT_EQ(0, photon::thread_key_delete(key));
}

// A destructor that sets a new value gets called again, a bounded number of
// times, as with pthread keys.
TEST_F(ThreadKey, DestructorThatSetsAValueIsCalledAgainBoundedly) {
    static photon::thread_key_t key;
    static int calls;
    calls = 0;
    ASSERT_EQ(0, photon::thread_key_create(&key, [](void*) {
                  if (++calls < 100) photon::thread_setspecific(key, val(2));
              }));
    photon::thread_create11([] { photon::thread_setspecific(key, val(1)); });
    photon::wait_all();
    EXPECT_GE(calls, 2);
    EXPECT_LE(calls, 10);
    EXPECT_EQ(0, photon::thread_key_delete(key));
}

TEST_F(ThreadKey, MainCoroutineValuesAreDestroyedAtFini) {
    g_destroyed.clear();
    photon::thread_key_t key;
    ASSERT_EQ(0, photon::thread_key_create(&key, &record_dtor));
    ASSERT_EQ(0, photon::thread_setspecific(key, val(3)));
    photon::thread_create11([] {});
    photon::wait_all();
    EXPECT_TRUE(g_destroyed.empty());
    EXPECT_EQ(0, photon::fini());
    EXPECT_EQ(std::vector<void*>{val(3)}, g_destroyed);
    EXPECT_EQ(0, photon::thread_key_delete(key));
}

TEST_F(ThreadKey, DeletedKeyReadsNullAndRejectsSetWithEinval) {
    photon::thread_key_t key;
    ASSERT_EQ(0, photon::thread_key_create(&key, nullptr));
    ASSERT_EQ(0, photon::thread_setspecific(key, val(0)));
    EXPECT_EQ(0, photon::thread_key_delete(key));
    EXPECT_EQ(nullptr, photon::thread_getspecific(key));
    errno = 0;
    EXPECT_EQ(EINVAL, photon::thread_setspecific(key, val(1)));  // pthread-style
    EXPECT_EQ(EINVAL, errno);
    errno = 0;
    EXPECT_EQ(EINVAL, photon::thread_key_delete(key));
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(ThreadKey, ValuesOfADeletedKeyAreNotDestroyed) {
    g_destroyed.clear();
    photon::thread_key_t key;
    ASSERT_EQ(0, photon::thread_key_create(&key, &record_dtor));
    photon::thread_create11([&] {
        photon::thread_setspecific(key, val(4));
        photon::thread_key_delete(key);
    });
    photon::wait_all();
    EXPECT_TRUE(g_destroyed.empty());
}

TEST_F(ThreadKey, ANewKeyReusingASlotDoesNotSeeTheOldValue) {
    g_destroyed.clear();
    photon::thread_key_t old_key, new_key;
    ASSERT_EQ(0, photon::thread_key_create(&old_key, &record_dtor));
    void* seen = val(0);
    bool set_done = false, key_swapped = false;
    photon::thread_create11([&] {
        photon::thread_setspecific(old_key, val(5));
        set_done = true;
        for (int i = 0; i < 1000 && !key_swapped; i++) photon::thread_yield();
        seen = photon::thread_getspecific(new_key);
    });
    photon::thread_yield();
    ASSERT_TRUE(set_done);
    ASSERT_EQ(0, photon::thread_key_delete(old_key));
    ASSERT_EQ(0, photon::thread_key_create(&new_key, &record_dtor));  // the freed slot
    EXPECT_EQ(old_key, new_key);  // keys are slot indexes, as Photon's
    key_swapped = true;
    photon::wait_all();
    EXPECT_EQ(nullptr, seen);
    EXPECT_TRUE(g_destroyed.empty());  // the old value is not new_key's
    EXPECT_EQ(0, photon::thread_key_delete(new_key));
}

TEST_F(ThreadKey, KeysRunOutWithEagainAndComeBackWhenDeleted) {
    std::vector<photon::thread_key_t> keys;
    photon::thread_key_t k;
    int ret = 0;
    for (int i = 0; i < 4096; i++) {
        errno = 0;
        ret = photon::thread_key_create(&k, nullptr);
        if (ret != 0) break;
        keys.push_back(k);
    }
    EXPECT_EQ(EAGAIN, ret);
    EXPECT_EQ(EAGAIN, errno);
    EXPECT_EQ(photon::THREAD_KEYS_MAX, keys.size());
    for (auto key : keys) EXPECT_EQ(0, photon::thread_key_delete(key));
    ASSERT_EQ(0, photon::thread_key_create(&k, nullptr));
    EXPECT_EQ(0, photon::thread_key_delete(k));
}

TEST_F(ThreadKey, SetspecificOutsideAVcpuFailsWithEnosys) {
    photon::thread_key_t key;
    ASSERT_EQ(0, photon::thread_key_create(&key, nullptr));
    int ret = 0, err = 0;
    void* got = val(0);
    std::thread os([&] {
        errno = 0;
        ret = photon::thread_setspecific(key, val(1));
        err = errno;
        got = photon::thread_getspecific(key);
    });
    os.join();
    EXPECT_EQ(ENOSYS, ret);
    EXPECT_EQ(ENOSYS, err);
    EXPECT_EQ(nullptr, got);
    EXPECT_EQ(0, photon::thread_key_delete(key));
}

// Counts constructions and destructions, and keeps its constructor arguments.
struct Counted {
    static int ctors, dtors;
    int n;
    std::string s;
    Counted(int n, const std::string& s) : n(n), s(s) { ctors++; }
    ~Counted() { dtors++; }
};
int Counted::ctors = 0;
int Counted::dtors = 0;

TEST_F(ThreadKey, ThreadLocalPtrGivesEachCoroutineItsOwnObjectDeletedAtExit) {
    Counted::ctors = Counted::dtors = 0;
    photon::thread_local_ptr<Counted, int, std::string> tlp(42, std::string("hello"));
    std::vector<Counted*> objs;
    int mid_ctors = -1, mid_dtors = -1;
    for (int i = 0; i < 5; i++) {
        photon::thread_create11([&, i] {
            Counted* p = tlp.get();
            EXPECT_EQ(p, &*tlp);  // the same object on every use
            EXPECT_EQ(42, tlp->n);
            EXPECT_EQ("hello", tlp->s);
            p->n += i;  // private to this coroutine
            photon::thread_yield();
            EXPECT_EQ(42 + i, tlp->n);
            objs.push_back(p);
            if (i == 4) mid_ctors = Counted::ctors, mid_dtors = Counted::dtors;
        });
    }
    photon::wait_all();
    EXPECT_EQ(5, mid_ctors);
    EXPECT_EQ(4, mid_dtors);  // the others have ended
    EXPECT_EQ(5, Counted::ctors);
    EXPECT_EQ(5, Counted::dtors);
    ASSERT_EQ(5u, objs.size());
    for (size_t i = 1; i < objs.size(); i++) EXPECT_NE(objs[0], objs[i]);
}

TEST_F(ThreadKey, ThreadLocalPtrIsNotCreatedByACoroutineThatDoesNotUseIt) {
    Counted::ctors = Counted::dtors = 0;
    photon::thread_local_ptr<Counted, int, std::string> tlp(1, std::string("x"));
    photon::thread_create11([] {});
    photon::thread_create11([&] { EXPECT_EQ(1, tlp->n); });
    photon::wait_all();
    EXPECT_EQ(1, Counted::ctors);
    EXPECT_EQ(1, Counted::dtors);
}

TEST_F(ThreadKey, DeallocateTlsRunsTheDestructorsOfTheCallersValuesAndFreesThem) {
    g_destroyed.clear();
    photon::thread_key_t key;
    ASSERT_EQ(0, photon::thread_key_create(&key, &record_dtor));
    photon::thread_create11([&] {
        ASSERT_EQ(0, photon::thread_setspecific(key, val(6)));
        photon::deallocate_tls();  // as a ThreadPool worker between tasks
        EXPECT_EQ(std::vector<void*>{val(6)}, g_destroyed);
        EXPECT_EQ(nullptr, photon::thread_getspecific(key));
        photon::deallocate_tls();                               // nothing left: a no-op
        ASSERT_EQ(0, photon::thread_setspecific(key, val(7)));  // usable again
    });
    photon::wait_all();
    EXPECT_EQ((std::vector<void*>{val(6), val(7)}), g_destroyed);
    void* none = nullptr;
    photon::deallocate_tls(&none);  // an empty storage
    EXPECT_EQ(nullptr, none);
    EXPECT_EQ(0, photon::thread_key_delete(key));
}

TEST(ThreadKeyOffVcpu, DeallocateTlsOffAVcpuDoesNothing) { photon::deallocate_tls(); }

}  // namespace
