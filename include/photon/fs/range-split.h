// Range splitting, as PhotonLibOS declares it: cuts the byte range
// [offset, offset + length) at the boundaries of fixed-size blocks
// (range_split), of power-of-two blocks (range_split_power2, with shifts), or
// of variable blocks (range_split_vi, range-split-vi.h). Each piece is a
// sub_range: block index i, offset within the block, length. Plain data: any
// thread, never yields.
//
//   range_split rs(100, 36, 32);         // [100, 136) over 32-byte blocks
//   for (auto& x : rs.all_parts()) ...   // {3, 4, 28}, {4, 0, 8}
//
// The parts by kind: small_note (the range lies inside one block and touches
// neither of its edges), else preface (the unaligned head), aligned_parts()
// (whole blocks) and postface (the unaligned tail); `first` is the first
// piece. Fields: abegin / aend are the indexes of the blocks that hold the
// range (aend one past), apbegin / apend those of its whole blocks.
//
// Differences from PhotonLibOS: doc/compat.md#fsrange-splith
#pragma once

#include <cassert>
#include <cinttypes>
#include <cstdint>

#include <photon/common/utility.h>

namespace photon {
namespace fs {

struct sub_range {
    uint64_t i;       // the block's index
    uint64_t offset;  // within the block
    uint64_t length;
    sub_range() { assign(0, 0, 0); }
    sub_range(const sub_range& rhs) { assign(rhs.i, rhs.offset, rhs.length); }
    sub_range(uint64_t i, uint64_t offset, uint64_t length) { assign(i, offset, length); }
    sub_range& operator=(const sub_range& rhs) {
        assign(rhs.i, rhs.offset, rhs.length);
        return *this;
    }
    void assign(uint64_t i, uint64_t offset, uint64_t length) {
        this->i = i;
        this->offset = offset;
        this->length = length;
    }
    uint64_t begin() const { return offset; }
    uint64_t end() const { return offset + length; }
    operator bool() const { return length > 0; }
    void clear() { length = 0; }
};

// The splitting, given Derived's divide(), multiply() and get_length().
template <typename Derived>
struct basic_range_split {
    uint64_t begin, end;
    uint64_t abegin, aend;    // blocks holding the range: [abegin, aend)
    uint64_t apbegin, apend;  // whole blocks inside it: [apbegin, apend)
    uint64_t begin_remainder, end_remainder;

    sub_range small_note;  // the only piece, not touching its block's edges
    sub_range preface;     // the unaligned head (none with a small_note)
    sub_range first;       // the first piece
    sub_range postface;    // the unaligned tail (none with a small_note)

    // Whether both ends of the range are block boundaries.
    bool is_aligned() const { return begin_remainder == 0 && end_remainder == 0; }
    // Whether x is a block boundary.
    bool is_aligned(uint64_t x) const {
        uint64_t down, rem, up;
        divide(x, down, rem, up);
        return rem == 0;
    }
    bool is_aligned_ptr(const void* buf) const { return is_aligned((uint64_t)buf); }

    uint64_t aligned_begin_offset() const { return multiply(abegin); }
    uint64_t aligned_end_offset() const { return multiply(aend); }
    uint64_t aligned_length() const { return multiply(aend) - multiply(abegin); }

    void divide(uint64_t x, uint64_t& round_down, uint64_t& remainder, uint64_t& round_up) const {
        derived()->divide(x, round_down, remainder, round_up);
    }
    uint64_t multiply(uint64_t i, uint64_t x = 0) const { return derived()->multiply(i, x); }
    uint64_t get_length(uint64_t i) const { return derived()->get_length(i); }

    void init(uint64_t offset, uint64_t length) {
        if (length > UINT64_MAX - offset) length = UINT64_MAX - offset;
        begin = offset;
        end = offset + length;
        divide(begin, abegin, begin_remainder, apbegin);
        divide(end, apend, end_remainder, aend);
        small_note.clear();
        preface.clear();
        postface.clear();
        if (length == 0) {
            aend = abegin;  // no blocks, no parts
            first.assign(abegin, begin_remainder, 0);
        } else if (abegin + 1 == aend) {
            init_one_block(length);
        } else {
            init_blocks();
        }
    }

    struct aligned_parts_t {
        const basic_range_split* split;
        struct iterator : sub_range {
            const basic_range_split* split;
            iterator(const basic_range_split* split, uint64_t i)
                : sub_range(i, 0, split->get_length(i)), split(split) {}
            bool operator==(const iterator& rhs) const { return i == rhs.i; }
            bool operator!=(const iterator& rhs) const { return !(*this == rhs); }
            iterator& operator++() {
                length = split->get_length(++i);
                return *this;
            }
            sub_range& operator*() { return *this; }
            sub_range* operator->() { return this; }
        };
        iterator begin() const { return iterator(split, split->apbegin); }
        iterator end() const {
            return split->apend > split->apbegin ? iterator(split, split->apend) : begin();
        }
    };
    aligned_parts_t aligned_parts() const { return aligned_parts_t{this}; }

    struct all_parts_t {
        const basic_range_split* split;
        struct iterator : sub_range {
            const basic_range_split* split;
            explicit iterator(const basic_range_split* split)
                : sub_range(split->first), split(split) {}
            bool operator==(const iterator& rhs) const { return i == rhs.i; }
            bool operator!=(const iterator& rhs) const { return !(*this == rhs); }
            iterator& operator++() {
                offset = 0;
                if (++i != split->aend) {
                    bool tail = split->postface && split->postface.i == i;
                    length = tail ? split->postface.length : split->get_length(i);
                }
                return *this;
            }
            sub_range& operator*() { return *this; }
            sub_range* operator->() { return this; }
        };
        iterator begin() const { return iterator(split); }
        iterator end() const {
            iterator it(split);
            it.i = split->aend;
            return it;
        }
    };
    all_parts_t all_parts() const { return all_parts_t{this}; }

private:
    const Derived* derived() const { return static_cast<const Derived*>(this); }

    void init_one_block(uint64_t length) {
        first.assign(abegin, begin_remainder, length);
        bool head_cut = abegin != apbegin, tail_cut = aend != apend;
        if (head_cut && tail_cut)
            small_note = first;
        else if (head_cut)
            preface = first;
        else if (tail_cut)
            postface = first;
    }
    void init_blocks() {
        if (abegin != apbegin)
            preface.assign(abegin, begin_remainder, get_length(abegin) - begin_remainder);
        if (preface)
            first = preface;
        else
            first.assign(apbegin, 0, get_length(apbegin));
        if (aend != apend) postface.assign(apend, 0, end_remainder);
    }
};

// Blocks of `interval` bytes (0: a single block holding everything).
struct range_split : public basic_range_split<range_split> {
    uint64_t interval;
    range_split(uint64_t offset, uint64_t length, uint64_t interval) : interval(interval) {
        init(offset, length);
    }
    void divide(uint64_t x, uint64_t& round_down, uint64_t& remainder, uint64_t& round_up) const {
        round_down = interval ? x / interval : 0;
        remainder = interval ? x % interval : x;
        round_up = round_down + (remainder != 0);
    }
    uint64_t multiply(uint64_t i, uint64_t x = 0) const { return i * interval + x; }
    uint64_t get_length(uint64_t) const { return interval ? interval : UINT64_MAX; }
};

// Blocks of `interval` bytes, a power of two: shifts and masks (else, or
// for 0, it falls back to range_split's arithmetic, with the same results).
struct range_split_power2 : public basic_range_split<range_split_power2> {
    uint64_t interval, interval_shift;
    range_split_power2(uint64_t offset, uint64_t length, uint64_t interval)
        : interval(interval), interval_shift(interval ? __builtin_ctzll(interval) : 0) {
        init(offset, length);
    }
    void divide(uint64_t x, uint64_t& round_down, uint64_t& remainder, uint64_t& round_up) const {
        if (pow2()) {
            round_down = x >> interval_shift;
            remainder = x & (interval - 1);
        } else {
            round_down = interval ? x / interval : 0;
            remainder = interval ? x % interval : x;
        }
        round_up = round_down + (remainder != 0);
    }
    uint64_t multiply(uint64_t i, uint64_t x = 0) const {
        return (pow2() ? i << interval_shift : i * interval) + x;
    }
    uint64_t get_length(uint64_t) const { return interval ? interval : UINT64_MAX; }

private:
    bool pow2() const { return interval && is_power_of_2(interval); }
};

}  // namespace fs
}  // namespace photon
