#include <photon/common/memory_budget.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace photon {

size_t MemoryBudget::parse_size(const char* s) {
    if (!s || *s < '0' || *s > '9') return 0;  // (strtoull would take "-1")
    char* end = nullptr;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return 0;
    switch (*end) {
        case 'k':
        case 'K':
            v <<= 10;
            ++end;
            break;
        case 'm':
        case 'M':
            v <<= 20;
            ++end;
            break;
        case 'g':
        case 'G':
            v <<= 30;
            ++end;
            break;
        default:
            break;
    }
    return *end ? 0 : (size_t)v;
}

namespace {

// The first line of a file, as a size ("max" and unreadable files: 0).
size_t read_size_file(const std::string& path) {
    FILE* f = fopen(path.c_str(), "re");
    if (!f) return 0;
    char line[64] = {};
    bool ok = fgets(line, sizeof(line), f) != nullptr;
    fclose(f);
    if (!ok) return 0;
    line[strcspn(line, "\n")] = 0;
    return MemoryBudget::parse_size(line);
}

// This process's cgroup memory limit (v2, else v1), or 0 when there is none.
size_t cgroup_limit() {
    FILE* f = fopen("/proc/self/cgroup", "re");
    std::string v2path;
    if (f) {
        char line[512];
        while (fgets(line, sizeof(line), f))
            if (strncmp(line, "0::", 3) == 0) {
                line[strcspn(line, "\n")] = 0;
                v2path = line + 3;
            }
        fclose(f);
    }
    size_t lim = 0;
    if (!v2path.empty()) lim = read_size_file("/sys/fs/cgroup" + v2path + "/memory.max");
    if (!lim) lim = read_size_file("/sys/fs/cgroup/memory.max");
    if (!lim) lim = read_size_file("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    return lim;
}

size_t physical_memory() {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

}  // namespace

size_t MemoryBudget::default_limit() {
    constexpr size_t kMinLimit = 64ull << 20;  // a machine's quarter is never taken below this
    if (const char* env = getenv("PHOTON_MEMORY_BUDGET"))
        if (size_t v = MemoryBudget::parse_size(env)) return v;
    size_t mem = physical_memory();
    size_t cg = cgroup_limit();  // v1 reports a huge number when unlimited
    if (cg && (mem == 0 || cg < mem)) mem = cg;
    size_t quarter = mem / 4;
    return quarter > kMinLimit ? quarter : kMinLimit;
}

MemoryBudget::MemoryBudget(size_t limit) : limit_(limit ? limit : default_limit()) {}

MemoryBudget::~MemoryBudget() = default;

MemoryBudget* MemoryBudget::process() {
    // Never destroyed: servers may outlive static destruction order.
    static MemoryBudget* p = new MemoryBudget(0);
    return p;
}

void MemoryBudget::set_limit(size_t limit) {
    SCOPED_LOCK(lock_);
    limit_ = limit ? limit : default_limit();
    min_wait_ = SIZE_MAX;
    room_.notify_all();
}

size_t MemoryBudget::share() const {
    size_t n = accounts();
    size_t fair = limit() / (n ? n : 1);
    // At most a 64th of the limit (64 KiB at least): with few connections a
    // fair share is large, and a few of them each within it would otherwise
    // take the reserve that is there for the connections holding little.
    size_t small = std::max(limit() / 64, size_t(64) << 10);
    return std::min(fair, small);
}

int MemoryBudget::grant_locked(Account* a, size_t n) {
    size_t lim = limit();
    bool heavy = a->held() + n > share();
    size_t cap = heavy ? lim - lim / 4 : lim;
    if (n > cap) return -1;
    if (used() + n > cap) return 0;
    used_ += n;
    a->held_ += n;
    return 1;
}

void MemoryBudget::give_back(Account* a, size_t n) {
    SCOPED_LOCK(lock_);
    if (n > a->held()) n = a->held();  // a caller's bug must not underflow the total
    a->held_ -= n;
    used_ -= n;
    // Only when the smallest waiter might fit now: with many connections
    // waiting, waking them all on every release would cost more than the
    // bytes it frees.
    if (waiting_ && limit() >= used() && limit() - used() >= min_wait_) {
        min_wait_ = SIZE_MAX;  // the woken that still do not fit say so again
        room_.notify_all();
    }
}

MemoryBudget::Account::Account(MemoryBudget* budget) : budget_(budget) {
    if (budget_) budget_->accounts_++;
}

MemoryBudget::Account::~Account() {
    if (!budget_) return;
    budget_->give_back(this, held());
    SCOPED_LOCK(budget_->lock_);
    budget_->accounts_--;
    // The others' shares grew: a heavy waiter may be light now.
    if (budget_->waiting_) {
        budget_->min_wait_ = SIZE_MAX;
        budget_->room_.notify_all();
    }
}

int MemoryBudget::Account::try_acquire(size_t n) {
    if (!budget_) return held_ += n, 0;
    SCOPED_LOCK(budget_->lock_);
    if (budget_->grant_locked(this, n) > 0) return 0;
    budget_->sheds_++;
    return errno = ENOMEM, -1;
}

int MemoryBudget::Account::acquire(size_t n, Timeout timeout) {
    if (!budget_) return held_ += n, 0;
    auto b = budget_;
    SCOPED_LOCK(b->lock_);
    int g = b->grant_locked(this, n);
    if (g == 0) {
        b->waits_++;
        b->waiting_++;
        while (g == 0) {
            if (n < b->min_wait_) b->min_wait_ = n;
            int r = b->room_.wait(b->lock_, timeout);
            int e = errno;
            g = b->grant_locked(this, n);
            if (g == 0 && r < 0) {
                b->waiting_--;
                b->sheds_++;
                return errno = (e == EINTR ? EINTR : ETIMEDOUT), -1;
            }
        }
        b->waiting_--;
    }
    if (g > 0) return 0;
    b->sheds_++;
    return errno = ENOMEM, -1;
}

void MemoryBudget::Account::release(size_t n) {
    if (!budget_) {
        held_ -= n < held() ? n : held();
        return;
    }
    budget_->give_back(this, n);
}

}  // namespace photon
