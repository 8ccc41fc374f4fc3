// libFuzzer target: HPACK blocks (net/http2/hpack.cpp, huffman.cpp).
// Input: a byte choosing the decoder's table limit (x 32 bytes), then blocks,
// each after a byte with its length. Every block goes through one decoder
// (its table carried from block to block); a block it accepts is encoded
// again and decoded by a second pair whose tables must stay in step and give
// back the same fields. Huffman strings round-trip too.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../net/http2/hpack.h"
#include "../../net/http2/huffman.h"
#include "../../net/http2/request_check.h"

using namespace photon::net::http2;

namespace {

void check(bool ok) {
    if (!ok) abort();
}

void round_trip_huffman(const uint8_t* p, size_t n) {
    std::string dec;
    if (!huffman_decode(p, n, &dec)) return;
    std::string enc, again;
    huffman_encode(dec, &enc);
    check(enc.size() == huffman_encoded_size(dec));
    check(huffman_decode((const uint8_t*)enc.data(), enc.size(), &again) && again == dec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    size_t limit = data[0] * 32u;
    hpack_decoder d(4096), d2(4096);
    d.set_max_table_size(limit);
    d.set_max_header_list_size(64 * 1024);
    hpack_encoder e(4096);
    e.set_peer_max_table_size(limit);
    d2.set_max_table_size(limit);
    unsigned blocks = 0;
    for (size_t i = 1; i < size;) {
        size_t n = data[i++];
        if (n > size - i) n = size - i;
        const uint8_t* block = data + i;
        i += n;
        round_trip_huffman(block, n);
        std::vector<header_field> fields;
        int r = d.decode(block, n, &fields);
        if (r == hpack_decoder::kCompressionError) return 0;  // the connection would end
        if (r != hpack_decoder::kOk) continue;
        // Every other block through put(): names lowered, connection-specific
        // fields dropped, recent codings reused from its memo.
        std::string out;
        if (++blocks % 2) {
            e.encode(fields, &out);
        } else {
            e.begin_block(&out);
            std::vector<header_field> kept;
            for (auto& f : fields) {
                e.put(f.name, f.value, &out, f.never_index);
                header_field low = f;
                for (auto& ch : low.name)
                    if (ch >= 'A' && ch <= 'Z') ch = (char)(ch | 0x20);
                if (!connection_specific(low.name)) kept.push_back(low);
            }
            fields.swap(kept);
        }
        std::vector<header_field> again;
        check(d2.decode((const uint8_t*)out.data(), out.size(), &again) == hpack_decoder::kOk);
        check(again.size() == fields.size());
        for (size_t k = 0; k < fields.size(); k++)
            check(again[k].name == fields[k].name && again[k].value == fields[k].value);
        check(e.table().size() == d2.table().size());
    }
    return 0;
}
