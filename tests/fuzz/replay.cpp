// Runs a fuzz target's LLVMFuzzerTestOneInput once on every file named on the command line or
// found (recursively) in a directory named there: the seed corpus and the regressions replayed
// by ctest in every build, with any compiler and without libFuzzer. Exit 0 when every input
// returned; a contract violation aborts, as it does under libFuzzer.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int replay(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) {
        std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
        return 1;
    }
    std::vector<std::uint8_t> copy(bytes.begin(), bytes.end()); // exactly size bytes, as libFuzzer gives
    (void)LLVMFuzzerTestOneInput(copy.data(), copy.size());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::size_t count = 0;
    int failures = 0;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path arg = argv[i];
        if (std::filesystem::is_directory(arg)) {
            for (const auto& entry : std::filesystem::recursive_directory_iterator(arg))
                if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') {
                    failures += replay(entry.path());
                    ++count;
                }
        } else if (std::filesystem::exists(arg)) {
            failures += replay(arg);
            ++count;
        }
    }
    std::printf("replayed %zu inputs\n", count);
    return failures == 0 && count > 0 ? 0 : 1;
}
