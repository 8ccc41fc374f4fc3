// ObjectCacheV2<K, V*>: a keyed cache of shared objects, as PhotonLibOS
// declares it (global namespace). borrow(key, ctor) hands out a Borrow that
// shares the key's object, made by ctor() (a V*, a shared_ptr<V>, or nullptr
// for failure) when the key has none; concurrent borrowers of one key wait
// for a single construction, and after a failure, borrowers within
// `cooldown` us get an empty Borrow instead of retrying. update(key, ctor)
// replaces the object at once (current holders keep the old one). A key
// nobody has held for `lifespan` us is dropped by a reclaimer timer on the
// constructing vCPU, which re-arms itself for the next candidate; the
// objects die with their last reference. There is no acquire/release API.
//
// Construct and destroy the cache on one vCPU, with no Borrow outstanding;
// borrow/update may be called from any vCPU and may yield.
//
// Differences from PhotonLibOS: doc/compat.md#commonobjectcachev2h
// Floor: runtime (tools/floors.txt), above its folder's: it needs vCPUs and engines.
#pragma once

#include <photon/common/alog.h>
#include <photon/common/intrusive_list.h>
#include <photon/common/lockfree_queue.h>
#include <photon/photon.h>
#include <photon/thread/thread11.h>
#include <photon/thread/timer.h>
#include <photon/thread/workerpool.h>

#include <atomic>
#include <memory>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

// std::atomic_load/exchange on shared_ptr are deprecated from C++20 on.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

template <typename K, typename VPtr>
class ObjectCacheV2 {
protected:
    using V = std::remove_pointer_t<VPtr>;

    // One key's slot. Lives in `map_` from its first borrow until reclaimed;
    // in `lru_list_` while nobody holds it (rc == 0).
    struct Box : public intrusive_list_node<Box> {
        const K key;
        std::shared_ptr<V> ref;               // accessed with the atomic shared_ptr functions
        photon::mutex createlock{0};          // one construction at a time
        std::atomic<uint64_t> lastcreate{0};  // photon::now of the last construction
        std::atomic<uint64_t> timestamp{0};   // photon::now of the last take or drop
        std::atomic<uint64_t> rc{0};          // holders (Borrows and borrow() in progress)

        Box() = default;
        template <typename KeyType>
        explicit Box(KeyType&& key) : key(std::forward<KeyType>(key)), ref(nullptr) {}

        // Installs r; returns the previous object.
        std::shared_ptr<V> update(std::shared_ptr<V> r, uint64_t ts = 0) {
            lastcreate = ts;
            return std::atomic_exchange(&ref, r);
        }
        std::shared_ptr<V> reset(uint64_t ts = 0) { return update({nullptr}, ts); }
        std::shared_ptr<V> reader() { return std::atomic_load(&ref); }

        void acquire() {
            timestamp.store(photon::now, std::memory_order_relaxed);
            rc.fetch_add(1, std::memory_order_relaxed);
        }
        void release() {
            timestamp.store(photon::now, std::memory_order_relaxed);
            rc.fetch_sub(1, std::memory_order_seq_cst);
        }
    };
    struct BoxHash {
        size_t operator()(const Box& x) const { return std::hash<K>()(x.key); }
    };
    struct BoxEqual {
        bool operator()(const Box& a, const Box& b) const { return a.key == b.key; }
    };

    photon::mutex maplock_{0};  // guards map_, lru_list_, and rc reaching 0
    std::unordered_set<Box, BoxHash, BoxEqual> map_;
    intrusive_list<Box> lru_list_;  // idle boxes, least recently dropped first
    uint64_t lifespan_;
    photon::Timer timer_;
    bool exit_ = false;

    // The key's box, made if absent, with a reference taken.
    template <typename KeyType>
    Box& __find_or_create_box(KeyType&& key) {
        Box keybox(key);
        SCOPED_LOCK(maplock_);
        auto it = map_.find(keybox);
        if (it == map_.end()) it = map_.emplace(std::forward<KeyType>(key)).first;
        // Set elements are const only so that their keys stay put; the rest
        // of a box is ours to change.
        Box* box = const_cast<Box*>(&*it);
        lru_list_.erase(box);
        box->acquire();
        return *box;
    }

    // Drops a reference; the last one queues the box for reclaiming.
    void __release_box(Box* box) {
        SCOPED_LOCK(maplock_);
        box->release();
        if (box->rc.load() == 0) {
            lru_list_.erase(box);
            lru_list_.push_back(box);
        }
    }

    // Reclaimer: drops the idle boxes older than lifespan_. Returns the
    // delay until the oldest remaining one is due (0: the timer's default).
    uint64_t __expire() {
        std::vector<std::shared_ptr<V>> to_release;  // destroyed after the lock
        uint64_t reclaim_before = photon::sat_sub(photon::now, lifespan_);
        {
            SCOPED_LOCK(maplock_);
            while (Box* x = lru_list_.front()) {
                uint64_t ts = x->timestamp.load(std::memory_order_relaxed);
                if (ts >= reclaim_before) return ts - reclaim_before + 1;
                lru_list_.pop_front();
                if (x->rc.load() == 0) {
                    to_release.push_back(x->reset());
                    map_.erase(*x);
                }
            }
        }
        return 0;
    }

public:
    struct Borrow {
        ObjectCacheV2* _oc = nullptr;
        Box* _box = nullptr;
        std::shared_ptr<V> _reader;
        bool _recycle = false;

        Borrow() : _reader(nullptr) {}
        Borrow(ObjectCacheV2* oc, Box* box, const std::shared_ptr<V>& reader)
            : _oc(oc), _box(box), _reader(reader), _recycle(false) {
            _box->acquire();
        }
        Borrow(Borrow&& rhs) { take(rhs); }
        Borrow& operator=(Borrow&& rhs) {
            if (this != &rhs) {
                drop();
                take(rhs);
            }
            return *this;
        }
        ~Borrow() { drop(); }

        bool recycle() { return _recycle; }
        // recycle(true): the key's object is dropped when this Borrow ends,
        // so that the next borrow makes a new one.
        bool recycle(bool x) { return _recycle = x; }

        V& operator*() const { return *_reader; }
        V* operator->() const { return &*_reader; }
        // False if the object could not be made.
        operator bool() const { return (bool)_reader; }

    protected:
        void drop() {
            if (!_box) return;
            if (_recycle) _box->reset();
            _oc->__release_box(_box);
            _box = nullptr;
            _reader.reset();
        }
        void take(Borrow& rhs) {
            _oc = rhs._oc;
            _box = rhs._box;
            _reader = std::move(rhs._reader);
            _recycle = rhs._recycle;
            rhs._oc = nullptr;
            rhs._box = nullptr;
        }
    };

    // The key's object, made with ctor() if it has none and no construction
    // was made within cooldown us. May yield.
    template <typename KeyType, typename Ctor>
    Borrow borrow(KeyType&& key, Ctor&& ctor, uint64_t cooldown = 0ULL) {
        auto& box = __find_or_create_box(std::forward<KeyType>(key));
        DEFER(__release_box(&box));
        if (auto r = box.reader()) return Borrow(this, &box, r);
        SCOPED_LOCK(box.createlock);
        auto r = box.reader();  // made while we waited?
        if (!r && photon::sat_add(box.lastcreate, cooldown) <= photon::now) {
            r = std::shared_ptr<V>(ctor());
            box.update(r, photon::now);
        }
        return Borrow(this, &box, r);
    }

    template <typename KeyType>
    Borrow borrow(KeyType&& key) {
        return borrow(std::forward<KeyType>(key), [&]() { return std::make_shared<V>(); });
    }

    // Replaces the key's object with ctor()'s at once.
    template <typename KeyType, typename Ctor>
    Borrow update(KeyType&& key, Ctor&& ctor) {
        auto& box = __find_or_create_box(std::forward<KeyType>(key));
        DEFER(__release_box(&box));
        auto r = std::shared_ptr<V>(ctor());
        box.update(r, photon::now);
        return Borrow(this, &box, r);
    }

    ObjectCacheV2(uint64_t lifespan)
        : lifespan_(lifespan),
          timer_(1ULL * 1000 * 1000, {this, &ObjectCacheV2::__expire}, true,
                 photon::DEFAULT_STACK_SIZE) {}

    ~ObjectCacheV2() {
        timer_.stop();
        lru_list_.release();  // the boxes go with the map_
    }
};

#pragma GCC diagnostic pop
