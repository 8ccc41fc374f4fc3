// head_scanner: where a head ends, with line-end and size checks done while
// the bytes arrive, so an oversized or malformed head fails before it is
// complete.
#include "head_scanner.h"

namespace photon {
namespace net {
namespace http {

ParseError head_scanner::scan(std::string_view data, bool* done, size_t* begin, size_t* end) {
    // Every check is made at the byte that breaks it, so the outcome does
    // not depend on how the bytes were split into reads.
    *done = false;
    const ParseError first_err = request_ ? ParseError::UriTooLong : ParseError::FieldLineTooLong;
    for (; pos_ < data.size(); pos_++) {
        if (pos_ >= limits_.max_head_size) return ParseError::HeadTooLarge;
        char c = data[pos_];
        if (c == '\r') {
            if (pos_ + 1 == data.size()) break;  // decide when the next byte comes
            if (data[pos_ + 1] != '\n') return ParseError::BareCR;
            continue;
        }
        if (c != '\n') {
            size_t len = pos_ - line_start_ + 1;
            if (lines_ == 0 && len > limits_.max_request_line) return first_err;
            if (lines_ > 0 && len > limits_.max_field_line) return ParseError::FieldLineTooLong;
            continue;
        }
        if (pos_ == line_start_ || data[pos_ - 1] != '\r') return ParseError::BareLF;
        bool empty = pos_ - 1 == line_start_;
        line_start_ = pos_ + 1;
        if (!empty) {
            if (++lines_ > (uint32_t)limits_.max_fields + 1) return ParseError::TooManyFields;
        } else if (lines_ == 0) {
            begin_ = line_start_;  // an empty line before the start line
        } else {
            *done = true;
            *begin = begin_;
            *end = ++pos_;
            return ParseError::None;
        }
    }
    return ParseError::None;
}

}  // namespace http
}  // namespace net
}  // namespace photon
