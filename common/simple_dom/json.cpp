// SimpleDOM's JSON backend: rapidjson's SAX reader, in place (strings are unescaped where they
// stand), iterative (no recursion however deep the text nests), reading through a stream that
// stops at the end of the text, so the text need not be terminated. Comments and trailing commas
// are accepted, as in PhotonLibOS.
#include <rapidjson/reader.h>

#include <photon/common/alog.h>

#include "builder.h"

namespace photon {
namespace SimpleDOM {
namespace detail {
namespace {

// rapidjson's in-situ stream concept over [begin, end): reads past the end see '\0'. Writes
// (unescaped strings) never pass the read position.
class bounded_insitu_stream {
public:
    typedef char Ch;
    bounded_insitu_stream(char* begin, char* end) : src_(begin), end_(end), head_(begin) {}
    Ch Peek() const { return src_ < end_ ? *src_ : '\0'; }
    Ch Take() { return src_ < end_ ? *src_++ : '\0'; }
    size_t Tell() const { return (size_t)(src_ - head_); }
    Ch* PutBegin() { return dst_ = src_; }
    void Put(Ch c) { *dst_++ = c; }
    size_t PutEnd(Ch* begin) { return (size_t)(dst_ - begin); }
    void Flush() {}
    Ch* Push(size_t count) {
        dst_ += count;
        return dst_ - count;
    }
    void Pop(size_t count) { dst_ -= count; }
    char* position() const { return src_; }

private:
    char* src_;
    char* end_;
    char* head_;
    char* dst_ = nullptr;
};

}  // namespace
}  // namespace detail
}  // namespace SimpleDOM
}  // namespace photon

// Copied into the number parser and written back, as rapidjson does for its own in-situ stream:
// raw numbers are taken from where the copy started.
template <>
struct rapidjson::StreamTraits<photon::SimpleDOM::detail::bounded_insitu_stream> {
    enum { copyOptimization = 1 };
};

namespace photon {
namespace SimpleDOM {
namespace detail {
namespace {

class Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
public:
    Handler(Document* doc, builder* b) : doc_(doc), b_(b) {}
    bool Null() { return value(str(), NodeImpl::null); }
    bool Bool(bool v) { return value(v ? str("true") : str("false"), NodeImpl::BOOLEAN); }
    bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) {
        // In place, rapidjson hands numbers over from its own scratch stack: keep a copy.
        return value(copy ? doc_->copy(s, n) : str(s, n), NodeImpl::NUMBER);
    }
    bool String(const char* s, rapidjson::SizeType n, bool copy) {
        return value(copy ? doc_->copy(s, n) : str(s, n), NodeImpl::STRING);
    }
    bool Key(const char* s, rapidjson::SizeType n, bool copy) {
        key_ = copy ? doc_->copy(s, n) : str(s, n);
        return true;
    }
    bool StartObject() { return open(NodeImpl::OBJECT); }
    bool EndObject(rapidjson::SizeType) { return close(true); }
    bool StartArray() { return open(NodeImpl::ARRAY); }
    bool EndArray(rapidjson::SizeType) { return close(false); }

private:
    bool value(str v, uint8_t type) {
        b_->leaf(key_, v, type);
        key_ = str();
        return !b_->too_big();
    }
    bool open(uint8_t type) {
        b_->open(key_, str(), type);
        key_ = str();
        return !b_->too_big();
    }
    bool close(bool indexed) {
        b_->close(indexed);
        return !b_->too_big();
    }

    Document* doc_;
    builder* b_;
    str key_;
};

}  // namespace

const NodeImpl* parse_json(Document* doc, char* text, size_t size) {
    const unsigned FLAGS = rapidjson::kParseInsituFlag | rapidjson::kParseIterativeFlag |
                           rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseCommentsFlag |
                           rapidjson::kParseTrailingCommasFlag | rapidjson::kParseStopWhenDoneFlag;
    builder b(doc);
    Handler h(doc, &b);
    bounded_insitu_stream s(text, text + size);
    rapidjson::Reader reader;
    auto res = reader.Parse<FLAGS>(s, h);
    if (b.too_big()) {
        LOG_EVERY_T(
            1, LOG_WARN("simple_dom: JSON nests deeper than ` or has too many nodes", MAX_DEPTH));
        errno = E2BIG;
        return nullptr;
    }
    if (res.IsError()) {
        LOG_EVERY_T(1, LOG_WARN("simple_dom: malformed JSON: error ` at offset `", res.Code(),
                                res.Offset()));
        errno = EINVAL;
        return nullptr;
    }
    // Only whitespace may follow the value (a '\0' byte may not: the text has a length).
    for (char* p = s.position(); p < text + size; ++p) {
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            LOG_EVERY_T(1,
                        LOG_WARN("simple_dom: JSON: bytes after the value at offset `", p - text));
            errno = EINVAL;
            return nullptr;
        }
    }
    return b.finish();
}

}  // namespace detail
}  // namespace SimpleDOM
}  // namespace photon
