// libFuzzer target: the RFC 9110 helpers of the static-file handler
// (net/http/rfc9110.h) over arbitrary bytes. Besides crashes and over-reads
// (ASan), it traps when a result breaks the contract the handler relies on:
// a decoded path that leaves the root, holds a NUL or a "."/".." segment,
// or overruns its buffer; a range outside the representation; a number
// accepted that is not 1*DIGIT or decodes to another value.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "../../net/http/rfc9110.h"

using namespace photon::net::http;

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

void fuzz_decode_path(std::string_view in, size_t cap) {
    std::vector<char> out(cap + 1, '\x7f');  // one canary byte past cap
    size_t len = 0;
    bool dir = false;
    int r = decode_path(in, out.data(), cap, &len, &dir);
    check(out[cap] == '\x7f');
    if (r != 0) {
        check(r == 400 || r == 404);
        return;
    }
    check(len >= 1 && len < cap && out[0] == '/' && out[len] == '\0');
    std::string_view p(out.data(), len);
    check(p.find('\0') == p.npos);
    check(len == 1 || p.back() != '/');
    for (size_t i = 1, seg = 1; i <= len; i++) {  // every segment is a real name
        if (i < len && p[i] != '/') continue;
        std::string_view s = p.substr(seg, i - seg);
        check(len == 1 || (!s.empty() && s != "." && s != ".."));
        seg = i + 1;
    }
    // Without escapes left in it, a decoded path decodes to itself.
    if (p.find('%') == p.npos && p.find('?') == p.npos) {
        std::vector<char> again(cap + 1);
        size_t len2 = 0;
        bool dir2 = false;
        check(decode_path(p, again.data(), cap, &len2, &dir2) == 0);
        check(std::string_view(again.data(), len2) == p);
    }
}

void fuzz_range(std::string_view in, uint64_t size) {
    uint64_t first = ~0ull, last = ~0ull;
    range_result r = parse_range(in, size, &first, &last);
    if (r == range_result::partial) check(first <= last && last < size);
    if (r == range_result::unsatisfiable) check(first == ~0ull && last == ~0ull);
}

void fuzz_u64(std::string_view in) {
    uint64_t v = 0;
    bool ok = parse_u64(in, &v);
    bool digits = !in.empty();
    for (char c : in) digits = digits && c >= '0' && c <= '9';
    check(ok == digits);
    if (ok && in.size() <= 19) check(v == std::stoull(std::string(in)));
}

void fuzz_etags(std::string_view in) {
    // Split at the first NUL: a list and a tag.
    size_t z = in.find('\0');
    std::string_view list = in.substr(0, z), tag = z == in.npos ? "" : in.substr(z + 1);
    bool m = etag_list_matches(list, tag);
    if (trim_ows(list) == "*") check(m);
    std::string quoted = "\"" + std::string(tag.substr(0, tag.find('"'))) + "\"";
    check(etag_list_matches(" W/" + quoted + " ,", quoted));
    check(if_range_holds(" " + quoted + "\t", quoted, 0));
    check(!if_range_holds("W/" + quoted, quoted, 0));
    (void)if_range_holds(list, tag, (time_t)in.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    std::string_view in(reinterpret_cast<const char*>(data) + 2, size - 2);
    switch (data[0] % 4) {
        case 0:
            fuzz_decode_path(in, 2 + data[1] % 64);
            break;
        case 1:
            fuzz_range(in, data[1] < 8 ? data[1] : (uint64_t)data[1] << (data[1] % 40));
            break;
        case 2:
            fuzz_u64(in);
            break;
        case 3:
            fuzz_etags(in);
            break;
    }
    return 0;
}
