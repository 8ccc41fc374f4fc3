// The Huffman code of HPACK (RFC 7541 5.2, Appendix B): string literals of
// header blocks may be coded with it. Decoding takes four bits a step through
// a table built once from the code; it refuses what the RFC calls a decoding
// error: the EOS symbol inside a string, padding longer than 7 bits, and
// padding that is not the most significant bits of EOS (all ones).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace photon {
namespace net {
namespace http2 {

// Bytes that huffman_encode(s) appends.
size_t huffman_encoded_size(std::string_view s);
// Appends s coded, padded with ones to a byte.
void huffman_encode(std::string_view s, std::string* out);
// Appends the decoded n bytes at p to out: true, or false on a decoding
// error (out then is as it was).
bool huffman_decode(const uint8_t* p, size_t n, std::string* out);

}  // namespace http2
}  // namespace net
}  // namespace photon
