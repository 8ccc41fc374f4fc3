// PhotonLibOS semantics its own programs and tests rely on (issue 30): each
// test is written the way a Photon program uses the call, and names what
// differed before.
#include <photon/photon.h>
#include <photon/thread/thread-key.h>
#include <photon/thread/thread.h>
#include <photon/thread/thread11.h>

#include <gtest/gtest.h>

#include <vector>

#include "../util/engine_fixture.h"

namespace {

class PhotonSemantics : public photon_test::VcpuTest {};

// Photon programs keep per-key arrays indexed by the key.
TEST_F(PhotonSemantics, ThreadKeysAreTheLowestFreeSlotIndexes) {
    photon::thread_key_t a, b, c;
    ASSERT_EQ(0, photon::thread_key_create(&a, nullptr));
    ASSERT_EQ(0, photon::thread_key_create(&b, nullptr));
    EXPECT_LT(a, photon::THREAD_KEYS_MAX);
    EXPECT_EQ(a + 1, b);
    ASSERT_EQ(0, photon::thread_key_delete(a));
    ASSERT_EQ(0, photon::thread_key_create(&c, nullptr));
    EXPECT_EQ(a, c);  // the freed slot again
    int slot_values[photon::THREAD_KEYS_MAX] = {};
    slot_values[c] = 1;
    ASSERT_EQ(0, photon::thread_setspecific(c, &slot_values[c]));
    EXPECT_EQ(&slot_values[c], photon::thread_getspecific(c));
    EXPECT_EQ(0, photon::thread_key_delete(b));
    EXPECT_EQ(0, photon::thread_key_delete(c));
    EXPECT_EQ(nullptr, photon::thread_getspecific(c));
    EXPECT_EQ(EINVAL, photon::thread_key_delete(c));
}

// The first key of a fresh process is 0.
TEST(PhotonSemanticsFresh, TheFirstThreadKeyIsZero) {
    photon::thread_key_t k = 12345;
    ASSERT_EQ(0, photon::thread_key_create(&k, nullptr));
    EXPECT_EQ(0u, k);
    EXPECT_EQ(0, photon::thread_key_delete(k));
}

// Photon's mutex and awaiter pass a lambda written in the call.
TEST_F(PhotonSemantics, UsleepDeferTakesALambdaWrittenInTheCall) {
    int deferred = 0;
    bool ran_before_wake = false;
    auto sleeper = photon::thread_create11(
        [&] { photon::thread_usleep_defer(10 * 1000 * 1000, [&] { deferred++; }); });
    auto joinable = photon::thread_enable_join(sleeper);
    photon::thread_yield_to(sleeper);  // it runs until it sleeps, then the lambda runs
    ran_before_wake = deferred == 1;
    photon::thread_interrupt(sleeper);
    photon::thread_join(joinable);
    EXPECT_TRUE(ran_before_wake);
    EXPECT_EQ(1, deferred);
    // The pointer form and Photon's {object, member} form still compile.
    struct Gate {
        bool open = false;
        void unlock() { open = true; }
    } gate;
    EXPECT_EQ(0, photon::thread_usleep_defer(1, {&gate, &Gate::unlock}));
    EXPECT_TRUE(gate.open);
    EXPECT_EQ(0, photon::thread_usleep_defer(
                     1, [](void* p) { ++*static_cast<int*>(p); }, &deferred));
    EXPECT_EQ(2, deferred);
}

}  // namespace
