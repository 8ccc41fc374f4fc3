// Keyed containers whose entries expire, as PhotonLibOS declares them
// (global namespace):
//   ExpireContainer<K, Ts...>  key -> tuple<Ts...>; an entry dies `lifespan`
//                              us after its insert or last refresh();
//   ExpireList<K>              a set of keys kept alive by keep_alive();
//   ObjectCache<K, V*>         key -> shared object with borrow/release
//                              reference counts; an object nobody holds dies
//                              `lifespan` us after its last release
//                              (ObjectCache<K, intrusive_list<N>> keeps a list
//                              per key instead).
// Time is photon::now. A repeating photon::Timer of the constructing vCPU
// calls expire() every `timer_cycle` us (at least 1 ms); mutating calls also
// expire on their way out. Construct and destroy a container on one vCPU;
// other calls may come from any vCPU (a spinlock guards the index).
// ObjectCache's acquire/borrow may yield: a constructor runs under a
// per-key mutex so that concurrent takers of one key build it once, and
// recycle waits for the other holders. An iterator or item from find() or
// insert() of an idle entry stays valid only until the next expiry: the
// timer runs when the caller yields, and other vCPUs may expire at any time.
//
// Differences from PhotonLibOS: doc/compat.md#commonexpirecontainerh
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <photon/common/intrusive_list.h>
#include <photon/common/object.h>
#include <photon/common/string_view.h>
#include <photon/common/timeout.h>
#include <photon/common/utility.h>
#include <photon/thread/thread.h>
#include <photon/thread/timer.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_set>
#include <utility>

// The index (a hash set of type-erased items) and the idle list (oldest
// first) that every expiring container shares.
class ExpireContainerBase : public Object {
protected:
    class Item : public intrusive_list_node<Item> {
    protected:
        Item() : _timeout(0) {}

    public:
        photon::Timeout _timeout;
        virtual ~Item() {}
        virtual size_t key_hash() const = 0;
        virtual bool key_equal(const Item* rhs) const = 0;
        // A new item with this one's key (payload default-made); nullptr if
        // the item type cannot be made from a key alone.
        virtual Item* construct() const = 0;
    };

    // An item holding its key. String-like keys are passed in as string_view
    // and stored as KeyType.
    template <typename BaseItem, typename KeyType>
    class KeyedItem : public BaseItem {
    public:
        constexpr static bool _is_string_key = std::is_base_of<std::string, KeyType>::value ||
                                               std::is_base_of<std::string_view, KeyType>::value ||
                                               std::is_same<const char*, const KeyType>::value;
        using ItemKey = KeyType;
        using InterfaceKey =
            typename std::conditional<_is_string_key, std::string_view, ItemKey>::type;

        ItemKey _key;

        KeyedItem(const InterfaceKey& key) : _key(key) {}
        size_t key_hash() const override { return std::hash<ItemKey>()(_key); }
        bool key_equal(const Item* rhs) const override {
            return _key == static_cast<const KeyedItem*>(rhs)->_key;
        }
        KeyedItem* construct() const override { return new KeyedItem(_key); }
        const ItemKey& key() { return _key; }
    };

    using ItemPtr = Item*;
    struct ItemHash {
        size_t operator()(const ItemPtr& x) const { return x->key_hash(); }
    };
    struct ItemEqual {
        bool operator()(const ItemPtr& x, const ItemPtr& y) const { return x->key_equal(y); }
    };
    using Set = std::unordered_set<ItemPtr, ItemHash, ItemEqual>;

    intrusive_list<Item> _list;  // idle items, by expiration; guarded by _lock
    uint64_t _lifespan;
    uint64_t _num_limit;
    photon::spinlock _lock;
    Set _set;  // every item; guarded by _lock
    // Last, so that it is the first member destroyed.
    photon::Timer _timer;

    ExpireContainerBase(uint64_t lifespan, uint64_t timer_cycle, uint64_t num_limit);
    ~ExpireContainerBase();

    using iterator = Set::iterator;
    // Under _lock: adds item unless its key is present.
    std::pair<iterator, bool> insert(Item* item);
    iterator begin() { return _set.begin(); }
    iterator end() { return _set.end(); }
    iterator find(const Item& key_item);
    // find() for a caller that holds _lock.
    iterator __find_prelock(const Item& key_item);

    // An index iterator that yields T* instead of Item*.
    template <typename T>
    struct TypedIterator : public iterator {
        TypedIterator(const iterator& rhs) : iterator(rhs) {}
        using TPtr = T*;
        TPtr operator*() const { return static_cast<TPtr>(iterator::operator*()); }
        TPtr operator->() const { return **this; }
    };

    // Refreshes the item with item's key; if absent, inserts a copy when
    // insert_if_not_exists. False if no such item is (now) there.
    bool keep_alive(const Item& item, bool insert_if_not_exists);

    // Under _lock: (re)starts the item's lifespan and moves it to the back.
    void enqueue(Item* item) {
        _list.erase(item);
        item->_timeout.timeout(_lifespan);
        _list.push_back(item);
    }

public:
    // Frees every idle item (for ExpireContainer and ExpireList: all).
    void clear();
    // Frees the idle items that expired, then the oldest idle ones while
    // there are more than num_limit items. Returns 0 (the timer's "default").
    uint64_t expire();
    size_t size() { return _set.size(); }
    size_t lifespan() { return _lifespan; }

    [[deprecated("use lifespan() instead")]] size_t expiration() { return _lifespan; }
};

template <typename KeyType, typename... Ts>
class ExpireContainer : public ExpireContainerBase {
public:
    using Base = ExpireContainerBase;
    ExpireContainer(uint64_t lifespan) : Base(lifespan, lifespan / 16, -1ULL) {}
    ExpireContainer(uint64_t lifespan, uint64_t timer_cycle, uint64_t num_limit = -1ULL)
        : Base(lifespan, timer_cycle, num_limit) {}

protected:
    using KeyedItem = typename Base::KeyedItem<Base::Item, KeyType>;

    class Item : public KeyedItem {
    public:
        std::tuple<Ts...> payload;

        using typename KeyedItem::InterfaceKey;
        using typename KeyedItem::ItemKey;
        using iterator = typename intrusive_list_node<Item>::iterator;

        template <typename... Gs>
        Item(const InterfaceKey& key, Gs&&... gs)
            : KeyedItem(key), payload(std::forward<Gs>(gs)...) {}

        Item* construct() const override {
            return construct_as(std::is_default_constructible<std::tuple<Ts...>>());
        }
        Item* construct_as(std::true_type /* default-constructible */) const {
            return new Item(this->_key);
        }
        Item* construct_as(std::false_type) const { return nullptr; }

        // get_payload<0>() is the key; get_payload<i>() the i-th payload.
        template <size_t idx, typename = typename std::enable_if<(idx > 0)>::type>
        decltype(auto) get_payload() {
            return std::get<idx - 1>(payload);
        }
        template <size_t idx, typename = typename std::enable_if<(idx == 0)>::type>
        InterfaceKey get_payload() {
            return KeyedItem::_key;
        }
    };
    // The idle list, typed: every ExpireContainer item is an Item.
    intrusive_list<Item>& list() { return reinterpret_cast<intrusive_list<Item>&>(_list); }

public:
    using ItemKey = typename Item::ItemKey;
    using InterfaceKey = typename Item::InterfaceKey;

    using iterator = typename ExpireContainerBase::TypedIterator<Item>;
    iterator begin() { return Base::begin(); }
    iterator end() { return Base::end(); }
    iterator find(const InterfaceKey& key) { return Base::find(KeyedItem(key)); }

    // Adds key -> (xs...); end() if the key is present (left unchanged).
    template <typename... Gs>
    iterator insert(const InterfaceKey& key, Gs&&... xs) {
        auto item = new Item(key, std::forward<Gs>(xs)...);
        SCOPED_LOCK(_lock);
        auto pr = Base::insert(item);
        if (!pr.second) {
            delete item;
            return end();
        }
        enqueue(item);
        return pr.first;
    }

    // Restarts the lifespan of an item still in the container.
    void refresh(Item* item) {
        DEFER(expire());
        SCOPED_LOCK(_lock);
        enqueue(item);
    }
};

// A set of keys, each alive until `lifespan` us after its last keep_alive().
template <typename T>
class ExpireList : public ExpireContainer<T> {
public:
    using Base = ExpireContainer<T>;
    using Base::Base;
    using typename Base::Item;
    bool keep_alive(const T& x, bool insert_if_not_exists) {
        return Base::keep_alive(Item(x), insert_if_not_exists);
    }
};

class ObjectCacheBase : public ExpireContainerBase {
protected:
    using Base = ExpireContainerBase;
    using Base::Base;
    using Base::KeyedItem;

    // An entry: the object (nullptr until made), its holders, and the
    // semaphore of a recycle in progress. In _list only while _refcnt == 0.
    class Item : public Base::Item {
    public:
        Item() : Base::Item() {}
        void* _obj = nullptr;
        photon::mutex _mtx;  // serialises construction of _obj
        uint32_t _refcnt = 0;
        photon::semaphore* _recycle = nullptr;
        uint64_t _failure = 0;  // photon::now of the last failed construction

        // Hands the object over (it is not freed with the item).
        virtual void* take_obj() {
            void* obj = _obj;
            _obj = nullptr;
            return obj;
        }
    };

    photon::condition_variable blocker;  // takers waiting for a recycle to end

    using ItemPtr = Item*;

    // Takes a reference to the entry of key_item's key, making the entry if
    // absent, and the object with ctor(item) (which sets item->_obj) if the
    // entry has none and no construction failed within failure_cooldown us.
    // nullptr if there is still no object. May yield.
    Item* ref_acquire(const Item& key_item, Delegate<void, void*> ctor,
                      uint64_t failure_cooldown = 0);

    // Drops a reference. recycle: also remove the entry, once every other
    // holder has released (waits for them); then the object is freed, or
    // returned when !destroy. nullptr otherwise, or with EINVAL if item was
    // not held.
    void* ref_release(ItemPtr item, bool recycle, bool destroy);

    void* acquire(const Item& key_item, Delegate<void, void*> ctor, uint64_t failure_cooldown = 0) {
        auto ret = ref_acquire(key_item, ctor, failure_cooldown);
        return ret ? ret->_obj : nullptr;
    }

    // ref_release() of the entry with key_item's key; nullptr if none.
    void* release(const Item& key_item, bool recycle, bool destroy);

public:
    // An entry owning a V* (deleted with the entry).
    template <typename KeyType, typename ValType>
    class PtrItem : public KeyedItem<Item, KeyType> {
    public:
        using KeyedItem<Item, KeyType>::KeyedItem;
        using typename KeyedItem<Item, KeyType>::InterfaceKey;
        using ValPtr = ValType;
        using ValEntity = typename std::remove_pointer<ValPtr>::type;

        PtrItem* construct() const override { return new PtrItem(this->_key); }
        ~PtrItem() override { delete (ValPtr)this->_obj; }
        ValPtr get_ptr() { return (ValPtr)this->_obj; }
        ValEntity& get_ref() { return *(ValPtr)this->_obj; }

        static ValPtr get_content(PtrItem* item) { return item ? item->get_ptr() : nullptr; }

        static ValPtr create_default() { return new ValEntity(); }
        template <typename Ctor>
        static decltype(auto) initialize(const Ctor& ctor) {
            return [&ctor](void* arg) { static_cast<PtrItem*>(arg)->_obj = ctor(); };
        }
    };

    // An entry holding an intrusive list (its nodes are deleted with it).
    // _obj points at the entry itself once the list is made.
    template <typename KeyType, typename ValType>
    class ListItem : public KeyedItem<Item, KeyType> {
    public:
        using ValPtr = ValType*;
        using ValEntity = ValType;
        ValEntity _list;
        using KeyedItem<Item, KeyType>::KeyedItem;
        using typename KeyedItem<Item, KeyType>::InterfaceKey;

        ListItem* construct() const override { return new ListItem(this->_key); }
        ~ListItem() {
            while (auto node = _list.pop_front()) delete node;
        }
        ValPtr get_ptr() { return &this->_list; }
        ValEntity& get_ref() { return this->_list; }
        // The front node, the rest still linked to it; the list is emptied.
        void* take_obj() override {
            this->_obj = nullptr;
            return _list.release();
        }

        static ValEntity& get_content(ListItem* item) { return item->get_ref(); }

        static ValEntity create_default() { return ValEntity(); }
        template <typename Ctor>
        static decltype(auto) initialize(const Ctor& ctor) {
            return [&ctor](void* arg) {
                auto item = static_cast<ListItem*>(arg);
                ValEntity made = ctor();
                item->_list.splice(made);
                item->_obj = item;
            };
        }
    };

    // A reference held for a scope: released (recycled if recycle(true);
    // the object not freed if moveout(true)) on destruction.
    template <typename ObjectCache>
    class Borrow {
    public:
        using Item = typename ObjectCache::Item;
        ObjectCache* _oc;
        Item* _ref;
        bool _recycle = false;
        bool _moveout = false;

        Borrow(ObjectCache* oc, Item* ref, bool recycle) : _oc(oc), _ref(ref), _recycle(recycle) {}
        ~Borrow() { reset(); }

        Borrow() = delete;
        Borrow(const Borrow&) = delete;
        Borrow(Borrow&& rhs) { take(rhs); }
        void operator=(const Borrow&) = delete;
        void operator=(Borrow&& rhs) {
            if (this == &rhs) return;
            reset();
            take(rhs);
        }

        // False if the object could not be made.
        operator bool() const { return _ref; }

        bool recycle() const { return _recycle; }
        bool recycle(bool x) { return _recycle = x; }

        typename Item::ValPtr operator->() { return _ref->get_ptr(); }
        typename Item::ValEntity& operator*() { return _ref->get_ref(); }

        bool moved() const { return _moveout; }
        bool moveout(bool x) { return _moveout = x; }

    protected:
        void reset() {
            if (_ref) _oc->ref_release(_ref, _recycle, !_moveout);
            _ref = nullptr;
        }
        void take(Borrow& rhs) {
            _oc = rhs._oc;
            _ref = rhs._ref;
            _recycle = rhs._recycle;
            _moveout = rhs._moveout;
            rhs._oc = nullptr;
            rhs._ref = nullptr;
        }
    };
};

// The typed layer of ObjectCache: ItemType is PtrItem or ListItem.
template <typename KeyType, typename ValType, typename ItemType>
class __ObjectCache : public ObjectCacheBase {
public:
    using Base = ObjectCacheBase;
    using Item = ItemType;
    using KeyedItem = Base::KeyedItem<Base::Item, KeyType>;
    using InterfaceKey = typename Item::InterfaceKey;
    using ItemPtr = Item*;
    using ValEntity = typename Item::ValEntity;
    using Borrow = typename Base::Borrow<__ObjectCache>;

    __ObjectCache(uint64_t lifespan) : Base(lifespan, lifespan / 16, -1ULL) {}
    __ObjectCache(uint64_t lifespan, uint64_t timer_cycle, uint64_t num_limit = -1ULL)
        : Base(lifespan, timer_cycle, num_limit) {}

    // ctor() returns the new object (nullptr: failed). May yield.
    template <typename Constructor>
    ItemPtr ref_acquire(const InterfaceKey& key, const Constructor& ctor,
                        uint64_t failure_cooldown = 0) {
        auto init = Item::initialize(ctor);
        return static_cast<ItemPtr>(Base::ref_acquire(Item(key), init, failure_cooldown));
    }

    // The object (ObjectCache<K, V*>: V*, nullptr on failure; list cache:
    // the list), referenced until release(key).
    template <typename Constructor>
    decltype(auto) acquire(const InterfaceKey& key, const Constructor& ctor,
                           uint64_t failure_cooldown = 0) {
        return Item::get_content(ref_acquire(key, ctor, failure_cooldown));
    }

    using iterator = typename ExpireContainerBase::TypedIterator<Item>;
    iterator begin() { return Base::begin(); }
    iterator end() { return Base::end(); }
    iterator find(const InterfaceKey& key) { return Base::find(KeyedItem(key)); }

    // A scoped reference; test it with `if (borrow)` before use.
    template <typename Constructor>
    Borrow borrow(const typename Item::InterfaceKey& key, const Constructor& ctor,
                  uint64_t failure_cooldown = 0) {
        return Borrow(this, ref_acquire(key, ctor, failure_cooldown), false);
    }

    Borrow borrow(const typename Item::InterfaceKey& key) {
        return borrow(key, &Item::create_default);
    }
};

template <typename KeyType, typename ValPtr>
class ObjectCache
    : public __ObjectCache<KeyType, ValPtr, ObjectCacheBase::PtrItem<KeyType, ValPtr>> {
public:
    using Base = __ObjectCache<KeyType, ValPtr, ObjectCacheBase::PtrItem<KeyType, ValPtr>>;
    using Base::Base;

    // Returns the object when recycle && !destroy (the caller owns it),
    // else nullptr.
    ValPtr ref_release(typename Base::ItemPtr item, bool recycle = false, bool destroy = true) {
        return reinterpret_cast<ValPtr>(Base::ref_release(item, recycle, destroy));
    }

    ValPtr release(const typename Base::InterfaceKey& key, bool recycle = false,
                   bool destroy = true) {
        return reinterpret_cast<ValPtr>(Base::release(typename Base::Item(key), recycle, destroy));
    }
};

template <typename KeyType, typename NodeType>
class ObjectCache<KeyType, intrusive_list<NodeType>>
    : public __ObjectCache<KeyType, intrusive_list<NodeType>,
                           ObjectCacheBase::ListItem<KeyType, intrusive_list<NodeType>>> {
public:
    using Base = __ObjectCache<KeyType, intrusive_list<NodeType>,
                               ObjectCacheBase::ListItem<KeyType, intrusive_list<NodeType>>>;
    using Base::Base;

    // Returns the list's front node when recycle && !destroy (the caller owns
    // the nodes), else nullptr.
    NodeType* ref_release(typename Base::ItemPtr item, bool recycle = false, bool destroy = true) {
        return reinterpret_cast<NodeType*>(Base::ref_release(item, recycle, destroy));
    }

    NodeType* release(const typename Base::InterfaceKey& key, bool recycle = false,
                      bool destroy = true) {
        return reinterpret_cast<NodeType*>(
            Base::release(typename Base::Item(key), recycle, destroy));
    }
};
