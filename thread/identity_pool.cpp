// IdentityPool (photon/common/identity-pool.h). It lives in thread/: its
// lock, condition variable and autoscale timer are the coroutine core's.
#include <photon/common/identity-pool.h>

#include <photon/common/alog.h>
#include <photon/thread/timer.h>

void* IdentityPoolBase::get() {
    SCOPED_LOCK(m_mtx);
    void* obj = nullptr;
    if (m_size > 0) {
        obj = m_items[--m_size];
        if (m_size < min_size_in_interval) min_size_in_interval = m_size;
    } else {
        m_mtx.unlock();  // the constructor may yield (a thread pool's does)
        // As PhotonLibOS, a constructor may return what it likes on success
        // (an allocator returns the size); failure is a negative return or no object.
        int r = m_ctor(&obj);
        m_mtx.lock();
        if (r < 0) obj = nullptr;
    }
    if (obj) ++m_refcnt;
    return obj;
}

void IdentityPoolBase::put(void* obj) {
    if (!obj) return;
    SCOPED_LOCK(m_mtx);
    if (m_size < m_capacity) {
        m_items[m_size++] = obj;
    } else {
        m_mtx.unlock();
        m_dtor(obj);
        m_mtx.lock();
    }
    --m_refcnt;
    m_cvar.notify_all();
}

uint64_t IdentityPoolBase::do_scale() {
    SCOPED_LOCK(m_mtx);
    uint32_t n = (min_size_in_interval + 1) / 2;
    while (m_size > 0 && n-- > 0) {
        void* obj = m_items[--m_size];
        m_mtx.unlock();
        m_dtor(obj);
        m_mtx.lock();
    }
    min_size_in_interval = m_size;
    return 0;
}

IdentityPoolBase::~IdentityPoolBase() {
    if (autoscale) disable_autoscale();
    {
        SCOPED_LOCK(m_mtx);
        if (m_refcnt > 0 && !photon::CURRENT) {  // cannot wait here: leave them be
            LOG_ERROR(
                "IdentityPool destroyed outside a vCPU with ` object(s) still out; "
                "those are not freed",
                m_refcnt);
            m_refcnt = 0;
        }
        while (m_refcnt > 0) {
            if (m_cvar.wait(m_mtx, 10 * 1000 * 1000) != 0 && m_refcnt > 0)
                LOG_WARN("IdentityPool: ` object(s) still out; waiting for them", m_refcnt);
        }
    }
    while (m_size > 0) m_dtor(m_items[--m_size]);
}

namespace {

// One per vCPU that enabled autoscale on some pool: its timer scales them all.
// The mutex keeps the list intact while a scale yields (in a destructor).
struct scale_controller {
    intrusive_list<IdentityPoolBase> pools;
    photon::mutex mu;
    photon::Timer timer{1000 * 1000, {this, &scale_controller::scan}};

    ~scale_controller() { pools.release(); }
    uint64_t scan() {
        photon::scoped_lock lock(mu);
        if (IdentityPoolBase* first = pools.front()) {
            IdentityPoolBase* p = first;
            do {
                p->do_scale();
                p = p->next();
            } while (p != first);
        }
        return 0;
    }
};

thread_local scale_controller* t_controller = nullptr;

}  // namespace

int IdentityPoolBase::enable_autoscale() {
    if (autoscale) return -1;
    if (!photon::CURRENT) LOG_ERROR_RETURN(ENOSYS, -1, "enable_autoscale: not a vCPU");
    if (!t_controller) {
        t_controller = new (std::nothrow) scale_controller;
        if (!t_controller) LOG_ERROR_RETURN(ENOMEM, -1, "enable_autoscale: out of memory");
    }
    photon::scoped_lock lock(t_controller->mu);
    t_controller->pools.push_back(this);
    autoscale = true;
    return 0;
}

int IdentityPoolBase::disable_autoscale() {
    if (!autoscale || !t_controller)
        LOG_ERROR_RETURN(EINVAL, -1, "disable_autoscale: not enabled on this vCPU");
    bool last;
    {
        photon::scoped_lock lock(t_controller->mu);
        t_controller->pools.erase(this);
        autoscale = false;
        last = t_controller->pools.empty();
    }
    if (last) {
        delete t_controller;
        t_controller = nullptr;
    }
    return 0;
}
