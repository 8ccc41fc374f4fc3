// Redis clients over RESP2/RESP3.
//
// - _RedisClient / RedisClient: PhotonLibOS's low-level client: one user at a time on one
//   stream; commands are encoded into a buffer (send_cmd_no_flush, operator<<), flush() writes
//   them, parse_response_item() reads one reply item (an array's elements are read by further
//   calls). Replies are refstrings into the input buffer, valid until the next read. The command
//   helpers (GET, SET, HSET ...) send one command and read the first item of its reply. RESP3
//   types (after "HELLO 3") are read too: map '%', set '~', push '>', double ',', boolean '#',
//   null '_', big number '(', verbatim '=', blob error '!'.
// - pipelined_client: one connection shared by many coroutines of one vCPU. Requests are written
//   in the order they are made, several per write (group commit), and replies are matched to
//   requests in order by a reader coroutine. It speaks RESP3 when the server accepts "HELLO 3".
//   A -ERR reply is a reply of type ERROR (not a failure); a broken connection fails every call
//   in flight (-1, errno ECONNRESET or the socket's errno) and the next call reconnects.
//   A call not answered within its timeout fails with ETIMEDOUT (its reply is discarded when it
//   comes; the connection stays up).
//   commands() sends a command_batch in one write and wakes its caller once, when all its
//   replies are in (as redis-benchmark -P does: no wake-up per command).
// - client_pool: a few pipelined_clients; each call goes to the one with the fewest in flight.
// Calls yield the calling coroutine; objects belong to the vCPU that made them.
//
// Differences from PhotonLibOS: doc/compat.md#ecosystemredish
#pragma once
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <photon/common/estring.h>
#include <photon/common/string_view.h>
#include <photon/net/socket.h>

namespace photon {
namespace redis {

class _RedisClient;

// A view into a client's input buffer; while any refers to it, the buffer is not compacted.
class refstring : public std::string_view {
    _RedisClient* _rc = nullptr;
    void add_ref();
    void del_ref();

public:
    refstring() = default;
    refstring(const char* s) : std::string_view(s) {}
    refstring(const char* s, size_t n) : std::string_view(s, n) {}
    refstring(std::string_view sv) : std::string_view(sv) {}
    refstring(const std::string& s) : std::string_view(s) {}
    refstring(_RedisClient* rc, std::string_view sv) : std::string_view(sv), _rc(rc) { add_ref(); }
    refstring(const refstring& rhs) : std::string_view(rhs), _rc(rhs._rc) { add_ref(); }
    refstring& operator=(const refstring& rhs) {
        if (this == &rhs) return *this;
        static_cast<std::string_view&>(*this) = rhs;
        del_ref();
        _rc = rhs._rc;
        add_ref();
        return *this;
    }
    void release() {
        del_ref();
        _rc = nullptr;
        static_cast<std::string_view&>(*this) = {};
    }
    ~refstring() { del_ref(); }
};

class simple_string : public refstring {
public:
    simple_string() = default;
    simple_string(refstring rs) : refstring(rs) {}
    using refstring::operator=;
    constexpr static char mark() { return '+'; }
};

class error_message : public refstring {
public:
    error_message() = default;
    error_message(refstring rs) : refstring(rs) {}
    using refstring::operator=;
    constexpr static char mark() { return '-'; }
};

class bulk_string : public refstring {
public:
    bulk_string() = default;
    using refstring::refstring;
    bulk_string(refstring rs) : refstring(rs) {}
    using refstring::operator=;
    constexpr static char mark() { return '$'; }
};

class integer : public refstring {
public:
    int64_t val = 0;
    integer() = default;
    integer(const integer&) = default;
    integer& operator=(const integer&) = default;
    integer(int64_t v) : val(v) {}
    integer(const refstring& rs) : refstring(rs), val(estring_view(rs).to_int64()) {}
    constexpr static char mark() { return ':'; }
};

class array_header : public integer {
public:
    using integer::integer;
    array_header() = default;
    array_header(integer x) : integer(x) {}
    constexpr static char mark() { return '*'; }
};

// RESP3 aggregate headers: val is the number of elements (a map's: of key-value pairs).
class map_header : public integer {
public:
    using integer::integer;
    map_header() = default;
    map_header(integer x) : integer(x) {}
    constexpr static char mark() { return '%'; }
};
class set_header : public integer {
public:
    using integer::integer;
    set_header() = default;
    set_header(integer x) : integer(x) {}
    constexpr static char mark() { return '~'; }
};
class push_header : public integer {
public:
    using integer::integer;
    push_header() = default;
    push_header(integer x) : integer(x) {}
    constexpr static char mark() { return '>'; }
};
// RESP3 scalars, as their text.
class double_string : public refstring {
public:
    double_string() = default;
    double_string(refstring rs) : refstring(rs) {}
    constexpr static char mark() { return ','; }
};
class boolean : public refstring {  // "t" or "f"
public:
    boolean() = default;
    boolean(refstring rs) : refstring(rs) {}
    constexpr static char mark() { return '#'; }
};
class nil : public refstring {  // RESP3 null, and RESP2's null bulk string and null array
public:
    nil() = default;
    constexpr static char mark() { return '_'; }
};

class null {};

template <typename... Ts>
class array : public std::tuple<Ts...> {
public:
    array() = default;
    using std::tuple<Ts...>::tuple;
    using std::tuple<Ts...>::operator=;
    constexpr static char mark() { return '*'; }
};

template <typename... Ts>
array<Ts...> make_array(const Ts&... xs) {
    return {xs...};
}

// One reply item, tagged by its RESP type mark.
struct any {
    constexpr static size_t MAX = sizeof(integer) > sizeof(refstring) ? sizeof(integer)
                                                                      : sizeof(refstring);
    alignas(integer) char value[MAX] = {0};
    char mark = 0;

    template <typename T,
              typename = typename std::enable_if<std::is_base_of<refstring, T>::value>::type>
    bool is_type() const {
        return mark == T::mark();
    }
    bool is_failed() const { return is_type<error_message>(); }
    bool is_nil() const { return mark == nil::mark(); }

    template <typename T,
              typename = typename std::enable_if<std::is_base_of<refstring, T>::value>::type>
    T& get() {
        assert(is_type<T>());
        return *reinterpret_cast<T*>(value);
    }
    std::string_view get_error_message() { return get<error_message>(); }

    template <typename T,
              typename = typename std::enable_if<std::is_base_of<refstring, T>::value>::type>
    void set(const T& x) {
        reset();
        new (value) T(x);
        mark = T::mark();
    }

    any() = default;
    any(const any& rhs) { copy_from(rhs); }
    any& operator=(const any& rhs) {
        if (this != &rhs) reset(), copy_from(rhs);
        return *this;
    }
    template <typename T,
              typename = typename std::enable_if<std::is_base_of<refstring, T>::value>::type>
    any(const T& x) {
        set(x);
    }
    template <typename T,
              typename = typename std::enable_if<std::is_base_of<refstring, T>::value>::type>
    any& operator=(const T& x) {
        return set(x), *this;
    }
    ~any() { reset(); }

private:
    bool is_integer_like() const {
        return mark == ':' || mark == '*' || mark == '%' || mark == '~' || mark == '>';
    }
    void reset() {
        if (mark == 0) return;
        if (is_integer_like())
            reinterpret_cast<integer*>(value)->~integer();
        else
            reinterpret_cast<refstring*>(value)->~refstring();
        mark = 0;
    }
    void copy_from(const any& rhs) {
        if (rhs.mark == 0) return;
        if (rhs.is_integer_like())
            new (value) integer(*reinterpret_cast<const integer*>(rhs.value));
        else
            new (value) refstring(*reinterpret_cast<const refstring*>(rhs.value));
        mark = rhs.mark;
    }
};

using net::ISocketStream;

class _RedisClient {
protected:
    ISocketStream* _s = nullptr;
    bool _s_ownership = false;
    uint32_t _i = 0, _j = 0, _o = 0, _bufsize = 0, _refcnt = 0;
    char* _ibuf = nullptr;  // _bufsize bytes of replies read, [_i, _j) not consumed yet
    char* _obuf = nullptr;  // _bufsize bytes of commands, [0, _o) not written yet

    friend class refstring;

    struct _strint {
        int64_t _x;
    };
    struct _char {
        char _x;
    };
    struct _array_header {
        size_t n;
    };

    _RedisClient(ISocketStream* s, bool s_ownership, uint32_t bufsize, char* buf)
        : _s(s), _s_ownership(s_ownership), _bufsize(bufsize), _ibuf(buf), _obuf(buf + bufsize) {}
    ~_RedisClient() {
        if (_s_ownership) delete _s;
    }
    _RedisClient(const _RedisClient&) = delete;
    _RedisClient& operator=(const _RedisClient&) = delete;

    std::string_view __getstring(size_t length);
    std::string_view __getline();

public:
    char* ibuf() { return _ibuf; }
    char* obuf() { return _obuf; }
    // Writes what is buffered (and `size` more bytes at extra_buffer). Bytes written, or -1.
    ssize_t flush(const void* extra_buffer = nullptr, size_t size = 0);
    bool flush_if_low_space(size_t threshold, const void* ebuf = nullptr, size_t size = 0) {
        return (_o + threshold < _bufsize) ? false : (flush(ebuf, size), true);
    }
    // Raw bytes, an integer's digits, one character (no framing).
    _RedisClient& put(std::string_view x);
    _RedisClient& put(int64_t x);
    _RedisClient& put(_char x) { return put(std::string_view(&x._x, 1)); }
    _RedisClient& put(_strint x);  // as a bulk string
    _RedisClient& put() { return *this; }
    template <typename Ta, typename Tb, typename... Ts>
    _RedisClient& put(const Ta& xa, const Tb& xb, const Ts&... xs) {
        return put(xa), put(xb, xs...);
    }
    template <typename... Ts>
    _RedisClient& write_item(const Ts&... xs) {
        return put(xs...);
    }
    _RedisClient& operator<<(int64_t x) { return put(x); }
    _RedisClient& operator<<(_char x) { return put(x); }
    _RedisClient& operator<<(const _strint& x) { return put(x); }
    _RedisClient& operator<<(std::string_view x);  // a bulk string
    _RedisClient& operator<<(_array_header x);

    char get_char();
    refstring getline() { return {this, __getline()}; }
    refstring getstring(size_t length) { return {this, __getstring(length)}; }
    simple_string get_simple_string() { return getline(); }
    error_message get_error_message() { return getline(); }
    integer get_integer() { return getline(); }
    bulk_string get_bulk_string();
    // Reads at least `atleast` more bytes; -1 on failure (errno).
    ssize_t __refill(size_t atleast);
    int ensure_input_data(size_t min_available) {
        size_t available = _j - _i;
        if (available < min_available && __refill(min_available - available) < 0) return -1;
        return 0;
    }

    void write_items() {}
    template <typename T, typename... Ts>
    void write_items(const T& x, const Ts&... xs) {
        *this << x;
        write_items(xs...);
    }
    _strint filter(int64_t x) { return {x}; }
    _strint filter(int x) { return {x}; }
    _strint filter(unsigned x) { return {(int64_t)x}; }
    _strint filter(uint64_t x) { return {(int64_t)x}; }
    std::string_view filter(std::string_view x) { return x; }
    std::string_view filter(const char* x) { return x; }
    std::string_view filter(const std::string& x) { return x; }

    template <typename... Args>
    void send_cmd_no_flush(std::string_view cmd, const Args&... args) {
        write_items(_array_header{1 + sizeof...(args)}, cmd, filter(args)...);
    }

    // Reads one reply item (an aggregate's header only); a failed read gives an
    // error_message starting with "photon: ".
    any parse_response_item();

    template <typename... Args>
    any execute(bulk_string cmd, const Args&... args) {
        send_cmd_no_flush(cmd, args...);
        if (flush() < 0) return error_message("photon: flush failed");
        return parse_response_item();
    }

#define PHOTON_REDIS_CMD0(cmd) \
    any cmd() { return execute(#cmd); }
#define PHOTON_REDIS_CMD1(cmd, a) \
    any cmd(bulk_string a) { return execute(#cmd, a); }
#define PHOTON_REDIS_CMD1s(cmd, a)                \
    template <typename... More>                   \
    any cmd(bulk_string a, const More&... more) { \
        return execute(#cmd, a, more...);         \
    }
#define PHOTON_REDIS_CMD1sn(cmd, a)                                       \
    template <typename... More>                                           \
    any cmd(bulk_string a, const More&... more) {                         \
        return execute(#cmd, (int64_t)(1 + sizeof...(more)), a, more...); \
    }
#define PHOTON_REDIS_CMD2(cmd, a, b) \
    any cmd(bulk_string a, bulk_string b) { return execute(#cmd, a, b); }
#define PHOTON_REDIS_CMD2s(cmd, a, b)                            \
    template <typename... More>                                  \
    any cmd(bulk_string a, bulk_string b, const More&... more) { \
        return execute(#cmd, a, b, more...);                     \
    }
#define PHOTON_REDIS_CMD2sn(cmd, a, b)                                       \
    template <typename... More>                                              \
    any cmd(bulk_string a, bulk_string b, const More&... more) {             \
        return execute(#cmd, a, (int64_t)(1 + sizeof...(more)), b, more...); \
    }
#define PHOTON_REDIS_CMD2fs(cmd, a)                                                             \
    template <typename... Fields>                                                               \
    any cmd(bulk_string a, bulk_string field1, const Fields&... fields) {                       \
        return execute(#cmd, a, "FIELDS", (int64_t)(1 + sizeof...(fields)), field1, fields...); \
    }
#define PHOTON_REDIS_CMD3(cmd, a, b, c) \
    any cmd(bulk_string a, bulk_string b, bulk_string c) { return execute(#cmd, a, b, c); }
#define PHOTON_REDIS_CMD3s(cmd, a, b, c)                                        \
    template <typename... More>                                                 \
    any cmd(bulk_string a, bulk_string b, bulk_string c, const More&... more) { \
        return execute(#cmd, a, b, c, more...);                                 \
    }
#define PHOTON_REDIS_CMD4(cmd, a, b, c, d)                                \
    any cmd(bulk_string a, bulk_string b, bulk_string c, bulk_string d) { \
        return execute(#cmd, a, b, c, d);                                 \
    }
#define PHOTON_REDIS_CMD5(cmd, a, b, c, d, e)                                            \
    any cmd(bulk_string a, bulk_string b, bulk_string c, bulk_string d, bulk_string e) { \
        return execute(#cmd, a, b, c, d, e);                                             \
    }
    // One command a line:
    // clang-format off
    // Generic
    PHOTON_REDIS_CMD2(COPY, source, destination)
    PHOTON_REDIS_CMD1s(DEL, key)
    PHOTON_REDIS_CMD1(DUMP, key)
    PHOTON_REDIS_CMD1s(EXISTS, key)
    PHOTON_REDIS_CMD2(EXPIRE, key, seconds)
    PHOTON_REDIS_CMD2(EXPIREAT, key, unix_time_seconds)
    PHOTON_REDIS_CMD1(EXPIRETIME, key)
    PHOTON_REDIS_CMD1(KEYS, pattern)
    PHOTON_REDIS_CMD2(MOVE, key, db)
    PHOTON_REDIS_CMD1(PERSIST, key)
    PHOTON_REDIS_CMD2(PEXPIRE, key, milliseconds)
    PHOTON_REDIS_CMD2(PEXPIREAT, key, unix_time_milliseconds)
    PHOTON_REDIS_CMD1(PEXPIRETIME, key)
    // Set
    PHOTON_REDIS_CMD2s(SADD, key, member)
    PHOTON_REDIS_CMD1(SCARD, key)
    PHOTON_REDIS_CMD1s(SDIFF, key)
    PHOTON_REDIS_CMD2s(SDIFFSTORE, destination, key)
    PHOTON_REDIS_CMD1s(SINTER, key)
    PHOTON_REDIS_CMD2s(SINTERCARD, numkeys, key)
    PHOTON_REDIS_CMD2s(SINTERSTORE, destination, key)
    PHOTON_REDIS_CMD2(SISMEMBER, key, member)
    PHOTON_REDIS_CMD2s(SMISMEMBER, key, member)
    PHOTON_REDIS_CMD1(SMEMBERS, key)
    PHOTON_REDIS_CMD3(SMOVE, source, destination, member)
    PHOTON_REDIS_CMD2(SPOP, key, count)
    PHOTON_REDIS_CMD1(SPOP, key)
    PHOTON_REDIS_CMD2(SRANDMEMBER, key, count)
    PHOTON_REDIS_CMD1(SRANDMEMBER, key)
    PHOTON_REDIS_CMD2s(SREM, key, member)
    PHOTON_REDIS_CMD1s(SUNION, key)
    PHOTON_REDIS_CMD2s(SUNIONSTORE, destination, key)
    // Hash
    PHOTON_REDIS_CMD2s(HDEL, key, field)
    PHOTON_REDIS_CMD2(HEXISTS, key, field)
    PHOTON_REDIS_CMD1(HGETALL, key)
    PHOTON_REDIS_CMD3(HINCRBY, key, field, increment)
    PHOTON_REDIS_CMD3(HINCRBYFLOAT, key, field, increment)
    PHOTON_REDIS_CMD1(HKEYS, key)
    PHOTON_REDIS_CMD1(HLEN, key)
    PHOTON_REDIS_CMD2(HGET, key, field)
    PHOTON_REDIS_CMD2s(HMGET, key, field)
    PHOTON_REDIS_CMD3s(HMSET, key, field, value)
    PHOTON_REDIS_CMD3s(HSET, key, field, value)
    PHOTON_REDIS_CMD2fs(HPERSIST, key)
    PHOTON_REDIS_CMD2fs(HEXPIRETIME, key)
    PHOTON_REDIS_CMD2fs(HPEXPIRETIME, key)
    PHOTON_REDIS_CMD2fs(HPTTL, key)
    PHOTON_REDIS_CMD1(HRANDFIELD, key)
    PHOTON_REDIS_CMD2(HRANDFIELD, key, count)
    PHOTON_REDIS_CMD3(HRANDFIELD, key, count, WITHVALUES)
    PHOTON_REDIS_CMD3(HSETNX, key, field, value)
    PHOTON_REDIS_CMD2(HSTRLEN, key, field)
    PHOTON_REDIS_CMD2fs(HTTL, key)
    PHOTON_REDIS_CMD1(HVALS, key)
    // List
    PHOTON_REDIS_CMD5(BLMOVE, source, destination, LEFT_or_RIGHT1, LEFT_or_RIGHT2, timeout)
    PHOTON_REDIS_CMD3(BRPOPLPUSH, source, destination, timeout)
    PHOTON_REDIS_CMD2(LINDEX, key, index)
    PHOTON_REDIS_CMD4(LINSERT, key, BEFORE_or_AFTER, pivot, element)
    PHOTON_REDIS_CMD1(LLEN, key)
    PHOTON_REDIS_CMD4(LMOVE, source, destination, LEFT_or_RIGHT1, LEFT_or_RIGHT2)
    PHOTON_REDIS_CMD1(LPOP, key)
    PHOTON_REDIS_CMD2(LPOP, key, count)
    PHOTON_REDIS_CMD2s(LPUSH, key, element)
    PHOTON_REDIS_CMD2s(LPUSHX, key, element)
    PHOTON_REDIS_CMD3(LRANGE, key, start, stop)
    PHOTON_REDIS_CMD3(LREM, key, count, element)
    PHOTON_REDIS_CMD3(LSET, key, index, element)
    PHOTON_REDIS_CMD3(LTRIM, key, start, stop)
    PHOTON_REDIS_CMD1(RPOP, key)
    PHOTON_REDIS_CMD2(RPOP, key, count)
    PHOTON_REDIS_CMD2(RPOPLPUSH, source, destination)
    PHOTON_REDIS_CMD2s(RPUSH, key, element)
    PHOTON_REDIS_CMD2s(RPUSHX, key, element)
    // Sorted set
    PHOTON_REDIS_CMD1(ZCARD, key)
    PHOTON_REDIS_CMD3(ZCOUNT, key, min, max)
    PHOTON_REDIS_CMD2sn(ZDIFFSTORE, destination, key)
    PHOTON_REDIS_CMD3(ZINCRBY, key, increment, member)
    PHOTON_REDIS_CMD3(ZLEXCOUNT, key, min, max)
    PHOTON_REDIS_CMD2s(ZMSCORE, key, member)
    PHOTON_REDIS_CMD1(ZPOPMAX, key)
    PHOTON_REDIS_CMD2(ZPOPMAX, key, count)
    PHOTON_REDIS_CMD1(ZPOPMIN, key)
    PHOTON_REDIS_CMD2(ZPOPMIN, key, count)
    PHOTON_REDIS_CMD1(ZRANDMEMBER, key)
    PHOTON_REDIS_CMD2(ZRANDMEMBER, key, count)
    PHOTON_REDIS_CMD3(ZRANDMEMBER, key, count, WITHSCORES)
    PHOTON_REDIS_CMD3(ZRANGEBYLEX, key, min, max)
    PHOTON_REDIS_CMD3(ZRANGEBYSCORE, key, min, max)
    PHOTON_REDIS_CMD4(ZRANGESTORE, dst, src, min, max)
    PHOTON_REDIS_CMD2(ZRANK, key, member)
    PHOTON_REDIS_CMD2s(ZREM, key, member)
    PHOTON_REDIS_CMD3(ZREMRANGEBYLEX, key, min, max)
    PHOTON_REDIS_CMD3(ZREMRANGEBYRANK, key, start, stop)
    PHOTON_REDIS_CMD3(ZREMRANGEBYSCORE, key, min, max)
    PHOTON_REDIS_CMD3(ZREVRANGE, key, start, stop)
    PHOTON_REDIS_CMD3(ZREVRANGEBYLEX, key, max, min)
    PHOTON_REDIS_CMD3(ZREVRANGEBYSCORE, key, max, min)
    PHOTON_REDIS_CMD2(ZREVRANK, key, member)
    PHOTON_REDIS_CMD2(ZSCAN, key, cursor)
    PHOTON_REDIS_CMD2(ZSCORE, key, member)
    PHOTON_REDIS_CMD1sn(ZUNION, key)
    PHOTON_REDIS_CMD2sn(ZUNIONSTORE, destination, key)
    // HyperLogLog
    PHOTON_REDIS_CMD1s(PFADD, key)
    PHOTON_REDIS_CMD1s(PFCOUNT, key)
    PHOTON_REDIS_CMD2(PFDEBUG, subcommand, key)
    PHOTON_REDIS_CMD1s(PFMERGE, destkey)
    PHOTON_REDIS_CMD0(PFSELFTEST)
    // Bitmap
    PHOTON_REDIS_CMD1(BITCOUNT, key)
    PHOTON_REDIS_CMD1s(BITFIELD, key)
    PHOTON_REDIS_CMD1s(BITFIELD_RO, key)
    PHOTON_REDIS_CMD3s(BITOP, AND_OR_XOR_NOT, destkey, key)
    PHOTON_REDIS_CMD2s(BITPOS, key, bit)
    PHOTON_REDIS_CMD2(GETBIT, key, offset)
    PHOTON_REDIS_CMD3(SETBIT, key, offset, value)
    // Strings
    PHOTON_REDIS_CMD2(APPEND, key, value)
    PHOTON_REDIS_CMD1(DECR, key)
    PHOTON_REDIS_CMD2(DECRBY, key, decrement)
    PHOTON_REDIS_CMD1(GET, key)
    PHOTON_REDIS_CMD1(GETDEL, key)
    PHOTON_REDIS_CMD1s(GETEX, key)
    PHOTON_REDIS_CMD3(GETRANGE, key, start, end)
    PHOTON_REDIS_CMD2(GETSET, key, value)
    PHOTON_REDIS_CMD1(INCR, key)
    PHOTON_REDIS_CMD2(INCRBY, key, increment)
    PHOTON_REDIS_CMD2(INCRBYFLOAT, key, increment)
    PHOTON_REDIS_CMD2s(LCS, key1, key2)
    PHOTON_REDIS_CMD1s(MGET, key)
    PHOTON_REDIS_CMD2s(MSET, key, value)
    PHOTON_REDIS_CMD2s(MSETNX, key, value)
    PHOTON_REDIS_CMD3(PSETEX, key, milliseconds, value)
    PHOTON_REDIS_CMD2s(SET, key, value)
    PHOTON_REDIS_CMD3(SETEX, key, seconds, value)
#undef PHOTON_REDIS_CMD0
#undef PHOTON_REDIS_CMD1
#undef PHOTON_REDIS_CMD1s
#undef PHOTON_REDIS_CMD1sn
#undef PHOTON_REDIS_CMD2
#undef PHOTON_REDIS_CMD2s
#undef PHOTON_REDIS_CMD2sn
#undef PHOTON_REDIS_CMD2fs
#undef PHOTON_REDIS_CMD3
#undef PHOTON_REDIS_CMD3s
#undef PHOTON_REDIS_CMD4
#undef PHOTON_REDIS_CMD5
    any OBJECT_ENCODING(bulk_string key) { return execute("OBJECT", "ENCODING", key); }
    // clang-format on
    any OBJECT_FREQ(bulk_string key) { return execute("OBJECT", "FREQ", key); }
    any OBJECT_IDLETIME(bulk_string key) { return execute("OBJECT", "IDLETIME", key); }
    any OBJECT_IREFCOUNT(bulk_string key) { return execute("OBJECT", "REFCOUNT", key); }
    any BITCOUNT(bulk_string key, bulk_string start, bulk_string end) {
        return execute("BITCOUNT", key, start, end);
    }
    any SSCAN(bulk_string key, bulk_string cursor) { return execute("SSCAN", key, cursor); }
    any SSCAN(bulk_string key, bulk_string cursor, uint64_t count) {
        return execute("SSCAN", key, cursor, "COUNT", count);
    }
    any SSCAN(bulk_string key, bulk_string cursor, bulk_string pattern) {
        return execute("SSCAN", key, cursor, "MATCH", pattern);
    }
};

inline void refstring::add_ref() {
    if (_rc) _rc->_refcnt++;
}
inline void refstring::del_ref() {
    if (_rc) _rc->_refcnt--;
}

template <uint32_t BUF_SIZE = 16 * 1024U>
class __RedisClient : public _RedisClient {
    char _buf[BUF_SIZE * 2];

public:
    __RedisClient(ISocketStream* s, bool s_ownership)
        : _RedisClient(s, s_ownership, BUF_SIZE, _buf) {}
};

using RedisClient = __RedisClient<16 * 1024U>;

// ---- The pipelined client (ours) ----

// A reply, owned. Aggregates hold their elements (a map's keys and values alternate).
struct reply {
    enum type_t : uint8_t {
        NONE,     // no reply (a failed call)
        STATUS,   // +OK
        ERROR,    // -ERR ... or a RESP3 blob error; str holds the message
        INTEGER,  // :n (integer)
        STRING,   // bulk or verbatim string (str; verbatim without its "txt:" prefix)
        NIL,      // null bulk string, null array, RESP3 null
        DOUBLE,   // ,d (number, and str as sent)
        BOOLEAN,  // #t / #f (integer 1 / 0)
        BIGNUM,   // (digits (str)
        ARRAY,
        MAP,
        SET,
        PUSH,
    };
    type_t type = NONE;
    int64_t integer = 0;
    double number = 0;
    std::string str;
    std::vector<reply> elements;

    bool is_error() const { return type == ERROR; }
    bool is_nil() const { return type == NIL; }
    bool ok() const { return type == STATUS && str == "OK"; }
};

struct client_options {
    std::string host = "127.0.0.1";
    uint16_t port = 6379;
    uint64_t timeout_us = 10 * 1000 * 1000;  // per call, and per connect/read/write
    bool resp3 = true;                       // offer "HELLO 3"; RESP2 if refused
    std::string username, password;          // AUTH when a password is set
    int db = 0;                              // SELECT when not 0
    size_t max_reply_bytes = 512UL << 20;    // a larger reply breaks the connection
};

// Commands encoded for one pipelined_client::commands() call (reusable: clear() keeps the
// memory).
class command_batch {
public:
    // 0, or -1 with errno EINVAL for a command without arguments (the server would not answer).
    int add(const std::string_view* args, size_t n);
    int add(std::initializer_list<std::string_view> args) { return add(args.begin(), args.size()); }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    void clear() {
        wire_.clear();
        n_ = 0;
    }
    const std::string& wire() const { return wire_; }  // RESP, as written

private:
    std::string wire_;
    size_t n_ = 0;
};

class pipelined_client {
public:
    virtual ~pipelined_client() = default;
    // Sends the batch's commands in one write, in order, and waits once for all their replies:
    // 0 with out[0..batch.size()) set (error replies too), or -1 with errno for the batch as a
    // whole (as command(); the replies in out are then unspecified). out's replies are swapped
    // with the reader's, so an out array used again keeps its strings' memory.
    virtual int commands(const command_batch& batch, reply* out,
                         uint64_t timeout_us = UINT64_MAX) = 0;
    // Sends args as one command and waits for its reply: 0 with *out set (an error reply too),
    // or -1 with errno (ETIMEDOUT, ECONNRESET, ECONNREFUSED ...; *out untouched).
    virtual int command(const std::string_view* args, size_t n, reply* out,
                        uint64_t timeout_us = UINT64_MAX) = 0;
    int command(std::initializer_list<std::string_view> args, reply* out,
                uint64_t timeout_us = UINT64_MAX) {
        return command(args.begin(), args.size(), out, timeout_us);
    }
    // The reply, or one of type NONE with str "photon: <error>" (errno set) on failure.
    template <typename... Args>
    reply call(const Args&... args) {
        std::string_view a[] = {std::string_view(args)...};
        reply r;
        if (command(a, sizeof...(args), &r) < 0) {
            r.type = reply::NONE;
            r.str.assign("photon: ").append(strerror(errno));
        }
        return r;
    }
    virtual int protocol() const = 0;  // 3 or 2 (0 before the first connection)
    virtual size_t in_flight() const = 0;
    virtual uint64_t connects() const = 0;  // connections made so far
};

// Connects lazily (on the first call); nullptr with errno on bad options.
pipelined_client* new_pipelined_client(const client_options& opts);

class client_pool {
public:
    virtual ~client_pool() = default;
    virtual int command(const std::string_view* args, size_t n, reply* out,
                        uint64_t timeout_us = UINT64_MAX) = 0;
    int command(std::initializer_list<std::string_view> args, reply* out,
                uint64_t timeout_us = UINT64_MAX) {
        return command(args.begin(), args.size(), out, timeout_us);
    }
    // The whole batch on one connection (the one with the fewest in flight).
    virtual int commands(const command_batch& batch, reply* out,
                         uint64_t timeout_us = UINT64_MAX) = 0;
    virtual size_t size() const = 0;
    virtual pipelined_client* get(size_t i) = 0;
};

// `connections` pipelined clients; each call goes to the one with the fewest in flight.
client_pool* new_client_pool(const client_options& opts, size_t connections);

}  // namespace redis
}  // namespace photon
