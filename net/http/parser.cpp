// Start lines, field lines and body framing of HTTP/1.1 heads (RFC 9112).
#include <cstdint>
#include <cstring>

#include <photon/net/http/parser.h>
#include <photon/net/http/url.h>

#include "rfc9110.h"

namespace photon {
namespace net {
namespace http {

namespace {

using PE = ParseError;

bool is_ows(char c) { return c == ' ' || c == '\t'; }

// Splits off the next CRLF-terminated line (head_scanner vouched for CRLFs).
std::string_view next_line(std::string_view* rest) {
    size_t eol = rest->find("\r\n");
    std::string_view line = rest->substr(0, eol);
    rest->remove_prefix(eol == rest->npos ? rest->size() : eol + 2);
    return line;
}

// "HTTP/" DIGIT "." DIGIT; only 1.0 and 1.1 are served.
PE parse_version(std::string_view v, int* minor) {
    if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || v[6] != '.' || v[5] < '0' || v[5] > '9' ||
        v[7] < '0' || v[7] > '9')
        return PE::BadVersion;
    if (v[5] != '1' || v[7] > '1') return PE::VersionNotSupported;
    *minor = v[7] - '0';
    return PE::None;
}

bool has_bad_escape(std::string_view s) {
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] != '%') continue;
        if (i + 2 >= s.size() || !isxdigit((unsigned char)s[i + 1]) ||
            !isxdigit((unsigned char)s[i + 2]))
            return true;
    }
    return false;
}

// RFC 9112 3.2: origin-form, absolute-form, authority-form (CONNECT only),
// asterisk-form (OPTIONS only).
PE check_target(std::string_view t, Verb verb) {
    for (unsigned char c : t)
        if (c <= 0x20 || c >= 0x7f) return PE::BadTarget;
    if (has_bad_escape(t)) return PE::BadTarget;
    if (verb == Verb::CONNECT) {
        return t.find_first_of("/?#@") == t.npos && t.find(':') != t.npos ? PE::None
                                                                          : PE::BadTarget;
    }
    if (t == "*") return verb == Verb::OPTIONS ? PE::None : PE::BadTarget;
    if (t[0] == '/') return t.find('#') == t.npos ? PE::None : PE::BadTarget;
    // absolute-form: a scheme is required, and userinfo is an error (RFC
    // 9110 4.2.4), though URL accepts both missing.
    URL url;
    bool ok = what_protocol(t) != 0 && url.from_string(t) && url.fragment().empty() &&
              t.substr(0, t.find_first_of("/?", t.find("://") + 3)).find('@') == t.npos;
    return ok ? PE::None : PE::BadTarget;
}

PE parse_request_line(std::string_view line, RequestHead* out) {
    size_t sp1 = line.find(' ');
    if (sp1 == line.npos) return PE::BadRequestLine;
    size_t sp2 = line.find(' ', sp1 + 1);
    if (sp2 == line.npos || line.find(' ', sp2 + 1) != line.npos) return PE::BadRequestLine;
    std::string_view method = line.substr(0, sp1);
    out->target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    if (!is_token(method) || out->target.empty()) return PE::BadRequestLine;
    out->verb = string_to_verb(method);
    PE e = parse_version(line.substr(sp2 + 1), &out->minor);
    if (e != PE::None) return e;
    if (out->verb == Verb::UNKNOWN) return PE::UnknownMethod;
    return check_target(out->target, out->verb);
}

PE parse_status_line(std::string_view line, ResponseHead* out) {
    PE e = parse_version(line.substr(0, 8), &out->minor);
    if (e != PE::None) return e;
    line.remove_prefix(std::min<size_t>(8, line.size()));
    if (line.size() < 4 || line[0] != ' ') return PE::BadStatusLine;
    int code = 0;
    for (int i = 1; i <= 3; i++) {
        if (line[i] < '0' || line[i] > '9') return PE::BadStatusLine;
        code = code * 10 + (line[i] - '0');
    }
    if (code < 100 || code > 599) return PE::BadStatusLine;
    out->status = code;
    line.remove_prefix(4);
    if (line.empty()) return PE::None;  // some servers omit the SP before an empty reason
    if (line[0] != ' ') return PE::BadStatusLine;
    out->reason = line.substr(1);
    for (unsigned char c : out->reason)
        if ((c < 0x20 && c != '\t') || c == 0x7f) return PE::BadStatusLine;
    return PE::None;
}

PE parse_fields(std::string_view rest, const Limits& limits, Headers* fields) {
    fields->clear();
    for (std::string_view line = next_line(&rest); !line.empty(); line = next_line(&rest)) {
        if (fields->field_count() >= limits.max_fields) return PE::TooManyFields;
        PE e = parse_field_line(line, fields);
        if (e != PE::None) return e;
    }
    return PE::None;
}

// Transfer-Encoding over all its field lines: chunked, once, last.
PE check_transfer_encoding(const Headers& fields) {
    bool chunked_last = false, other = false, any = false;
    for (auto f : fields) {
        if (!iequals(f.first, "Transfer-Encoding")) continue;
        std::string_view list = f.second;
        while (true) {
            size_t comma = list.find(',');
            std::string_view item = trim_ows(list.substr(0, comma));
            if (!item.empty()) {
                if (chunked_last) return PE::ChunkedNotLast;  // something after chunked
                any = true;
                if (iequals(item, "chunked")) {
                    chunked_last = true;
                } else if (is_token(item)) {
                    other = true;
                } else {
                    return PE::BadTransferEncoding;
                }
            }
            if (comma == list.npos) break;
            list.remove_prefix(comma + 1);
        }
    }
    if (!any) return PE::BadTransferEncoding;
    if (!chunked_last) return PE::ChunkedNotLast;
    return other ? PE::UnsupportedTransferEncoding : PE::None;
}

PE parse_content_length(const Headers& fields, const Limits& limits, uint64_t* len) {
    if (fields.count("Content-Length") > 1) return PE::MultipleContentLength;
    std::string_view v = fields["Content-Length"];
    if (v.find(',') != v.npos) return PE::MultipleContentLength;
    if (v.empty() || v.size() > 19) return PE::BadContentLength;
    for (char c : v)
        if (c < '0' || c > '9') return PE::BadContentLength;
    *len = fields.content_length();
    // Body sizes are int64_t (Message::body_size()): 19 digits may not fit.
    if (*len > kMaxBodyLength) return PE::BadContentLength;
    return *len > limits.max_body_size ? PE::BodyTooLarge : PE::None;
}

// Framing shared by requests and responses; TE with CL is an error for
// both (RFC 9112 6.1 allows a recipient to treat it as one).
PE parse_framing(const Headers& fields, int minor, const Limits& limits, Framing* framing,
                 uint64_t* len) {
    bool te = fields.has("Transfer-Encoding"), cl = fields.has("Content-Length");
    if (te && minor == 0) return PE::TransferEncodingInHttp10;
    if (te && cl) return PE::ContentLengthWithTransferEncoding;
    if (te) {
        *framing = Framing::Chunked;
        return check_transfer_encoding(fields);
    }
    if (cl) {
        *framing = Framing::ContentLength;
        return parse_content_length(fields, limits, len);
    }
    *framing = Framing::None;
    return PE::None;
}

bool keep_alive(const Headers& fields, int minor) {
    bool close = false, keep = false;
    for (auto f : fields) {
        if (!iequals(f.first, "Connection")) continue;
        close |= list_has_token(f.second, "close");
        keep |= list_has_token(f.second, "keep-alive");
    }
    return !close && (minor == 1 || keep);
}

PE check_host(const Headers& fields, int minor) {
    size_t n = fields.count("Host");
    if (n == 0) return minor == 1 ? PE::MissingHost : PE::None;
    if (n > 1) return PE::BadHost;
    for (unsigned char c : fields["Host"])  // uri-host [":" port]
        if (!isalnum(c) && !strchr("-._~!$&'()*+,;=:[]%", c)) return PE::BadHost;
    return PE::None;
}

}  // namespace

ParseError parse_field_line(std::string_view line, Headers* fields) {
    if (line.empty()) return PE::BadFieldName;
    if (is_ows(line[0])) return PE::ObsFold;
    size_t colon = line.find(':');
    if (colon == line.npos || !is_token(line.substr(0, colon))) return PE::BadFieldName;
    std::string_view value = trim_ows(line.substr(colon + 1));
    if (!is_field_value(value)) return PE::BadFieldValue;
    if (fields->append_valid(line.substr(0, colon), value) < 0) return PE::HeadTooLarge;
    return PE::None;
}

ParseError parse_request_head(std::string_view head, const Limits& limits, RequestHead* out,
                              Headers* fields) {
    *out = RequestHead();
    PE e = parse_request_line(next_line(&head), out);
    if (e == PE::None) e = parse_fields(head, limits, fields);
    if (e == PE::None) e = check_host(*fields, out->minor);
    if (e == PE::None)
        e = parse_framing(*fields, out->minor, limits, &out->framing, &out->content_length);
    if (e != PE::None) return e;
    out->keep_alive = keep_alive(*fields, out->minor);
    out->expect_continue = out->minor == 1 && out->framing != Framing::None &&
                           iequals(trim_ows((*fields)["Expect"]), "100-continue");
    return PE::None;
}

ParseError parse_response_head(std::string_view head, Verb request_verb, const Limits& limits,
                               ResponseHead* out, Headers* fields) {
    *out = ResponseHead();
    PE e = parse_status_line(next_line(&head), out);
    if (e == PE::None) e = parse_fields(head, limits, fields);
    if (e == PE::None)
        e = parse_framing(*fields, out->minor, limits, &out->framing, &out->content_length);
    if (e != PE::None) return e;
    int s = out->status;
    if (s < 200 || s == 204 || s == 304 || request_verb == Verb::HEAD ||
        (request_verb == Verb::CONNECT && s < 300)) {
        out->framing = Framing::None;  // RFC 9112 6.3 rules 1 and 2
    } else if (out->framing == Framing::None) {
        out->framing = Framing::UntilClose;
    }
    out->keep_alive = out->framing != Framing::UntilClose && keep_alive(*fields, out->minor);
    return PE::None;
}

}  // namespace http
}  // namespace net
}  // namespace photon
