// In-memory streams for tests, as PhotonLibOS declares them (global
// namespace):
//   new_simplex_memory_stream(capacity)  one pipe: what is written is read
//                                        back, through a buffer of
//                                        `capacity` bytes;
//   new_duplex_memory_stream(capacity)   two pipes joined as endpoint_a <->
//                                        endpoint_b (a socket pair);
//   new_fault_stream(s, flag, own)       forwards to s, failing about 1% of
//                                        reads (flag & 1) / writes (flag & 2)
//                                        with a random errno;
//   new_string_socket_stream()           an ISocketStream that reads a given
//                                        string and records what is written;
//                                        recv/send move 1-8 bytes at a time.
// read() and write() of the memory streams block the calling coroutine until
// all `count` bytes have moved (as Photon's): a read returns fewer only at
// end of stream (the peer closed; 0 once drained), a write fewer only when
// the peer has closed (-1 EPIPE if none moved). After close(), calls on that
// stream or endpoint fail with EBADF; one blocked in it wakes and returns the
// bytes it moved, or -1 EBADF. An interrupt (thread_interrupt) likewise
// returns the bytes moved or -1 with its errno. Any vCPU may read or write;
// concurrent readers (and writers) take turns, each moving its whole count.
//
// Differences from PhotonLibOS: doc/compat.md#commonmemory-streammemory-streamh
// Floor: net (tools/floors.txt), above its folder's: it is an ISocketStream (code in net/).
#pragma once

#include <cinttypes>
#include <string>

#include <photon/common/stream.h>
#include <photon/common/string_view.h>
#include <photon/net/socket.h>

class DuplexMemoryStream;

// nullptr with EINVAL (capacity 0) or ENOMEM.
extern "C" IStream* new_simplex_memory_stream(uint32_t capacity);

// Each direction buffers `capacity` bytes. nullptr with EINVAL or ENOMEM.
extern "C" DuplexMemoryStream* new_duplex_memory_stream(uint32_t capacity);

// Bit 0 of `flag` lets reads fail, bit 1 writes (3, the default: both); a
// failing call returns -1 with a random errno before reaching `stream`.
// `ownership`: deleting the fault stream deletes `stream`. nullptr with
// EINVAL if stream is nullptr.
extern "C" IStream* new_fault_stream(IStream* stream, int flag = 3, bool ownership = false);

class StringSocketStream;
StringSocketStream* new_string_socket_stream();

class DuplexMemoryStream {
public:
    virtual ~DuplexMemoryStream() {}
    IStream* endpoint_a;  // do NOT delete it!!!
    IStream* endpoint_b;  // do NOT delete it!!!
    // Closes both endpoints.
    virtual int close() = 0;
};

class StringSocketStream : public photon::net::ISocketStream {
protected:
    std::string _in, _out;
    std::string_view _inv;  // the input not yet read

public:
    // Sets the input to a copy of `in`.
    void set_input(std::string_view in) {
        _in.assign(in.data(), in.size());
        _inv = {_in};
    }
    // !copy: reads `in` itself, which must outlive the reads.
    void set_input(std::string_view in, bool copy) {
        if (!copy)
            _inv = in;
        else
            set_input(in);
    }
    // The input not yet read.
    std::string_view input() { return _inv; }
    // Everything written so far.
    std::string& output() { return _out; }
};
