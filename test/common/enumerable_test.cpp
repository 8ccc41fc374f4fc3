// photon/common/enumerable.h: range-for over valid()/get()/next() cursors, by reference, by
// pointer, owning a temporary, and the ownership rules of copies.
#include <photon/common/enumerable.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

// Yields begin, begin+1, ..., end-1.
struct Counter {
    int cur, end;
    int* deleted = nullptr;  // counts destructions, when set
    Counter(int b, int e, int* d = nullptr) : cur(b), end(e), deleted(d) {}
    Counter(Counter&& rhs) : cur(rhs.cur), end(rhs.end), deleted(rhs.deleted) {
        rhs.deleted = nullptr;
    }
    Counter(const Counter&) = default;
    ~Counter() {
        if (deleted) ++*deleted;
    }
    bool valid() { return cur < end; }
    int next() { return ++cur < end ? 0 : -1; }
    int get() { return cur; }
};

std::vector<int> collect(Enumerable<Counter> e) {
    std::vector<int> v;
    for (int x : e) v.push_back(x);
    return v;
}

TEST(Enumerable, IteratesAnObjectByReferenceOrPointer) {
    Counter c(3, 6);
    std::vector<int> v;
    for (int x : enumerable(c)) v.push_back(x);
    EXPECT_EQ((std::vector<int>{3, 4, 5}), v);
    EXPECT_EQ(6, c.cur);  // the caller's object was advanced
    Counter d(0, 2);
    v.clear();
    for (int x : enumerable(&d)) v.push_back(x);
    EXPECT_EQ((std::vector<int>{0, 1}), v);
}

TEST(Enumerable, YieldsNothingForAnInvalidOrNullObject) {
    Counter empty(5, 5);
    int n = 0;
    for (int x : enumerable(empty)) n += x + 1;
    EXPECT_EQ(0, n);
    Counter* null = nullptr;
    for (int x : enumerable(null)) n += x + 1;
    EXPECT_EQ(0, n);
    auto e = enumerable(empty);
    EXPECT_EQ(e.begin(), e.end());
    EXPECT_EQ(0, *e.end());  // the end reads as R{}
    auto it = e.end();
    ++it;  // incrementing the end stays at the end
    EXPECT_EQ(e.end(), it);
}

TEST(Enumerable, HoldsATemporaryForTheWholeLoop) {
    int deleted = 0;
    std::vector<int> v;
    for (int x : enumerable(Counter(1, 4, &deleted))) {
        EXPECT_EQ(0, deleted);  // still alive inside the loop
        v.push_back(x);
    }
    EXPECT_EQ((std::vector<int>{1, 2, 3}), v);
    EXPECT_EQ(1, deleted);
}

TEST(Enumerable, CopiedHoldersPointAtTheirOwnObject) {
    int deleted = 0;
    auto h = enumerable(Counter(0, 3, &deleted));
    auto copy = h;  // Photon's copy pointed at h's object
    EXPECT_EQ(&copy._obj, copy.obj);
    auto moved = std::move(copy);
    EXPECT_EQ(&moved._obj, moved.obj);
    std::vector<int> v;
    for (int x : moved) v.push_back(x);
    EXPECT_EQ((std::vector<int>{0, 1, 2}), v);
    EXPECT_EQ(0, h._obj.cur);  // h's object is untouched
}

TEST(Enumerable, AnOwningEnumerableDeletesOnceHoweverItIsCopied) {
    int deleted = 0;
    {
        Enumerable<Counter> owner(new Counter(0, 2, &deleted), true);
        EXPECT_EQ((std::vector<int>{0, 1}), collect(owner));  // a copy: does not own
        EXPECT_EQ(0, deleted);
        Enumerable<Counter> taken(std::move(owner));
        EXPECT_FALSE(owner.autoDelete);
        EXPECT_TRUE(taken.autoDelete);
        Counter other(0, 0);
        Enumerable<Counter> assigned(other);
        assigned = std::move(taken);
        EXPECT_TRUE(assigned.autoDelete);
        Enumerable<Counter> viewer(other);
        viewer = assigned;  // copy-assigned: a view
        EXPECT_FALSE(viewer.autoDelete);
        EXPECT_EQ(assigned.obj, viewer.obj);
    }
    EXPECT_EQ(1, deleted);
}

struct Names {
    std::vector<std::string> items{"a", "b"};
    size_t i = 0;
    bool valid() { return i < items.size(); }
    int next() { return ++i < items.size() ? 0 : -1; }
    std::string& get() { return items[i]; }  // a reference: Photon's R{} did not compile
};

TEST(Enumerable, GetMayReturnAReference) {
    Names names;
    for (auto& s : enumerable(names)) s += "!";
    EXPECT_EQ("a!", names.items[0]);
    EXPECT_EQ("b!", names.items[1]);
}

TEST(Enumerable, PhotonsExampleRuns) { __example_of_enumerable__(); }

}  // namespace
