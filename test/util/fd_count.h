// How many file descriptors the process has open (a leak check for test
// programs, with or without GoogleTest).
#pragma once

#include <dirent.h>

namespace photon_test {

// The entries of /proc/self/fd, less the one opendir() itself holds; -1 if
// it cannot be read.
inline int count_open_fds() {
    DIR* d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    while (auto e = readdir(d))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1;
}

}  // namespace photon_test
