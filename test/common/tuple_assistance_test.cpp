// photon/common/tuple-assistance.h: callable<F> signatures, apply() converting
// elements to the parameter types (and what it moves and copies), and
// enumerate() visiting every element in order.
#include <photon/common/tuple-assistance.h>

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// Only inspected with decltype.
int free_fn(char, double);
void noexcept_fn(int) noexcept;

namespace {

using tuple_assistance::callable;

struct Widget {
    int size = 3;
    long grow(int by) { return size += by; }
    std::string name(const char* prefix) const { return std::string(prefix) + "widget"; }
    void reset() noexcept { size = 0; }
};

// ---- callable<F> -----------------------------------------------------------

template <typename F>
using args_of = typename callable<F>::arguments;
template <typename F>
using ret_of = typename callable<F>::return_type;

static_assert(std::is_same<args_of<decltype(free_fn)>, std::tuple<char, double>>::value, "");
static_assert(std::is_same<args_of<decltype(&free_fn)>, std::tuple<char, double>>::value, "");
static_assert(std::is_same<ret_of<decltype(&free_fn)>, int>::value, "");
static_assert(std::is_same<args_of<decltype(&noexcept_fn)>, std::tuple<int>>::value, "");
static_assert(std::is_same<args_of<decltype(&Widget::grow)>, std::tuple<Widget&, int>>::value,
              "member functions take the object first");
static_assert(std::is_same<ret_of<decltype(&Widget::grow)>, long>::value, "");
static_assert(
    std::is_same<args_of<decltype(&Widget::name)>, std::tuple<Widget&, const char*>>::value,
    "const members too, as C& (Photon's choice)");
static_assert(std::is_same<args_of<decltype(&Widget::reset)>, std::tuple<Widget&>>::value, "");
static_assert(std::is_same<args_of<decltype(&Widget::size)>, std::tuple<Widget&>>::value, "");
static_assert(std::is_same<ret_of<decltype(&Widget::size)>, int>::value, "");

constexpr auto kAdd = [](int a, long b) { return a + b; };
static_assert(std::is_same<args_of<decltype(kAdd)>, std::tuple<int, long>>::value, "");
static_assert(std::is_same<args_of<const decltype(kAdd)&>, std::tuple<int, long>>::value, "");
static_assert(std::is_same<ret_of<decltype(kAdd)>, long>::value, "");
static_assert(
    std::is_same<args_of<std::function<void(std::string&)>>, std::tuple<std::string&>>::value, "");

// No single signature: no member types, and no hard error either.
constexpr auto kGeneric = [](auto x) { return x; };
static_assert(!tuple_assistance::__has_signature<decltype(kGeneric)>::value, "");
static_assert(!tuple_assistance::__has_signature<int>::value, "");
static_assert(tuple_assistance::__has_signature<decltype(kAdd)&>::value, "");

// apply works in constant expressions with constexpr callables.
static_assert(tuple_assistance::apply(kAdd, std::make_tuple(2, 40L)) == 42, "");
static_assert(tuple_assistance::apply(kGeneric, std::make_tuple(7)) == 7, "");

// ---- apply -----------------------------------------------------------------

// Counts copies and moves, to see what apply does to the tuple's elements.
struct Tracked {
    int copies = 0, moves = 0;
    bool moved_from = false;
    Tracked() = default;
    Tracked(const Tracked& o) : copies(o.copies + 1), moves(o.moves) {}
    Tracked(Tracked&& o) noexcept : copies(o.copies), moves(o.moves + 1) { o.moved_from = true; }
};

TEST(TupleApply, ConvertsElementsToTheParameterTypes) {
    auto f = [](long a, std::string b, double c) { return b + std::to_string(a + (long)c); };
    EXPECT_EQ(tuple_assistance::apply(f, std::make_tuple(40, "n=", 2.0)), "n=42");
}

// Photon forwarded every element as the parameter type, so a by-value
// parameter moved the string out of the caller's tuple.
TEST(TupleApply, LvalueTupleIsCopiedFromNotMovedFrom) {
    std::tuple<std::string, Tracked> t{"keep me", Tracked{}};
    auto f = [](std::string s, Tracked tr) { return s.size() + tr.copies; };
    EXPECT_EQ(tuple_assistance::apply(f, t), 7u + 1u);
    EXPECT_EQ(std::get<0>(t), "keep me");
    EXPECT_FALSE(std::get<1>(t).moved_from);
    EXPECT_EQ(tuple_assistance::apply(f, t), 8u);  // and again: nothing was consumed
}

TEST(TupleApply, RvalueTupleIsMovedIntoByValueParameters) {
    std::tuple<Tracked> t;
    int copies = -1, moves = -1;
    tuple_assistance::apply(
        [&](Tracked tr) {
            copies = tr.copies;
            moves = tr.moves;
        },
        std::move(t));
    EXPECT_EQ(copies, 0);
    EXPECT_EQ(moves, 1);
    EXPECT_TRUE(std::get<0>(t).moved_from);
}

TEST(TupleApply, ReferencesInATupleOfReferencesAreNotConsumed) {
    std::string s = "still here";
    tuple_assistance::apply([](std::string taken) { (void)taken; }, std::forward_as_tuple(s));
    EXPECT_EQ(s, "still here");
    // but an rvalue reference element is meant to be moved from
    std::string t = "gone";
    tuple_assistance::apply([](std::string taken) { EXPECT_EQ(taken, "gone"); },
                            std::forward_as_tuple(std::move(t)));
    EXPECT_TRUE(t.empty());
}

TEST(TupleApply, LvalueReferenceParametersBindToTheElements) {
    std::tuple<int, std::string> t{1, "a"};
    tuple_assistance::apply(
        [](int& i, std::string& s) {
            i = 2;
            s += "b";
        },
        t);
    EXPECT_EQ(std::get<0>(t), 2);
    EXPECT_EQ(std::get<1>(t), "ab");
    // As in Photon, also when the tuple is an rvalue (thread11 relies on it).
    auto r = std::make_tuple(5);
    int seen = 0;
    tuple_assistance::apply([&](int& i) { seen = ++i; }, std::move(r));
    EXPECT_EQ(seen, 6);
}

TEST(TupleApply, MoveOnlyElementsStillMoveFromAnLvalueTuple) {
    std::tuple<std::unique_ptr<int>> t{std::make_unique<int>(9)};
    int got = tuple_assistance::apply([](std::unique_ptr<int> p) { return *p; }, t);
    EXPECT_EQ(got, 9);
    EXPECT_EQ(std::get<0>(t), nullptr);  // the only way Photon's code compiled
}

TEST(TupleApply, CallsGenericLambdasAndMemberPointers) {
    auto t = std::make_tuple(std::string("x"), 3);
    auto generic = [](const auto& s, auto n) { return s.size() + n; };
    EXPECT_EQ(tuple_assistance::apply(generic, t), 4u);

    Widget w;
    std::tuple<Widget&, int> args{w, 4};
    EXPECT_EQ(tuple_assistance::apply(&Widget::grow, args), 7);
    EXPECT_EQ(w.size, 7);
}

TEST(TupleApply, ReturnsReferencesAsReferences) {
    int x = 1;
    auto pick = [](int& r) -> int& { return r; };
    std::tuple<int&> t{x};
    int& back = tuple_assistance::apply(pick, t);
    EXPECT_EQ(&back, &x);
    EXPECT_EQ(tuple_assistance::apply([] { return 5; }, std::tuple<>{}), 5);
}

// ---- enumerate -------------------------------------------------------------

struct Collect {
    std::vector<std::string>* out;
    void proc(int v) const { out->push_back("i" + std::to_string(v)); }
    void proc(const std::string& s) const { out->push_back("s" + s); }
    void proc(double& d) const {
        d *= 2;
        out->push_back("d");
    }
};

TEST(TupleEnumerate, VisitsEveryElementInOrder) {
    std::vector<std::string> seen;
    std::tuple<int, std::string, double, int> t{1, "two", 1.5, 4};
    tuple_assistance::enumerate(Collect{&seen}, t);
    EXPECT_EQ(seen, (std::vector<std::string>{"i1", "stwo", "d", "i4"}));
    EXPECT_EQ(std::get<2>(t), 3.0);  // proc may change the elements
}

// Photon's static_assert rejected the empty tuple.
TEST(TupleEnumerate, EmptyTupleVisitsNothing) {
    std::vector<std::string> seen;
    std::tuple<> t;
    tuple_assistance::enumerate(Collect{&seen}, t);
    EXPECT_TRUE(seen.empty());
    std::tuple<int> one{8};
    tuple_assistance::enumerate(Collect{&seen}, one);
    EXPECT_EQ(seen, (std::vector<std::string>{"i8"}));
}

}  // namespace
