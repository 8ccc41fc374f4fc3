// Generator<Derived, ValueType, IteratorPayload>: range-for support for a
// lazily computed sequence, as PhotonLibOS declares it (CRTP, global
// namespace). Derived supplies one of two forms:
//   has_next(const Iterator*) / next(Iterator*) / get(const Iterator*), using
//     the iterator's counter `i` (0, 1, 2, ... advanced automatically);
//   payload_has_next(const IteratorPayload&) / payload_next(IteratorPayload&)
//     / payload_get(const IteratorPayload&), with a per-iterator payload made
//     from the generator (begin) or default-made (end).
// has_next answers "is the iterator on an element". Pure computation: any
// thread, never yields.
//
// Differences from PhotonLibOS: doc/compat.md#commongeneratorh
#pragma once

#include <cassert>
#include <type_traits>

// The Curiously Recurring Template Pattern: THIS() is the derived object.
template <typename Derived>
class __CRTP {
protected:
    Derived* THIS() { return static_cast<Derived*>(this); }
    const Derived* THIS() const { return static_cast<const Derived*>(this); }
};

template <typename Derived, typename ValueType, typename IteratorPayload_ = void>
class Generator : public __CRTP<Derived> {
public:
    using __CRTP<Derived>::THIS;

    struct IteratorPayloadVoid {
        int _;
        IteratorPayloadVoid(const Generator*) {}  // begin()
        IteratorPayloadVoid() {}                  // end()
    };
    using IteratorPayload = typename std::conditional<std::is_same<IteratorPayload_, void>::value,
                                                      IteratorPayloadVoid, IteratorPayload_>::type;

    struct Iterator : public __CRTP<Iterator> {
        using __CRTP<Iterator>::THIS;

        // begin(): on the first element, or end() if there is none.
        Iterator(const Derived* generator) : _generator(generator), payload(generator) {
            if (!_generator->has_next(THIS())) _generator = nullptr;
        }
        // end()
        Iterator() : _generator(nullptr), payload() {}

        void operator++() {
            assert(_generator);
            _generator->next(THIS());
            i++;
            if (!_generator->has_next(THIS())) _generator = nullptr;
        }
        void operator++(int) { ++(*this); }
        ValueType operator*() const { return _generator->get(THIS()); }
        // Two ends are equal; two live iterators compare by position.
        bool operator==(const Iterator& rhs) const {
            return _generator ? rhs._generator && i == rhs.i : !rhs._generator;
        }
        bool operator!=(const Iterator& rhs) const { return !(*this == rhs); }

        const Derived* _generator;  // nullptr: end
        int i = 0;                  // position, for get() and equality
        IteratorPayload payload;
    };

    // Derived overrides either these three, or the payload_ ones below.
    bool has_next(const Iterator* it) const { return THIS()->payload_has_next(it->payload); }
    void next(Iterator* it) const { THIS()->payload_next(it->payload); }
    ValueType get(const Iterator* it) const { return THIS()->payload_get(it->payload); }

    bool payload_has_next(const IteratorPayload&) const {
        assert(false && "Generator: define has_next() or payload_has_next()");
        return false;
    }
    void payload_next(IteratorPayload&) const {
        assert(false && "Generator: define next() or payload_next()");
    }
    ValueType payload_get(const IteratorPayload&) const {
        assert(false && "Generator: define get() or payload_get()");
        return ValueType();
    }

    // Derived may replace these (e.g. with a subclass of Iterator).
    Iterator begin() const { return Iterator(THIS()); }
    Iterator end() const { return Iterator(); }
};

// Both forms at work (Photon's test calls this); asserts in debug builds.
inline void ___example_of_generator____() {
    // Counter form: 0, 1, ..., n-1.
    class counting : public Generator<counting, int> {
    public:
        int n;
        explicit counting(int n) : n(n) {}
        bool has_next(const Iterator* it) const { return it->i < n; }
        void next(Iterator*) const {}
        int get(const Iterator* it) const { return it->i; }
    };
    int expect = 0;
    for (int x : counting(10)) {
        assert(x == expect);
        expect++;
        (void)x;
    }
    assert(expect == 10);

    // Payload form: squares below a limit.
    class squares;
    struct root {
        int r = 0;
        root(const squares*) {}
        root() {}
    };
    class squares : public Generator<squares, int, root> {
    public:
        int limit;
        explicit squares(int limit) : limit(limit) {}
        bool payload_has_next(const root& p) const { return p.r * p.r < limit; }
        void payload_next(root& p) const { p.r++; }
        int payload_get(const root& p) const { return p.r * p.r; }
    };
    expect = 0;
    for (int x : squares(50)) {
        assert(x == expect * expect);
        expect++;
        (void)x;
    }
    assert(expect == 8);
    (void)expect;
}
