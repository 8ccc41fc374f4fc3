// alog: photon's line logger. LOG_INFO("copied ` bytes to `", n, path) formats one line into a
// stack buffer and hands it to an ILogOutput with a single write(). Callable from any vCPU or OS
// thread; never yields (a throttled output may block the vCPU). A filtered-out level costs one
// compare: arguments are not evaluated. Every LOG_* keeps the caller's errno.
#pragma once
#include <atomic>
#include <cassert>
#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <type_traits>
#include <utility>

#include <photon/common/retval.h>
#include <photon/common/utility.h>

#define ALOG_DEBUG 0
#define ALOG_INFO 1
#define ALOG_WARN 2
#define ALOG_ERROR 3
#define ALOG_FATAL 4
#define ALOG_TEMP 5
#define ALOG_AUDIT 6

#ifndef LOG_BUFFER_SIZE
// Longest line, newline included; longer lines are cut.
#define LOG_BUFFER_SIZE 4096
#endif

// ANSI SGR colours for set_level_color(); the hex digits spell the SGR code.
const unsigned char ALOG_COLOR_BLACK = 0x30, ALOG_COLOR_RED = 0x31, ALOG_COLOR_GREEN = 0x32,
                    ALOG_COLOR_YELLOW = 0x33, ALOG_COLOR_BLUE = 0x34, ALOG_COLOR_MAGENTA = 0x35,
                    ALOG_COLOR_CYAN = 0x36, ALOG_COLOR_LIGHTGRAY = 0x37, ALOG_COLOR_DARKGRAY = 0x90,
                    ALOG_COLOR_LIGHTRED = 0x91, ALOG_COLOR_LIGHTGREEN = 0x92,
                    ALOG_COLOR_LIGHTYELLOW = 0x93, ALOG_COLOR_LIGHTBLUE = 0x94,
                    ALOG_COLOR_LIGHTMAGENTA = 0x95, ALOG_COLOR_LIGHTCYAN = 0x96,
                    ALOG_COLOR_LIGHTWHITE = 0x97, ALOG_COLOR_NOTHING = 0;

// Where finished lines go. write() may be called concurrently from many threads. Outputs are
// freed with destruct(), never delete, so the built-in ones can be static and usable during
// static construction and destruction.
class ILogOutput {
protected:
    ~ILogOutput() = default;

public:
    virtual void write(int level, const char* begin, const char* end) = 0;
    virtual int get_log_file_fd() = 0;
    // Throttle: most lines per second; beyond it write() sleeps. -1 = unlimited.
    virtual uint64_t set_throttle(uint64_t t = -1ULL) = 0;
    virtual uint64_t get_throttle() = 0;
    virtual void destruct() = 0;
    // Wrap lines of `level` in an ANSI colour (ALOG_COLOR_NOTHING = plain).
    virtual void set_level_color(int /*level*/, unsigned char /*code*/) {}
};

extern ILogOutput* const log_output_null;
extern ILogOutput* const log_output_stderr;
extern ILogOutput* const log_output_stdout;

// Appends to `fn`. When a line would push the file past rotate_limit bytes, fn becomes fn.1
// (fn.1 -> fn.2 ...) and a fresh fn is started; at most max_log_files files are kept, fn
// included. Returns nullptr + errno if fn can't be opened.
ILogOutput* new_log_output_file(const char* fn, uint64_t rotate_limit = UINT64_MAX,
                                int max_log_files = 10, uint64_t throttle = -1ULL,
                                bool rotate_on_start = false);
// Writes to fd and takes ownership of it (closed by destruct() unless it is 0, 1 or 2).
ILogOutput* new_log_output_file(int fd, uint64_t throttle = -1ULL);

// Point default_logger at a file output owned by alog (the previous one is destructed).
// Configure before other threads log. Return 0, or -1 + errno.
int log_output_file(const char* fn, uint64_t rotate_limit = UINT64_MAX, int max_log_files = 10,
                    uint64_t throttle = -1ULL);
int log_output_file(int fd, uint64_t rotate_limit = UINT64_MAX, uint64_t throttle = -1ULL);
// Closes that file output and returns default_logger to stdout.
int log_output_file_close();

struct ALogLogger {
    ILogOutput* log_output;
    uint32_t log_level;  // lines below this level are dropped
};

extern ALogLogger default_logger;        // stdout, ALOG_DEBUG
extern ALogLogger default_audit_logger;  // log_output_null, ALOG_AUDIT

// PhotonLibOS's older names: default_logger's level and output.
extern uint32_t& log_output_level;
extern ILogOutput*& log_output;

inline void set_log_output(ILogOutput* output) { default_logger.log_output = output; }
inline void set_log_output_level(int level) { default_logger.log_level = level; }

namespace photon {
namespace detail {
template <typename T>
constexpr bool alog_is_negative(T x) {
    if constexpr (std::is_signed<T>::value) {
        return x < 0;
    } else {
        (void)x;
        return false;
    }
}
}  // namespace detail
}  // namespace photon

// An integer with a base, minimum width and padding: HEX(x).width(8), DEC(n).padding('0').
// Decimal keeps the sign; other bases show the two's complement bits of the original type.
class ALogInteger {
public:
    template <typename T, ENABLE_IF(std::is_integral<T>::value && !IS_SAME(T, bool))>
    ALogInteger(T x, unsigned char base, char padding)
        : negative_(base == 10 && photon::detail::alog_is_negative(x)),
          base_(base),
          padding_(padding) {
        using U = typename std::make_unsigned<T>::type;
        magnitude_ = negative_ ? 0 - static_cast<uint64_t>(x) : static_cast<U>(x);
    }
    ALogInteger& width(unsigned char w) {
        width_ = w;
        return *this;
    }
    ALogInteger& padding(char c) {
        padding_ = c;
        return *this;
    }

private:
    friend class LogBuffer;
    uint64_t magnitude_;
    bool negative_;
    unsigned char base_, width_ = 0;
    char padding_;
};

template <typename T>
ALogInteger HEX(T x) {
    return ALogInteger(x, 16, '0');
}
template <typename T>
ALogInteger DEC(T x) {
    return ALogInteger(x, 10, ' ');
}
template <typename T>
ALogInteger OCT(T x) {
    return ALogInteger(x, 8, '0');
}
template <typename T>
ALogInteger BIN(T x) {
    return ALogInteger(x, 2, '0');
}

// A double in printf style: FP(x) is "%f", .precision(2) "%.2f", .width(8) "%8f",
// .scientific(true) "%e". A bare double prints as "%.4f".
class FP {
public:
    explicit FP(double x) : value_(x) {}
    FP& width(signed char w) {
        width_ = w;
        return *this;
    }
    FP& precision(signed char p) {
        precision_ = p;
        return *this;
    }
    FP& scientific(bool s) {
        scientific_ = s;
        return *this;
    }

private:
    friend class LogBuffer;
    double value_;
    signed char width_ = -1, precision_ = -1;
    bool scientific_ = false;
};

// Prints "errno=N(text)"; ERRNO() captures errno when constructed.
struct ERRNO {
    int no;
    ERRNO() : no(errno) {}
    constexpr ERRNO(int e) : no(e) {}
};

// One line under construction. Appends stop silently at LOG_BUFFER_SIZE - 1 bytes (the last
// byte is kept for the newline). Add types with `LogBuffer& operator<<(LogBuffer&, const T&)`.
class LogBuffer {
public:
    LogBuffer() = default;
    LogBuffer(const LogBuffer&) = delete;
    LogBuffer& operator=(const LogBuffer&) = delete;

    void put(char c) {
        if (ptr_ < limit()) *ptr_++ = c;
    }
    void put(const char* s, size_t n) {
        size_t room = static_cast<size_t>(limit() - ptr_);
        if (n > room) n = room;
        if (n) std::memcpy(ptr_, s, n);  // s may be null when n is 0
        ptr_ += n;
    }
    void put_integer(uint64_t magnitude, bool negative, unsigned base, unsigned width,
                     char padding);
    void put_double(double x, const char* printf_format);

    const char* begin() const { return buf_; }
    const char* end() const { return ptr_; }
    size_t size() const { return static_cast<size_t>(ptr_ - buf_); }

    template <typename... Ts>
    LogBuffer& printf(const Ts&... xs) {
        ((*this << xs), ...);
        return *this;
    }

    // char prints as a character, bool as 1/0, other integers in decimal.
    template <typename T, ENABLE_IF(std::is_integral<T>::value)>
    LogBuffer& operator<<(T x) {
        if constexpr (std::is_same<T, char>::value) {
            put(x);
        } else {
            bool negative = photon::detail::alog_is_negative(x);
            put_integer(negative ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x),
                        negative, 10, 0, ' ');
        }
        return *this;
    }
    template <typename T, ENABLE_IF(std::is_enum<T>::value)>
    LogBuffer& operator<<(T x) {
        return *this << +static_cast<typename std::underlying_type<T>::type>(x);
    }
    template <typename T, ENABLE_IF(std::is_floating_point<T>::value)>
    LogBuffer& operator<<(T x) {
        put_double(static_cast<double>(x), "%.4f");
        return *this;
    }
    // char pointers and arrays print as C strings ("(null)" for nullptr); other pointers as
    // 16 hex digits.
    template <typename T>
    LogBuffer& operator<<(T* p) {
        if constexpr (std::is_same<typename std::remove_cv<T>::type, char>::value) {
            const char* s = (const char*)p;
            s ? put(s, std::strlen(s)) : put("(null)", 6);
        } else {
            put_integer(reinterpret_cast<uintptr_t>(p), false, 16, 16, '0');
        }
        return *this;
    }
    LogBuffer& operator<<(std::nullptr_t) { return *this << static_cast<const void*>(nullptr); }
    LogBuffer& operator<<(const ALogInteger& x) {
        put_integer(x.magnitude_, x.negative_, x.base_, x.width_, x.padding_);
        return *this;
    }
    LogBuffer& operator<<(const FP& x);
    LogBuffer& operator<<(const ERRNO& e);

private:
    friend struct alog_line;
    char* limit() { return buf_ + sizeof(buf_) - 1; }

    char* ptr_ = buf_;
    char buf_[LOG_BUFFER_SIZE];
};

template <typename T>
struct NamedValue {
    const char* name;
    const T& value;
};

template <typename T>
NamedValue<T> make_named_value(const char* name, const T& value) {
    return {name, value};
}

template <typename T>
LogBuffer& operator<<(LogBuffer& log, const NamedValue<T>& v) {
    return log.printf('[', v.name, '=', v.value, ']');
}

// retvals print their value, or their error as ERRNO does.
inline LogBuffer& operator<<(LogBuffer& log, const photon::reterr& e) {
    return e._err ? (log << ERRNO(e.get_errno())) : log;
}
template <typename T>
inline LogBuffer& operator<<(LogBuffer& log, const photon::retval<T>& v) {
    return v.succeeded() ? (log << v.get()) : (log << v.error());
}
inline LogBuffer& operator<<(LogBuffer& log, const photon::retval<void>& v) {
    return log << v.error();
}

// VALUE(x) prints "[x=<value of x>]".
#define VALUE(x) ::make_named_value(#x, x)

// Implementation of the LOG_* macros; not API.
struct alog_line {
    // Starts `buf` with "date time|LEVEL|th=...|file:line|func:".
    static void begin(LogBuffer& buf, int level, const char* file, int line, const char* func);
    // Appends the newline and writes the line to logger's output.
    static void finish(LogBuffer& buf, ALogLogger& logger, int level);
    // Copies fmt up to the next lone backtick and returns what follows it, or nullptr when fmt
    // has none (`last` copies all of fmt). Doubled backticks print one.
    static const char* put_format(LogBuffer& buf, const char* fmt, bool last);

    template <size_t N>
    static constexpr bool is_literal(const char (&s)[N]) {
        return N > 2 && s[0] == '"' && s[N - 2] == '"';
    }

    template <typename T>
    static void put_arg(LogBuffer& buf, const char*& fmt, const T& x) {
        if (fmt) fmt = put_format(buf, fmt, false);
        buf << x;
    }

    // The first argument is a string literal: a backtick format.
    template <typename... Ts>
    __attribute__((noinline, cold)) static void log(ALogLogger& logger, int level, const char* file,
                                                    int line, const char* func, std::true_type,
                                                    const char* fmt, const Ts&... xs) {
        const int saved_errno = errno;
        LogBuffer buf;
        begin(buf, level, file, line, func);
        (put_arg(buf, fmt, xs), ...);
        if (fmt) put_format(buf, fmt, true);
        finish(buf, logger, level);
        errno = saved_errno;
    }

    // Otherwise the arguments are concatenated.
    template <typename... Ts>
    __attribute__((noinline, cold)) static void log(ALogLogger& logger, int level, const char* file,
                                                    int line, const char* func, std::false_type,
                                                    const Ts&... xs) {
        const int saved_errno = errno;
        LogBuffer buf;
        begin(buf, level, file, line, func);
        ((buf << xs), ...);
        finish(buf, logger, level);
        errno = saved_errno;
    }

    // Rate limit state of one LOG_EVERY_* / LOG_FIRST_* call site; constant-initialised.
    struct limiter {
        uint64_t every_n;    // nonzero: admit calls 1, n+1, 2n+1, ...
        uint64_t first_n;    // else admit the first first_n calls of each window
        uint64_t window_us;  // UINT64_MAX: one window forever
        std::atomic<uint64_t> count{0}, window_start{0};
        bool admit();
    };
};

// Stringises the first argument after macro expansion, to tell a literal format apart.
#define PHOTON_ALOG_FIRST_STR_(first, ...) #first
#define PHOTON_ALOG_FIRST_STR(...) PHOTON_ALOG_FIRST_STR_(__VA_ARGS__, ~)

#define PHOTON_ALOG_(logger, level, ...)                                                  \
    ((logger).log_level <= static_cast<uint32_t>(level)                                   \
         ? ::alog_line::log(                                                              \
               logger, level, __FILE__, __LINE__, __func__,                               \
               ::std::integral_constant<bool, ::alog_line::is_literal(                    \
                                                  PHOTON_ALOG_FIRST_STR(__VA_ARGS__))>(), \
               __VA_ARGS__)                                                               \
         : void())

#define LOG_DEBUG(...) PHOTON_ALOG_(::default_logger, ALOG_DEBUG, __VA_ARGS__)
#define LOG_INFO(...) PHOTON_ALOG_(::default_logger, ALOG_INFO, __VA_ARGS__)
#define LOG_WARN(...) PHOTON_ALOG_(::default_logger, ALOG_WARN, __VA_ARGS__)
#define LOG_ERROR(...) PHOTON_ALOG_(::default_logger, ALOG_ERROR, __VA_ARGS__)
#define LOG_FATAL(...) PHOTON_ALOG_(::default_logger, ALOG_FATAL, __VA_ARGS__)
#define LOG_TEMP(...) PHOTON_ALOG_(::default_logger, ALOG_TEMP, __VA_ARGS__)
#define LOG_AUDIT(...) PHOTON_ALOG_(::default_audit_logger, ALOG_AUDIT, __VA_ARGS__)

// Log an error, set errno to new_errno (0: leave errno as it was before the log), return retv.
#define LOG_ERROR_RETURN(new_errno, retv, ...)                                        \
    {                                                                                 \
        const int photon_alog_errno_ = errno;                                         \
        LOG_ERROR(__VA_ARGS__);                                                       \
        const int photon_alog_new_errno_ = (new_errno);                               \
        errno = photon_alog_new_errno_ ? photon_alog_new_errno_ : photon_alog_errno_; \
        return retv;                                                                  \
    }

// Like LOG_ERROR_RETURN, with " errno=N(text)" of the current errno appended.
#define LOG_ERRNO_RETURN(new_errno, retv, ...)                                        \
    {                                                                                 \
        const int photon_alog_errno_ = errno;                                         \
        LOG_ERROR(__VA_ARGS__, ' ', ::ERRNO(photon_alog_errno_));                     \
        const int photon_alog_new_errno_ = (new_errno);                               \
        errno = photon_alog_new_errno_ ? photon_alog_new_errno_ : photon_alog_errno_; \
        return retv;                                                                  \
    }

// Log with the text of error `err`, then `return photon::reterr{err}`.
#define LOG_ERROR_RETVAL(err, ...)                                        \
    {                                                                     \
        const ::photon::reterr photon_alog_e_{err};                       \
        LOG_ERROR(__VA_ARGS__, ' ', ::ERRNO(photon_alog_e_.get_errno())); \
        return photon_alog_e_;                                            \
    }

// Rate limits, each counted per call site (levels are checked after the limit):
//   LOG_EVERY_T(T, LOG_x(...))            at most once every T seconds (T may be fractional)
//   LOG_EVERY_N(N, LOG_x(...))            the 1st, (N+1)th, (2N+1)th ... call
//   LOG_FIRST_N(N, LOG_x(...))            only the first N calls
//   LOG_FIRST_N_EVERY_T(N, T, LOG_x(...)) the first N calls of every T-second window
#define PHOTON_ALOG_LIMITED_(every_n, first_n, window_us, ...)                               \
    ([]() -> bool {                                                                          \
        static ::alog_line::limiter photon_alog_limiter_{(every_n), (first_n), (window_us)}; \
        return photon_alog_limiter_.admit();                                                 \
    }()                                                                                      \
                 ? (void)(__VA_ARGS__)                                                       \
                 : void())
#define PHOTON_ALOG_SECONDS_(T) static_cast<uint64_t>(1e6 * (T))

#define LOG_EVERY_T(T, ...) PHOTON_ALOG_LIMITED_(0, 1, PHOTON_ALOG_SECONDS_(T), __VA_ARGS__)
#define LOG_EVERY_N(N, ...) PHOTON_ALOG_LIMITED_((N), 0, UINT64_MAX, __VA_ARGS__)
#define LOG_FIRST_N(N, ...) PHOTON_ALOG_LIMITED_(0, (N), UINT64_MAX, __VA_ARGS__)
#define LOG_FIRST_N_EVERY_T(N, T, ...) \
    PHOTON_ALOG_LIMITED_(0, (N), PHOTON_ALOG_SECONDS_(T), __VA_ARGS__)
