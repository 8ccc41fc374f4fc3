// HTTP-date formatting and parsing with civil-calendar arithmetic (days
// since 1970-01-01, proleptic Gregorian) instead of gmtime/timegm.
#include "http_date.h"

#include <cstdint>
#include <string>

namespace photon {
namespace net {
namespace http {
namespace {

const char* const kDays[7] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
const char* const kLongDays[7] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                  "Thursday", "Friday", "Saturday"};
const char* const kMonths[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Days from 1970-01-01 to y-m-d (m 1..12), for any y (era-based, so no
// table and no loop).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void civil_from_days(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void put2(char* p, unsigned v) {
    p[0] = (char)('0' + v / 10 % 10);
    p[1] = (char)('0' + v % 10);
}

// A little cursor over the text; every step fails once anything failed.
struct cursor {
    std::string_view s;
    bool ok = true;

    bool lit(std::string_view l) {
        ok = ok && s.substr(0, l.size()) == l;
        if (ok) s.remove_prefix(l.size());
        return ok;
    }
    // Exactly n digits.
    unsigned num(size_t n) {
        unsigned v = 0;
        for (size_t i = 0; ok && i < n; i++) {
            ok = i < s.size() && s[i] >= '0' && s[i] <= '9';
            if (ok) v = v * 10 + (unsigned)(s[i] - '0');
        }
        if (ok) s.remove_prefix(n);
        return v;
    }
    // The index of the name s starts with.
    template <size_t N>
    int name(const char* const (&names)[N]) {
        for (size_t i = 0; ok && i < N; i++)
            if (s.substr(0, std::char_traits<char>::length(names[i])) == names[i]) {
                s.remove_prefix(std::char_traits<char>::length(names[i]));
                return (int)i;
            }
        ok = false;
        return -1;
    }
    int day3() { return name(kDays); }
    int month() { return name(kMonths); }
    void hms(unsigned* h, unsigned* mi, unsigned* sec) {
        *h = num(2);
        lit(":");
        *mi = num(2);
        lit(":");
        *sec = num(2);
    }
};

bool make_time(int64_t y, int mon, unsigned d, unsigned h, unsigned mi, unsigned s, time_t* t) {
    static const unsigned kLen[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mon < 0 || d < 1 || d > kLen[mon] || h > 23 || mi > 59 || s > 60) return false;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mon == 1 && d == 29 && !leap) return false;
    int64_t v = days_from_civil(y, (unsigned)mon + 1, d) * 86400 + h * 3600 + mi * 60 + s;
    if (v < 0) return false;
    *t = (time_t)v;
    return true;
}

}  // namespace

void format_http_date(time_t t, char* out) {
    int64_t days = (int64_t)t / 86400, secs = (int64_t)t % 86400, y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    const char* wd = kDays[(days % 7 + 11) % 7];  // 1970-01-01 was a Thursday
    out[0] = wd[0], out[1] = wd[1], out[2] = wd[2], out[3] = ',', out[4] = ' ';
    put2(out + 5, d);
    out[7] = ' ';
    out[8] = kMonths[m - 1][0], out[9] = kMonths[m - 1][1], out[10] = kMonths[m - 1][2];
    out[11] = ' ';
    put2(out + 12, (unsigned)(y / 100));
    put2(out + 14, (unsigned)(y % 100));
    out[16] = ' ';
    put2(out + 17, (unsigned)(secs / 3600));
    out[19] = ':';
    put2(out + 20, (unsigned)(secs / 60 % 60));
    out[22] = ':';
    put2(out + 23, (unsigned)(secs % 60));
    out[25] = ' ', out[26] = 'G', out[27] = 'M', out[28] = 'T';
}

bool parse_http_date(std::string_view s, time_t* t) {
    unsigned d, y, h, mi, sec;
    int mon;
    if (s.size() >= 4 && s[3] == ',') {  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        cursor c{s};
        c.day3();
        c.lit(", ");
        d = c.num(2);
        c.lit(" ");
        mon = c.month();
        c.lit(" ");
        y = c.num(4);
        c.lit(" ");
        c.hms(&h, &mi, &sec);
        c.lit(" GMT");
        return c.ok && c.s.empty() && make_time(y, mon, d, h, mi, sec, t);
    }
    if (s.size() >= 4 && s[3] == ' ') {  // asctime: Sun Nov  6 08:49:37 1994
        cursor c{s};
        c.day3();
        c.lit(" ");
        mon = c.month();
        c.lit(" ");
        if (!c.s.empty() && c.s[0] == ' ') {
            c.lit(" ");
            d = c.num(1);
        } else {
            d = c.num(2);
        }
        c.lit(" ");
        c.hms(&h, &mi, &sec);
        c.lit(" ");
        y = c.num(4);
        return c.ok && c.s.empty() && make_time(y, mon, d, h, mi, sec, t);
    }
    cursor c{s};  // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
    c.name(kLongDays);
    c.lit(", ");
    d = c.num(2);
    c.lit("-");
    mon = c.month();
    c.lit("-");
    y = c.num(2);
    c.lit(" ");
    c.hms(&h, &mi, &sec);
    c.lit(" GMT");
    y += y < 70 ? 2000 : 1900;
    return c.ok && c.s.empty() && make_time(y, mon, d, h, mi, sec, t);
}

}  // namespace http
}  // namespace net
}  // namespace photon
