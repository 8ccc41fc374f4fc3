// photon::throttle (photon/common/throttle.h): the bucket's refill and the
// waiting policy per priority.
#include <photon/common/throttle.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

namespace photon {

namespace {
using u128 = unsigned __int128;  // limit * elapsed us overflows 64 bits
}

throttle::throttle(uint64_t limit, uint64_t time_window, uint64_t slice) : m_limit(limit) {
    m_time_window = std::max<uint64_t>(time_window, 1);
    m_slice_num = std::min(std::max<uint64_t>(slice, 1), m_time_window);
    m_time_window_per_slice = m_time_window / m_slice_num;
    if (m_limit) sem.signal(m_limit);  // starts full, as of now
    last_retrieve = __update_now();    // `now` may not have run yet on this thread
}

void throttle::update(uint64_t limit) {
    m_limit = limit;
    // Units beyond the new bucket size would let a burst past the limit.
    uint64_t held = sem.count();
    if (held > m_limit) sem.wait(held - m_limit, 0);
}

void throttle::try_signal() {
    const uint64_t t = photon::now;
    if (t < last_retrieve || t - last_retrieve < m_time_window_per_slice) return;
    const uint64_t elapsed = t - last_retrieve;
    uint64_t free;
    if (elapsed >= m_time_window) {  // a full window or more: a full bucket
        free = m_limit;
        credit_ = 0;
        last_retrieve = t;
    } else {
        // Whole slices only; what they earn beyond whole units carries over.
        const uint64_t step = elapsed - elapsed % m_time_window_per_slice;
        const u128 total = (u128)m_limit * step + credit_;
        free = (uint64_t)(total / m_time_window);
        credit_ = (uint64_t)(total % m_time_window);
        last_retrieve += step;
    }
    free = std::min(free, sat_sub(m_limit, sem.count()));
    if (free) sem.signal(free);
}

throttle::flow_record& throttle::flow_of(const void* who, int prio, uint64_t part) {
    const uint64_t t = photon::now;
    flow_record* stalest = &flows_[0];
    for (auto& f : flows_) {
        if (f.who == who) {
            stalest = &f;
            break;
        }
        if (f.last_seen < stalest->last_seen) stalest = &f;
    }
    flow_record& f = *stalest;
    if (f.who != who) f = {who, 0, t, part, prio};
    if (t > f.last_seen) f.taken *= std::exp(-double(t - f.last_seen) / double(m_time_window));
    f.last_seen = t;
    f.part = part;
    f.prio = prio;
    return f;
}

bool throttle::fair_to_take(const flow_record& f, uint64_t part) {
    const uint64_t t = photon::now;
    uint64_t reserve = 0;
    for (auto& o : flows_)
        if (&o != &f && o.who && o.prio == f.prio && t - o.last_seen < m_time_window &&
            o.taken < f.taken)
            reserve += o.part;
    return reserve == 0 || sem.count() >= part + reserve;
}

int throttle::consume(uint64_t amount, Priority prio) {
    const int p = int(prio);
    if (p < 0 || p >= int(Priority::NumPriorities)) {
        errno = EINVAL;
        return -1;
    }
    const uint64_t fulfil = get_fulfill_percent(prio);
    const uint64_t starving = get_starving_percent(prio);
    uint64_t& starved = m_starving_slice_num[p];
    while (amount > 0) {
        try_signal();
        // More than a bucketful can never be there at once: take it in parts.
        const uint64_t part = (m_limit && amount > m_limit) ? m_limit : amount;
        flow_record& flow = flow_of(CURRENT, p, part);
        if (starved * 100 > m_slice_num * starving) {
            starved = 0;  // waited long enough: compete for units now
        } else if ((u128)sem.count() * 100 < (u128)m_limit * fulfil) {
            // Too few units for this priority: leave them to higher ones.
            if (thread_usleep(m_time_window_per_slice) != 0) return -1;
            starved++;
            continue;
        }
        if (!fair_to_take(flow, part)) {
            // Its share is taken: the next refill may leave it some.
            if (thread_usleep(m_time_window_per_slice) != 0) return -1;
            continue;
        }
        if (sem.wait_interruptible(part, m_time_window_per_slice) == 0) {
            amount -= part;
            flow_of(CURRENT, p, part).taken += double(part);
        } else if (errno != ETIMEDOUT) {
            return -1;
        }
    }
    return 0;
}

int throttle::try_consume(uint64_t amount) {
    try_signal();
    return sem.wait(amount, 0);
}

void throttle::restore(uint64_t amount) {
    uint64_t free = std::min(amount, sat_sub(m_limit, sem.count()));
    if (free) sem.signal(free);
}

uint64_t throttle::get_fulfill_percent(Priority prio) {
    switch (prio) {
        case Priority::Low:
            return 60;
        case Priority::Medium:
            return 30;
        default:  // High: any unit will do
            return 0;
    }
}

uint64_t throttle::get_starving_percent(Priority prio) {
    switch (prio) {
        case Priority::Low:
            return 20;
        case Priority::Medium:
            return 10;
        default:
            return 0;
    }
}

}  // namespace photon
