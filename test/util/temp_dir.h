// A fresh temporary directory for a test, removed with all it holds when the
// object goes: the one helper the test folders share for it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace photon_test {

class temp_dir {
public:
    // Under `parent`, else $TMPDIR, else /tmp; named prefix.XXXXXX.
    explicit temp_dir(const std::string& prefix = "photon-test", const std::string& parent = "") {
        std::string base = parent;
        if (base.empty()) {
            const char* t = getenv("TMPDIR");
            base = t && *t ? t : "/tmp";
        }
        std::error_code ec;
        std::filesystem::create_directories(base, ec);
        std::string tmpl = base + "/" + prefix + ".XXXXXX";
        if (mkdtemp(&tmpl[0])) path_ = tmpl;
    }
    ~temp_dir() {
        std::error_code ec;  // a file that cannot go stays; the test's outcome stands
        if (!path_.empty()) std::filesystem::remove_all(path_, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    bool ok() const { return !path_.empty(); }
    const std::string& path() const { return path_; }
    std::string path(const std::string& name) const { return path_ + "/" + name; }
    std::string operator/(const std::string& name) const { return path(name); }
    // Writes data to `name` inside, making its parent directories.
    void write(const std::string& name, const std::string& data) const {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(path(name)).parent_path(), ec);
        std::ofstream(path(name), std::ios::binary) << data;
    }

private:
    std::string path_;
};

}  // namespace photon_test
