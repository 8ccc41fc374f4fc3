// Helpers for tls_test.cpp: a throw-away PKI made with the openssl CLI, and
// child processes (openssl s_server / s_client, curl) that a test waits for
// without blocking its vCPU.
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

#include "../util/temp_dir.h"

namespace photon_test {

inline std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline bool have_tool(const char* name) {
    std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
    return system(cmd.c_str()) == 0;
}

// A CA and certificates signed by it, in a temporary directory removed at
// exit. srv: localhost + 127.0.0.1; wrong: wrong.example; expired: localhost,
// expired yesterday; a / b: a.test / b.test; self: self-signed localhost;
// srv_enc.key: srv.key under passphrase "secret"; cadir: hashed CA dir.
class test_pki {
public:
    static test_pki& get() {
        static test_pki pki;
        return pki;
    }
    bool ok() const { return ok_; }
    std::string path(const std::string& name) const { return dir_ / name; }
    std::string pem(const std::string& name) const { return slurp(path(name)); }

private:
    test_pki() {
        if (!dir_.ok()) return;
        std::ofstream(path("gen.sh")) << R"(set -e
K='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'
gen() {
    openssl req $K -keyout $1.key -out $1.csr -subj /CN=$2
    printf 'subjectAltName=%s\n' "$3" > $1.ext
    openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
        -out $1.pem -days $4 -extfile $1.ext
}
openssl req -x509 $K -keyout ca.key -out ca.pem -days 2 -subj /CN=photon-test-ca
gen srv localhost DNS:localhost,IP:127.0.0.1 2
gen wrong wrong.example DNS:wrong.example 2
gen expired localhost DNS:localhost,IP:127.0.0.1 -1
gen a a.test DNS:a.test 2
gen b b.test DNS:b.test 2
openssl req -x509 $K -keyout self.key -out self.pem -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost
openssl pkey -in srv.key -aes256 -passout pass:secret -out srv_enc.key
mkdir cadir && cp ca.pem cadir/ && openssl rehash cadir
echo done > ok
)";
        std::string cmd = "cd " + dir_.path() + " && sh gen.sh > log 2>&1";
        ok_ = system(cmd.c_str()) == 0 && std::filesystem::exists(path("ok"));
    }

    temp_dir dir_{"photon-tls"};  // removed at exit
    bool ok_ = false;
};

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
