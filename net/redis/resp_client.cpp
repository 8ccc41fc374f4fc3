// PhotonLibOS's low-level Redis client (_RedisClient): command encoding into a fixed output
// buffer, reply items parsed in place from a fixed input buffer.
#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>

#include <photon/common/alog.h>
#include <photon/ecosystem/redis.h>

namespace photon {
namespace redis {

ssize_t _RedisClient::flush(const void* extra_buffer, size_t size) {
    iovec iov[2];
    int n = 0;
    if (_o) iov[n++] = {_obuf, _o};
    if (extra_buffer && size) iov[n++] = {(void*)extra_buffer, size};
    if (n == 0) return 0;
    ssize_t sum = (ssize_t)_o + (ssize_t)(extra_buffer ? size : 0);
    ssize_t ret = _s->writev(iov, n);
    _o = 0;
    if (ret < sum) LOG_ERRNO_RETURN(0, -1, "redis: failed to write ` bytes", sum);
    return ret;
}

_RedisClient& _RedisClient::put(std::string_view x) {
    if (_o + x.size() > _bufsize) {
        if (x.size() > _bufsize / 2) {  // large: written straight from the caller's memory
            flush(x.data(), x.size());
            return *this;
        }
        flush();
    }
    memcpy(_obuf + _o, x.data(), x.size());
    _o += (uint32_t)x.size();
    return *this;
}

_RedisClient& _RedisClient::put(int64_t x) {
    char s[24];
    int n = snprintf(s, sizeof(s), "%lld", (long long)x);
    return put(std::string_view(s, (size_t)n));
}

_RedisClient& _RedisClient::put(_strint x) {
    char s[24];
    int n = snprintf(s, sizeof(s), "%lld", (long long)x._x);
    return *this << std::string_view(s, (size_t)n);
}

_RedisClient& _RedisClient::operator<<(std::string_view x) {
    char head[32];
    int n = snprintf(head, sizeof(head), "$%zu\r\n", x.size());
    put(std::string_view(head, (size_t)n));
    put(x);
    return put(std::string_view("\r\n", 2));
}

_RedisClient& _RedisClient::operator<<(_array_header x) {
    char head[32];
    int n = snprintf(head, sizeof(head), "*%zu\r\n", x.n);
    return put(std::string_view(head, (size_t)n));
}

ssize_t _RedisClient::__refill(size_t atleast) {
    if (atleast == 0) atleast = 1;
    size_t room = _bufsize - _j;
    if (room < atleast) {
        if (_refcnt > 0)  // replies still refer to the buffer: it cannot move
            LOG_ERROR_RETURN(ENOBUFS, -1, "redis: reply item larger than the free buffer");
        memmove(_ibuf, _ibuf + _i, _j - _i);
        _j -= _i;
        _i = 0;
        room = _bufsize - _j;
        if (room < atleast)
            LOG_ERROR_RETURN(ENOBUFS, -1, "redis: reply item larger than the buffer (`)", _bufsize);
    }
    ssize_t ret = _s->recv_at_least(_ibuf + _j, room, atleast);
    if (ret < (ssize_t)atleast) {
        if (ret >= 0) errno = ECONNRESET;
        LOG_ERRNO_RETURN(0, -1, "redis: failed to read at least ` bytes", atleast);
    }
    _j += (uint32_t)ret;
    return ret;
}

char _RedisClient::get_char() {
    if (ensure_input_data(1) < 0) return '\0';
    return _ibuf[_i++];
}

std::string_view _RedisClient::__getline() {
    size_t scanned = 0;
    for (;;) {
        auto p = (char*)memchr(_ibuf + _i + scanned, '\n', _j - _i - scanned);
        if (p) {
            char* begin = _ibuf + _i;
            char* end = p;
            _i = (uint32_t)(p + 1 - _ibuf);
            if (end > begin && end[-1] == '\r') --end;
            return {begin, size_t(end - begin)};
        }
        scanned = _j - _i;  // counts from _i, which a refill may move to the front
        if (__refill(1) < 0) return {};
    }
}

std::string_view _RedisClient::__getstring(size_t length) {
    if (length > _bufsize - 2) {
        errno = ENOBUFS;
        return {};
    }
    if (ensure_input_data(length + 2) < 0) return {};
    char* begin = _ibuf + _i;
    _i += (uint32_t)(length + 2);  // the value and its CRLF
    return {begin, length};
}

bulk_string _RedisClient::get_bulk_string() {
    auto length = get_integer().val;
    if (length >= 0) return getstring((size_t)length);
    return {};
}

any _RedisClient::parse_response_item() {
    char mark = get_char();
    switch (mark) {
        case '+':
        case '(':  // big number
            return simple_string(getline());
        case '-':
            return get_error_message();
        case ':':
            return get_integer();
        case ',':
            return double_string(getline());
        case '#':
            return boolean(getline());
        case '_':
            getline();
            return nil();
        case '$':
        case '=': {  // verbatim: "txt:" then the text
            auto length = get_integer().val;
            if (length < 0) return nil();
            auto s = getstring((size_t)length);
            if (s.data() == nullptr) return error_message("photon: read failed");
            if (mark == '=' && s.size() >= 4) return bulk_string(refstring(s.substr(4)));
            return bulk_string(s);
        }
        case '!': {  // blob error
            auto length = get_integer().val;
            if (length < 0) return error_message("photon: bad blob error");
            return error_message(getstring((size_t)length));
        }
        case '*': {
            auto n = get_integer();
            if (n.val < 0) return nil();
            return array_header(n);
        }
        case '%':
            return map_header(get_integer());
        case '~':
            return set_header(get_integer());
        case '>':
            return push_header(get_integer());
        case '|': {  // attributes: skipped, the item they annotate follows
            auto n = get_integer().val;
            for (int64_t k = 0; k < 2 * n; ++k) {
                auto a = parse_response_item();
                if (a.is_failed()) return a;
            }
            return parse_response_item();
        }
        case '\0':
            return error_message("photon: read failed");
        default:
            LOG_EVERY_T(10, LOG_WARN("redis: unknown reply type `", mark));
            return error_message("photon: unknown reply type");
    }
}

}  // namespace redis
}  // namespace photon
