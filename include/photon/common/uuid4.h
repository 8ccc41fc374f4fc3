// Random (version 4) UUIDs as 16 raw bytes, with PhotonLibOS's C-style API
// (global namespace; Photon took it from rxi's uuid4 library):
//   uuid4_generate     fills 16 random bytes, version 4, RFC 4122 variant;
//   uuid4_parse        "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (hex, either
//                      case; exactly 36 characters) -> bytes; 0, or -1
//                      (UUID4_EFAILURE) leaving `uu` untouched;
//   uuid4_unparse_upper bytes -> that form, upper case, NUL-terminated;
//   invalid_uuid4      0 if the string has that form, else -1.
// Thread-safe (the generator's state is per OS thread, seeded from the
// kernel's random source); never yields.
//
// Differences from PhotonLibOS: doc/compat.md#commonuuid4h
#ifndef _UUID4_H
#define _UUID4_H

#define UUID4_VERSION "1.0.0"

enum { UUID4_ESUCCESS = 0, UUID4_EFAILURE = -1 };

typedef char uuid4_t[16];
typedef char uuid4_string_t[37];

int uuid4_parse(char* in, uuid4_t uu);
void uuid4_unparse_upper(uuid4_t uu, uuid4_string_t out);
void uuid4_clear(uuid4_t uu);
// 1 if all 16 bytes are zero, else 0.
int uuid4_is_null(uuid4_t uu);
void uuid4_generate(uuid4_t uu);
void uuid4_copy(uuid4_t dst, uuid4_t src);
// memcmp order: < 0, 0 or > 0.
int uuid4_compare(uuid4_t uu1, uuid4_t uu2);
int invalid_uuid4(char* str_uu);

#endif
