// Helpers for the TLS tests: child processes (openssl s_server / s_client,
// curl) that a test waits for without blocking its vCPU; the throw-away PKI
// and the TLS context pair are in test/util/tls_pair.h.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <photon/thread/thread.h>

#include "../util/tls_pair.h"

namespace photon_test {

// A child process (argv[0] looked up in PATH) with stdin / stdout+stderr
// redirected to files ("" = /dev/null). Killed and reaped by the destructor.
class child_process {
public:
    child_process(std::vector<std::string> argv, const std::string& in = "",
                  const std::string& out = "") {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, in.empty() ? "/dev/null" : in.c_str(), O_RDONLY,
                                         0);
        const char* o = out.empty() ? "/dev/null" : out.c_str();
        posix_spawn_file_actions_addopen(&fa, 1, o, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(&a[0]);
        args.push_back(nullptr);
        if (posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0) pid_ = -1;
        posix_spawn_file_actions_destroy(&fa);
    }
    ~child_process() {
        if (pid_ <= 0 || exited_) return;
        kill(pid_, SIGTERM);
        waitpid(pid_, nullptr, 0);
    }
    bool started() const { return pid_ > 0; }
    // Waits (sleeping the coroutine, so the vCPU serves the child) up to
    // max_ms; the exit status, or -1 if it is still running.
    int wait(int max_ms = 15000) {
        for (int i = 0; i < max_ms && !exited_; i++) {
            int st = 0;
            if (waitpid(pid_, &st, WNOHANG) == pid_) {
                exited_ = true;
                status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                break;
            }
            photon::thread_usleep(1000);
        }
        return exited_ ? status_ : -1;
    }

private:
    pid_t pid_ = -1;
    bool exited_ = false;
    int status_ = -1;
};

}  // namespace photon_test
