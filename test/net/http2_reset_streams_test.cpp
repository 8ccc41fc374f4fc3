// The HTTP/2 connection's memory of reset streams (net/http2/reset_streams.h): the most recently
// reset ids up to a limit, oldest forgotten first; checked against a plain model through random
// resets in and out of order, and at the edges of its table's growth.
#include "../../net/http2/reset_streams.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <set>
#include <random>

namespace {

using photon::net::http2::reset_streams;

// What reset_streams must behave as: a set and the order of arrival.
struct Model {
    size_t limit;
    std::set<uint32_t> ids;
    std::deque<uint32_t> order;
    void insert(uint32_t id) {
        if (ids.count(id)) return;
        if (order.size() == limit) {
            ids.erase(order.front());
            order.pop_front();
        }
        order.push_back(id);
        ids.insert(id);
    }
};

void expect_same(const reset_streams& c, const Model& m, uint32_t max_id) {
    ASSERT_EQ(m.order.size(), c.size());
    for (uint32_t id = 1; id <= max_id; id++) ASSERT_EQ(m.ids.count(id), c.count(id)) << id;
}

TEST(Http2ResetStreams, RemembersTheLastResetUpToItsLimit) {
    reset_streams c(100);
    for (uint32_t id = 1; id <= 1001; id += 2) c.insert(id);
    EXPECT_EQ(100u, c.size());
    EXPECT_EQ(0u, c.count(801));  // the 400th of 501: forgotten
    EXPECT_EQ(1u, c.count(803));  // the 402nd, within the last 100
    EXPECT_EQ(1u, c.count(1001));
    // Inserting an id again neither adds it a second time nor moves it in the order.
    c.insert(803);
    EXPECT_EQ(100u, c.size());
    c.insert(1003);  // evicts the oldest, 803, not 805
    EXPECT_EQ(0u, c.count(803));
    EXPECT_EQ(1u, c.count(805));
    EXPECT_EQ(0u, c.count(2));
}

// Random resets: ids opened in order, reset in any order (some twice), the
// table crossing its growth steps and then evicting for a long while. Ids one
// apart (as clients open them) never share a home slot in the table; ids
// spaced at random do, which is what exercises the deletion's shifts.
void random_resets(uint32_t max_gap) {
    for (size_t limit : {1u, 7u, 64u, 300u}) {
        reset_streams c(limit);
        Model m{limit, {}, {}};
        std::mt19937 rng(limit);
        std::vector<uint32_t> open;
        uint32_t next = 1;
        for (int step = 0; step < 20000; step++) {
            if (open.size() < 50 && rng() % 2) {
                open.push_back(next);
                next += 2 * (1 + (max_gap > 1 ? rng() % max_gap : 0));
                continue;
            }
            if (open.empty()) continue;
            size_t k = rng() % open.size();
            uint32_t id = open[k];
            c.insert(id);
            m.insert(id);
            if (rng() % 8) {  // most are reset once; some are inserted again later
                open[k] = open.back();
                open.pop_back();
            }
            if (step % 997 == 0) {
                for (uint32_t id : m.ids)  // every id the model has, wherever it lies
                    ASSERT_EQ(1u, c.count(id)) << id;
                ASSERT_EQ(m.order.size(), c.size());
            }
        }
        if (max_gap == 1) expect_same(c, m, next);
        for (uint32_t id : m.order) ASSERT_EQ(1u, c.count(id)) << id;
        for (uint32_t id = 1; id < next; id += 2 * (1 + id % 97))
            ASSERT_EQ(m.ids.count(id), c.count(id)) << id;
    }
}

TEST(Http2ResetStreams, MatchesAModelThroughRandomResets) { random_resets(1); }

TEST(Http2ResetStreams, MatchesAModelWithCollidingIds) { random_resets(5000); }

}  // namespace
