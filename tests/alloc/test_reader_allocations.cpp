// Resource limits of the safetensors reader (docs/contract.md): a header length or a tensor
// size larger than the file is refused before anything of that size is allocated, and reading
// any file allocates at most a small multiple of its size. This binary's operator new counts
// (counting_new.cpp), so it is separate from myattn_tests.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "alloc/counting_new.hpp"
#include "myattn/errors.hpp"
#include "myattn/safetensors.hpp"

using namespace myattn;
using namespace myattn::test;
namespace fs = std::filesystem;

namespace {

/// Reading a file may use this many times its size, plus a constant for the fixed costs (the
/// path, the map, error messages). See docs/contract.md for where the factor comes from.
constexpr std::size_t max_factor = 16;
constexpr std::size_t slack = 64 * 1024;

std::string st_file(const std::string& header, std::size_t data_bytes = 0) {
    std::string out(8, '\0');
    std::uint64_t n = header.size();
    for (std::size_t i = 0; i < 8; ++i, n >>= 8) out[i] = static_cast<char>(n & 0xff);
    return out + header + std::string(data_bytes, '\0');
}

struct TempFile {
    fs::path path;
    explicit TempFile(const std::string& bytes) {
        static int counter = 0;
        path = fs::temp_directory_path() /
               ("myattn-alloc-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".safetensors");
        std::ofstream(path, std::ios::binary) << bytes;
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        std::error_code ignored;
        fs::remove(path, ignored);
    }
};

/// Reads `file` (success or FileError), returning what that allocated.
AllocationStats read_stats(const fs::path& file, bool expect_error) {
    const std::string path = file.string(); // allocated outside the count
    Counting counting;
    bool failed = false;
    try {
        (void)safetensors::read(path);
    } catch (const FileError&) {
        failed = true;
    }
    const AllocationStats s = counting.stats();
    CHECK(failed == expect_error);
    return s;
}

void check_bounded(const std::string& what, const std::string& bytes, bool expect_error) {
    const TempFile file(bytes);
    const AllocationStats s = read_stats(file.path, expect_error);
    CAPTURE(what, bytes.size(), s.peak_bytes, s.largest_request, s.allocations,
            static_cast<double>(s.peak_bytes) / static_cast<double>(bytes.size()));
    CHECK(s.peak_bytes <= max_factor * bytes.size() + slack);
}

std::string repeated(const std::string& unit, std::size_t times, const std::string& sep = ",") {
    std::string out;
    for (std::size_t i = 0; i < times; ++i) out += (i ? sep : "") + unit;
    return out;
}

} // namespace

TEST_CASE("alloc: the counter sees allocations", "[alloc]") {
    Counting counting;
    auto* p = new std::string(1000, 'x');
    const AllocationStats s = counting.stats();
    delete p;
    CHECK(s.largest_request >= 1000);
    CHECK(s.peak_bytes >= 1000);
}

TEST_CASE("alloc: a header length larger than the file is refused before any allocation of that size",
          "[alloc][safetensors]") {
    for (std::uint64_t length :
         {std::uint64_t{1} << 20, std::uint64_t{99'999'999}, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
        CAPTURE(length);
        std::string bytes(8, '\0');
        for (std::size_t i = 0; i < 8; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
        bytes += "{}";
        const TempFile file(bytes);
        const AllocationStats s = read_stats(file.path, true);
        CHECK(s.largest_request < 1024); // the 8-byte prefix and the error message, nothing more
        CHECK(s.peak_bytes < 16 * 1024);
        // The same through parse() on the bytes in memory.
        Counting counting;
        CHECK_THROWS_AS(safetensors::parse({reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()}, "x"),
                        FileError);
        CHECK(counting.stats().largest_request < 1024);
    }
}

TEST_CASE("alloc: a tensor larger than the file is refused before any allocation of that size",
          "[alloc][safetensors]") {
    const std::string bad[] = {
        // data_offsets past the end of the data
        st_file(R"({"w":{"dtype":"F32","shape":[268435456],"data_offsets":[0,1073741824]}})", 16),
        // a shape of 10^9 floats in 4 bytes of data
        st_file(R"({"w":{"dtype":"F32","shape":[1000000000],"data_offsets":[0,4]}})", 4),
        // a shape whose byte count overflows
        st_file(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8),
    };
    for (const std::string& bytes : bad) {
        const TempFile file(bytes);
        const AllocationStats s = read_stats(file.path, true);
        CAPTURE(bytes.substr(8), s.largest_request, s.peak_bytes);
        CHECK(s.largest_request < 4096);
        CHECK(s.peak_bytes <= max_factor * bytes.size() + slack);
    }
}

TEST_CASE("alloc: reading any file allocates at most a small multiple of its size", "[alloc][safetensors]") {
    SECTION("the test data") {
        for (const auto& entry : fs::directory_iterator(MYATTN_TEST_DATA)) {
            if (entry.path().extension() != ".safetensors") continue;
            std::ifstream in(entry.path(), std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            check_bounded(entry.path().filename().string(), bytes, false);
        }
    }
    // Headers built to make the JSON tree as large as possible per byte of header.
    constexpr std::size_t n = 20'000;
    SECTION("many tiny tensors") {
        std::string header = "{";
        for (std::size_t i = 0; i < n; ++i)
            header += (i ? ",\"" : "\"") + std::to_string(i) + R"(":{"dtype":"F16","shape":[0],"data_offsets":[0,0]})";
        check_bounded("many tiny tensors", st_file(header + "}"), false);
    }
    SECTION("many metadata entries") {
        std::string header = R"({"__metadata__":{)";
        for (std::size_t i = 0; i < n; ++i) header += (i ? ",\"" : "\"") + std::to_string(i) + "\":\"\"";
        check_bounded("many metadata entries", st_file(header + "}}"), false);
    }
    SECTION("many tensors of the largest rank") {
        std::string header = "{";
        for (std::size_t i = 0; i < n / 64; ++i)
            header += (i ? ",\"" : "\"") + std::to_string(i) + R"(":{"dtype":"F32","shape":[)" + repeated("1", 63) +
                      R"(,0],"data_offsets":[0,0]})";
        check_bounded("many tensors of rank 64", st_file(header + "}"), false);
    }
    SECTION("a long shape is refused early") {
        check_bounded("a long shape",
                      st_file(R"({"w":{"dtype":"F32","shape":[)" + repeated("1", n) + R"(],"data_offsets":[0,4]}})", 4),
                      true);
    }
    SECTION("unknown fields full of small values") {
        const std::string fill[] = {repeated("0", n), repeated("[]", n), repeated("{}", n), repeated("\"\"", n),
                                    repeated("[[[[]]]]", n / 4)};
        for (const std::string& values : fill)
            check_bounded("unknown field [" + values.substr(0, 20) + "...]",
                          st_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":[)" + values + "]}}", 4),
                          false);
    }
    SECTION("a small array under each of many keys of an unknown field") {
        std::string obj = "{";
        for (std::size_t i = 0; i < n; ++i) obj += (i ? ",\"" : "\"") + std::to_string(i) + "\":[]";
        check_bounded("keys of an unknown field",
                      st_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":)" + obj + "}}}", 4), false);
    }
    SECTION("a malformed file fails within the same bound") {
        check_bounded(
            "bad JSON at the end",
            st_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":[)" + repeated("1", n) + "]", 4), true);
    }
}
