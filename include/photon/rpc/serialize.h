// RPC message serialization, as PhotonLibOS declares it, wire-compatible with
// it (doc/rpc.md has the byte layout).
//
// A message is a struct derived from Message that lists its variable-size
// fields with PROCESS_FIELDS. Serializing it describes, in an iovector and
// without copying, first the contents of its aligned fields, then those of
// its other fields in declaration order (nested messages and the elements of
// arrays of messages recursively), and last the struct's own bytes.
// Deserializing takes the struct from the back of a received iovector and
// points each field at its contents in place (copying only when a field spans
// two received buffers or is misaligned for its type).
//
// Received input is checked, so a hostile peer cannot make a field point outside the
// payload. Deserializing fails (nullptr) when a length runs past the payload, an array's
// length is not a multiple of its element size, or bytes are left over; a received string
// always ends in NUL (its last byte is forced to NUL); an empty string's sv() is empty; an
// array of a type with alignment is realigned rather than read misaligned.
// Differences from PhotonLibOS: doc/compat.md#rpcserializeh
//
// Ours: a SerializerIOV with zero_pointers set (the stub's requests and the
// skeleton's replies) sends copies of the message's own bytes and of its
// arrays of messages with every pointer field zeroed, so that no address of
// the sender's memory goes on the wire; receivers never read those fields,
// so the wire format is unchanged. The caller's structures are not modified.
#pragma once

#include <algorithm>
#include <cassert>
#include <cinttypes>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <sys/uio.h>
#include <vector>

#include <photon/common/checksum/crc32c.h>
#include <photon/common/iovector.h>
#include <photon/common/utility.h>

namespace photon {
namespace rpc {

// A variable-size field: on the wire, its bytes.
struct buffer {
    void* _ptr = nullptr;
    size_t _len = 0;

    buffer() {}
    buffer(void* buf, size_t size) : _ptr(buf), _len(size) {}
    void* addr() const { return _ptr; }
    size_t size() const { return _len; }
    size_t length() const { return size(); }
    void assign(const void* ptr, size_t len) {
        _ptr = const_cast<void*>(ptr);
        _len = len;
    }
};

// A buffer whose contents go first, before every other field's, so that a
// sender and receiver that align the payload keep it aligned.
struct aligned_buffer : public buffer {};

// A buffer that holds exactly one T.
template <typename T>
struct fixed_buffer : public buffer {
    using buffer::buffer;
    fixed_buffer(const T* x) : buffer(const_cast<T*>(x), sizeof(*x)) {}
    void assign(const T* x) { buffer::assign(x, sizeof(*x)); }
    const T* get() const { return (T*)addr(); }
};

// An array of T (PODs, or messages whose fields are serialized too).
template <typename T>
struct array : public buffer {
    array() {}
    array(const T* ptr, size_t size) { assign(ptr, size); }
    array(const std::vector<T>& vec) { assign(vec); }

    size_t size() const { return _len / sizeof(T); }
    T* begin() const { return (T*)_ptr; }
    T* end() const { return begin() + size(); }
    const T* cbegin() const { return begin(); }
    const T* cend() const { return end(); }
    const T& operator[](int64_t i) const { return begin()[i]; }
    const T& front() const { return (*this)[0]; }
    const T& back() const { return (*this)[(int64_t)size() - 1]; }
    bool empty() const { return _len == 0; }
    void assign(const T* x, size_t size) { buffer::assign(x, sizeof(*x) * size); }
    void assign(const std::vector<T>& vec) { assign(vec.data(), vec.size()); }

    struct iterator {
        T* p;
        iterator(T* t) : p(t) {}
        const T& operator*() { return *p; }
        iterator& operator++(int) {
            p++;
            return *this;
        }
        bool operator!=(iterator rhs) { return p != rhs.p; }
        bool operator==(iterator rhs) { return p == rhs.p; }
    };
};

// A C string: the buffer includes its terminating NUL. The string_view
// constructor sends s.size() + 1 bytes, so the view must be NUL-terminated
// (std::string's is), as in Photon.
struct string : public array<char> {
    using base = array<char>;
    using base::base;

    template <size_t LEN>
    string(const char (&s)[LEN]) : base(s, LEN) {}
    string(std::string_view s) { assign(s); }
    string() : base(nullptr, 0) {}

    const char* c_str() const { return cbegin(); }
    std::string_view sv() const {
        return size() ? std::string_view(c_str(), size() - 1) : std::string_view();
    }
    std::string to_std() { return std::string(sv()); }
    bool operator==(const string& rhs) const { return sv() == rhs.sv(); }
    bool operator!=(const string& rhs) const { return !(*this == rhs); }
    bool operator<(const string& rhs) const { return sv() < rhs.sv(); }
    bool operator>(const string& rhs) const { return !(*this < rhs); }  // as Photon: >=
    void assign(std::string_view s) { base::assign(s.data(), s.size() + 1); }
    void assign(const void* s, size_t len) { buffer::assign(s, len); }
};

template <typename T1, typename T2>
struct pair {
    pair() = default;
    pair(T1 t1, T2 t2) : first(t1), second(t2) {}
    T1 first;
    T2 second;
};

// A (offset, length) range of a base buffer; anchor() makes it a string.
class slice {
public:
    slice() = default;
    slice(off_t off, size_t len) : offset(off), length(len) {}
    // An empty string if the range is not inside base_buffer.
    string anchor(const buffer& base_buffer) const {
        if (offset < 0 || (size_t)offset > base_buffer.size() ||
            length > base_buffer.size() - (size_t)offset)
            return {};
        return {(char*)base_buffer.addr() + offset, length};
    }
    off_t offset;
    size_t length;
};

inline string operator|(slice s, const buffer& base) { return s.anchor(base); }
inline string operator|(string s, const buffer&) { return s; }
inline string operator|(const char* s, const buffer&) { return {s, strlen(s)}; }
inline string operator|(std::string_view s, const buffer&) { return {s.data(), s.size()}; }
inline string operator|(const std::string& s, const buffer&) { return {s.data(), s.size()}; }
inline string operator|(pair<slice, slice> p, const buffer& base) { return p.first.anchor(base); }

// Orders slices, strings and C strings, anchoring slices to a base buffer.
class base_buffer_cmp {
public:
    explicit base_buffer_cmp(buffer* base_buffer) : base_buffer_(base_buffer) {}
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) {
        return (a | *base_buffer_) < (b | *base_buffer_);
    }

private:
    buffer* base_buffer_;
};

// Scattered data: on the wire, the bytes the iovecs point at (summed_size of
// them), not the iovecs. Received, it points at the payload in place.
struct iovec_array : public array<iovec> {
    size_t summed_size;
    iovec_array() {}
    iovec_array(iovec* iov, int iovcnt) { assign(iov, iovcnt); }
    size_t assign(const iovec* iov, int iovcnt) {
        array<iovec>::assign(iov, iovcnt < 0 ? 0 : (size_t)iovcnt);
        return sum();
    }
    size_t sum() {
        summed_size = 0;
        for (auto& v : *this) summed_size += v.iov_len;
        return summed_size;
    }
};

// An iovec_array sent first, like aligned_buffer.
struct aligned_iovec_array : public iovec_array {};

// The base of every message.
struct Message {
public:
    template <typename AR>
    void serialize_fields(AR&) {}
    template <typename AR>
    void process_fields(AR&) {}  // a message without variable-size fields
    void add_checksum(iovector*) {}
    bool validate_checksum(iovector*, void*, size_t) { return true; }

protected:
    template <typename AR>
    void reduce(AR&) {}
    template <typename AR, typename T, typename... Ts>
    void reduce(AR& ar, T& x, Ts&... xs) {
        ar.process_field(x);
        reduce(ar, xs...);
    }
    // reduce_with(ar)(fields...), PROCESS_FIELDS's call: with no field named it needs no
    // GNU `, ##__VA_ARGS__`, which a strict -std=c++NN keeps the comma of.
    template <typename AR>
    auto reduce_with(AR& ar) {
        return [this, &ar](auto&... xs) { this->reduce(ar, xs...); };
    }
};

struct Crc32Hasher {
    using ValueType = uint32_t;
    static constexpr ValueType init_value() { return 0; }
    static void extend_hash(ValueType& value, const iovector* iov) {
        for (auto& v : *iov) value = crc32c_extend(v.iov_base, v.iov_len, value);
    }
    static void extend_hash(ValueType& value, void* buf, size_t length) {
        value = crc32c_extend(buf, length, value);
    }
};

// A message that carries a checksum of its fields' contents and its own
// bytes (computed with the checksum member zero), checked on receipt.
template <typename Hasher = Crc32Hasher>
struct CheckedMessage : public Message {
public:
    using ValueType = typename Hasher::ValueType;
    CheckedMessage() : checksum_(Hasher::init_value()) {}

    void add_checksum(iovector* iov) {
        checksum_ = Hasher::init_value();
        ValueType sum = Hasher::init_value();
        Hasher::extend_hash(sum, iov);
        checksum_ = sum;
    }
    bool validate_checksum(iovector* iov, void* body, size_t body_length) {
        auto expected = checksum_;
        checksum_ = Hasher::init_value();
        ValueType sum = Hasher::init_value();
        Hasher::extend_hash(sum, iov);
        if (body && body_length) Hasher::extend_hash(sum, body, body_length);
        checksum_ = expected;
        return sum == expected;
    }

private:
    ValueType checksum_;
};

#define PROCESS_FIELDS(...)                 \
    template <typename AR>                  \
    void process_fields(AR& ar) {           \
        this->reduce_with(ar)(__VA_ARGS__); \
    }

template <typename K, typename V>
struct sorted_map;

// Dispatches each field type to the archive's handling of buffers.
template <typename Derived>
class ArchiveBase {
public:
    Derived* d() { return static_cast<Derived*>(this); }

    // PODs travel inside the message's own bytes.
    template <typename T>
    typename std::enable_if<!std::is_base_of<Message, T>::value>::type process_field(T&) {}

    template <typename T>
    void process_field(fixed_buffer<T>& x) {
        static_assert(!std::is_base_of<Message, T>::value, "no Messages are allowed");
        d()->process_fixed(x);
    }

    template <typename T>
    void process_field(array<T>& x) {
        d()->process_array(x);
        if (!d()->failed_())
            for (auto& i : x) d()->process_field(i);
    }

    void process_field(string& x) { d()->process_string(x); }

    template <typename K, typename V>
    void process_field(sorted_map<K, V>& x) {
        d()->process_field(x.index);
        d()->process_field(x.base_buffer);
    }

    template <typename T, ENABLE_IF_BASE_OF(Message, T)>
    void process_field(T& x) {
        x.process_fields(*d());
    }
};

// Passes a message's own aligned fields (flag true) or its other fields
// (flag false) to an archive; nested messages go whole with the others.
template <typename T>
struct _FilterAlignedFields {
    T* _obj;
    bool _flag;
    void process_field(aligned_buffer& x) {
        if (_flag) _obj->process_field((buffer&)x);
    }
    void process_field(aligned_iovec_array& x) {
        if (_flag) _obj->process_field((iovec_array&)x);
    }
    template <typename P>
    void process_field(P& x) {
        if (!_flag) _obj->process_field(x);
    }
};

template <typename T>
_FilterAlignedFields<T> FilterAlignedFields(T* obj, bool flag) {
    return _FilterAlignedFields<T>{obj, flag};
}

// Zeroes the pointer fields among a message's own bytes (its buffers',
// strings', arrays' and nested messages'), not what they point at.
class ZeroPointers {
public:
    template <typename T>
    void process_field(T& x) {
        zero(x, std::is_base_of<buffer, T>{}, std::is_base_of<Message, T>{});
    }
    template <typename K, typename V>
    void process_field(sorted_map<K, V>& x) {
        x.index._ptr = nullptr;
        x.base_buffer._ptr = nullptr;
    }

private:
    template <typename T, typename M>
    void zero(T& x, std::true_type /*buffer*/, M) {
        x._ptr = nullptr;
    }
    template <typename T>
    void zero(T& x, std::false_type, std::true_type /*message*/) {
        x.process_fields(*this);
    }
    template <typename T>
    void zero(T&, std::false_type, std::false_type) {}  // a POD
};

// Describes a message in `iov` without copying (but see zero_pointers);
// iovfull if it needed more than IOVector's slots (or, with zero_pointers,
// memory for the copies).
class SerializerIOV : public ArchiveBase<SerializerIOV> {
public:
    IOVector iov;
    bool iovfull = false;
    // Ours: send zeroed copies (see the top of this file). Set before
    // serialize(); the copies live as long as the serializer. Leave it unset
    // for an iovector that describes where a message is to be received.
    bool zero_pointers = false;

    SerializerIOV() = default;
    SerializerIOV(const SerializerIOV&) = delete;
    SerializerIOV& operator=(const SerializerIOV&) = delete;
    // Movable, as Photon's: the copies in the inline area move with it.
    SerializerIOV(SerializerIOV&& o)
        : iov(std::move(o.iov)),
          iovfull(o.iovfull),
          zero_pointers(o.zero_pointers),
          used_(o.used_),
          heap_(std::move(o.heap_)),
          fixups_(std::move(o.fixups_)) {
        memcpy(small_, o.small_, used_);
        auto moved = [&](void* p) -> void* {
            uintptr_t a = (uintptr_t)p, b = (uintptr_t)o.small_;
            return a >= b && a < b + sizeof(small_) ? small_ + (a - b) : p;
        };
        for (auto& v : iov) v.iov_base = moved(v.iov_base);
        for (auto& f : fixups_) f.dst = moved(f.dst);
        o.used_ = 0;
        o.heap_.clear();
    }
    ~SerializerIOV() {
        for (auto p : heap_) ::free(p);
    }

    using ArchiveBase<SerializerIOV>::process_field;

    void process_field(buffer& x) {
        if (x.size() == 0) return;
        if (iov.back_free_iovcnt() == 0) {
            iovfull = true;
            return;
        }
        iov.push_back(x.addr(), x.size());
    }
    void process_field(iovec_array& x) {
        x.summed_size = 0;
        for (auto& v : x) {
            x.summed_size += v.iov_len;
            buffer b(v.iov_base, v.iov_len);
            process_field(b);
        }
    }
    template <typename T>
    void process_array(array<T>& x) {
        push_array(x, std::integral_constant<bool, std::is_base_of<Message, T>::value>{});
    }
    template <typename T>
    void process_fixed(fixed_buffer<T>& x) {
        process_field((buffer&)x);
    }
    void process_string(string& x) { process_field((buffer&)x); }
    bool failed_() const { return false; }

    template <typename T>
    void serialize(T& x) {
        static_assert(std::is_base_of<Message, T>::value, "only Messages are permitted");
        auto aligned = FilterAlignedFields(this, true);
        x.process_fields(aligned);
        auto others = FilterAlignedFields(this, false);
        x.process_fields(others);
        if (!zero_pointers) {
            buffer body(&x, sizeof(x));
            process_field(body);
            x.add_checksum(&iov);
            return;
        }
        // The fields were processed first: the copies hold what that computed
        // (an iovec_array's summed_size).
        for (auto& f : fixups_) f.copy(f.dst, f.src, f.n);
        auto body = (T*)scratch(sizeof(T), alignof(T));
        if (!body) return void(iovfull = true);
        copy_zeroed<T>(body, &x, 1);
        buffer b(body, sizeof(T));
        process_field(b);
        body->add_checksum(&iov);
    }

private:
    // An array of messages sent from a copy, filled in by serialize() once
    // the fields are processed.
    struct Fixup {
        void* dst;
        const void* src;
        size_t n;
        void (*copy)(void*, const void*, size_t);
    };

    template <typename T>
    static void copy_zeroed(void* dst, const void* src, size_t n) {
        memcpy(dst, src, n * sizeof(T));
        ZeroPointers z;
        for (size_t i = 0; i < n; i++) ((T*)dst)[i].process_fields(z);
    }
    template <typename T>
    void push_array(array<T>& x, std::false_type) {
        process_field((buffer&)x);
    }
    template <typename T>
    void push_array(array<T>& x, std::true_type /*of messages*/) {
        if (!zero_pointers || x.size() == 0) return process_field((buffer&)x);
        void* dst = scratch(x.size() * sizeof(T), alignof(T));
        if (!dst) return void(iovfull = true);
        fixups_.push_back({dst, x.begin(), x.size(), &copy_zeroed<T>});
        buffer b(dst, x.size() * sizeof(T));
        process_field(b);
    }
    // Memory for a copy: from the inline area, else the heap.
    void* scratch(size_t n, size_t align) {
        size_t at = (used_ + align - 1) / align * align;
        if (align <= alignof(std::max_align_t) && at + n <= sizeof(small_)) {
            used_ = at + n;
            return small_ + at;
        }
        void* p = ::malloc(n + align);
        if (!p) return nullptr;
        heap_.push_back(p);
        return (void*)(((uintptr_t)p + align - 1) / align * align);
    }

    alignas(std::max_align_t) char small_[256];
    size_t used_ = 0;
    std::vector<void*> heap_;
    std::vector<Fixup> fixups_;
};

// Decodes a message over a received iovector, in place where it can.
class DeserializerIOV : public ArchiveBase<DeserializerIOV> {
public:
    iovector* _iov = nullptr;
    bool failed = false;

    using ArchiveBase<DeserializerIOV>::process_field;

    void process_field(buffer& x) {
        if (failed || x.size() == 0) {
            x._ptr = nullptr;
            return;
        }
        x._ptr = _iov->extract_front_continuous(x.size());
        if (!x._ptr) fail(x);
    }
    void process_field(iovec_array& x) {
        if (failed) return x.assign(nullptr, 0), void();
        size_t want = x.summed_size;
        iovector_view v;
        ssize_t got = want ? _iov->extract_front(want, &v) : 0;
        if (got != (ssize_t)want) return fail(x), x.assign(nullptr, 0), void();
        x.assign(v.iov, v.iovcnt);
    }
    template <typename T>
    void process_array(array<T>& x) {
        if (x.size() * sizeof(T) != x._len) return fail(x);
        process_field((buffer&)x);
        if (!failed && ((uintptr_t)x._ptr % alignof(T)) != 0) realign(x);
    }
    template <typename T>
    void process_fixed(fixed_buffer<T>& x) {
        if (x._len != 0 && x._len != sizeof(T)) return fail(x);  // unset, or one T
        process_field((buffer&)x);
        if (!failed && ((uintptr_t)x._ptr % alignof(T)) != 0) realign(x);
    }
    void process_string(string& x) {
        process_field((buffer&)x);
        if (!failed && x._len) ((char*)x._ptr)[x._len - 1] = '\0';
    }
    bool failed_() const { return failed; }

    template <typename T>
    T* deserialize(iovector* iov) {
        static_assert(std::is_base_of<Message, T>::value, "only Messages are permitted");
        _iov = iov;
        failed = false;
        auto t = iov->extract_back<T>();
        if (t && ((uintptr_t)t % alignof(T)) != 0) t = (T*)aligned_copy(t, sizeof(T));
        if (!t || !t->validate_checksum(iov, t, sizeof(*t))) return failed = true, nullptr;
        auto aligned = FilterAlignedFields(this, true);
        t->process_fields(aligned);
        auto others = FilterAlignedFields(this, false);
        t->process_fields(others);
        if (!iov->empty() && iov->sum() != 0) failed = true;  // bytes nobody claimed
        return failed ? nullptr : t;
    }

private:
    void fail(buffer& x) {
        failed = true;
        x._ptr = nullptr;
        x._len = 0;
    }
    void* aligned_copy(const void* p, size_t n) {
        auto q = _iov->malloc(n);  // malloc alignment
        if (q) memcpy(q, p, n);
        return q;
    }
    void realign(buffer& x) {
        x._ptr = aligned_copy(x._ptr, x._len);
        if (!x._ptr) fail(x);
    }
};

// A map sent as a sorted index of (key, value) slices over one flat buffer
// holding the keys and the serialized values.
template <typename K, typename V>
struct sorted_map {
    using KeyType = slice;
    using ValueType = pair<slice, slice>;
    using MappedType = slice;
    using KeyCompare = base_buffer_cmp;
    using Index = array<ValueType>;

    struct Iterator {
        using iterator_category = std::forward_iterator_tag;
        using difference_type = std::ptrdiff_t;

        Iterator(ValueType* ptr, buffer* base_buffer) : ptr_(ptr), base_buffer_(base_buffer) {}
        pair<K, V>& operator*() {
            decode();
            return pair_;
        }
        pair<K, V>* operator->() {
            decode();
            return &pair_;
        }
        Iterator& operator++() {
            ptr_++;
            return *this;
        }
        Iterator operator++(int) {
            Iterator tmp = *this;
            ++(*this);
            return tmp;
        }
        friend bool operator==(const Iterator& a, const Iterator& b) { return a.ptr_ == b.ptr_; }
        friend bool operator!=(const Iterator& a, const Iterator& b) { return a.ptr_ != b.ptr_; }

    private:
        // A value that does not decode leaves the pair default (empty).
        void decode() {
            pair_ = {};
            string s = ptr_->second | *base_buffer_;
            IOVector iov;
            iov.push_back(s.addr(), s.size());
            DeserializerIOV des;
            auto t = des.deserialize<V>(&iov);
            if (!t) return;
            pair_.first = ptr_->first | *base_buffer_;
            pair_.second = *t;
        }
        ValueType* ptr_;
        buffer* base_buffer_;
        pair<K, V> pair_;
    };

    Iterator begin() { return Iterator(index.begin(), &base_buffer); }
    Iterator end() { return Iterator(index.end(), &base_buffer); }
    Iterator find(const K& k) {
        auto it = std::lower_bound(index.begin(), index.end(), k, KeyCompare(&base_buffer));
        if (it != index.end() && (k | base_buffer) != (it->first | base_buffer)) it = index.end();
        return Iterator(it, &base_buffer);
    }

    Index index;
    buffer base_buffer;
};

// Builds a sorted_map on the sending side; it owns the flat buffer.
template <typename K, typename V>
class sorted_map_factory {
public:
    using SortedMap = sorted_map<K, V>;

    void append(const K& k, const V& v) {
        static_assert(std::is_base_of<photon::rpc::string, K>::value,
                      "Only support rpc::string as key for now");
        static_assert(std::is_base_of<Message, V>::value, "The value must be a RPC message");
        static_assert(!std::is_base_of<CheckedMessage<>, V>::value,
                      "The value must not be a RPC CheckedMessage");
        iov_.push_back({k.addr(), k.size()});
        typename SortedMap::KeyType key(offset_, k.size());
        offset_ += k.size();
        SerializerIOV ser;
        ser.serialize(const_cast<V&>(v));
        size_t n = ser.iov.sum();
        for (auto& each : ser.iov) iov_.push_back(each);
        typename SortedMap::MappedType val(offset_, n);
        offset_ += n;
        index_.emplace_back(key, val);
    }

    void assign_to(SortedMap* sm) {
        if (index_.empty()) return;
        flat_buffer_.reset(new uint8_t[offset_]);
        iovector_view view(iov_.data(), (int)iov_.size());
        view.memcpy_to(flat_buffer_.get(), offset_);
        sm->base_buffer.assign(flat_buffer_.get(), offset_);
        std::sort(index_.begin(), index_.end(), typename SortedMap::KeyCompare(&sm->base_buffer));
        sm->index.assign(index_);
    }

protected:
    std::vector<typename SortedMap::ValueType> index_;
    std::vector<iovec> iov_;
    size_t offset_ = 0;
    std::unique_ptr<uint8_t[]> flat_buffer_;
};

}  // namespace rpc
}  // namespace photon
