// version_compare, kernel_version_compare and print_stacktrace (utility.h).
#include <photon/common/utility.h>

#include <execinfo.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <cstring>

#include <photon/common/alog-stdstring.h>
#include <photon/common/alog.h>

namespace {

// Digits and single dots, not starting or ending with a dot.
bool valid_version(std::string_view v) {
    if (v.empty() || v.front() == '.' || v.back() == '.') return false;
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == '.') {
            if (v[i + 1] == '.') return false;  // v.back() is not a dot
        } else if (v[i] < '0' || v[i] > '9') {
            return false;
        }
    }
    return true;
}

// Pops the next component off a valid version, without its leading zeros.
std::string_view next_component(std::string_view& rest) {
    size_t dot = rest.find('.');
    std::string_view part = rest.substr(0, dot);
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    size_t nz = part.find_first_not_of('0');
    return nz == std::string_view::npos ? std::string_view("0") : part.substr(nz);
}

// Numeric comparison of two digit strings without leading zeros (any length, no overflow).
int compare_digits(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    int c = a.compare(b);
    return c < 0 ? -1 : c > 0;
}

}  // namespace

int version_compare(std::string_view a, std::string_view b, int& result) {
    if (!valid_version(a) || !valid_version(b)) {
        errno = EINVAL;
        return -1;
    }
    int r = 0;
    while (r == 0 && !a.empty() && !b.empty())
        r = compare_digits(next_component(a), next_component(b));
    if (r == 0 && !(a.empty() && b.empty())) r = a.empty() ? -1 : 1;  // more components: newer
    result = r;
    return 0;
}

int kernel_version_compare(std::string_view dst, int& result) {
    struct utsname buf;
    if (uname(&buf) < 0) LOG_ERRNO_RETURN(0, -1, "uname() failed");
    // "5.15.0-91-generic", "6.1.0+": compare the leading dotted number.
    std::string_view release(buf.release);
    size_t n = release.find_first_not_of("0123456789.");
    std::string_view version = release.substr(0, n);
    while (!version.empty() && version.back() == '.') version.remove_suffix(1);
    if (version_compare(version, dst, result) < 0)
        LOG_ERROR_RETURN(EINVAL, -1, "cannot compare kernel version ` with `", buf.release, dst);
    return 0;
}

void print_stacktrace() {
    void* frames[16];
    int n = backtrace(frames, 16);
    char** symbols = backtrace_symbols(frames, n);
    for (int i = 0; i < n; ++i) {
        if (symbols)
            LOG_DEBUG(symbols[i]);
        else
            LOG_DEBUG(frames[i]);
    }
    free(symbols);
}
