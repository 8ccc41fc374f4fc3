// The HTTP/2 connection's memory of closed streams (net/http2/closed_streams.h): the most recently
// closed ids up to a limit, oldest forgotten first, with how each closed; checked against a plain
// model through random closes in and out of order, and at the edges of its table's growth.
#include "../../net/http2/closed_streams.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <random>

namespace {

using photon::net::http2::closed_streams;

// What closed_streams must behave as: a map and the order of arrival.
struct Model {
    size_t limit;
    std::map<uint32_t, bool> ids;
    std::deque<uint32_t> order;
    bool& at(uint32_t id) {
        if (!ids.count(id)) {
            if (order.size() == limit) {
                ids.erase(order.front());
                order.pop_front();
            }
            order.push_back(id);
        }
        return ids[id];
    }
};

void expect_same(const closed_streams& c, const Model& m, uint32_t max_id) {
    ASSERT_EQ(m.order.size(), c.size());
    for (uint32_t id = 1; id <= max_id; id++) {
        bool reset = false, got = c.find(id, &reset);
        auto it = m.ids.find(id);
        ASSERT_EQ(it != m.ids.end(), got) << id;
        if (got) {
            ASSERT_EQ(it->second, reset) << id;
        }
        ASSERT_EQ(got ? 1u : 0u, c.count(id)) << id;
    }
}

TEST(Http2ClosedStreams, RemembersTheLastClosedUpToItsLimit) {
    closed_streams c(100);
    for (uint32_t id = 1; id <= 1001; id += 2) c[id] = (id % 3 == 0);
    EXPECT_EQ(100u, c.size());
    bool reset;
    EXPECT_FALSE(c.find(801, &reset));  // the 400th of 501: forgotten
    ASSERT_TRUE(c.find(803, &reset));   // the 402nd, within the last 100
    EXPECT_FALSE(reset);
    ASSERT_TRUE(c.find(1001, &reset));
    EXPECT_FALSE(reset);
    ASSERT_TRUE(c.find(999, &reset));
    EXPECT_TRUE(reset);
    // Looking an id up again neither adds it a second time nor clears how it closed.
    c[999];
    EXPECT_EQ(100u, c.size());
    ASSERT_TRUE(c.find(999, &reset));
    EXPECT_TRUE(reset);
    EXPECT_FALSE(c.find(2, &reset));
}

// Random closes: ids opened in order, closed in any order (some twice), the
// table crossing its growth steps and then evicting for a long while. Ids one
// apart (as clients open them) never share a home slot in the table; ids
// spaced at random do, which is what exercises the deletion's shifts.
void random_closes(uint32_t max_gap) {
    for (size_t limit : {1u, 7u, 64u, 300u}) {
        closed_streams c(limit);
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
            bool reset = rng() % 4 == 0;
            c[id] = reset;
            m.at(id) = reset;
            if (rng() % 8) {  // most close once; some are looked up again later
                open[k] = open.back();
                open.pop_back();
            }
            if (step % 997 == 0) {
                for (auto& kv : m.ids) {  // every id the model has, wherever it lies
                    bool reset = false;
                    ASSERT_TRUE(c.find(kv.first, &reset)) << kv.first;
                    ASSERT_EQ(kv.second, reset) << kv.first;
                }
                ASSERT_EQ(m.order.size(), c.size());
            }
        }
        if (max_gap == 1) expect_same(c, m, next);
        for (uint32_t id : m.order) ASSERT_EQ(1u, c.count(id)) << id;
        for (uint32_t id = 1; id < next; id += 2 * (1 + id % 97))
            ASSERT_EQ(m.ids.count(id), c.count(id)) << id;
    }
}

TEST(Http2ClosedStreams, MatchesAModelThroughRandomCloses) { random_closes(1); }

TEST(Http2ClosedStreams, MatchesAModelWithCollidingIds) { random_closes(5000); }

}  // namespace
