// SimpleDOM's file helpers: parse_file() reads through fs (<photon/ecosystem/simple_dom.h>;
// on the fs floor, the rest of SimpleDOM on base: tools/floors.txt).
#include <errno.h>
#include <fcntl.h>

#include <memory>

#include <photon/common/alog.h>
#include <photon/ecosystem/simple_dom.h>
#include <photon/fs/filesystem.h>
#include <photon/fs/localfs.h>

namespace photon {
namespace SimpleDOM {

Node parse_file(fs::IFile* file, int flags) {
    if (!file) {
        errno = EINVAL;
        return nullptr;
    }
    auto buf = file->readall();
    if (!buf.ptr || buf.size <= 0) {
        if (buf.size == 0) errno = EINVAL;
        return nullptr;
    }
    return parse(std::move(buf), flags);
}

Node parse_file(const char* filename, int flags, fs::IFileSystem* fs) {
    fs::IFile* file =
        fs ? fs->open(filename, O_RDONLY) : fs::open_localfile_adaptor(filename, O_RDONLY);
    if (!file) LOG_ERRNO_RETURN(0, nullptr, "simple_dom: cannot open `", filename);
    std::unique_ptr<fs::IFile> guard(file);
    return parse_file(file, flags);
}

}  // namespace SimpleDOM
}  // namespace photon
