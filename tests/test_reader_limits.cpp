// The safetensors reader's limits on hostile headers (docs/contract.md), beyond the cases of
// test_safetensors.cpp: array lengths, unknown data dropped unseen, and parse time linear in the
// header (nlohmann's callback parser was quadratic in the tensor count).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "myattn/errors.hpp"
#include "myattn/safetensors.hpp"

using namespace myattn;
using Catch::Matchers::Contains;

namespace {

std::vector<std::byte> st_file(const std::string& header, std::size_t data_bytes = 0) {
    std::vector<std::byte> out(8 + header.size() + data_bytes);
    std::uint64_t n = header.size();
    for (std::size_t i = 0; i < 8; ++i, n >>= 8) out[i] = static_cast<std::byte>(n & 0xff);
    for (std::size_t i = 0; i < header.size(); ++i) out[8 + i] = static_cast<std::byte>(header[i]);
    return out;
}

std::string parse_error(const std::vector<std::byte>& file) {
    try {
        (void)safetensors::parse(file, "f");
    } catch (const FileError& e) {
        return e.what();
    }
    return "(no error)";
}

std::string ones(std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += i ? ",1" : "1";
    return s;
}

} // namespace

TEST_CASE("limits: shape and data_offsets hold at most 64 values", "[safetensors][errors][limits]") {
    const auto with_shape = [](std::size_t rank) {
        return st_file(R"({"w":{"dtype":"F32","shape":[)" + ones(rank) + R"(],"data_offsets":[0,4]}})", 4);
    };
    CHECK(safetensors::parse(with_shape(64), "f").at("w").shape.size() == 64);
    CHECK(parse_error(with_shape(65)) == R"(f: tensor "w": "shape" holds more than 64 values)");
    CHECK_THAT(parse_error(st_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[)" + ones(100) + "]}}", 4)),
               Contains(R"(tensor "w": "data_offsets" holds more than 64 values)"));
    // Other arrays are not limited by this rule: unknown fields are parsed and dropped.
    CHECK(safetensors::parse(
              st_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":[)" + ones(1000) + "]}}", 4), "f")
              .size() == 1);
}

TEST_CASE("limits: unknown fields and metadata are checked but not kept", "[safetensors][limits]") {
    // Repeats inside dropped data do not matter (as in the official reader); its syntax does.
    CHECK(safetensors::parse(st_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":{"a":1,"a":2}}})", 4),
                             "f")
              .size() == 1);
    CHECK_THAT(parse_error(st_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":{"a":1,}}})", 4)),
               Contains("not valid JSON"));
    // Metadata values must still be strings, and metadata keys unique.
    CHECK_THAT(parse_error(st_file(R"({"__metadata__":{"a":"1","b":[]}})")), Contains(R"("b" holds array)"));
    CHECK_THAT(parse_error(st_file(R"({"__metadata__":{"a":"1","b":null}})")), Contains(R"("b" holds null)"));
    CHECK_THAT(parse_error(st_file(R"({"__metadata__":{"a":"1","a":"1"}})")), Contains(R"(duplicate key "a")"));
    // The nesting bound counts dropped data too.
    CHECK_THAT(parse_error(st_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":)" +
                                       std::string(20, '[') + std::string(20, ']') + "}}",
                                   4)),
               Contains("nests deeper than 16"));
}

TEST_CASE("limits: parse time is linear in the tensor count", "[safetensors][limits]") {
    // nlohmann's callback parser rescans an object's members each time one of
    // them ends: quadratic in the tensor count (20 000 tiny tensors took 12 s, 80 000 took
    // 337 s). Sixteen times the tensors must take about sixteen times as long, not 256: the
    // bound of 64 leaves a factor of four either way. The ratio holds in any build and under an
    // emulator, where absolute times do not; the thread's own CPU time, best of three, is not
    // stretched by other processes sharing the machine, as wall time is.
    const auto seconds_for = [](std::size_t n) {
        std::string header = "{";
        for (std::size_t i = 0; i < n; ++i)
            header += (i ? ",\"" : "\"") + std::to_string(i) + R"(":{"dtype":"F16","shape":[0],"data_offsets":[0,0]})";
        const std::vector<std::byte> file = st_file(header + "}");
        const auto cpu_seconds = [] {
            timespec t{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
            return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
        };
        double best = 1e9;
        for (int run = 0; run < 3; ++run) {
            const double start = cpu_seconds();
            const auto tensors = safetensors::parse(file, "f");
            best = std::min(best, cpu_seconds() - start);
            CHECK(tensors.size() == n);
        }
        return best;
    };
    const double small = seconds_for(2'000), large = seconds_for(32'000);
    CAPTURE(small, large);
    CHECK(large < 64 * small + 0.05);
}
