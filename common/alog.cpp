#include <photon/common/alog.h>
#include <photon/common/detail/log_coroutine.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace photon {
namespace detail {
const void* (*log_current_coroutine)() = nullptr;
}  // namespace detail
}  // namespace photon

namespace {

uint64_t monotonic_us() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000 + uint64_t(ts.tv_nsec) / 1000;
}

void write_all(int fd, const char* p, size_t n) {
    while (n > 0) {
        ssize_t r = ::write(fd, p, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return;  // nowhere left to report a failing log
        }
        p += r;
        n -= size_t(r);
    }
}

// Per-level ANSI colours, one SGR byte per level in one atomic word.
class level_colors {
public:
    int set(int level, unsigned char code) {
        if (level < ALOG_DEBUG || level > ALOG_AUDIT) return errno = EINVAL, -1;
        bool valid = code == ALOG_COLOR_NOTHING ||
                     (code >= ALOG_COLOR_BLACK && code <= ALOG_COLOR_LIGHTGRAY) ||
                     (code >= ALOG_COLOR_DARKGRAY && code <= ALOG_COLOR_LIGHTWHITE);
        if (!valid) return errno = EINVAL, -1;
        uint64_t old = bits_.load(), mask = uint64_t(0xFF) << (level * 8);
        while (!bits_.compare_exchange_weak(old, (old & ~mask) | (uint64_t(code) << (level * 8))))
            ;
        return 0;
    }
    // 0 (none) for levels outside DEBUG..AUDIT, such as the -1 of pre-coloured batches.
    unsigned get(int level) const {
        return level >= ALOG_DEBUG && level <= ALOG_AUDIT ? (bits_ >> (level * 8)) & 0xFF : 0;
    }

private:
    std::atomic<uint64_t> bits_{0};
};

// Hands sink() the line wrapped in colour `code`, as one piece: "\033[<SGR>m" + line +
// "\033[0m" + '\n' (the reset goes before the line's newline). No colour: the line as is.
template <typename Sink>
void with_color(unsigned code, const char* begin, size_t n, Sink sink) {
    if (!code || n == 0 || n > LOG_BUFFER_SIZE) return sink(begin, n);
    char colored[LOG_BUFFER_SIZE + 16];
    if (begin[n - 1] == '\n') --n;
    size_t len = size_t(snprintf(colored, 16, "\033[%xm", code));
    memcpy(colored + len, begin, n);
    memcpy(colored + len + n, "\033[0m\n", 5);
    sink(colored, len + n + 5);
}

// Writes lines to an fd: a single write() per line, which O_APPEND files and pipes keep whole.
class fd_log_output : public ILogOutput {
public:
    constexpr explicit fd_log_output(int fd) : fd_(fd) {}

    void write(int level, const char* begin, const char* end) override {
        throttle();
        with_color(colors_.get(level), begin, size_t(end - begin),
                   [this](const char* p, size_t n) { write_all(fd_, p, n); });
    }
    int get_log_file_fd() override { return fd_; }
    uint64_t set_throttle(uint64_t t) override { return throttle_ = t; }
    uint64_t get_throttle() override { return throttle_; }
    void destruct() override {}  // the static stdout/stderr outputs
    int set_level_color(int level, unsigned char code) override {
        if (colors_.set(level, code) < 0)
            LOG_ERROR_RETURN(EINVAL, -1, "invalid level ` or colour code `", level, HEX(code));
        return 0;
    }

protected:
    // Past `throttle_` lines in the current second, block the vCPU until the next second.
    void throttle() {
        uint64_t limit = throttle_.load(std::memory_order_relaxed);
        if (limit == UINT64_MAX) return;
        uint64_t now = monotonic_us(), second = now / 1000000, window = window_.load();
        if (window != second && window_.compare_exchange_strong(window, second)) lines_ = 0;
        if (lines_.fetch_add(1) >= limit)
            std::this_thread::sleep_for(std::chrono::microseconds(1000000 - now % 1000000));
    }

    int fd_;
    std::atomic<uint64_t> throttle_{UINT64_MAX}, window_{0}, lines_{0};
    level_colors colors_;
};

class null_log_output final : public ILogOutput {
public:
    void write(int, const char*, const char*) override {}
    int get_log_file_fd() override { return -1; }
    uint64_t set_throttle(uint64_t t) override { return t; }
    uint64_t get_throttle() override { return UINT64_MAX; }
    void destruct() override {}
};

int open_log(const char* fn) { return ::open(fn, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644); }

// fn -> fn.1 -> ... -> fn.<max_files-1>; the oldest is removed.
void rotate_files(const std::string& fn, int max_files) {
    auto name = [&](int i) { return i == 0 ? fn : fn + '.' + std::to_string(i); };
    if (max_files <= 1) {
        ::unlink(fn.c_str());
        return;
    }
    ::unlink(name(max_files - 1).c_str());
    for (int i = max_files - 2; i >= 0; --i) ::rename(name(i).c_str(), name(i + 1).c_str());
}

class file_log_output final : public fd_log_output {
public:
    file_log_output(int fd, const char* fn, uint64_t rotate_limit, int max_files)
        : fd_log_output(fd),
          fn_(fn ? fn : ""),
          limit_(fn ? rotate_limit : UINT64_MAX),
          max_files_(max_files) {
        struct stat st;
        if (::fstat(fd, &st) == 0) size_ = uint64_t(st.st_size);
    }

    void write(int level, const char* begin, const char* end) override {
        uint64_t n = uint64_t(end - begin);
        if (limit_ != UINT64_MAX) rotate_if_full(n);
        fd_log_output::write(level, begin, end);
        size_ += n;
    }
    void destruct() override {
        if (fd_ > 2) ::close(fd_);
        delete this;
    }

private:
    static bool full(uint64_t size, uint64_t n, uint64_t limit) {
        return size > 0 && size + n > limit;
    }

    void rotate_if_full(uint64_t n) {
        if (!full(size_, n, limit_)) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (!full(size_, n, limit_)) return;  // another thread rotated
        rotate_files(fn_, max_files_);
        int fd = open_log(fn_.c_str());
        if (fd >= 0) {
            // Swap the file under fd_, so concurrent writers never see a closed fd.
            ::dup3(fd, fd_, O_CLOEXEC);
            ::close(fd);
        }
        size_ = 0;  // also on failure: retry after another rotate_limit bytes, not every line
    }

    std::string fn_;
    uint64_t limit_;
    int max_files_;
    std::atomic<uint64_t> size_{0};
    std::mutex mutex_;
};

// Lines queue in memory shards and a background OS thread writes them to `out_` in batches.
// A shard is a mutex-guarded byte string: a writer appends its (coloured) line, and wakes the
// worker only when the shard was empty, since a non-empty shard already has a drain coming.
class async_log_output final : public ILogOutput {
public:
    async_log_output(ILogOutput* out, int shards) : out_(out) {
        for (int i = 0; i < shards; ++i) shards_.emplace_back(new shard);
    }
    // false + errno if the worker thread cannot start.
    bool start() {
        try {
            worker_ = std::thread(&async_log_output::run, this);
        } catch (const std::system_error& e) {
            errno = e.code().value() ? e.code().value() : EAGAIN;
            return false;
        }
        return true;
    }

    void write(int level, const char* begin, const char* end) override {
        thread_local uint64_t turn = 0;
        shard& sh = *shards_[turn++ & (shards_.size() - 1)];
        bool was_empty = false;
        with_color(colors_.get(level), begin, size_t(end - begin), [&](const char* p, size_t n) {
            std::unique_lock<std::mutex> lock(sh.mutex);
            // Full: wait for the worker (a line always fits an empty shard).
            sh.space.wait(lock,
                          [&] { return sh.data.empty() || sh.data.size() + n <= kShardBytes; });
            was_empty = sh.data.empty();
            sh.data.append(p, n);
        });
        if (was_empty) {
            std::lock_guard<std::mutex> lock(wake_mutex_);
            pending_ = true;
            wake_.notify_one();
        }
    }
    int get_log_file_fd() override { return out_->get_log_file_fd(); }
    uint64_t set_throttle(uint64_t t) override { return out_->set_throttle(t); }
    uint64_t get_throttle() override { return out_->get_throttle(); }
    int set_level_color(int level, unsigned char code) override {
        if (colors_.set(level, code) < 0)
            LOG_ERROR_RETURN(EINVAL, -1, "invalid level ` or colour code `", level, HEX(code));
        return 0;
    }
    // Flushes what was queued, stops the worker, frees this output (not out_).
    void destruct() override {
        {
            std::lock_guard<std::mutex> lock(wake_mutex_);
            stopping_ = true;
            wake_.notify_one();
        }
        if (worker_.joinable()) worker_.join();
        delete this;
    }

private:
    static constexpr size_t kShardBytes = 1024 * 1024;
    static constexpr size_t kBatchBytes = 64 * 1024;

    struct shard {
        std::mutex mutex;
        std::condition_variable space;
        std::string data;
    };

    void run() {
        std::string batch;
        for (bool stop = false; !stop;) {
            {
                std::unique_lock<std::mutex> lock(wake_mutex_);
                wake_.wait(lock, [&] { return pending_ || stopping_; });
                pending_ = false;
                stop = stopping_;  // still drain once more below
            }
            for (auto& sh : shards_) {
                {
                    std::lock_guard<std::mutex> lock(sh->mutex);
                    batch.swap(sh->data);
                }
                sh->space.notify_all();
                flush(batch);
                batch.clear();
            }
        }
    }

    // Level -1: the bytes carry their colours already. Pieces end at a line end when they can.
    void flush(const std::string& batch) {
        const char* p = batch.data();
        const char* end = p + batch.size();
        while (p < end) {
            const char* cut = end - p > (ptrdiff_t)kBatchBytes ? p + kBatchBytes : end;
            if (cut < end) {
                const char* nl = (const char*)memrchr(p, '\n', size_t(cut - p));
                if (nl) cut = nl + 1;
            }
            out_->write(-1, p, cut);
            p = cut;
        }
    }

    ILogOutput* out_;
    std::vector<std::unique_ptr<shard>> shards_;
    level_colors colors_;
    std::mutex wake_mutex_;
    std::condition_variable wake_;
    bool pending_ = false, stopping_ = false;  // guarded by wake_mutex_
    std::thread worker_;
};

// Constant-initialised, trivially destructible: usable before main() and after exit().
fd_log_output stdout_output(1);
fd_log_output stderr_output(2);
null_log_output null_output;
ILogOutput* owned_file_output = nullptr;  // set by log_output_file()

void install_file_output(ILogOutput* out) {
    ILogOutput* old = owned_file_output;
    owned_file_output = out;
    if (default_logger.log_output == old || out)
        default_logger.log_output = out ? out : &stdout_output;
    if (old) old->destruct();
}

// XSI and GNU strerror_r return different types; accept either.
[[maybe_unused]] const char* errno_text(int rc, const char* buf) {
    return rc == 0 ? buf : "Unknown error";
}
[[maybe_unused]] const char* errno_text(const char* text, const char*) { return text; }

void put_2digits(char* p, int x) {
    p[0] = char('0' + x / 10 % 10);
    p[1] = char('0' + x % 10);
}

// "YYYY/MM/DD HH:MM:SS.uuuuuu" in local time; localtime_r runs once a minute per thread.
void put_timestamp(LogBuffer& buf) {
    thread_local time_t cached_minute = -1;
    thread_local char prefix[17];  // "YYYY/MM/DD HH:MM:"
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_sec / 60 != cached_minute) {
        struct tm tm;
        localtime_r(&ts.tv_sec, &tm);
        put_2digits(prefix, (tm.tm_year + 1900) / 100);
        put_2digits(prefix + 2, tm.tm_year + 1900);
        prefix[4] = prefix[7] = '/';
        put_2digits(prefix + 5, tm.tm_mon + 1);
        put_2digits(prefix + 8, tm.tm_mday);
        prefix[10] = ' ';
        put_2digits(prefix + 11, tm.tm_hour);
        prefix[13] = prefix[16] = ':';
        put_2digits(prefix + 14, tm.tm_min);
        cached_minute = ts.tv_sec / 60;
    }
    char tail[9];  // "SS.uuuuuu"
    put_2digits(tail, int(ts.tv_sec % 60));
    tail[2] = '.';
    long us = ts.tv_nsec / 1000;
    for (int i = 8; i > 2; --i, us /= 10) tail[i] = char('0' + us % 10);
    buf.put(prefix, sizeof(prefix));
    buf.put(tail, sizeof(tail));
}

}  // namespace

ILogOutput* const log_output_null = &null_output;
ILogOutput* const log_output_stderr = &stderr_output;
ILogOutput* const log_output_stdout = &stdout_output;

ALogLogger default_logger{&stdout_output, ALOG_DEBUG};
ALogLogger default_audit_logger{&null_output, ALOG_AUDIT};
uint32_t& log_output_level = default_logger.log_level;
ILogOutput*& log_output = default_logger.log_output;

ILogOutput* new_log_output_file(const char* fn, uint64_t rotate_limit, int max_log_files,
                                uint64_t throttle, bool rotate_on_start) {
    if (!fn || !*fn) LOG_ERROR_RETURN(EINVAL, nullptr, "empty log file name");
    struct stat st;
    if (rotate_on_start && ::stat(fn, &st) == 0 && st.st_size > 0)
        rotate_files(fn, std::max(max_log_files, 1));
    int fd = open_log(fn);
    if (fd < 0) LOG_ERRNO_RETURN(0, nullptr, "failed to open log file `", fn);
    auto out = new file_log_output(fd, fn, rotate_limit, std::max(max_log_files, 1));
    out->set_throttle(throttle);
    return out;
}

ILogOutput* new_log_output_file(int fd, uint64_t throttle) {
    if (fd < 0) LOG_ERROR_RETURN(EBADF, nullptr, "invalid log fd ", fd);
    auto out = new file_log_output(fd, nullptr, UINT64_MAX, 1);
    out->set_throttle(throttle);
    return out;
}

ILogOutput* new_async_log_output(ILogOutput* output, int num_of_queues) {
    if (!output) LOG_ERROR_RETURN(EINVAL, nullptr, "no output to write to");
    int shards = std::min(std::max(num_of_queues, 1), 128);
    shards = 1 << (31 - __builtin_clz(unsigned(shards)));  // a power of two, rounded down
    auto out = new async_log_output(output, shards);
    if (!out->start()) {
        int e = errno;
        delete out;
        LOG_ERROR_RETURN(e, nullptr, "cannot start the writer thread");
    }
    return out;
}

int log_output_file(const char* fn, uint64_t rotate_limit, int max_log_files, uint64_t throttle) {
    ILogOutput* out = new_log_output_file(fn, rotate_limit, max_log_files, throttle);
    if (!out) return -1;
    install_file_output(out);
    return 0;
}

int log_output_file(int fd, uint64_t, uint64_t throttle) {
    ILogOutput* out = new_log_output_file(fd, throttle);
    if (!out) return -1;
    install_file_output(out);
    return 0;
}

int log_output_file_close() {
    if (!owned_file_output) {
        errno = EALREADY;
        return -1;
    }
    install_file_output(nullptr);
    return 0;
}

void LogBuffer::put_integer(uint64_t x, bool negative, unsigned base, unsigned width,
                            char padding) {
    char digits[64];
    char* p = digits + sizeof(digits);
    do {
        *--p = "0123456789ABCDEF"[x % base];
        x /= base;
    } while (x);
    size_t n = size_t(digits + sizeof(digits) - p);
    if (negative && padding == '0') put('-');  // "-0042", but "  -42"
    for (size_t len = n + negative; len < width; ++len) put(padding);
    if (negative && padding != '0') put('-');
    put(p, n);
}

void LogBuffer::put_double(double x, const char* printf_format) {
    char text[512];  // %f of 1e308 with the widest width and precision fits
    int n = snprintf(text, sizeof(text), printf_format, x);
    if (n > 0) put(text, std::min(size_t(n), sizeof(text) - 1));
}

LogBuffer& LogBuffer::operator<<(const FP& x) {
    char fmt[16] = "%";
    size_t n = 1;
    if (x.width_ >= 0) n += size_t(snprintf(fmt + n, sizeof(fmt) - n, "%d", x.width_));
    if (x.precision_ >= 0) n += size_t(snprintf(fmt + n, sizeof(fmt) - n, ".%d", x.precision_));
    fmt[n] = x.scientific_ ? 'e' : 'f';
    fmt[n + 1] = '\0';
    put_double(x.value_, fmt);
    return *this;
}

LogBuffer& LogBuffer::operator<<(const ERRNO& e) {
    char text[128];
    int no = e.no ? e.no : errno;  // ERRNO(0): the errno of now
    return printf("errno=", no, '(', errno_text(strerror_r(no, text, sizeof(text)), text), ')');
}

void alog_line::begin(LogBuffer& buf, int level, const char* file, int line, const char* func) {
    static const char names[] = "DEBUGINFO WARN ERRORFATALTEMP AUDIT";
    level = std::min(std::max(level, 0), ALOG_AUDIT);
    put_timestamp(buf);
    buf.put('|');
    buf.put(names + level * 5, 5);
    buf.put("|th=", 4);
    auto current = photon::detail::log_current_coroutine;
    buf << (current ? current() : static_cast<const void*>(nullptr));
    buf.put('|');
    if (level == ALOG_AUDIT) return;  // audit lines carry no source position
    const char* slash = strrchr(file, '/');
    buf.printf(slash ? slash + 1 : file, ':', line, '|', func, ':');
}

void alog_line::finish(LogBuffer& buf, ALogLogger& logger, int level) {
    finish(buf, logger.log_output, level);
}

const char* alog_line::put_format(LogBuffer& buf, const char* fmt, bool last) {
    for (;;) {
        const char* tick = strchr(fmt, '`');
        if (!tick) {
            buf.put(fmt, strlen(fmt));
            return nullptr;
        }
        buf.put(fmt, size_t(tick - fmt));
        if (tick[1] == '`') {
            buf.put('`');
            fmt = tick + 2;
        } else if (last) {
            buf.put('`');  // a placeholder without argument shows as is
            fmt = tick + 1;
        } else {
            return tick + 1;
        }
    }
}

bool alog_line::limiter::admit() {
    constexpr auto relaxed = std::memory_order_relaxed;
    if (every_n) return count.fetch_add(1, relaxed) % every_n == 0;
    if (window_us != UINT64_MAX) {
        uint64_t now = monotonic_us(), start = window_start.load(relaxed);
        if ((start == 0 || now - start >= window_us) &&
            window_start.compare_exchange_strong(start, now, relaxed))
            count.store(0, relaxed);
    }
    return count.fetch_add(1, relaxed) < first_n;
}
