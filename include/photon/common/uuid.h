// UUID: a 16-byte UUID value with parsing and upper-case formatting, as
// PhotonLibOS declares it (global namespace), over uuid4.h. UUID::String
// holds the 36-character text and its NUL. Plain data: any thread, never
// yields. Errors are logged and return -1 with errno set.
//
// Differences from PhotonLibOS: doc/compat.md#commonuuidh
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <photon/common/alog.h>
#include <photon/common/uuid4.h>

class UUID {
public:
    struct String {
        enum { LEN = 37 };
        char data[LEN];

        String() { data[0] = '\0'; }  // empty text, not garbage
        String(const UUID& rhs) { rhs.to_string(data, LEN); }
        String(const String& rhs) = default;

        String& operator=(const UUID& rhs) {
            rhs.to_string(data, LEN);
            return *this;
        }
        String& operator=(const String& rhs) = default;

        const char* c_str() const { return (const char*)data; }
        // True if `in` is a NUL-terminated UUID text.
        static bool is_valid(const char* in = nullptr) {
            return invalid_uuid4(const_cast<char*>(in)) == 0;
        }
    } __attribute__((packed));

    // Parses the UUID text in in[0, n): exactly 36 characters, followed by
    // the end of the buffer or a NUL. 0, or -1 (EINVAL) leaving *this as it was.
    int parse(const char* in, size_t n) {
        char text[String::LEN];
        if (!in || n < 36 || (n > 36 && in[36] != '\0'))
            LOG_ERROR_RETURN(EINVAL, -1, "invalid UUID format.");
        memcpy(text, in, 36);
        text[36] = '\0';
        if (uuid4_parse(text, (char*)this) != 0)
            LOG_ERROR_RETURN(EINVAL, -1, "invalid UUID format.");
        return 0;
    }

    int parse(const String& str_uuid) { return parse((const char*)&str_uuid, String::LEN); }

    // Sets the 16 raw bytes in[0, n); 0, or -1 (EINVAL) unless n == 16.
    int reset(const char* in, size_t n) {
        if (!in || n != 16) LOG_ERROR_RETURN(EINVAL, -1, "invalid UUID format");
        uuid4_copy((char*)this, const_cast<char*>(in));
        return 0;
    }

    // Writes the upper-case text and its NUL (String::LEN bytes) to out.
    // 0, or -1 with ENOBUFS if len < String::LEN (nothing written).
    int to_string(char* out, size_t len) const {
        if (!out || len < String::LEN) {
            int x = String::LEN;
            LOG_ERROR_RETURN(ENOBUFS, -1, "buffer size too small, ` bytes required.", x);
        }
        uuid4_unparse_upper((char*)this, out);
        return 0;
    }

    // A fresh random (version 4) UUID.
    void generate() { uuid4_generate((char*)this); }
    void clear() { uuid4_clear((char*)this); }
    bool is_null() const { return uuid4_is_null((char*)this); }

    bool operator==(const UUID& rhs) const { return memcmp(&rhs, this, LEN) == 0; }
    bool operator!=(const UUID& rhs) const { return !(*this == rhs); }

    uint32_t a;
    uint16_t b, c, d;
    uint8_t e[6];

    static const int LEN = 16;
} __attribute__((packed));

static_assert(sizeof(UUID) == UUID::LEN, "UUID must be its 16 bytes");
static_assert(sizeof(UUID::String) == UUID::String::LEN, "UUID::String must be its text");

inline LogBuffer& operator<<(LogBuffer& log, const UUID::String& str_uuid) {
    log << str_uuid.c_str();
    return log;
}

inline LogBuffer& operator<<(LogBuffer& log, const UUID& uuid) {
    UUID::String str_uuid = uuid;
    log << str_uuid.c_str();
    return log;
}
