// IStream::readall: read to EOF into one growing malloc'ed buffer.
#include <photon/common/stream.h>

IStream::ReadAll IStream::readall(size_t max_buf, size_t min_buf) {
    ReadAll all;
    size_t cap = min_buf ? min_buf : 1024;
    if (cap > max_buf) cap = max_buf;
    all.ptr.reset(malloc(cap));
    if (!all.ptr) {
        all.size = -1;
        errno = ENOMEM;
        return all;
    }
    size_t used = 0;
    while (true) {
        if (used == cap) {
            if (cap == max_buf) {
                char probe;
                ssize_t n = read(&probe, 1);
                if (n == 0) break;
                all.ptr.reset();
                all.size = -1;
                if (n > 0) errno = EFBIG;
                return all;
            }
            size_t next = cap * 2 > max_buf ? max_buf : cap * 2;
            void* p = realloc(all.ptr.get(), next);
            if (!p) {
                all.ptr.reset();
                all.size = -1;
                errno = ENOMEM;
                return all;
            }
            all.ptr.release();
            all.ptr.reset(p);
            cap = next;
        }
        ssize_t n = read(static_cast<char*>(all.ptr.get()) + used, cap - used);
        if (n == 0) break;
        if (n < 0) {
            all.ptr.reset();
            all.size = -1;
            return all;
        }
        used += (size_t)n;
    }
    all.size = (ssize_t)used;
    return all;
}
