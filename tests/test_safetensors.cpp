// safetensors reading and writing. Reader tests build their bytes by hand (never with the writer),
// and expected values are derived by hand from the formats' bit layouts.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "myattn/errors.hpp"
#include "myattn/safetensors.hpp"

namespace {

using namespace myattn;
using namespace myattn::safetensors;
using Catch::Matchers::Contains;
using Bytes = std::vector<std::byte>;
namespace fs = std::filesystem;

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr char source[] = "test.safetensors";

template <class T>
Bytes bytes_of(std::initializer_list<T> values) {
    Bytes out(values.size() * sizeof(T));
    std::memcpy(out.data(), std::data(values), out.size());
    return out;
}

Bytes concat(std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

/// A file image: the 8-byte little-endian header length, the header as given, then the data.
Bytes file_with(std::string_view header, const Bytes& data = {}) {
    Bytes out = bytes_of<std::uint64_t>({header.size()});
    for (char c : header) out.push_back(static_cast<std::byte>(c));
    out.insert(out.end(), data.begin(), data.end());
    return out;
}

/// The message of the FileError that parsing `file` throws; fails the test if none is thrown.
std::string parse_error(const Bytes& file) {
    try {
        (void)parse(file, source);
    } catch (const FileError& e) {
        return e.what();
    }
    FAIL("parse did not throw FileError");
    return {};
}

/// Checks that parsing fails with a one-line message naming the source and every `expected` part.
void expect_parse_error(const Bytes& file, std::initializer_list<std::string> expected) {
    const std::string message = parse_error(file);
    CAPTURE(message);
    CHECK(message.rfind(std::string(source) + ": ", 0) == 0);
    CHECK(message.find('\n') == std::string::npos);
    for (const std::string& part : expected) CHECK_THAT(message, Contains(part));
}

/// An F32 entry "w" of shape `shape` whose data_offsets are `offsets`, with `data_size` bytes of data.
Bytes f32_file(std::string_view shape, std::string_view offsets, std::size_t data_size) {
    return file_with(std::string(R"({"w":{"dtype":"F32","shape":)") + std::string(shape) + R"(,"data_offsets":)" +
                         std::string(offsets) + "}}",
                     Bytes(data_size));
}

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
float from_bits(std::uint32_t b) { return std::bit_cast<float>(b); }

/// The data block of a serialised file, located through its header length.
Bytes data_block(const Bytes& file) {
    std::uint64_t length;
    std::memcpy(&length, file.data(), sizeof length);
    return Bytes(file.begin() + static_cast<std::ptrdiff_t>(8 + length), file.end());
}

std::vector<std::uint16_t> stored_u16(const Bytes& file) {
    const Bytes data = data_block(file);
    std::vector<std::uint16_t> out(data.size() / 2);
    std::memcpy(out.data(), data.data(), data.size());
    return out;
}

std::vector<float> round_trip(const std::vector<float>& values, Dtype dtype) {
    const NamedTensor t{"x", {values.data(), {values.size()}}};
    return parse(serialize({&t, 1}, dtype), source).at("x").data;
}

/// A fresh directory under the system temp dir, removed with its contents at scope exit.
struct TempDir {
    fs::path path;
    TempDir() {
        static std::atomic<int> counter{0};
        path = fs::temp_directory_path() /
               ("myattn_test_safetensors." + std::to_string(::getpid()) + "." + std::to_string(counter++));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    [[nodiscard]] std::set<std::string> entries() const {
        std::set<std::string> names;
        for (const auto& e : fs::directory_iterator(path)) names.insert(e.path().filename().string());
        return names;
    }
};

void put_file(const fs::path& file, const Bytes& bytes) {
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
}

Bytes file_contents(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Bytes out(chars.size());
    std::memcpy(out.data(), chars.data(), chars.size());
    return out;
}

const float sample[] = {1.5f, -2.25f, 3.0f, 0.125f};

} // namespace

// ---- Reading well-formed files -------------------------------------------------------------

TEST_CASE("dtype_name spells the format's dtype names", "[safetensors]") {
    CHECK(dtype_name(Dtype::F32) == "F32");
    CHECK(dtype_name(Dtype::F64) == "F64");
    CHECK(dtype_name(Dtype::F16) == "F16");
    CHECK(dtype_name(Dtype::BF16) == "BF16");
}

TEST_CASE("parse reads a hand-built file laid out as the format describes", "[safetensors]") {
    // Data: "b" (F32 [2,2]) at 0..16, "a" (F64 [1]) at 16..24, "c" (F16 [2]) at 24..28, "d" (BF16 []) at 28..30.
    std::string header = R"({"__metadata__":{"format":"pt"},)"
                         R"("b":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
                         R"("a":{"dtype":"F64","shape":[1],"data_offsets":[16,24]},)"
                         R"("c":{"dtype":"F16","shape":[2],"data_offsets":[24,28]},)"
                         R"("d":{"dtype":"BF16","shape":[],"data_offsets":[28,30]}})";
    header.append((8 - header.size() % 8) % 8, ' ');
    const Bytes data = concat({bytes_of<float>({1.0f, 2.0f, -3.5f, 0.25f}), bytes_of<double>({-0.5}),
                               bytes_of<std::uint16_t>({0x3c00, 0xc500}), bytes_of<std::uint16_t>({0x4049})});
    const TensorMap map = parse(file_with(header, data), source);

    REQUIRE(map.size() == 4);
    CHECK(map.count("__metadata__") == 0);
    const Tensor& b = map.at("b");
    CHECK(b.shape == std::vector<std::size_t>{2, 2});
    CHECK(b.data == std::vector<float>{1.0f, 2.0f, -3.5f, 0.25f});
    CHECK(b.stored_as == Dtype::F32);
    CHECK(b.view_shape() == Shape{2, 2});
    CHECK(map.at("a").data == std::vector<float>{-0.5f});
    CHECK(map.at("a").stored_as == Dtype::F64);
    CHECK(map.at("c").data == std::vector<float>{1.0f, -5.0f});
    CHECK(map.at("c").stored_as == Dtype::F16);
    CHECK(map.at("d").shape.empty());
    CHECK(map.at("d").data == std::vector<float>{3.140625f}); // 0x4049: 1.5703125 * 2
    CHECK(map.at("d").stored_as == Dtype::BF16);
}

TEST_CASE("parse accepts rank-0 tensors, empty tensors and a file without tensors", "[safetensors]") {
    SECTION("rank 0 holds one element") {
        const TensorMap map = parse(
            file_with(R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})", bytes_of<float>({7.0f})), source);
        CHECK(map.at("s").shape.empty());
        CHECK(map.at("s").data == std::vector<float>{7.0f});
    }
    SECTION("zero-element tensors take no bytes, even between others") {
        const TensorMap map = parse(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                              R"("e":{"dtype":"F16","shape":[3,0],"data_offsets":[4,4]},)"
                                              R"("z":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                              bytes_of<float>({1.0f, 2.0f})),
                                    source);
        CHECK(map.at("e").shape == std::vector<std::size_t>{3, 0});
        CHECK(map.at("e").data.empty());
        CHECK(map.at("z").data == std::vector<float>{2.0f});
    }
    SECTION("an empty header object") { CHECK(parse(file_with("{}    "), source).empty()); }
    SECTION("only metadata") { CHECK(parse(file_with(R"({"__metadata__":{}})"), source).empty()); }
}

TEST_CASE("parse reads data at any alignment", "[safetensors]") {
    const Bytes file = file_with(R"({"d":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
                                 R"("f":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}})",
                                 concat({bytes_of<double>({0.5, -8.0}), bytes_of<float>({3.0f})}));
    for (std::size_t shift = 1; shift < 8; ++shift) {
        CAPTURE(shift);
        Bytes shifted(shift); // the file then starts at an odd address: loads must not assume alignment
        shifted.insert(shifted.end(), file.begin(), file.end());
        const TensorMap map = parse(std::span(shifted).subspan(shift), source);
        CHECK(map.at("d").data == std::vector<float>{0.5f, -8.0f});
        CHECK(map.at("f").data == std::vector<float>{3.0f});
    }
}

TEST_CASE("parse ignores unknown fields in an entry, as the official reader does", "[safetensors]") {
    const TensorMap map =
        parse(file_with(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":{"x":[1,2]}}})",
                        bytes_of<float>({1})),
              source);
    CHECK(map.at("w").data == std::vector<float>{1.0f});
}

TEST_CASE("parse decodes F16 exactly", "[safetensors][f16]") {
    struct Case {
        std::uint16_t stored;
        std::uint32_t expected_bits;
    };
    const Case cases[] = {
        {0x0000, 0x00000000}, // +0
        {0x8000, 0x80000000}, // -0
        {0x3c00, bits(1.0f)}, // normals
        {0xc000, bits(-2.0f)},
        {0x3555, bits(0.333251953125f)}, // 1.0101010101b * 2^-2
        {0x7bff, bits(65504.0f)},        // largest finite
        {0x0400, bits(0x1p-14f)},        // smallest normal
        {0x0001, bits(0x1p-24f)},        // smallest subnormal
        {0x03ff, bits(1023 * 0x1p-24f)}, // largest subnormal
        {0x8201, bits(-513 * 0x1p-24f)}, // negative subnormal
        {0x7c00, bits(inf)},             // infinities
        {0xfc00, bits(-inf)},
    };
    std::vector<std::uint16_t> stored;
    for (const Case& c : cases) stored.push_back(c.stored);
    stored.push_back(0x7e00); // NaN
    stored.push_back(0xfd01); // negative signalling NaN
    Bytes data(stored.size() * 2);
    std::memcpy(data.data(), stored.data(), data.size());
    const std::string header = R"({"h":{"dtype":"F16","shape":[)" + std::to_string(stored.size()) +
                               R"(],"data_offsets":[0,)" + std::to_string(data.size()) + "]}}";
    const std::vector<float> values = parse(file_with(header, data), source).at("h").data;

    REQUIRE(values.size() == stored.size());
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        CAPTURE(i, cases[i].stored);
        CHECK(bits(values[i]) == cases[i].expected_bits);
    }
    CHECK(std::isnan(values[std::size(cases)]));
    CHECK(std::isnan(values[std::size(cases) + 1]));
    CHECK(std::signbit(values[std::size(cases) + 1]));
}

TEST_CASE("parse decodes BF16 exactly", "[safetensors][bf16]") {
    const Bytes data = bytes_of<std::uint16_t>({0x3f80, 0x8000, 0x0001, 0x7f7f, 0xff80, 0xc0a0, 0x7fc1});
    const std::vector<float> values =
        parse(file_with(R"({"b":{"dtype":"BF16","shape":[7],"data_offsets":[0,14]}})", data), source).at("b").data;
    REQUIRE(values.size() == 7);
    CHECK(bits(values[0]) == bits(1.0f));
    CHECK(bits(values[1]) == 0x80000000u);     // -0
    CHECK(bits(values[2]) == bits(0x1p-133f)); // float subnormal
    CHECK(bits(values[3]) == 0x7f7f0000u);     // largest finite BF16
    CHECK(bits(values[4]) == bits(-inf));
    CHECK(values[5] == -5.0f);
    CHECK(std::isnan(values[6]));
}

TEST_CASE("parse rounds F64 to the nearest float", "[safetensors][f64]") {
    struct Case {
        double stored;
        float expected;
    };
    const Case cases[] = {
        {0.1, 0.1f},                          // rounds like a C++ conversion
        {1.0 + 0x1p-24, 1.0f},                // tie, to even (down)
        {1.0 + 3 * 0x1p-24, 1.0f + 0x1p-22f}, // tie, to even (up)
        {1e300, inf},                         // far beyond float: saturates
        {-1e300, -inf},
        {0x1.ffffffp127, inf},                    // FLT_MAX + half an ulp: tie, to even is inf
        {0x1.fffffefffffffp127, 0x1.fffffep127f}, // just under it: FLT_MAX
        {-0x1.fffffefffffffp127, -0x1.fffffep127f},
        {0x1p-149, 0x1p-149f},   // smallest float subnormal
        {0x1p-150, 0.0f},        // tie with zero: to even is zero
        {0x1.8p-149, 0x1p-148f}, // 1.5 subnormal units: tie, to even
        {1e-50, 0.0f},           // underflow
        {-1e-50, -0.0f},
        {std::numeric_limits<double>::infinity(), inf},
    };
    Bytes data;
    for (const Case& c : cases) data = concat({data, bytes_of<double>({c.stored})});
    data = concat({data, bytes_of<double>({std::numeric_limits<double>::quiet_NaN()})});
    const std::size_t n = std::size(cases) + 1;
    const std::string header = R"({"d":{"dtype":"F64","shape":[)" + std::to_string(n) + R"(],"data_offsets":[0,)" +
                               std::to_string(8 * n) + "]}}";
    const std::vector<float> values = parse(file_with(header, data), source).at("d").data;

    REQUIRE(values.size() == n);
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        CAPTURE(i, cases[i].stored);
        CHECK(bits(values[i]) == bits(cases[i].expected));
    }
    CHECK(std::isnan(values[n - 1]));
}

// ---- Writing and round trips ---------------------------------------------------------------

TEST_CASE("serialize writes the header as the official writer does", "[safetensors]") {
    const float b[] = {1.0f};
    const float a[] = {2.0f, 3.0f};
    const NamedTensor tensors[] = {{"b", {b, {1}}}, {"a", {a, {1, 2}}}};
    const Bytes file = serialize(tensors);

    // Keys sorted, data_offsets contiguous in name order, padded with spaces to a multiple of 8.
    std::string expected = R"({"a":{"data_offsets":[0,8],"dtype":"F32","shape":[1,2]},)"
                           R"("b":{"data_offsets":[8,12],"dtype":"F32","shape":[1]}})";
    REQUIRE(expected.size() == 110);
    expected += "  ";
    CHECK(file == file_with(expected, bytes_of<float>({2.0f, 3.0f, 1.0f})));
}

TEST_CASE("serialize stores rank-0 and empty tensors", "[safetensors]") {
    const float s[] = {4.0f};
    const NamedTensor tensors[] = {{"s", {s, Shape{}}}, {"e", {nullptr, {0, 5}}}};
    const TensorMap map = parse(serialize(tensors, Dtype::F16), source);
    CHECK(map.at("s").shape.empty());
    CHECK(map.at("s").data == std::vector<float>{4.0f});
    CHECK(map.at("e").shape == std::vector<std::size_t>{0, 5});
    CHECK(map.at("e").data.empty());
}

TEST_CASE("F32 round trips keep every bit, F64 every float", "[safetensors]") {
    const std::vector<float> values = {0.0f, -0.0f, 1.0f / 3.0f,          -1e-45f /* subnormal */, 0x1.fffffep127f,
                                       -inf, inf,   from_bits(0x7fc01234) /* NaN with a payload */};
    for (Dtype dtype : {Dtype::F32, Dtype::F64}) {
        CAPTURE(dtype_name(dtype));
        const std::vector<float> back = round_trip(values, dtype);
        REQUIRE(back.size() == values.size());
        for (std::size_t i = 0; i + 1 < values.size(); ++i) CHECK(bits(back[i]) == bits(values[i]));
        CHECK(std::isnan(back.back()));
    }
    CHECK(bits(round_trip(values, Dtype::F32).back()) == 0x7fc01234u);
}

TEST_CASE("F16 encoding rounds to nearest even", "[safetensors][f16]") {
    struct Case {
        float value;
        std::uint16_t expected;
    };
    const Case cases[] = {
        {1.0f, 0x3c00},
        {-2.0f, 0xc000},
        {-0.0f, 0x8000},
        {1.0f + 0x1p-11f, 0x3c00},            // tie between 1 and 1+2^-10: to even (down)
        {1.0f + 3 * 0x1p-11f, 0x3c02},        // tie between 1+2^-10 and 1+2^-9: to even (up)
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01}, // just above a tie
        {2047.5f, 0x6800},                    // tie that carries into the exponent: 2048
        {65504.0f, 0x7bff},                   // largest finite
        {65519.99609375f, 0x7bff},            // just under the overflow tie
        {65520.0f, 0x7c00},                   // the tie: to even is inf
        {1e6f, 0x7c00},                       // overflow
        {-1e6f, 0xfc00},
        {inf, 0x7c00},
        {-inf, 0xfc00},
        {0x1p-14f, 0x0400},           // smallest normal
        {1023.5f * 0x1p-24f, 0x0400}, // subnormal tie rounding up into the normals
        {1023.0f * 0x1p-24f, 0x03ff}, // largest subnormal
        {0x1p-24f, 0x0001},           // smallest subnormal
        {-0x1p-24f, 0x8001},
        {3 * 0x1p-25f, 0x0002}, // 1.5 units: tie, to even (up)
        {5 * 0x1p-25f, 0x0002}, // 2.5 units: tie, to even (down)
        {0.75f * 0x1p-24f, 0x0001},
        {0x1p-25f, 0x0000},        // half a unit: tie, to even is zero
        {0x1.000002p-25f, 0x0001}, // just above half a unit
        {1e-40f, 0x0000},          // float subnormal
        {-1e-40f, 0x8000},
        {from_bits(0x7fc00000), 0x7e00}, // quiet NaN
        {from_bits(0xffc00000), 0xfe00}, // negative NaN keeps its sign
        {from_bits(0x7fa00000), 0x7f00}, // top payload bits kept, quiet bit set
        {from_bits(0x7f800001), 0x7e00}, // signalling NaN whose payload truncates away: still NaN
    };
    std::vector<float> values;
    for (const Case& c : cases) values.push_back(c.value);
    const NamedTensor t{"h", {values.data(), {values.size()}}};
    const Bytes file = serialize({&t, 1}, Dtype::F16);
    const std::vector<std::uint16_t> stored = stored_u16(file);

    REQUIRE(stored.size() == values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        CAPTURE(i, cases[i].value, cases[i].expected);
        CHECK(stored[i] == cases[i].expected);
    }
    const std::vector<float> back = parse(file, source).at("h").data;
    CHECK(back[4] == 1.0f + 0x1p-9f);
    CHECK(back[6] == 2048.0f);
    CHECK(back[15] == 0x1p-14f);
    CHECK(back[20] == 0x1p-23f);
}

TEST_CASE("BF16 encoding rounds to nearest even", "[safetensors][bf16]") {
    struct Case {
        float value;
        std::uint16_t expected;
    };
    const Case cases[] = {
        {1.0f, 0x3f80},
        {-1.5f, 0xbfc0},
        {1.0f + 0x1p-8f, 0x3f80},            // tie: to even (down)
        {1.0f + 3 * 0x1p-8f, 0x3f82},        // tie: to even (up)
        {1.0f + 0x1p-8f + 0x1p-20f, 0x3f81}, // just above a tie
        {from_bits(0x7f7f7fff), 0x7f7f},     // just under the overflow tie
        {from_bits(0x7f7f8000), 0x7f80},     // the tie: to even is inf
        {0x1.fffffep127f, 0x7f80},           // FLT_MAX overflows BF16
        {-0x1.fffffep127f, 0xff80},
        {inf, 0x7f80},
        {-inf, 0xff80},
        {from_bits(0x00008000), 0x0000}, // subnormal tie, to even (down)
        {from_bits(0x00018000), 0x0002}, // subnormal tie, to even (up)
        {from_bits(0x00008001), 0x0001},
        {from_bits(0x7fc00000), 0x7fc0}, // quiet NaN
        {from_bits(0x7f800001), 0x7fc0}, // signalling NaN that truncation would make inf
        {from_bits(0xff800001), 0xffc0},
    };
    std::vector<float> values;
    for (const Case& c : cases) values.push_back(c.value);
    const NamedTensor t{"b", {values.data(), {values.size()}}};
    const Bytes file = serialize({&t, 1}, Dtype::BF16);
    const std::vector<std::uint16_t> stored = stored_u16(file);

    REQUIRE(stored.size() == values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        CAPTURE(i, cases[i].value, cases[i].expected);
        CHECK(stored[i] == cases[i].expected);
    }
    const std::vector<float> back = parse(file, source).at("b").data;
    CHECK(back[3] == 1.0f + 0x1p-6f);
    CHECK(back[6] == inf);
}

TEST_CASE("every F16 and BF16 value survives decoding and re-encoding", "[safetensors][f16][bf16]") {
    // Decoding is exact, so re-encoding must give the same bits, except that NaNs come back quiet.
    const std::pair<Dtype, std::uint16_t> formats[] = {{Dtype::F16, 0x0200}, {Dtype::BF16, 0x0040}};
    for (auto [dtype, quiet_bit] : formats) {
        CAPTURE(dtype_name(dtype));
        std::vector<std::uint16_t> all(65536);
        for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
        Bytes data(all.size() * 2);
        std::memcpy(data.data(), all.data(), data.size());
        const std::string header =
            R"({"x":{"dtype":")" + std::string(dtype_name(dtype)) + R"(","shape":[65536],"data_offsets":[0,131072]}})";
        const std::vector<float> values = parse(file_with(header, data), source).at("x").data;
        const NamedTensor t{"x", {values.data(), {values.size()}}};
        const std::vector<std::uint16_t> again = stored_u16(serialize({&t, 1}, dtype));

        REQUIRE(again.size() == all.size());
        std::size_t mismatches = 0;
        for (std::size_t i = 0; i < all.size(); ++i) {
            const std::uint16_t expected = std::isnan(values[i]) ? (all[i] | quiet_bit) : all[i];
            if (again[i] != expected && mismatches++ < 5) CHECK(again[i] == expected);
        }
        CHECK(mismatches == 0);
    }
}

// ---- Hostile files -------------------------------------------------------------------------

TEST_CASE("parse rejects a file shorter than the 8-byte header length", "[safetensors][errors]") {
    expect_parse_error(Bytes{}, {"0 bytes", "shorter than the 8-byte header length"});
    expect_parse_error(Bytes(7), {"7 bytes", "shorter than the 8-byte header length"});
}

TEST_CASE("parse rejects a header length beyond the file or the 100 MB cap", "[safetensors][errors]") {
    SECTION("beyond the file") {
        expect_parse_error(concat({bytes_of<std::uint64_t>({100}), Bytes(10)}),
                           {"header length 100", "exceeds the 10 bytes that follow it"});
    }
    SECTION("absurdly large") {
        expect_parse_error(bytes_of<std::uint64_t>({~std::uint64_t{0}}), {"18446744073709551615", "exceeds"});
    }
    SECTION("over the cap although the bytes are present") {
        const std::uint64_t length = 100'000'008;
        expect_parse_error(concat({bytes_of<std::uint64_t>({length}), Bytes(length)}),
                           {"header length 100000008", "limit of 100000000 bytes"});
    }
}

TEST_CASE("parse rejects a header that is not one JSON object", "[safetensors][errors]") {
    expect_parse_error(file_with(""), {"not valid JSON"});
    expect_parse_error(file_with(R"({"w":)"), {"not valid JSON"});
    expect_parse_error(file_with(R"({} x)"), {"not valid JSON"});
    expect_parse_error(file_with(R"({/* comment */})"), {"not valid JSON"});
    expect_parse_error(file_with("{\"w\xff\":{}}"), {"not valid JSON"}); // not UTF-8
    expect_parse_error(file_with(R"([1, 2])"), {"must be a JSON object", "array"});
    expect_parse_error(file_with(R"("w")"), {"must be a JSON object", "string"});
    // A NUL would end nlohmann's input early and hide the bytes after it.
    expect_parse_error(file_with(std::string_view("{}\0garbage", 10)), {"NUL byte at offset 2"});
}

TEST_CASE("parse rejects repeated keys, which JSON parsers silently merge", "[safetensors][errors]") {
    const std::string entry = R"({"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
    SECTION("tensor names") {
        expect_parse_error(file_with(R"({"w":)" + entry + R"(,"w":)" + entry + "}", Bytes(4)),
                           {"duplicate tensor name \"w\""});
    }
    SECTION("fields of an entry") {
        expect_parse_error(
            file_with(R"({"w":{"dtype":"F32","shape":[1],"dtype":"F64","data_offsets":[0,4]}})", Bytes(4)),
            {"duplicate key \"dtype\"", "\"w\""});
    }
    SECTION("metadata keys") {
        expect_parse_error(file_with(R"({"__metadata__":{"k":"1","k":"2"}})"),
                           {"duplicate key \"k\"", "\"__metadata__\""});
    }
}

TEST_CASE("parse bounds the nesting of the header", "[safetensors][errors]") {
    const std::string deep = std::string(40, '[') + std::string(40, ']');
    expect_parse_error(file_with(R"({"w":{"dtype":"F32","shape":[],"data_offsets":[0,4],"x":)" + deep + "}}", Bytes(4)),
                       {"nests deeper than 16"});
}

TEST_CASE("parse rejects entries with missing or mistyped fields", "[safetensors][errors]") {
    const Bytes four(4);
    expect_parse_error(file_with(R"({"w":[1]})"), {"tensor \"w\"", "must be a JSON object", "array"});
    expect_parse_error(file_with(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", four), {"\"w\"", "missing \"dtype\""});
    expect_parse_error(file_with(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", four),
                       {"\"w\"", "missing \"shape\""});
    expect_parse_error(file_with(R"({"w":{"dtype":"F32","shape":[1]}})", four), {"\"w\"", "missing \"data_offsets\""});
    expect_parse_error(file_with(R"({"w":{"dtype":32,"shape":[1],"data_offsets":[0,4]}})", four),
                       {"\"w\"", "\"dtype\" must be a string", "number"});
    expect_parse_error(file_with(R"({"w":{"dtype":"F32","shape":1,"data_offsets":[0,4]}})", four),
                       {"\"w\"", "\"shape\" must be an array", "number"});
    expect_parse_error(f32_file(R"(["1"])", "[0,4]", 4),
                       {"\"w\"", "\"shape\" must hold non-negative integers", "\"1\""});
    expect_parse_error(f32_file("[-1]", "[0,4]", 4), {"\"w\"", "\"shape\" must hold non-negative integers", "-1"});
    expect_parse_error(f32_file("[1.0]", "[0,4]", 4), {"\"w\"", "\"shape\" must hold non-negative integers", "1.0"});
    expect_parse_error(f32_file("[18446744073709551616]", "[0,4]", 4), {"\"w\"", "non-negative integers"});
    expect_parse_error(f32_file("[1]", "[0]", 4), {"\"w\"", "\"data_offsets\" must be an array [begin, end]", "[0]"});
    expect_parse_error(f32_file("[1]", "[0,4,8]", 4), {"\"w\"", "\"data_offsets\" must be an array [begin, end]"});
    expect_parse_error(f32_file("[1]", R"({"a":0})", 4), {"\"w\"", "\"data_offsets\" must be an array [begin, end]"});
    expect_parse_error(f32_file("[1]", "[-4,0]", 4), {"\"w\"", "\"data_offsets\" must hold non-negative integers"});
}

TEST_CASE("parse names unknown and unsupported dtypes", "[safetensors][errors]") {
    const auto with_dtype = [](const std::string& dtype) {
        return file_with(R"({"w":{"dtype":")" + dtype + R"(","shape":[1],"data_offsets":[0,8]}})", Bytes(8));
    };
    expect_parse_error(with_dtype("F99"), {"\"w\"", "unknown dtype \"F99\""});
    expect_parse_error(with_dtype("f32"), {"\"w\"", "unknown dtype \"f32\""});
    expect_parse_error(with_dtype("I64"), {"\"w\"", "dtype \"I64\" is not supported"});
    expect_parse_error(with_dtype("U8"), {"\"w\"", "dtype \"U8\" is not supported"});
}

TEST_CASE("parse rejects shapes whose size overflows or disagrees with data_offsets", "[safetensors][errors]") {
    expect_parse_error(f32_file("[4294967296,4294967296]", "[0,4]", 4), {"\"w\"", "more bytes than size_t holds"});
    expect_parse_error(f32_file("[4611686018427387904]", "[0,4]", 4), // 2^62 elements of 4 bytes
                       {"\"w\"", "[4611686018427387904]", "more bytes than size_t holds"});
    expect_parse_error(f32_file("[4294967296,4294967296,0]", "[0,0]", 0), {"\"w\"", "more bytes than size_t holds"});
    expect_parse_error(f32_file("[2,3]", "[0,20]", 20), {"\"w\"", "[2, 3]", "needs 24 bytes", "hold 20"});
    expect_parse_error(f32_file("[]", "[0,8]", 8), {"\"w\"", "needs 4 bytes", "hold 8"});
}

TEST_CASE("parse rejects data_offsets outside the data block", "[safetensors][errors]") {
    expect_parse_error(f32_file("[1]", "[8,4]", 8), {"\"w\"", "[8, 4] end before they begin"});
    expect_parse_error(f32_file("[1]", "[4,8]", 6), {"\"w\"", "[4, 8] reach beyond the data block of 6 bytes"});
    expect_parse_error(f32_file("[0]", "[18446744073709551615,18446744073709551615]", 4),
                       {"\"w\"", "reach beyond the data block"});
}

TEST_CASE("parse requires the tensors to tile the data block", "[safetensors][errors]") {
    const auto two = [](const std::string& a_offsets, const std::string& b_offsets, std::size_t data_size) {
        return file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":)" + a_offsets +
                             R"(},"b":{"dtype":"F32","shape":[2],"data_offsets":)" + b_offsets + "}}",
                         Bytes(data_size));
    };
    SECTION("overlap") {
        expect_parse_error(two("[0,8]", "[4,12]", 12), {"tensor \"b\"", "[4, 12] overlap tensor \"a\""});
        expect_parse_error(two("[0,8]", "[0,8]", 8), {"overlap tensor"});
    }
    SECTION("hole between tensors") {
        expect_parse_error(two("[0,8]", "[12,20]", 20), {"tensor \"b\"", "[8, 12] to no tensor", "contiguously"});
    }
    SECTION("hole at the start") {
        expect_parse_error(two("[4,12]", "[12,20]", 20), {"tensor \"a\"", "[0, 4] to no tensor"});
    }
    SECTION("bytes after the last tensor") {
        expect_parse_error(two("[0,8]", "[8,16]", 17), {"[16, 17]", "MetadataIncompleteBuffer", "contiguously"});
        expect_parse_error(file_with("{}", Bytes(3)), {"[0, 3]", "belong to no tensor"});
    }
}

TEST_CASE("parse requires __metadata__ to map strings to strings", "[safetensors][errors]") {
    expect_parse_error(file_with(R"({"__metadata__":[]})"), {"\"__metadata__\" must be an object of strings", "array"});
    expect_parse_error(file_with(R"({"__metadata__":{"epoch":3}})"), {"\"epoch\" holds number"});
    expect_parse_error(file_with(R"({"__metadata__":{"m":{"a":"b"}}})"), {"\"m\" holds object"});
}

TEST_CASE("parse error messages stay on one line and short for hostile names", "[safetensors][errors]") {
    const std::string message = parse_error(
        file_with(R"({"evil\nname)" + std::string(1000, 'x') + R"(":{"dtype":"X","shape":[],"data_offsets":[0,0]}})"));
    CHECK(message.find('\n') == std::string::npos);
    CHECK_THAT(message, Contains(R"("evil\nname)") && Contains("...") && Contains("unknown dtype"));
    CHECK(message.size() < 300);
}

// ---- Files on disk -------------------------------------------------------------------------

TEST_CASE("read parses a file from disk", "[safetensors][file]") {
    TempDir dir;
    const fs::path file = dir.path / "in.safetensors";
    put_file(file, file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", bytes_of<float>({5, 6})));
    const TensorMap map = read(file);
    CHECK(map.at("w").data == std::vector<float>{5.0f, 6.0f});
}

TEST_CASE("read reports files it cannot use, naming them", "[safetensors][file][errors]") {
    TempDir dir;
    const auto read_error = [](const fs::path& file) -> std::string {
        try {
            (void)read(file);
        } catch (const FileError& e) {
            return e.what();
        }
        FAIL("read did not throw FileError");
        return {};
    };
    SECTION("missing") {
        const fs::path file = dir.path / "missing.safetensors";
        CHECK_THAT(read_error(file), Contains(file.string()) && Contains("No such file or directory"));
    }
    SECTION("a directory") {
        CHECK_THAT(read_error(dir.path), Contains(dir.path.string()) && Contains("not a regular file"));
    }
    SECTION("shorter than 8 bytes") {
        const fs::path file = dir.path / "short.safetensors";
        put_file(file, Bytes(3));
        CHECK_THAT(read_error(file), Contains(file.string()) && Contains("3 bytes"));
    }
    SECTION("a header length beyond the file") {
        const fs::path file = dir.path / "lying.safetensors";
        put_file(file, concat({bytes_of<std::uint64_t>({1'000'000}), Bytes(16)}));
        CHECK_THAT(read_error(file), Contains(file.string()) && Contains("exceeds the 16 bytes"));
    }
    SECTION("malformed contents") {
        const fs::path file = dir.path / "bad.safetensors";
        put_file(file, file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", Bytes(4)));
        CHECK_THAT(read_error(file), Contains(file.string()) && Contains("\"w\"") && Contains("reach beyond"));
    }
}

TEST_CASE("write round-trips every dtype and leaves no temporary file", "[safetensors][file]") {
    TempDir dir;
    const fs::path file = dir.path / "out.safetensors";
    const NamedTensor tensors[] = {{"w", {sample, {2, 2}}}, {"b", {sample, {1}}}};
    for (Dtype dtype : {Dtype::F32, Dtype::F64, Dtype::F16, Dtype::BF16}) {
        CAPTURE(dtype_name(dtype));
        write(file, tensors, dtype);
        CHECK(dir.entries() == std::set<std::string>{"out.safetensors"});
        const TensorMap map = read(file);
        REQUIRE(map.size() == 2);
        CHECK(map.at("w").shape == std::vector<std::size_t>{2, 2});
        CHECK(map.at("w").data == std::vector<float>(std::begin(sample), std::end(sample))); // all exact in F16/BF16
        CHECK(map.at("w").stored_as == dtype);
        CHECK(map.at("b").data == std::vector<float>{1.5f});
        CHECK(file_contents(file) == serialize(tensors, dtype));
    }
}

TEST_CASE("write replaces an existing file", "[safetensors][file]") {
    TempDir dir;
    const fs::path file = dir.path / "out.safetensors";
    put_file(file, Bytes(100, std::byte{0x55}));
    const NamedTensor tensor{"x", {sample, {4}}};
    write(file, {&tensor, 1});
    CHECK(read(file).at("x").data == std::vector<float>(std::begin(sample), std::end(sample)));
    CHECK(dir.entries() == std::set<std::string>{"out.safetensors"});
}

TEST_CASE("a failed write leaves the target untouched and no temporary file", "[safetensors][file][errors]") {
    TempDir dir;
    const NamedTensor tensor{"x", {sample, {4}}};
    SECTION("the directory does not exist") {
        const fs::path file = dir.path / "no_such_dir" / "out.safetensors";
        CHECK_THROWS_WITH(write(file, {&tensor, 1}), Contains(file.string()) && Contains("No such file or directory"));
        CHECK(dir.entries().empty());
    }
    SECTION("the target is a directory") {
        const fs::path file = dir.path / "out.safetensors";
        fs::create_directory(file);
        put_file(file / "keep", Bytes(1));
        CHECK_THROWS_AS(write(file, {&tensor, 1}), FileError);
        CHECK_THROWS_WITH(write(file, {&tensor, 1}), Contains(file.string()) && Contains("rename"));
        CHECK(fs::is_directory(file));
        CHECK(fs::exists(file / "keep"));
        CHECK(dir.entries() == std::set<std::string>{"out.safetensors"});
    }
    SECTION("the tensors are invalid") {
        const fs::path file = dir.path / "out.safetensors";
        const Bytes before = file_with("{}");
        put_file(file, before);
        const NamedTensor twice[] = {tensor, tensor};
        CHECK_THROWS_AS(write(file, twice), ArgumentError);
        CHECK(file_contents(file) == before);
        CHECK(dir.entries() == std::set<std::string>{"out.safetensors"});
    }
}

TEST_CASE("serialize rejects tensors it cannot store", "[safetensors][errors]") {
    const auto serialize_one = [](const NamedTensor& t) { return serialize({&t, 1}); };
    CHECK_THROWS_AS(serialize_one({"", {sample, {1}}}), ArgumentError);
    CHECK_THROWS_WITH(serialize_one({"__metadata__", {sample, {1}}}), Contains("reserved"));
    CHECK_THROWS_AS(serialize_one({"\xff", {sample, {1}}}), ArgumentError);
    CHECK_THROWS_WITH(serialize_one({"\xff", {sample, {1}}}), Contains("UTF-8"));
    CHECK_THROWS_AS(serialize_one({"w", {nullptr, {2}}}), ArgumentError);
    CHECK_THROWS_WITH(serialize_one({"w", {nullptr, {2}}}), Contains("\"w\"") && Contains("no data"));
    const std::size_t huge = std::size_t{1} << 32;
    CHECK_THROWS_AS(serialize_one({"w", {sample, {huge, huge}}}), ShapeError);           // elements overflow
    CHECK_THROWS_AS(serialize_one({"w", {sample, {std::size_t{1} << 62}}}), ShapeError); // bytes overflow
    CHECK_THROWS_WITH(serialize_one({"w", {sample, {std::size_t{1} << 62}}}), Contains("w") && Contains("size_t"));
    const NamedTensor twice[] = {{"a", {sample, {1}}}, {"d", {sample, {1}}}, {"a", {sample, {2}}}};
    CHECK_THROWS_WITH(serialize(twice), Contains("duplicate tensor name \"a\""));
}
