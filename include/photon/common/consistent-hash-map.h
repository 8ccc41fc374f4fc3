// consistent_hash_map: the lookup side of a consistent-hash ring, as
// PhotonLibOS declares it (global namespace). The ring is a vector of
// (point, value) pairs sorted by point; find(k) returns the first entry whose
// point is not less than k, wrapping around to the first entry past the last
// one, so adding or removing one point moves only the keys of the arc it
// covers. Fill it with push_back() and then sort(), or with assign().
// Not synchronized: one writer, or readers only. Never yields.
//
// Differences from PhotonLibOS: doc/compat.md#commonconsistent-hash-maph
#pragma once
#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

template <class Key, class T, class Compare = std::less<Key>,
          class Alloc = std::allocator<std::pair<Key, T> > >
class consistent_hash_map {
public:
    using key_type = Key;
    using mapped_type = T;
    using value_type = std::pair<Key, T>;
    using key_compare = Compare;
    using allocator_type = Alloc;

    // Orders entries by their key (point) only.
    struct value_compare {
        key_compare m_comp;
        value_compare(const key_compare& comp) : m_comp(comp) {}
        bool operator()(const value_type& a, const value_type& b) const {
            return m_comp(a.first, b.first);
        }
        bool operator()(const value_type& a, const key_type& b) const { return m_comp(a.first, b); }
    };

    explicit consistent_hash_map(const key_compare& comp = key_compare(),
                                 const allocator_type& alloc = allocator_type())
        : m_comp(comp), m_vector(alloc) {}

    using reference = mapped_type&;
    using const_reference = const mapped_type&;
    using pointer = mapped_type*;
    using const_pointer = const mapped_type*;
    using container_type = std::vector<value_type, allocator_type>;
    using iterator = typename container_type::iterator;
    using const_iterator = typename container_type::const_iterator;
    using reverse_iterator = typename container_type::reverse_iterator;
    using const_reverse_iterator = typename container_type::const_reverse_iterator;
    using difference_type = typename container_type::difference_type;
    using size_type = typename container_type::size_type;

    // Orders the ring by point (ties stay in insertion order) and drops
    // entries equal in point and value to an earlier one.
    void sort() {
        value_compare vc(m_comp);
        std::stable_sort(m_vector.begin(), m_vector.end(), vc);
        auto out = m_vector.begin();
        for (auto run = m_vector.begin(); run != m_vector.end();) {
            auto run_end = std::upper_bound(run, m_vector.end(), *run, vc);
            auto kept_begin = out;
            for (auto it = run; it != run_end; ++it) {
                if (std::find_if(kept_begin, out, [&](const value_type& x) {
                        return x.second == it->second;
                    }) == out) {
                    if (out != it) *out = std::move(*it);
                    ++out;
                }
            }
            run = run_end;
        }
        m_vector.erase(out, m_vector.end());
    }

    void clear() { m_vector.clear(); }

    // Appends without ordering; call sort() before looking up.
    void push_back(const key_type& k, const mapped_type& v) { m_vector.push_back({k, v}); }

    template <typename IT>
    void assign(IT begin, IT end, bool sorted = false) {
        m_vector.assign(begin, end);
        if (!sorted) sort();
    }

    void assign(std::initializer_list<value_type> ilist, bool sorted = false) {
        m_vector.assign(ilist);
        if (!sorted) sort();
    }

    iterator begin() { return m_vector.begin(); }
    iterator end() { return m_vector.end(); }
    reverse_iterator rbegin() { return m_vector.rbegin(); }
    reverse_iterator rend() { return m_vector.rend(); }

    const_iterator begin() const { return m_vector.begin(); }
    const_iterator end() const { return m_vector.end(); }
    const_iterator cbegin() const { return m_vector.cbegin(); }
    const_iterator cend() const { return m_vector.cend(); }

    const_reverse_iterator crbegin() const { return m_vector.crbegin(); }
    const_reverse_iterator crend() const { return m_vector.crend(); }

    bool empty() const { return m_vector.empty(); }
    size_type size() const { return m_vector.size(); }
    size_type max_size() const { return m_vector.max_size(); }

    // The entry owning k: the first point >= k, else (wrapping) the first
    // entry; end() only when the map is empty.
    iterator find(const key_type& k) {
        if (empty()) return end();
        auto it = std::lower_bound(begin(), end(), k, value_compare(m_comp));
        return (it != end()) ? it : begin();
    }

    const_iterator find(const key_type& k) const {
        return const_cast<consistent_hash_map*>(this)->find(k);
    }

    // The entry after `it` (a valid, non-end iterator) around the ring.
    iterator next(iterator it) { return (++it != end()) ? it : begin(); }

    const_iterator next(const_iterator it) const { return (++it != cend()) ? it : cbegin(); }

    // Every key has an owner unless the map is empty.
    size_type count(const key_type&) const { return empty() ? 0 : 1; }

    // The owning entry (a pair, as in Photon); the map must not be empty.
    value_type& at(const key_type& k) {
        if (empty()) die_empty();
        return *find(k);
    }

    const value_type& at(const key_type& k) const {
        if (empty()) die_empty();
        return *find(k);
    }

    value_type& operator[](const key_type& k) { return at(k); }

    const value_type& operator[](const key_type& k) const { return at(k); }

protected:
    key_compare m_comp;
    container_type m_vector;

    [[noreturn]] static void die_empty() {
        fprintf(stderr, "consistent_hash_map::at(): the map is empty\n");
        abort();
    }
};
