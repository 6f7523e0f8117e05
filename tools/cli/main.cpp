// myattn: the command-line face of the library. Exit 0 on success; on any error exactly one
// line on stderr starting "myattn:" and exit status 2.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "args.hpp"
#include "commands.hpp"
#include "myattn/safetensors.hpp"
#include "myattn/version.hpp"

namespace {

constexpr const char* usage = R"(usage: myattn <command> [options]

commands:
  info    CPU features, ISAs compiled in and runnable, the active ISA and why
  demo    run the article's example (sizes 32, 32, 32, 64, 32) and print the result
  run     run a forward pass over safetensors files

Run `myattn <command> --help` for the options of each command.
)";

int fail(const std::string& message) {
    std::string line = message;
    for (char& c : line)
        if (c == '\n') c = ' '; // exactly one line
    std::fprintf(stderr, "myattn: %s\n", line.c_str());
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    try {
        if (argc < 2) return fail("no command given (try `myattn --help`)");
        const std::string_view command = argv[1];
        const std::span<char* const> rest(argv + 2, static_cast<std::size_t>(argc - 2));
        if (command == "--help" || command == "-h" || command == "help") {
            std::fputs(usage, stdout);
            return 0;
        }
        if (command == "--version") {
            std::printf("myattn %s\n", myattn::version_string);
            return 0;
        }
        if (command == "info") return myattn::cli::info(rest);
        if (command == "demo") return myattn::cli::demo(rest);
        if (command == "run") return myattn::cli::run(rest);
        return fail("unknown command " + myattn::safetensors::in_quotes(command) + " (try `myattn --help`)");
    } catch (const std::exception& e) {
        return fail(e.what());
    } catch (...) {
        return fail("unknown error");
    }
}
