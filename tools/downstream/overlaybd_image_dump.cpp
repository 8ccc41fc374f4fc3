// overlaybd-image-dump SERVICE-CONFIG IMAGE-CONFIG OUTPUT: reads the block device an overlaybd
// image config describes (its layers, as overlaybd-apply and overlaybd-merge take it) into a raw
// file, so that e2fsprogs can check what the layers hold. Written for tools/downstream/
// overlaybd.sh's round trip; built inside overlaybd's build by overlaybd-Findphoton.cmake, on
// overlaybd's own image service, and on photon.
#include <fcntl.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include <photon/common/alog.h>
#include <photon/common/utility.h>
#include <photon/fs/localfs.h>
#include <photon/photon.h>

#include "image_file.h"
#include "image_service.h"

static bool all_zero(const char* p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s SERVICE-CONFIG IMAGE-CONFIG OUTPUT\n", argv[0]);
        return 2;
    }
    set_log_output_level(ALOG_WARN);
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_DEFAULT) < 0) return 1;
    DEFER(photon::fini());
    ImageService* service = create_image_service(argv[1]);
    if (!service) return fprintf(stderr, "cannot create the image service\n"), 1;
    DEFER(delete service);
    photon::fs::IFile* image = service->create_image_file(argv[2], "");
    if (!image) return fprintf(stderr, "cannot open the image %s\n", argv[2]), 1;
    DEFER(delete image);
    struct stat st;
    if (image->fstat(&st) < 0) return perror("fstat"), 1;
    auto out = photon::fs::open_localfile_adaptor(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (!out) return perror(argv[3]), 1;
    DEFER(delete out);
    if (out->ftruncate(st.st_size) < 0) return perror("ftruncate"), 1;
    std::vector<char> buf(1 << 20);
    for (off_t off = 0; off < st.st_size; off += buf.size()) {
        size_t n = std::min<off_t>(buf.size(), st.st_size - off);
        ssize_t r = image->pread(buf.data(), n, off);
        if (r != (ssize_t)n)
            return fprintf(stderr, "read at %ld: %s\n", (long)off, strerror(errno)), 1;
        if (!all_zero(buf.data(), n) && out->pwrite(buf.data(), n, off) != (ssize_t)n)
            return perror("pwrite"), 1;
    }
    printf("overlaybd-image-dump: %ld bytes\n", (long)st.st_size);
    return 0;
}
