// Maps and sets keyed by strings that are queried with std::string_view, as PhotonLibOS declares
// them (global namespace): find/count/erase/operator[] take a view and allocate nothing unless
// a key is inserted, when the map stores its own NUL-terminated copy (string_key). The
// *_case_insensitive flavours fold ASCII case. unordered_map_string_kv / map_string_kv store
// string values too, key and value in one allocation (skvm), and hand out writable views
// (MutableValue). Not thread-safe, like the std containers they wrap; never yield. Out of
// memory throws std::bad_alloc, as the std containers do.
//
// Differences from PhotonLibOS: doc/compat.md#commonstring-keyedh
#pragma once

#include <photon/common/estring.h>
#include <photon/common/string_view.h>
#include <photon/common/hash_combine.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <new>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

// A string_view that owns a malloc()ed, NUL-terminated copy of its characters; the stored key
// type of the containers below. Copies are explicit (they allocate); not assignable.
class string_key : public std::string_view {
public:
    string_key() : std::string_view(nullptr, 0) {}
    explicit string_key(const string_key& rhs) : std::string_view(dup(rhs)) {}
    explicit string_key(string_key&& rhs) : std::string_view(rhs) { rhs.assign({}); }
    ~string_key() { free(const_cast<char*>(data())); }

    string_key& operator=(const string_key& rhs) = delete;
    string_key& operator=(string_key&& rhs) = delete;

protected:
    // A key that only views `sv` (for lookups); whoever makes one clears it before it dies.
    struct borrow_tag {};
    string_key(std::string_view sv, borrow_tag) : std::string_view(sv) {}

    static void do_copy(char* ptr, std::string_view s) {
        if (!s.empty()) memcpy(ptr, s.data(), s.size());
        ptr[s.size()] = '\0';
    }
    static void* checked_malloc(size_t n) {
        void* p = malloc(n);
        if (!p) throw std::bad_alloc();
        return p;
    }
    static std::string_view dup(std::string_view s) {
        auto ptr = static_cast<char*>(checked_malloc(s.size() + 1));
        do_copy(ptr, s);
        return {ptr, s.size()};
    }
    void assign(std::string_view sv) { std::string_view::operator=(sv); }
};

namespace photon {
namespace detail {
// A Key (string_key or skvm) viewing a caller's string for a lookup: no allocation, and it
// forgets the view before the Key's destructor could free it.
template <class Key>
class borrowed_key : public Key {
public:
    explicit borrowed_key(std::string_view sv) : Key(sv, typename Key::borrow_tag{}) {}
    borrowed_key(const borrowed_key&) = delete;
    ~borrowed_key() { this->assign({}); }
    // Pass this, never the temporary itself: a container would take an rvalue Key by move,
    // and so store the caller's memory as its own.
    const Key& ref() const { return *this; }
};
}  // namespace detail
}  // namespace photon

// The base of maps with string keys. M is std::map or std::unordered_map keyed by string_key.
template <class M>
class basic_map_string_key : public M {
protected:
    using borrowed = photon::detail::borrowed_key<string_key>;

public:
    using base = M;
    using base::base;
    using typename base::const_iterator;
    using typename base::iterator;
    using typename base::mapped_type;
    using typename base::size_type;

    using base::erase;

    using key_type = std::string_view;
    using value_type = std::pair<const key_type, mapped_type>;

    basic_map_string_key() = default;
    basic_map_string_key(std::initializer_list<value_type> il) { insert(il); }

    mapped_type& operator[](const key_type& k) { return base::operator[](borrowed(k).ref()); }
    mapped_type& at(const key_type& k) { return base::at(borrowed(k).ref()); }
    const mapped_type& at(const key_type& k) const { return base::at(borrowed(k).ref()); }
    iterator find(const key_type& k) { return base::find(borrowed(k).ref()); }
    const_iterator find(const key_type& k) const { return base::find(borrowed(k).ref()); }
    size_type count(const key_type& k) const { return base::count(borrowed(k).ref()); }
    std::pair<iterator, iterator> equal_range(const key_type& k) {
        return base::equal_range(borrowed(k).ref());
    }
    std::pair<const_iterator, const_iterator> equal_range(const key_type& k) const {
        return base::equal_range(borrowed(k).ref());
    }
    // Constructs the value from args only if k is absent.
    template <class... Args>
    std::pair<iterator, bool> emplace(const key_type& k, Args&&... args) {
#if __cplusplus >= 201703L
        return base::try_emplace(borrowed(k).ref(), std::forward<Args>(args)...);
#else  // no try_emplace before C++17: look first, then construct key and value in place
        auto it = base::find(borrowed(k).ref());
        if (it != base::end()) return {it, false};
        return base::emplace(std::piecewise_construct, std::forward_as_tuple(borrowed(k).ref()),
                             std::forward_as_tuple(std::forward<Args>(args)...));
#endif
    }
    template <class... Args>
    iterator emplace_hint(const_iterator position, const key_type& k, Args&&... args) {
#if __cplusplus >= 201703L
        return base::try_emplace(position, borrowed(k).ref(), std::forward<Args>(args)...);
#else
        auto it = base::find(borrowed(k).ref());
        if (it != base::end()) return it;
        return base::emplace_hint(position, std::piecewise_construct,
                                  std::forward_as_tuple(borrowed(k).ref()),
                                  std::forward_as_tuple(std::forward<Args>(args)...));
#endif
    }
    std::pair<iterator, bool> insert(const value_type& k) { return emplace(k.first, k.second); }
    template <class P>
    std::pair<iterator, bool> insert(P&& val) {
        return emplace(val.first, std::forward<P>(val).second);
    }
    iterator insert(const_iterator hint, const value_type& val) {
        return emplace_hint(hint, val.first, val.second);
    }
    template <class P>
    iterator insert(const_iterator hint, P&& val) {
        return emplace_hint(hint, val.first, std::forward<P>(val).second);
    }
    template <class InputIterator>
    void insert(InputIterator first, InputIterator last) {
        for (auto it = first; it != last; ++it) insert(*it);
    }
    void insert(std::initializer_list<value_type> il) { insert(il.begin(), il.end()); }
    size_type erase(const std::string_view& k) { return base::erase(borrowed(k).ref()); }
};

template <class T, class Hasher = std::hash<std::string_view>,
          class KeyEqual = std::equal_to<std::string_view>,
          class Alloc = std::allocator<std::pair<const string_key, T>>>
using unordered_map_string_key =
    basic_map_string_key<std::unordered_map<string_key, T, Hasher, KeyEqual, Alloc>>;

// Hashes ASCII-case-folded bytes, 64 at a time.
class Hasher_CaseInsensitive {
    constexpr static size_t BUF_CAP() { return 64; }

public:
    size_t operator()(std::string_view sv) const {
        size_t h = 0;
        char buf[BUF_CAP() + 1];  // tolower_fast writes a NUL after the chunk
        for (size_t i = 0; i < sv.size(); i += BUF_CAP()) {
            auto chunk = sv.substr(i, BUF_CAP());
            photon::tolower_fast(buf, chunk);
            h = photon::hash_combine(h, std::hash<std::string_view>()({buf, chunk.size()}));
        }
        return h;
    }
};

class Equal_CaseInsensitive {
public:
    bool operator()(std::string_view a, std::string_view b) const {
        return a.size() == b.size() && photon::stricmp_fast(a, b) == 0;
    }
};

template <class T, class Hasher = Hasher_CaseInsensitive, class KeyEqual = Equal_CaseInsensitive,
          class Alloc = std::allocator<std::pair<const string_key, T>>>
using unordered_map_string_key_case_insensitive =
    basic_map_string_key<std::unordered_map<string_key, T, Hasher, KeyEqual, Alloc>>;

template <class T, class Pred, class Alloc>
class ordered_map_string_key : public basic_map_string_key<std::map<string_key, T, Pred, Alloc>> {
public:
    using base = basic_map_string_key<std::map<string_key, T, Pred, Alloc>>;
    using base::base;
    using typename base::const_iterator;
    using typename base::iterator;
    using typename base::key_type;
    using typename base::mapped_type;
    using typename base::size_type;

    iterator lower_bound(const key_type& k) { return base::lower_bound(borrowed(k).ref()); }
    const_iterator lower_bound(const key_type& k) const {
        return base::lower_bound(borrowed(k).ref());
    }
    iterator upper_bound(const key_type& k) { return base::upper_bound(borrowed(k).ref()); }
    const_iterator upper_bound(const key_type& k) const {
        return base::upper_bound(borrowed(k).ref());
    }

protected:
    using borrowed = typename base::borrowed;
};

template <class T, class Pred = std::less<string_key>,
          class Alloc = std::allocator<std::pair<const string_key, T>>>
using map_string_key = ordered_map_string_key<T, Pred, Alloc>;

// Orders by ASCII-case-folded bytes; agrees with Equal_CaseInsensitive.
class Less_CaseInsensitive {
public:
    bool operator()(std::string_view a, std::string_view b) const {
        return photon::stricmp_fast(a, b) < 0;
    }
};

template <class T, class Pred = Less_CaseInsensitive,
          class Alloc = std::allocator<std::pair<const string_key, T>>>
using map_string_key_case_insensitive = ordered_map_string_key<T, Pred, Alloc>;

// The base of sets of strings. S is std::set or std::unordered_set of string_key.
template <class S>
class basic_set_string_key : public S {
protected:
    using borrowed = photon::detail::borrowed_key<string_key>;

public:
    using base = S;
    using base::base;
    using typename base::const_iterator;
    using typename base::iterator;
    using typename base::size_type;

    using base::erase;

    using key_type = std::string_view;
    using value_type = string_key;

    basic_set_string_key() = default;
    basic_set_string_key(std::initializer_list<key_type> il) { insert(il); }

    iterator find(const key_type& k) { return base::find(borrowed(k).ref()); }
    const_iterator find(const key_type& k) const { return base::find(borrowed(k).ref()); }
    size_type count(const key_type& k) const { return base::count(borrowed(k).ref()); }
    std::pair<iterator, iterator> equal_range(const key_type& k) {
        return base::equal_range(borrowed(k).ref());
    }
    std::pair<const_iterator, const_iterator> equal_range(const key_type& k) const {
        return base::equal_range(borrowed(k).ref());
    }
    // Copies k only if it is absent.
    std::pair<iterator, bool> emplace(const key_type& k) {
        borrowed b(k);
        auto it = base::find(b);
        if (it != base::end()) return {it, false};
        return base::emplace(b);
    }
    template <class... Args>
    std::pair<iterator, bool> emplace(const key_type& k, Args&&... args) {
        return base::emplace(borrowed(k).ref(), std::forward<Args>(args)...);
    }
    template <class... Args>
    iterator emplace_hint(const_iterator position, const key_type& k, Args&&... args) {
        borrowed b(k);
        auto it = base::find(b);
        if (it != base::end()) return it;
        return base::emplace_hint(position, b, std::forward<Args>(args)...);
    }
    std::pair<iterator, bool> insert(const key_type& k) { return emplace(k); }
    iterator insert(const_iterator hint, const key_type& k) { return emplace_hint(hint, k); }
    template <class InputIterator>
    void insert(InputIterator first, InputIterator last) {
        for (auto it = first; it != last; ++it) insert(*it);
    }
    void insert(std::initializer_list<key_type> il) { insert(il.begin(), il.end()); }
    size_type erase(const std::string_view& k) { return base::erase(borrowed(k).ref()); }
};

template <class Hasher = std::hash<std::string_view>,
          class KeyEqual = std::equal_to<std::string_view>,
          class Alloc = std::allocator<string_key>>
using unordered_set_string_key =
    basic_set_string_key<std::unordered_set<string_key, Hasher, KeyEqual, Alloc>>;

template <class Hasher = Hasher_CaseInsensitive, class KeyEqual = Equal_CaseInsensitive,
          class Alloc = std::allocator<string_key>>
using unordered_set_string_key_case_insensitive =
    basic_set_string_key<std::unordered_set<string_key, Hasher, KeyEqual, Alloc>>;

// An ordered set of strings, with lower_bound / upper_bound by view.
template <class S>
class ordered_set_string_key : public basic_set_string_key<S> {
public:
    using base = basic_set_string_key<S>;
    using base::base;
    using typename base::const_iterator;
    using typename base::iterator;
    using typename base::key_type;

    iterator lower_bound(const key_type& k) { return base::lower_bound(borrowed(k).ref()); }
    const_iterator lower_bound(const key_type& k) const {
        return base::lower_bound(borrowed(k).ref());
    }
    iterator upper_bound(const key_type& k) { return base::upper_bound(borrowed(k).ref()); }
    const_iterator upper_bound(const key_type& k) const {
        return base::upper_bound(borrowed(k).ref());
    }

protected:
    using borrowed = typename base::borrowed;
};

template <class Pred = std::less<string_key>, class Alloc = std::allocator<string_key>>
using set_string_key = ordered_set_string_key<std::set<string_key, Pred, Alloc>>;

template <class Pred = Less_CaseInsensitive, class Alloc = std::allocator<string_key>>
using set_string_key_case_insensitive = ordered_set_string_key<std::set<string_key, Pred, Alloc>>;

// A string key with a string value in one allocation: a small header (where the value lives
// and how much room it has), then "key\0value\0". The key never moves; a longer value moves to
// a buffer of its own. The value is not part of the key, so it may change in a const skvm.
class skvm : public string_key {
public:
    skvm(std::string_view k, std::string_view v) {
        auto buf = static_cast<char*>(checked_malloc(sizeof(header) + k.size() + 1 + v.size() + 1));
        char* key = buf + sizeof(header);
        do_copy(key, k);
        do_copy(key + k.size() + 1, v);
        new (buf) header{key + k.size() + 1, v.size()};
        assign({key, k.size()});
    }
    skvm(const skvm&) = delete;  // the value's length is known only to the map
    skvm(skvm&& rhs) noexcept : string_key(std::move(rhs)) {}
    ~skvm() {
        if (!data()) return;  // moved from, or borrowed
        auto h = hdr();
        if (h->value != inline_value()) free(h->value);
        free(h);
        assign({});
    }

    // The value, NUL-terminated; its length is kept by the map.
    const char* get_value() const { return hdr()->value; }
    // Replaces the value; v may view the current value.
    void replace_value(std::string_view v) const {
        auto h = hdr();
        if (v.size() <= h->capacity) {
            if (!v.empty()) memmove(h->value, v.data(), v.size());
            h->value[v.size()] = '\0';
            return;
        }
        auto p = static_cast<char*>(checked_malloc(v.size() + 1));
        do_copy(p, v);
        if (h->value != inline_value()) free(h->value);
        h->value = p;
        h->capacity = v.size();
    }

protected:
    skvm(std::string_view k, borrow_tag t) : string_key(k, t) {}

private:
    struct header {
        char* value;
        size_t capacity;
    };
    header* hdr() const {
        return reinterpret_cast<header*>(const_cast<char*>(data()) - sizeof(header));
    }
    char* inline_value() const { return const_cast<char*>(data()) + size() + 1; }
};

// The base of maps from strings to strings. M is std::map or std::unordered_map from skvm to
// the value's length. Values are read and written through views (MutableValue); a view of a
// value is invalidated by erasing its key and by storing a longer value under it.
template <class M>
class basic_map_string_kv : public M {
protected:
    using borrowed = photon::detail::borrowed_key<skvm>;
    using base_iterator = typename M::iterator;

    // Calls a non-const lookup of the base on a possibly const map, so that one iterator type
    // serves both; the const members below hand out only const_iterator.
    M& mut() const { return const_cast<M&>(static_cast<const M&>(*this)); }

public:
    using base = M;
    using base::base;
    using key_type = std::string_view;
    using mapped_type = std::string_view;
    using typename base::size_type;

    using value_type = std::pair<const key_type, mapped_type>;

    basic_map_string_kv() = default;
    basic_map_string_kv(std::initializer_list<value_type> init) { insert(init); }
    basic_map_string_kv(const basic_map_string_kv& other) : base() {
        insert(other.begin(), other.end());
    }
    basic_map_string_kv& operator=(const basic_map_string_kv& other) {
        if (this != &other) basic_map_string_kv(other).swap(*this);
        return *this;
    }
    basic_map_string_kv(basic_map_string_kv&& other) noexcept : base(std::move(other)) {}
    basic_map_string_kv& operator=(basic_map_string_kv&& other) noexcept {
        other.swap(*this);
        return *this;
    }

    // A view of a value, assignable to store a new value under its key: at once, inserting
    // the key if it was absent.
    struct MutableValue : public std::string_view {
        basic_map_string_kv* _map = nullptr;  // set while the key is absent
        using pair = std::pair<const skvm, size_t>;
        pair* _pair = nullptr;  // set while the key is present
        std::string_view _key;
        bool _modified = false;
        MutableValue() = default;
        MutableValue(pair& p) : std::string_view(p.first.get_value(), p.second), _pair(&p) {}
        MutableValue(basic_map_string_kv* map, std::string_view key) : _map(map), _key(key) {}
        MutableValue(const MutableValue&) = default;
        // Stores v's value (not v's binding).
        MutableValue& operator=(const MutableValue& v) { return *this = (std::string_view)v; }
        MutableValue& operator=(std::string_view v) {
            if (!_pair && _map) {
                _pair = &*_map->find_or_insert(_key, v);
                _map = nullptr;
            } else if (_pair) {
                _pair->first.replace_value(v);
                _pair->second = v.size();
            }
            _modified = true;
            std::string_view::operator=(
                _pair ? std::string_view(_pair->first.get_value(), _pair->second) : v);
            return *this;
        }
        void _rebind(pair& p) {
            std::string_view::operator=({p.first.get_value(), p.second});
            _map = nullptr;
            _pair = &p;
            _key = {};
            _modified = false;
        }
    };

    struct iterator {
        using base_it = base_iterator;
        base_it _b_it;

        using mutable_value_type = std::pair<std::string_view, MutableValue>;
        mutable mutable_value_type _val;
        mutable bool _has_val = false;

        iterator() = default;
        iterator(base_it b_it) : _b_it(b_it) {}

        mutable_value_type& _init_val() const {
            if (!_has_val) {
                _val.first = _b_it->first;
                _val.second._rebind(*_b_it);
                _has_val = true;
            }
            return _val;
        }
        const mutable_value_type* operator->() const { return &_init_val(); }
        const mutable_value_type& operator*() const { return _init_val(); }
        mutable_value_type* operator->() { return &_init_val(); }
        mutable_value_type& operator*() { return _init_val(); }
        iterator operator++(int) {
            auto temp = *this;
            ++*this;
            return temp;
        }
        iterator& operator++() {
            ++_b_it;
            _has_val = false;
            return *this;
        }
        iterator operator--(int) {
            auto temp = *this;
            --*this;
            return temp;
        }
        iterator& operator--() {
            --_b_it;
            _has_val = false;
            return *this;
        }
        bool operator==(const iterator& rhs) const { return _b_it == rhs._b_it; }
        bool operator!=(const iterator& rhs) const { return !(*this == rhs); }
    };

    // Read-only iterator; an iterator converts to it.
    struct const_iterator {
        iterator it_;
        const_iterator() = default;
        const_iterator(const iterator& it) : it_(it) {}
        const typename iterator::mutable_value_type& operator*() const { return *it_; }
        const typename iterator::mutable_value_type* operator->() const { return &*it_; }
        const_iterator& operator++() {
            ++it_;
            return *this;
        }
        const_iterator operator++(int) {
            auto temp = *this;
            ++it_;
            return temp;
        }
        const_iterator& operator--() {
            --it_;
            return *this;
        }
        const_iterator operator--(int) {
            auto temp = *this;
            --it_;
            return temp;
        }
        friend bool operator==(const const_iterator& a, const const_iterator& b) {
            return a.it_ == b.it_;
        }
        friend bool operator!=(const const_iterator& a, const const_iterator& b) {
            return !(a == b);
        }
    };

    const_iterator begin() const { return iterator(mut().begin()); }
    iterator begin() { return base::begin(); }
    const_iterator end() const { return iterator(mut().end()); }
    iterator end() { return base::end(); }
    // The value of k; an empty view if k is absent.
    mapped_type operator[](const key_type& k) const {
        auto it = mut().find(borrowed(k).ref());
        return it == mut().end() ? mapped_type() : mapped_type(it->first.get_value(), it->second);
    }
    MutableValue operator[](const key_type& k) {
        auto it = base::find(borrowed(k).ref());
        return it == base::end() ? MutableValue(this, k) : MutableValue(*it);
    }
    // The value of k; throws std::out_of_range if k is absent.
    mapped_type at(const key_type& k) const { return mapped_type(checked_find(k)->second); }
    MutableValue at(const key_type& k) { return checked_find(k)->second; }
    const_iterator find(const key_type& k) const { return iterator(mut().find(borrowed(k).ref())); }
    iterator find(const key_type& k) { return base::find(borrowed(k).ref()); }
    size_type count(const key_type& k) const { return base::count(borrowed(k).ref()); }
    std::pair<const_iterator, const_iterator> equal_range(const key_type& k) const {
        auto r = mut().equal_range(borrowed(k).ref());
        return {iterator(r.first), iterator(r.second)};
    }
    // Inserts (k, v) if k is absent; an existing value is left as it is.
    std::pair<iterator, bool> emplace(const key_type& k, const mapped_type& v) {
        auto it = base::find(borrowed(k).ref());
        if (it != base::end()) return {it, false};
        auto r = base::emplace(skvm(k, v), v.size());
        return {r.first, r.second};
    }
    iterator emplace_hint(const_iterator position, const key_type& k, const mapped_type& v) {
        auto it = base::find(borrowed(k).ref());
        if (it != base::end()) return it;
        return base::emplace_hint(position.it_._b_it, skvm(k, v), v.size());
    }
    std::pair<iterator, bool> insert(const value_type& k) { return emplace(k.first, k.second); }
    std::pair<iterator, bool> insert(const key_type& k, const mapped_type& v) {
        return emplace(k, v);
    }
    iterator insert(const_iterator hint, const value_type& val) {
        return emplace_hint(hint, val.first, val.second);
    }
    iterator insert(const_iterator hint, const key_type& k, const mapped_type& v) {
        return emplace_hint(hint, k, v);
    }
    // (Two strings go to insert(k, v) above.)
    template <class InputIterator,
              ENABLE_IF(!std::is_convertible<InputIterator, std::string_view>::value)>
    void insert(InputIterator first, InputIterator last) {
        for (auto it = first; it != last; ++it) insert(*it);
    }
    void insert(std::initializer_list<value_type> il) { insert(il.begin(), il.end()); }
    iterator erase(iterator pos) { return base::erase(pos._b_it); }
    iterator erase(iterator first, iterator last) { return base::erase(first._b_it, last._b_it); }
    size_type erase(const std::string_view& k) { return base::erase(borrowed(k).ref()); }

protected:
    // The node of k, with value v stored in it: the existing value replaced, or a new node.
    base_iterator find_or_insert(std::string_view k, std::string_view v) {
        auto it = base::find(borrowed(k).ref());
        if (it == base::end()) return base::emplace(skvm(k, v), v.size()).first;
        it->first.replace_value(v);
        it->second = v.size();
        return it;
    }
    iterator checked_find(const key_type& k) const {
        auto it = mut().find(borrowed(k).ref());
        if (it == mut().end()) throw std::out_of_range("basic_map_string_kv::at");
        return it;
    }
};

using unordered_map_string_kv =
    basic_map_string_kv<std::unordered_map<skvm, size_t, std::hash<std::string_view>>>;

using unordered_map_string_kv_case_insensitive = basic_map_string_kv<
    std::unordered_map<skvm, size_t, Hasher_CaseInsensitive, Equal_CaseInsensitive>>;

template <class Compare = std::less<skvm>,
          class Allocator = std::allocator<std::pair<const skvm, size_t>>>
class __basic_map_string_kv
    : public basic_map_string_kv<std::map<skvm, size_t, Compare, Allocator>> {
public:
    using base = basic_map_string_kv<std::map<skvm, size_t, Compare, Allocator>>;
    using base::base;
    using typename base::const_iterator;
    using typename base::iterator;
    using typename base::key_type;
    using typename base::mapped_type;
    using typename base::size_type;

    iterator lower_bound(const key_type& k) { return base::base::lower_bound(borrowed(k).ref()); }
    iterator upper_bound(const key_type& k) { return base::base::upper_bound(borrowed(k).ref()); }
    const_iterator lower_bound(const key_type& k) const {
        return iterator(base::mut().lower_bound(borrowed(k).ref()));
    }
    const_iterator upper_bound(const key_type& k) const {
        return iterator(base::mut().upper_bound(borrowed(k).ref()));
    }

protected:
    using borrowed = typename base::borrowed;
};

using map_string_kv = __basic_map_string_kv<>;

using map_string_kv_case_insensitive = __basic_map_string_kv<Less_CaseInsensitive>;
