// The extension table: sorted, searched with a lower-cased copy of the
// extension, so a lookup costs a few compares and no allocation.
#include "mime_types.h"

#include <algorithm>
#include <iterator>

namespace photon {
namespace net {
namespace http {
namespace {

struct entry {
    std::string_view ext, type;
};

// Sorted by ext, for the binary search.
constexpr entry kTypes[] = {
    {"7z", "application/x-7z-compressed"},
    {"aac", "audio/aac"},
    {"apng", "image/apng"},
    {"avif", "image/avif"},
    {"bin", "application/octet-stream"},
    {"bmp", "image/bmp"},
    {"bz2", "application/x-bzip2"},
    {"css", "text/css; charset=utf-8"},
    {"csv", "text/csv; charset=utf-8"},
    {"flac", "audio/flac"},
    {"gif", "image/gif"},
    {"gz", "application/gzip"},
    {"htm", "text/html; charset=utf-8"},
    {"html", "text/html; charset=utf-8"},
    {"ico", "image/vnd.microsoft.icon"},
    {"ics", "text/calendar; charset=utf-8"},
    {"jpeg", "image/jpeg"},
    {"jpg", "image/jpeg"},
    {"js", "text/javascript; charset=utf-8"},
    {"json", "application/json"},
    {"jsonld", "application/ld+json"},
    {"m4a", "audio/mp4"},
    {"manifest", "application/manifest+json"},
    {"map", "application/json"},
    {"md", "text/markdown; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    {"mp3", "audio/mpeg"},
    {"mp4", "video/mp4"},
    {"mpeg", "video/mpeg"},
    {"oga", "audio/ogg"},
    {"ogg", "audio/ogg"},
    {"ogv", "video/ogg"},
    {"opus", "audio/opus"},
    {"otf", "font/otf"},
    {"pdf", "application/pdf"},
    {"png", "image/png"},
    {"rss", "application/rss+xml"},
    {"svg", "image/svg+xml"},
    {"tar", "application/x-tar"},
    {"tif", "image/tiff"},
    {"tiff", "image/tiff"},
    {"ttf", "font/ttf"},
    {"txt", "text/plain; charset=utf-8"},
    {"wasm", "application/wasm"},
    {"wav", "audio/wav"},
    {"weba", "audio/webm"},
    {"webm", "video/webm"},
    {"webmanifest", "application/manifest+json"},
    {"webp", "image/webp"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"xhtml", "application/xhtml+xml"},
    {"xml", "application/xml"},
    {"yaml", "application/yaml"},
    {"yml", "application/yaml"},
    {"zip", "application/zip"},
    {"zst", "application/zstd"},
};

constexpr bool sorted() {
    for (size_t i = 1; i < std::size(kTypes); i++)
        if (!(kTypes[i - 1].ext < kTypes[i].ext)) return false;
    return true;
}
static_assert(sorted(), "kTypes must be sorted by extension, without duplicates");

constexpr std::string_view kDefault = "application/octet-stream";

}  // namespace

std::string_view mime_type(std::string_view path) {
    size_t slash = path.rfind('/');
    std::string_view name = slash == path.npos ? path : path.substr(slash + 1);
    size_t dot = name.rfind('.');
    if (dot == name.npos) return kDefault;
    std::string_view ext = name.substr(dot + 1);
    char lower[12];
    if (ext.empty() || ext.size() > sizeof(lower)) return kDefault;
    for (size_t i = 0; i < ext.size(); i++)
        lower[i] = ext[i] >= 'A' && ext[i] <= 'Z' ? (char)(ext[i] + 32) : ext[i];
    std::string_view key(lower, ext.size());
    auto it = std::lower_bound(std::begin(kTypes), std::end(kTypes), key,
                               [](const entry& e, std::string_view k) { return e.ext < k; });
    return it != std::end(kTypes) && it->ext == key ? it->type : kDefault;
}

}  // namespace http
}  // namespace net
}  // namespace photon
