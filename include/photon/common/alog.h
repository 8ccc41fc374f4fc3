// alog: photon's line logger. LOG_INFO("copied ` bytes to `", n, path) formats one line into a
// stack buffer and hands it to an ILogOutput with a single write(). Callable from any vCPU or OS
// thread; never yields (a throttled output may block the vCPU). A LOG_* is an expression whose
// line is formatted and written at the end of the full expression, and only if its level passes
// the logger's: filtered-out arguments are not evaluated. `my_logger << LOG_INFO(...)` sends the
// line to another ALogLogger. Every LOG_* keeps the caller's errno.
//
// Line: "YYYY/MM/DD HH:MM:SS.uuuuuu|LEVEL|th=<coroutine>|file:line|func:" (audit lines end at
// "th=...|"), then the items of ALWAYS_LOGGED (a std::tuple; #define it before the LOG_* calls
// to prefix every line), then the message and '\n'; cut at LOG_BUFFER_SIZE bytes.
//
// LogBuffer is the line that LOG_* and custom `operator<<`s write to; LogBuffer(buf, size,
// output) with its `level` formats into a caller's buffer. DISABLE_AUDIT empties LOG_AUDIT.
// Outputs start without colours (preset_color() sets them). set_level_color() rejects an
// unknown level or colour code with -1 EINVAL; log_output_file_close() without a file is -1
// EALREADY.
//
// Differences from PhotonLibOS: doc/compat.md#commonalogh
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
#include <tuple>
#include <type_traits>
#include <utility>

#include <photon/common/retval.h>
#include <photon/common/utility.h>
#if __has_include(<photon/common/conststr.h>)
#include <photon/common/conststr.h>
#include <photon/common/detail/std17.h>
#endif

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
// static construction and destruction. Level -1 (from an async output) means "no colour".
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
    // Wrap lines of `level` in an ANSI colour (ALOG_COLOR_NOTHING = plain). 0, or -1 with
    // EINVAL; outputs without colours ignore it and return 0.
    virtual int set_level_color(int /*level*/, unsigned char /*code*/) { return 0; }
    // Photon's palette (DEBUG dark grey, WARN yellow, ERROR red, FATAL magenta, TEMP cyan,
    // AUDIT green) / no colours. Built-in outputs start without colours.
    void preset_color();
    void clear_color();
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
// Queues lines in memory (num_of_queues shards, 1..128, rounded down to a power of two) and
// writes them to `output` from a background OS thread, in batches of whole lines; a writer
// waits only while its shard is full, so nothing is lost. destruct() flushes, stops the thread
// and frees the async output; `output` stays the caller's. nullptr + errno on failure.
ILogOutput* new_async_log_output(ILogOutput* output, int num_of_queues = 1);

// Point default_logger at a file output owned by alog (the previous one is destructed).
// Configure before other threads log. Return 0, or -1 + errno.
int log_output_file(const char* fn, uint64_t rotate_limit = UINT64_MAX, int max_log_files = 10,
                    uint64_t throttle = -1ULL);
int log_output_file(int fd, uint64_t rotate_limit = UINT64_MAX, uint64_t throttle = -1ULL);
// Closes that file output and returns default_logger to stdout; -1 EALREADY if there is none.
int log_output_file_close();

struct ALogLogger {
    ILogOutput* log_output;
    uint32_t log_level;  // lines below this level are dropped

    // `logger << LOG_INFO(...)`: the line goes to this logger instead.
    template <typename T>
    ALogLogger& operator<<(T&& rhs) {
        rhs.logger = this;
        return *this;
    }
};

extern ALogLogger default_logger;        // stdout, ALOG_DEBUG
extern ALogLogger default_audit_logger;  // log_output_null, ALOG_AUDIT

// PhotonLibOS's older names: default_logger's level and output.
extern uint32_t& log_output_level;
extern ILogOutput*& log_output;

inline int get_log_file_fd() { return default_logger.log_output->get_log_file_fd(); }
inline void set_log_output(ILogOutput* output) { default_logger.log_output = output; }
inline void set_log_output_level(int level) { default_logger.log_level = level; }

inline void ILogOutput::preset_color() {
    set_level_color(ALOG_DEBUG, ALOG_COLOR_DARKGRAY);
    set_level_color(ALOG_INFO, ALOG_COLOR_NOTHING);
    set_level_color(ALOG_WARN, ALOG_COLOR_YELLOW);
    set_level_color(ALOG_ERROR, ALOG_COLOR_RED);
    set_level_color(ALOG_FATAL, ALOG_COLOR_MAGENTA);
    set_level_color(ALOG_TEMP, ALOG_COLOR_CYAN);
    set_level_color(ALOG_AUDIT, ALOG_COLOR_GREEN);
}

inline void ILogOutput::clear_color() {
    for (int level = ALOG_DEBUG; level <= ALOG_AUDIT; ++level)
        set_level_color(level, ALOG_COLOR_NOTHING);
}

class LogBuffer;

// An integer with a base, minimum width, padding, thousands commas (decimal only) and hex
// case: HEX(x).width(8), DEC(n).comma(true).padding('0'). shift is Photon's base code:
// 1 binary, 3 octal, 4 hex, 10 decimal.
class ALogInteger {
public:
    template <typename T, ENABLE_IF(std::is_integral<T>::value)>
    ALogInteger(T x, char shift)
        : value_(std::is_signed<T>::value ? (uint64_t)(int64_t)x : (uint64_t)x),
          bits_(sizeof(T) * 8),
          shift_(shift),
          signed_(std::is_signed<T>::value) {}
    uint64_t uvalue() const { return value_; }
    int64_t svalue() const { return (int64_t)value_; }
    bool is_signed() const { return signed_; }
    char shift() const { return shift_; }
    char width() const { return width_; }
    char padding() const { return padding_; }
    bool comma() const { return comma_; }
    bool lower() const { return lower_; }
    ALogInteger& width(char x) {
        width_ = x;
        return *this;
    }
    ALogInteger& padding(char x) {
        padding_ = x;
        return *this;
    }
    ALogInteger& comma(bool x) {
        comma_ = x;
        return *this;
    }
    ALogInteger& lower(bool x) {
        lower_ = x;
        return *this;
    }

protected:
    friend LogBuffer& operator<<(LogBuffer&, const ALogInteger&);
    uint64_t value_;  // sign-extended to 64 bits for signed types
    uint8_t bits_;    // width of the original type
    char shift_, width_ = 0, padding_ = ' ';
    bool comma_ = false, lower_ = false, signed_;
};

template <typename T, ENABLE_IF(std::is_integral<T>::value)>
ALogInteger HEX(T x) {
    return ALogInteger(x, 4).padding('0');
}
template <typename T, ENABLE_IF(std::is_integral<T>::value)>
ALogInteger DEC(T x) {
    return ALogInteger(x, 10);
}
template <typename T, ENABLE_IF(std::is_integral<T>::value)>
ALogInteger OCT(T x) {
    return ALogInteger(x, 3);
}
template <typename T, ENABLE_IF(std::is_integral<T>::value)>
ALogInteger BIN(T x) {
    return ALogInteger(x, 1);
}

// A double in printf style: FP(x) is "%f", .precision(2) "%.2f", .width(8) "%8f",
// .width(8, 2) "%8.2f", .scientific(true) "%e". A bare double prints as "%.4f". padding, comma
// and lower are kept for Photon's API and, as there, do not change the output.
class FP {
public:
    explicit FP(double x) : value_(x) {}
    double value() const { return value_; }
    char width() const { return width_; }
    char padding() const { return padding_; }
    char precision() const { return precision_; }
    bool comma() const { return comma_; }
    bool lower() const { return lower_; }
    bool scientific() const { return scientific_; }
    FP& width(char w) {
        width_ = w;
        return *this;
    }
    FP& width(char w, char p) {
        width_ = w;
        precision_ = p;
        return *this;
    }
    FP& precision(char w, char p) { return width(w, p); }
    FP& precision(char p) {
        precision_ = p;
        return *this;
    }
    FP& padding(char c) {
        padding_ = c;
        return *this;
    }
    FP& comma(bool c) {
        comma_ = c;
        return *this;
    }
    FP& lower(bool l) {
        lower_ = l;
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
    char padding_ = '0';
    bool comma_ = false, lower_ = false;
};

// Prints "errno=N(text)"; ERRNO() captures errno when constructed, ERRNO(0) prints the errno
// of the moment it is printed. set() writes the captured errno variable.
struct ERRNO {
    int no;
    int* ptr;
    ERRNO() : no(errno), ptr(&errno) {}
    constexpr ERRNO(int e) : no(e), ptr(nullptr) {}
    void set(int x) { *(ptr ? ptr : &errno) = x; }
};

// size bytes at s, NULs included.
struct ALogString {
    const char* const s;
    size_t size;
    constexpr ALogString(const char* s_, size_t n) : s(s_), size(n) {}
    constexpr char operator[](size_t i) const { return s[i]; }
};

// A string literal (its length known at compile time).
struct ALogStringL : public ALogString {
    using ALogString::ALogString;
    template <size_t N>
    constexpr ALogStringL(const char (&s_)[N]) : ALogString(s_, N - 1) {}
};

// A char* or char array, measured with strlen.
struct ALogStringPChar : public ALogString {
    using ALogString::ALogString;
};

// What a LOG_* argument is printed as: char arrays and pointers become ALogStrings, anything
// else passes through.
template <typename T, ENABLE_IF_NOT_SAME(T, char*)>
inline const T& alog_forwarding(const T& x) {
    return x;
}
template <size_t N>
inline ALogStringL alog_forwarding(const char (&s)[N]) {
    return ALogStringL(s);
}
template <size_t N>
inline ALogStringPChar alog_forwarding(char (&s)[N]) {
    return ALogStringPChar(s, strnlen(s, N));
}
template <typename T, ENABLE_IF_SAME(T, char)>
inline ALogStringPChar alog_forwarding(const T* const& s) {
    return ALogStringPChar(s, s ? strlen(s) : 0);
}

// One line under construction. Appends stop silently at LOG_BUFFER_SIZE - 1 bytes (the last
// byte is kept for the newline). Add types with `LogBuffer& operator<<(LogBuffer&, const T&)`.
class LogBuffer {
public:
    LogBuffer() = default;
    // Photon's: formats into buf, at most size - 2 bytes, and at destruction writes them (no
    // newline added) to output at `level`.
    LogBuffer(char* buf, size_t size, ILogOutput* output)
        : base_(buf), ptr_(buf), limit_(buf + (size > 2 ? size - 2 : 0)), out_(output) {}
    ~LogBuffer() {
        if (out_) out_->write(level, base_, ptr_);
    }
    LogBuffer(const LogBuffer&) = delete;
    LogBuffer& operator=(const LogBuffer&) = delete;

    uint32_t level = ALOG_INFO;  // of a LogBuffer over a caller's buffer

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

    const char* begin() const { return base_; }
    const char* end() const { return ptr_; }
    size_t size() const { return static_cast<size_t>(ptr_ - base_); }

    template <typename... Ts>
    LogBuffer& printf(const Ts&... xs) {
        PHOTON_EXPAND_PACK(*this << xs);
        return *this;
    }

    // char prints as a character, bool as 1/0, other integers in decimal.
    template <typename T, ENABLE_IF(std::is_same<T, char>::value)>
    LogBuffer& operator<<(T c) {
        put(c);
        return *this;
    }
    template <typename T, ENABLE_IF(std::is_integral<T>::value && !std::is_same<T, char>::value)>
    LogBuffer& operator<<(T x) {
        bool negative = std::is_signed<T>::value && (int64_t)x < 0;
        put_integer(negative ? 0 - (uint64_t)(int64_t)x : (uint64_t)x, negative, 10, 0, ' ');
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
        put_pointer(p, std::is_same<typename std::remove_cv<T>::type, char>());
        return *this;
    }
    template <typename T>
    void put_pointer(T* p, std::true_type /* a C string */) {
        const char* s = (const char*)p;
        s ? put(s, std::strlen(s)) : put("(null)", 6);
    }
    template <typename T>
    void put_pointer(T* p, std::false_type) {
        put_integer(reinterpret_cast<uintptr_t>(p), false, 16, 16, '0');
    }
    LogBuffer& operator<<(std::nullptr_t) { return *this << static_cast<const void*>(nullptr); }
    LogBuffer& operator<<(const ALogString& s) {
        put(s.s, s.size);
        return *this;
    }
    // Each element in turn.
    template <typename... Ts>
    LogBuffer& operator<<(const std::tuple<Ts...>& t) {
        photon::detail::apply([this](const Ts&... xs) { printf(xs...); }, t);
        return *this;
    }
    LogBuffer& operator<<(const FP& x);
    LogBuffer& operator<<(const ERRNO& e);

private:
    friend struct alog_line;
    char* limit() { return limit_; }

    char* base_ = buf_;
    char* ptr_ = buf_;
    char* limit_ = buf_ + LOG_BUFFER_SIZE - 1;
    ILogOutput* out_ = nullptr;
    char buf_[LOG_BUFFER_SIZE];  // unused over a caller's buffer
};

// Formatted here, in the header, so that the library's LogBuffer needs nothing new for it.
inline LogBuffer& operator<<(LogBuffer& log, const ALogInteger& x) {
    unsigned base = x.shift() == 1 ? 2 : x.shift() == 3 ? 8 : x.shift() == 4 ? 16 : 10;
    unsigned width = (unsigned char)x.width();
    uint64_t v = x.uvalue();
    bool negative = base == 10 && x.is_signed() && x.svalue() < 0;
    if (negative) v = 0 - v;
    if (base != 10 && x.bits_ < 64) v &= (uint64_t(1) << x.bits_) - 1;  // the type's own bits
    const char* digits = x.lower() ? "0123456789abcdef" : "0123456789ABCDEF";
    bool comma = base == 10 && x.comma();
    char text[72];  // 64 binary digits, or 20 decimal ones and 6 commas
    char* p = text + sizeof(text);
    for (int i = 0;; ++i) {
        if (comma && i && i % 3 == 0) *--p = ',';
        *--p = digits[v % base];
        if ((v /= base) == 0) break;
    }
    size_t n = size_t(text + sizeof(text) - p);
    char padding = x.padding();
    if (negative && padding == '0') log.put('-');  // "-0042", but "  -42"
    for (size_t len = n + negative; len < width; ++len) log.put(padding);
    if (negative && padding != '0') log.put('-');
    log.put(p, n);
    return log;
}

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

#ifndef ALWAYS_LOGGED
constexpr static std::tuple<> ALWAYS_LOGGED{};
#endif

// Implementation of the LOG_* macros; not API.
struct alog_line {
    // Starts `buf` with "date time|LEVEL|th=...|file:line|func:" ("...|th=...|" for audit).
    static void begin(LogBuffer& buf, int level, const char* file, int line, const char* func);
    // Appends the newline and writes the line to logger's output.
    static void finish(LogBuffer& buf, ALogLogger& logger, int level);
    // The same to `out` (nothing if null).
    static void finish(LogBuffer& buf, ILogOutput* out, int level) {
        *buf.ptr_++ = '\n';  // the byte limit() kept free
        if (out) out->write(level, buf.base_, buf.ptr_);
    }
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
    template <typename Always, typename... Ts>
    __attribute__((noinline, cold)) static void emit(ILogOutput* out, int level, const char* file,
                                                     int line, const char* func, std::true_type,
                                                     const Always& always, const char* fmt,
                                                     const Ts&... xs) {
        const int saved_errno = errno;
        LogBuffer buf;
        begin(buf, level, file, line, func);
        buf << always;
        PHOTON_EXPAND_PACK(put_arg(buf, fmt, xs));
        if (fmt) put_format(buf, fmt, true);
        finish(buf, out, level);
        errno = saved_errno;
    }

    // Otherwise the arguments are concatenated.
    template <typename Always, typename... Ts>
    __attribute__((noinline, cold)) static void emit(ILogOutput* out, int level, const char* file,
                                                     int line, const char* func, std::false_type,
                                                     const Always& always, const Ts&... xs) {
        const int saved_errno = errno;
        LogBuffer buf;
        begin(buf, level, file, line, func);
        buf << always;
        PHOTON_EXPAND_PACK(buf << xs);
        finish(buf, out, level);
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

// What a LOG_* expression is: at the end of the full expression it runs `builder` (which
// formats and writes the line) if `level` passes `logger`'s level. Moving disarms the source.
template <typename BuilderType>
struct LogBuilder {
    uint32_t level;
    BuilderType builder;
    ALogLogger* logger;
    bool done;

    LogBuilder(int level_, BuilderType&& builder_, ALogLogger* logger_)
        : level(level_), builder(std::move(builder_)), logger(logger_), done(false) {}
    LogBuilder(LogBuilder&& rhs)
        : level(rhs.level), builder(std::move(rhs.builder)), logger(rhs.logger), done(rhs.done) {
        rhs.done = true;
    }
    ~LogBuilder() {
        if (!done && level >= logger->log_level) {
            done = true;
            builder(logger->log_output);
        }
    }
};

template <typename BuilderType>
inline LogBuilder<BuilderType> alog_make_builder(int level, ALogLogger* logger, BuilderType&& b) {
    return LogBuilder<BuilderType>(level, std::move(b), logger);
}

// Stringises the first argument after macro expansion, to tell a literal format apart.
#define PHOTON_ALOG_FIRST_STR_(first, ...) #first
#define PHOTON_ALOG_FIRST_STR(...) PHOTON_ALOG_FIRST_STR_(__VA_ARGS__, ~)

// __func__ is taken outside the lambda, where it names the caller.
#define PHOTON_ALOG_(logger, level, ...)                                                   \
    ::alog_make_builder(                                                                   \
        (level), &(logger), [&, photon_alog_func_ = __func__](ILogOutput* photon_out_) {   \
            ::alog_line::emit(                                                             \
                photon_out_, (level), __FILE__, __LINE__, photon_alog_func_,               \
                ::std::integral_constant<bool, ::alog_line::is_literal(                    \
                                                   PHOTON_ALOG_FIRST_STR(__VA_ARGS__))>(), \
                ALWAYS_LOGGED, __VA_ARGS__);                                               \
        })

#define LOG_DEBUG(...) PHOTON_ALOG_(::default_logger, ALOG_DEBUG, __VA_ARGS__)
#define LOG_INFO(...) PHOTON_ALOG_(::default_logger, ALOG_INFO, __VA_ARGS__)
#define LOG_WARN(...) PHOTON_ALOG_(::default_logger, ALOG_WARN, __VA_ARGS__)
#define LOG_ERROR(...) PHOTON_ALOG_(::default_logger, ALOG_ERROR, __VA_ARGS__)
#define LOG_FATAL(...) PHOTON_ALOG_(::default_logger, ALOG_FATAL, __VA_ARGS__)
#define LOG_TEMP(...) PHOTON_ALOG_(::default_logger, ALOG_TEMP, __VA_ARGS__)
#ifndef DISABLE_AUDIT
#define LOG_AUDIT(...) PHOTON_ALOG_(::default_audit_logger, ALOG_AUDIT, __VA_ARGS__)
#else
#define LOG_AUDIT(...)
#endif

// How LOG_ERROR_RETURN and friends set errno. DECLARE_ERRNO_SETTER in a function shadows it
// with an object that sets errno only when the function's scope ends, after its DEFERs (which
// may clobber errno) have run.
inline void _alog_set_errno(int x) { errno = x; }

struct DeferrdErrnoSetter {
    int _saved_errno = 0;
    void operator()(int x) { _saved_errno = x; }
    ~DeferrdErrnoSetter() {
        if (_saved_errno) errno = _saved_errno;
    }
};

#define DECLARE_ERRNO_SETTER DeferrdErrnoSetter _alog_set_errno;

// Log an error, set errno to new_errno (0: leave errno as it was before the log), return retv.
#define LOG_ERROR_RETURN(new_errno, retv, ...)                                                 \
    {                                                                                          \
        const int photon_alog_errno_ = errno;                                                  \
        const int photon_alog_new_errno_ = (int)(new_errno);                                   \
        LOG_ERROR(__VA_ARGS__);                                                                \
        _alog_set_errno(photon_alog_new_errno_ ? photon_alog_new_errno_ : photon_alog_errno_); \
        return retv;                                                                           \
    }

// Like LOG_ERROR_RETURN, with " errno=N(text)" of the current errno appended.
#define LOG_ERRNO_RETURN(new_errno, retv, ...)                                                 \
    {                                                                                          \
        const int photon_alog_errno_ = errno;                                                  \
        const int photon_alog_new_errno_ = (int)(new_errno);                                   \
        LOG_ERROR(__VA_ARGS__, ' ', ::ERRNO(photon_alog_errno_));                              \
        _alog_set_errno(photon_alog_new_errno_ ? photon_alog_new_errno_ : photon_alog_errno_); \
        return retv;                                                                           \
    }

// Log with the text of error `err` (an errno or a retval), then `return photon::reterr{err}`.
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
