// Running the `myattn` executable from tests and capturing what it printed.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace myattn::test {

/// A fresh, empty directory under the system temp dir, removed when this goes out of scope.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("myattn-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::filesystem::path operator/(const std::string& name) const { return path / name; }
};

struct CliResult {
    int status = -1;
    std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Runs `MYATTN_CLI <args>` (with an optional environment prefix such as "MYATTN_ISA=x").
/// The environment variable MYATTN_TEST_CLI_PREFIX, when set, goes before it: qemu-user does not
/// follow exec, so whoever runs the tests under `qemu-x86_64 -cpu Haswell` sets it to that command
/// and the CLI runs on the same emulated CPU instead of natively (tools/ci/old-cpus.sh).
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
    TempDir tmp;
    const char* prefix = std::getenv("MYATTN_TEST_CLI_PREFIX");
    const std::string cli = (prefix && *prefix ? std::string(prefix) + " " : std::string()) + MYATTN_CLI;
    const std::string cmd = (env.empty() ? "" : "env " + env + " ") + cli + " " + args + " >" + (tmp / "out").string() +
                            " 2>" + (tmp / "err").string() + " </dev/null";
    const int raw = std::system(cmd.c_str());
    CliResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(tmp / "out");
    r.err = slurp(tmp / "err");
    return r;
}

} // namespace myattn::test
