// IdentityPool: a bounded cache of idle objects of one type, as PhotonLibOS
// declares it (global namespace). get() hands out an idle object or makes one
// with the constructor callback; put() takes it back, or destroys it with the
// destructor callback when `capacity` are idle already. Any vCPU may call
// get/put (a spinlock guards the cache; the callbacks run outside it, and may
// yield). With autoscale on, a timer of the vCPU that enabled it destroys,
// once a second, half of the objects that stayed idle all that second.
// Destroying a pool waits for every object handed out to come back.
//
// Differences from PhotonLibOS: doc/compat.md#commonidentity-poolh
// Floor: thread (tools/floors.txt), above its folder's: it is built on photon's coroutines.
#pragma once

#include <cinttypes>
#include <cstdlib>
#include <new>

#include <photon/common/callback.h>
#include <photon/common/list.h>
#include <photon/thread/thread.h>

class IdentityPoolBase : public intrusive_list_node<IdentityPoolBase> {
public:
    typedef Callback<void**> Constructor;  // sets *obj; a negative return or no object: failed
    typedef Callback<void*> Destructor;

    // An idle object, or a new one; nullptr if the constructor failed.
    void* get();
    // Takes obj back (nullptr: ignored).
    void put(void* obj);
    // Destroys half of the objects that stayed idle since the last call.
    uint64_t do_scale();
    // Starts / stops scaling on a timer of this vCPU; -1 if already so.
    int enable_autoscale();
    int disable_autoscale();

protected:
    IdentityPoolBase(uint32_t capacity, void** items) : m_capacity(capacity), m_items(items) {}
    ~IdentityPoolBase();

    uint32_t m_capacity, m_size = 0, m_refcnt = 0;
    uint32_t min_size_in_interval = 0;
    photon::spinlock m_mtx;
    photon::condition_variable m_cvar;
    Constructor m_ctor;
    Destructor m_dtor;
    void* m_reserved = nullptr;  // for derived pools
    bool autoscale = false;
    void** m_items;  // the idle objects: capacity slots
};

template <typename T>
class IdentityPoolBaseT : public IdentityPoolBase {
public:
    typedef Callback<T**> Constructor;
    typedef Callback<T*> Destructor;

    // A pool of `capacity` idle objects at most (new T / delete by default);
    // nullptr if out of memory.
    static IdentityPoolBaseT* new_identity_pool(uint32_t capacity,
                                                Constructor ctor = {nullptr, &default_constructor},
                                                Destructor dtor = {nullptr, &default_destructor}) {
        void* mem = malloc(sizeof(IdentityPoolBaseT) + sizeof(void*) * (size_t)capacity);
        if (!mem) return nullptr;
        auto items = reinterpret_cast<void**>(static_cast<char*>(mem) + sizeof(IdentityPoolBaseT));
        return new (mem) IdentityPoolBaseT(capacity, items, ctor, dtor);
    }
    // Waits for every object handed out to come back, then destroys the pool.
    static void delete_identity_pool(IdentityPoolBaseT* p) {
        if (!p) return;
        p->~IdentityPoolBaseT();
        free(p);
    }

    T* get() { return static_cast<T*>(IdentityPoolBase::get()); }
    void put(T* obj) { IdentityPoolBase::put(obj); }

protected:
    IdentityPoolBaseT(uint32_t capacity, void** items,
                      Constructor ctor = {nullptr, &default_constructor},
                      Destructor dtor = {nullptr, &default_destructor})
        : IdentityPoolBase(capacity, items) {
        set_ctor(ctor);
        set_dtor(dtor);
    }
    // The callbacks take T**/T*; stored as their void**/void* forms.
    void set_ctor(Constructor ctor) {
        m_ctor = IdentityPoolBase::Constructor(ctor._obj, (int (*)(void*, void**))ctor._func);
    }
    void set_dtor(Destructor dtor) {
        m_dtor = IdentityPoolBase::Destructor(dtor._obj, (int (*)(void*, void*))dtor._func);
    }
    static int default_constructor(void*, T** ptr) {
        *ptr = new (std::nothrow) T;
        return *ptr ? 0 : -1;
    }
    static int default_destructor(void*, T* ptr) {
        delete ptr;
        return 0;
    }
};

// A pool with its slots inside it, for static or member pools.
template <typename T, size_t CAPACITY>
class IdentityPool : public IdentityPoolBaseT<T> {
public:
    using base = IdentityPoolBaseT<T>;
    using base::default_constructor;
    using base::default_destructor;
    using typename base::Constructor;
    using typename base::Destructor;

    IdentityPool(Constructor ctor = {nullptr, &default_constructor},
                 Destructor dtor = {nullptr, &default_destructor})
        : base(CAPACITY, slots_, ctor, dtor) {}

protected:
    void* slots_[CAPACITY];
};

template <typename T>
using IdentityPool0 = IdentityPoolBaseT<T>;

template <typename T>
inline IdentityPool0<T>* new_identity_pool(uint32_t capacity) {
    return IdentityPool0<T>::new_identity_pool(capacity);
}

template <typename T>
inline IdentityPool0<T>* new_identity_pool(uint32_t capacity,
                                           typename IdentityPool0<T>::Constructor ctor,
                                           typename IdentityPool0<T>::Destructor dtor) {
    return IdentityPool0<T>::new_identity_pool(capacity, ctor, dtor);
}

template <typename T>
inline void delete_identity_pool(IdentityPool0<T>* p) {
    IdentityPool0<T>::delete_identity_pool(p);
}
