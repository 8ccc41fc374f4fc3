// photon/thread/list.h (= photon/common/intrusive_list.h, also reached through
// photon/common/list.h): node linking, list operations in both directions,
// splitting and splicing, and the traps of PhotonLibOS's list that are fixed.
#include <photon/thread/list.h>
#include <photon/common/intrusive_list.h>
#include <photon/common/list.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

struct other_base {
    long pad[3] = {1, 2, 3};
    virtual ~other_base() = default;
};

// Links not at offset 0: the casts between node and element must adjust.
struct elem : other_base, intrusive_list_node<elem> {
    int v;
    static int alive;
    explicit elem(int v = 0) : v(v) { alive++; }
    elem(const elem& r) : other_base(r), intrusive_list_node<elem>(r), v(r.v) { alive++; }
    ~elem() override { alive--; }
};
int elem::alive = 0;

template <typename L>
std::vector<int> forward(L& l) {
    std::vector<int> out;
    for (auto x : l) out.push_back(x->v);
    return out;
}

template <typename L>
std::vector<int> backward(L& l) {
    std::vector<int> out;
    for (auto it = l.rbegin(); it != l.rend(); ++it) out.push_back((*it)->v);
    return out;
}

using V = std::vector<int>;

// Three elements on the stack, listed in `l` as 1 2 3.
struct three {
    elem e1{1}, e2{2}, e3{3};
    intrusive_list<elem> l;
    three() {
        l.push_back(&e1);
        l.push_back(&e2);
        l.push_back(&e3);
    }
    ~three() { l.release(); }
};

TEST(IntrusiveList, AllThreePathsNameTheSameTypes) {
    static_assert(std::is_base_of<__intrusive_list_node, intrusive_list_node<elem>>::value, "");
    static_assert(
        std::is_same<intrusive_list<elem>::iterator, intrusive_list_node<elem>::iterator>::value,
        "");
    static_assert(sizeof(intrusive_list_node<elem>) == 2 * sizeof(void*),
                  "two links, nothing else");
}

TEST(IntrusiveListNode, ALoneNodeIsSingleAndRemovingItReturnsNullptr) {
    elem a(1);
    EXPECT_TRUE(a.single());
    EXPECT_EQ(&a, a.next());
    EXPECT_EQ(&a, a.prev());
    EXPECT_EQ(nullptr, a.remove_from_list());
}

TEST(IntrusiveListNode, InsertsBeforeAndAfterAndRemovesReturningTheSuccessor) {
    elem a(1), b(2), c(3), d(4);
    a.insert_after(&c);  // a c
    a.insert_after(b);   // a b c
    a.insert_tail(&d);   // a b c d
    EXPECT_EQ(V({1, 2, 3, 4}), forward(a));
    EXPECT_EQ(V({4, 3, 2, 1}), backward(a));
    EXPECT_EQ(&c, b.remove_from_list());
    EXPECT_TRUE(b.single());
    EXPECT_EQ(V({1, 3, 4}), forward(a));
    c.insert_before(b);  // a b c d
    EXPECT_EQ(V({1, 2, 3, 4}), forward(a));
    EXPECT_EQ(V({2, 3, 4, 1}), forward(b)) << "a node iterates its ring from itself";
    for (elem* x : {&a, &b, &c}) x->remove_from_list();
    EXPECT_TRUE(d.single());
}

TEST(IntrusiveListNode, InsertingANodeThatIsLinkedElsewhereDoesNothing) {
    elem a(1), b(2), x(9), y(8);
    a.insert_after(&b);
    x.insert_after(&y);
    a.insert_after(&y);  // y belongs to x's ring
    EXPECT_EQ(V({1, 2}), forward(a));
    EXPECT_EQ(V({9, 8}), forward(x));
    b.remove_from_list();
    y.remove_from_list();
}

TEST(IntrusiveListNode, InsertsWholeRingsBeforeAndAfter) {
    elem a(1), b(2), x(7), y(8);
    a.insert_after(&b);  // ring 1 2
    x.insert_after(&y);  // ring 7 8
    a.insert_list_after(&x);
    EXPECT_EQ(V({1, 7, 8, 2}), forward(a));
    EXPECT_EQ(V({2, 8, 7, 1}), backward(a));
    x.split(&b);  // 7 8 | 2 1
    EXPECT_EQ(V({7, 8}), forward(x));
    EXPECT_EQ(V({2, 1}), forward(b));
    b.insert_list_before(x);  // 2 1 7 8 from b
    EXPECT_EQ(V({2, 1, 7, 8}), forward(b));
    a.split(&x);  // 1 | 7 8 2
    EXPECT_TRUE(a.single());
    EXPECT_EQ(V({7, 8, 2}), forward(x));
    for (elem* n : {&x, &y}) n->remove_from_list();
}

// Photon copied the links: the copy claimed neighbours that did not point
// back at it, and inserting it anywhere was silently skipped.
TEST(IntrusiveListNode, ACopyOfALinkedNodeIsALoneNodeAndAssignmentKeepsLinks) {
    three t;
    elem copy(t.e2);
    EXPECT_TRUE(copy.single());
    EXPECT_EQ(2, copy.v);
    t.l.push_back(&copy);
    EXPECT_EQ(V({1, 2, 3, 2}), forward(t.l));
    t.l.erase(&copy);
    elem lone(5);
    static_cast<intrusive_list_node<elem>&>(t.e2) = lone;  // links of e2 untouched
    EXPECT_EQ(V({1, 2, 3}), forward(t.l));
    EXPECT_TRUE(lone.single());
}

TEST(IntrusiveList, PushesPopsAndErasesAtBothEnds) {
    elem a(1), b(2), c(3), d(4);
    intrusive_list<elem> l;
    EXPECT_TRUE(l.empty());
    EXPECT_FALSE(l);
    EXPECT_EQ(nullptr, l.pop_front());
    EXPECT_EQ(nullptr, l.pop_back());
    EXPECT_EQ(nullptr, l.back());
    l.push_back(&b);
    l.push_front(&a);
    l.push_back(&c);
    l.push_back(&d);
    EXPECT_TRUE(l);
    EXPECT_EQ(&a, l.front());
    EXPECT_EQ(&d, l.back());
    EXPECT_EQ(V({1, 2, 3, 4}), forward(l));
    EXPECT_EQ(V({4, 3, 2, 1}), backward(l));
    EXPECT_EQ(4u, l.count_by_loop());
    EXPECT_TRUE(l.contains(&c));
    EXPECT_EQ(&d, l.erase(&c));
    EXPECT_FALSE(l.contains(&c));
    EXPECT_EQ(&b, l.erase(&a)) << "erasing the front moves the front";
    EXPECT_EQ(&b, l.front());
    l.pop(&d);
    EXPECT_EQ(&b, l.pop_back());
    EXPECT_TRUE(l.empty());
    EXPECT_TRUE(b.single());
}

TEST(IntrusiveList, SplitsOffTheFrontInclusiveExclusiveAndByPredicate) {
    three t;
    auto none = t.l.split_front_inclusive(nullptr);
    EXPECT_TRUE(none.empty());
    auto first_two = t.l.split_front_inclusive(&t.e2);
    EXPECT_EQ(V({1, 2}), forward(first_two));
    EXPECT_EQ(V({3}), forward(t.l));
    t.l.push_front(std::move(first_two));
    EXPECT_TRUE(first_two.empty());
    EXPECT_EQ(V({1, 2, 3}), forward(t.l));

    EXPECT_TRUE(t.l.split_front_exclusive(&t.e1).empty()) << "nothing before the front";
    auto before3 = t.l.split_front_exclusive(&t.e3);
    EXPECT_EQ(V({1, 2}), forward(before3));
    t.l.push_back(std::move(before3));  // 3 1 2
    EXPECT_EQ(V({3, 1, 2}), forward(t.l));

    auto big = t.l.split_by_predicate([](elem* e) { return e->v > 2; });
    EXPECT_EQ(V({3}), forward(big));
    EXPECT_EQ(V({1, 2}), forward(t.l));
    auto all = t.l.split_front_inclusive(&t.e2);  // the tail: everything
    EXPECT_TRUE(t.l.empty());
    EXPECT_EQ(V({1, 2}), forward(all));
    auto rest = all.split_front_exclusive(nullptr);
    EXPECT_TRUE(all.empty());
    t.l.push_back(std::move(big));
    t.l.push_back(std::move(rest));
    EXPECT_EQ(V({3, 1, 2}), forward(t.l));
}

// Photon's push_front(intrusive_list&&) called a method that does not exist,
// and pushing an empty list onto a non-empty one dereferenced nullptr.
TEST(IntrusiveList, PushingWholeListsAtEitherEndIncludingEmptyOnes) {
    three t;
    elem x(7), y(8);
    intrusive_list<elem> other, empty;
    other.push_back(&x);
    other.push_back(&y);
    t.l.push_back(std::move(empty));
    t.l.push_front(std::move(empty));
    EXPECT_EQ(V({1, 2, 3}), forward(t.l));
    t.l.push_front(std::move(other));
    EXPECT_EQ(V({7, 8, 1, 2, 3}), forward(t.l));
    auto front = t.l.split_front_exclusive(&t.e1);
    other.splice(front);
    EXPECT_TRUE(front.empty());
    empty.push_front(std::move(other));
    EXPECT_EQ(V({7, 8}), forward(empty));
    empty.release();
}

TEST(IntrusiveList, RoundRobinRotatesAndAnEmptyListGivesNullptr) {
    three t;
    EXPECT_EQ(&t.e1, t.l.round_robin_next());
    EXPECT_EQ(&t.e2, t.l.front());
    EXPECT_EQ(&t.e2, t.l.round_robin_prev());
    EXPECT_EQ(&t.e1, t.l.front());
    intrusive_list<elem> empty;
    EXPECT_EQ(nullptr, empty.round_robin_next());
    EXPECT_EQ(nullptr, empty.round_robin_prev());
}

TEST(IntrusiveList, DeleteAllDeletesEveryElementAndCountsThem) {
    elem::alive = 0;
    intrusive_list<elem> l;
    for (int i = 0; i < 5; i++) l.push_back(new elem(i));
    EXPECT_EQ(5, elem::alive);
    EXPECT_EQ(5u, l.delete_all());
    EXPECT_EQ(0, elem::alive);
    EXPECT_TRUE(l.empty());
    EXPECT_EQ(0u, l.delete_all());
}

TEST(IntrusiveList, MovesReleaseAndANonAssertingListMayEndNonEmpty) {
    three t;
    intrusive_list<elem> moved(std::move(t.l));
    EXPECT_TRUE(t.l.empty());
    EXPECT_EQ(V({1, 2, 3}), forward(moved));
    EXPECT_EQ(&t.e1, moved.release());
    EXPECT_TRUE(moved.empty());
    {
        intrusive_list<elem, false> view(&t.e2);  // a handle on the same ring
        EXPECT_EQ(V({2, 3, 1}), forward(view));
    }
    t.l.node = &t.e1;
}

}  // namespace
