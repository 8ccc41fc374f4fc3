// IStream::readall: read to EOF into one growing malloc'ed buffer.
#include <photon/common/stream.h>

#include <utility>

#include <photon/common/alog.h>

namespace {

// Ends a readall that failed after `used` bytes with errno already set: the bytes read are
// kept and reported as -used; with none, the buffer goes and size is -1.
IStream::ReadAll fail(IStream::ReadAll& all, size_t used) {
    if (used == 0) all.ptr.reset();
    all.size = used ? -(ssize_t)used : -1;
    return std::move(all);
}

}  // namespace

IStream::ReadAll IStream::readall(size_t max_buf, size_t min_buf) {
    ReadAll all;
    size_t cap = min_buf ? min_buf : 1024;
    if (cap > max_buf) cap = max_buf;
    all.ptr.reset(malloc(cap ? cap : 1));
    if (!all.ptr) LOG_ERROR_RETURN(ENOBUFS, fail(all, 0), "failed to malloc(`)", cap);
    size_t used = 0;
    while (true) {
        if (used == cap) {
            if (cap >= max_buf) {
                // Full at the limit: only EOF right here makes it a success.
                char probe;
                ssize_t n = read(&probe, 1);
                if (n == 0) break;
                if (n < 0) return fail(all, used);
                LOG_ERROR_RETURN(ENOBUFS, fail(all, used),
                                 "the stream holds more than max_buf=` bytes", max_buf);
            }
            size_t next = cap > max_buf / 2 ? max_buf : cap * 2;
            void* p = realloc(all.ptr.get(), next);
            if (!p) LOG_ERROR_RETURN(ENOBUFS, fail(all, used), "failed to realloc(`)", next);
            (void)all.ptr.release();
            all.ptr.reset(p);
            cap = next;
        }
        ssize_t n = read(static_cast<char*>(all.ptr.get()) + used, cap - used);
        if (n == 0) break;
        if (n < 0) return fail(all, used);
        used += (size_t)n;
    }
    all.size = (ssize_t)used;
    return all;
}
