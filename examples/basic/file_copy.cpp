// file-copy: copies a file through photon's local file system on the I/O
// engine you choose, as a program that reads and writes big files would.
//
//   file-copy SRC DST [psync|iouring|libaio|posixaio]     (default iouring)
//
// The engine decides how a pread/pwrite waits: psync blocks the vCPU (fine
// for page-cache hits), the others park only the calling coroutine while
// the kernel works. libaio needs O_DIRECT, so its files are opened with it
// and wrapped to accept any offset and size.
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <photon/common/alog.h>
#include <photon/fs/aligned-file.h>
#include <photon/fs/localfs.h>
#include <photon/photon.h>

using namespace photon::fs;

static int engine_of(const char* name) {
    if (!strcmp(name, "psync")) return ioengine_psync;
    if (!strcmp(name, "libaio")) return ioengine_libaio;
    if (!strcmp(name, "posixaio")) return ioengine_posixaio;
    if (!strcmp(name, "iouring")) return ioengine_iouring;
    return -1;
}

// Opens path on `engine`; libaio files get the aligned adaptor (bounce buffers).
static IFile* open_file(const char* path, int flags, int engine) {
    IFile* f = open_localfile_adaptor(path, flags, 0644, engine);
    if (f && engine == ioengine_libaio) f = new_aligned_file_adaptor(f, 4096, true, true);
    return f;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s SRC DST [psync|iouring|libaio|posixaio]\n", argv[0]);
        return 2;
    }
    int engine = engine_of(argc > 3 ? argv[3] : "iouring");
    if (engine < 0) return fprintf(stderr, "file-copy: unknown engine %s\n", argv[3]), 2;
    // INIT_IO_DEFAULT sets up libaio for this vCPU too.
    set_log_output_level(ALOG_WARN);  // photon logs INFO lines by default
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_DEFAULT) != 0) return 1;

    std::unique_ptr<IFile> src(open_file(argv[1], O_RDONLY, engine));
    // O_RDWR, not O_WRONLY: the aligned adaptor reads the edges of an unaligned write.
    std::unique_ptr<IFile> dst(open_file(argv[2], O_RDWR | O_CREAT | O_TRUNC, engine));
    if (!src || !dst) return perror("file-copy: open"), 1;
    struct stat st;
    if (src->fstat(&st) != 0) return perror("file-copy: fstat"), 1;

    const size_t chunk = 1 << 20;
    void* buf = nullptr;
    if (posix_memalign(&buf, 4096, chunk) != 0) return 1;  // aligned: O_DIRECT takes it as is
    off_t off = 0;
    while (off < st.st_size) {
        ssize_t n = src->pread(buf, chunk, off);  // parks this coroutine, not the vCPU
        if (n <= 0 || dst->pwrite(buf, n, off) != n) {
            perror("file-copy: copy failed");
            return 1;
        }
        off += n;
    }
    free(buf);
    dst->fsync();
    printf("file-copy: %lld bytes copied\n", (long long)off);
    src.reset();
    dst.reset();
    photon::fini();
    return 0;
}
