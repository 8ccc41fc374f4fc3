// Built the way PhotonLibOS's consumers build: linked to photon_static only, so zlib must come
// through photon's link interface; names DIR under `using namespace photon::fs` in a file that
// does not include <dirent.h> (photon's headers must not bring its ::DIR). Exits 0 only if
// everything worked.
#include <zlib.h>

#include <cstdio>
#include <cstring>

#include <photon/fs/filesystem.h>
#include <photon/fs/localfs.h>
#include <photon/photon.h>

using namespace photon::fs;

int main() {
    if (photon::init(photon::INIT_EVENT_DEFAULT, photon::INIT_IO_NONE) != 0) return 1;
    auto fs = new_localfs_adaptor("/", ioengine_psync);
    if (!fs) return 2;
    DIR* dir = fs->opendir("/");  // photon::fs::DIR, not ::DIR
    int entries = 0;
    while (dir && dir->readdir()) entries++;
    delete dir;
    delete fs;
    const char text[] = "photon";
    uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(text), sizeof(text) - 1);
    std::printf("glue consumer: %d entries in /, zlib %s, crc32 %08lx\n", entries, zlibVersion(),
                crc);
    photon::fini();
    return entries > 0 && crc == 0x6b708c00UL ? 0 : 3;
}
