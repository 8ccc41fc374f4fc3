// ExpireContainer and ObjectCache (photon/common/expirecontainer.h). They
// live in thread/: their timer, locks and waits are the coroutine core's.
#include <photon/common/expirecontainer.h>

#include <photon/common/alog.h>

ExpireContainerBase::ExpireContainerBase(uint64_t lifespan, uint64_t timer_cycle,
                                         uint64_t num_limit)
    : _lifespan(lifespan),
      _num_limit(num_limit),
      _timer(std::max<uint64_t>(1000, timer_cycle), {this, &ExpireContainerBase::expire}, true,
             photon::DEFAULT_STACK_SIZE) {}

ExpireContainerBase::~ExpireContainerBase() {
    // First, or a timer-driven expire() suspended in an item's destructor
    // would resume on a freed container.
    _timer.stop();
    Set all;
    {
        SCOPED_LOCK(_lock);
        _list.release();  // the items are freed below, links and all
        all.swap(_set);
    }
    for (auto x : all) delete x;
}

auto ExpireContainerBase::insert(Item* item) -> std::pair<iterator, bool> {
    return _set.insert(item);
}

auto ExpireContainerBase::__find_prelock(const Item& key_item) -> iterator {
    return _set.find(const_cast<Item*>(&key_item));
}

auto ExpireContainerBase::find(const Item& key_item) -> iterator {
    SCOPED_LOCK(_lock);
    return __find_prelock(key_item);
}

void ExpireContainerBase::clear() {
    intrusive_list<Item> idle;
    {
        SCOPED_LOCK(_lock);
        idle.splice(_list);
        for (Item* x = idle.front(); x; x = x->next() == idle.front() ? nullptr : x->next())
            _set.erase(x);
    }
    // Outside the lock: destructors of cached objects may yield.
    while (auto x = idle.pop_front()) delete x;
}

uint64_t ExpireContainerBase::expire() {
    intrusive_list<Item> dead;
    {
        SCOPED_LOCK(_lock);
        const uint64_t t = photon::now;
        // Every enqueue() re-arms with the same lifespan at a later `now`, so
        // the list is ordered by expiration: stop at the first live item.
        while (Item* x = _list.front()) {
            if (x->_timeout.expiration() >= t && _set.size() <= _num_limit) break;
            _list.pop_front();
            _set.erase(x);
            dead.push_back(x);
        }
    }
    while (auto x = dead.pop_front()) delete x;
    return 0;
}

bool ExpireContainerBase::keep_alive(const Item& x, bool insert_if_not_exists) {
    DEFER(expire());
    SCOPED_LOCK(_lock);
    auto it = __find_prelock(x);
    // Past its lifespan but not yet collected: it no longer counts as there
    // (Photon revived it).
    if (it != _set.end() && (*it)->_timeout.expiration() < photon::now && !insert_if_not_exists)
        return false;
    if (it == _set.end() && insert_if_not_exists) {
        Item* item = x.construct();
        if (!item) return false;
        it = insert(item).first;  // absent under the lock: inserted
    }
    if (it == _set.end()) return false;
    enqueue(*it);
    return true;
}

auto ObjectCacheBase::ref_acquire(const Item& key_item, Delegate<void, void*> ctor,
                                  uint64_t failure_cooldown) -> Item* {
    DEFER(expire());
    Item* item = nullptr;
    {
        // Phase 1: a referenced entry, made empty if absent, so that
        // concurrent takers of this key meet at its mutex below.
        SCOPED_LOCK(_lock);
        while (!item) {
            auto it = __find_prelock(key_item);
            if (it == _set.end()) it = insert(key_item.construct()).first;
            auto x = static_cast<Item*>(*it);
            if (x->_recycle) {  // being removed: wait until it is gone
                blocker.wait(_lock);
                continue;
            }
            _list.erase(x);  // held: no longer idle
            x->_refcnt++;
            item = x;
        }
    }
    {
        // Phase 2: one taker at a time makes the object.
        SCOPED_LOCK(item->_mtx);
        if (!item->_obj && item->_failure <= photon::sat_sub(photon::now, failure_cooldown)) {
            ctor(item);
            if (!item->_obj) item->_failure = photon::now;
        }
    }
    if (!item->_obj) {
        ref_release(item, false, true);
        return nullptr;
    }
    return item;
}

void* ObjectCacheBase::ref_release(ItemPtr item, bool recycle, bool destroy) {
    if (!item) {
        errno = EINVAL;
        return nullptr;
    }
    DEFER(expire());
    photon::semaphore last_holder_gone;
    bool held;
    {
        SCOPED_LOCK(_lock);
        held = item->_refcnt > 0;
        if (held) {
            if (item->_recycle) recycle = false;  // another holder recycles it
            if (recycle) item->_recycle = &last_holder_gone;
            if (--item->_refcnt == 0) {
                if (item->_recycle) {
                    item->_recycle->signal(1);
                } else {
                    // As Photon: a failed construction cools down only the
                    // takers that waited on it, not later ones.
                    item->_failure = 0;
                    enqueue(item);
                }
            }
        }
    }
    if (!held) LOG_ERROR_RETURN(EINVAL, nullptr, "ObjectCache: release of an entry nobody holds");
    if (!recycle) return nullptr;
    // Only ESHUTDOWN or a timeout end this wait early; the entry must not go
    // while others hold it.
    while (last_holder_gone.wait(1) < 0) {
    }
    {
        SCOPED_LOCK(_lock);
        _set.erase(item);
    }
    void* ret = destroy ? nullptr : item->take_obj();
    delete item;
    blocker.notify_all();
    return ret;
}

void* ObjectCacheBase::release(const Item& key_item, bool recycle, bool destroy) {
    ItemPtr item;
    {
        SCOPED_LOCK(_lock);
        auto it = __find_prelock(key_item);
        if (it == _set.end()) return nullptr;
        item = static_cast<ItemPtr>(*it);
        // Idle: expire() may free it once the lock is dropped.
        if (item->_refcnt == 0) item = nullptr;
    }
    if (!item) LOG_ERROR_RETURN(EINVAL, nullptr, "ObjectCache: release of a key nobody holds");
    return ref_release(item, recycle, destroy);
}
