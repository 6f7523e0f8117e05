// Errors of the weights: Parameters built from spans of the wrong size or impossible Dims
// (ShapeError), and every problem with a weights file (FileError naming the file and the tensor).
#include <catch2/catch.hpp>

#include <vector>

#include "myattn/myattn.hpp"
#include "support/cli.hpp"
#include "support/valid_call.hpp"

using namespace myattn;
using Catch::Matchers::Contains;

constexpr std::size_t big = myattn::test::overflowing;

TEST_CASE("errors: Parameters", "[errors]") {
    const Dims d{2, 3, 4, 5, 6};
    std::vector<float> w1(4 * 5), b1(4), w2(6 * 7), b2(6);
    CHECK_NOTHROW(Parameters(d, w1, b1, w2, b2));
    std::vector<float> short_w1(4 * 5 - 1);
    CHECK_THROWS_WITH(Parameters(d, short_w1, b1, w2, b2), Contains("attn.weight") &&
                                                               Contains("expected 20 elements") && Contains("[4, 5]") &&
                                                               Contains("got 19"));
    CHECK_THROWS_AS(Parameters(d, w1, b1, w2, std::vector<float>(7)), ShapeError);
    CHECK_THROWS_WITH(Parameters(d, w1, b1, w2, std::vector<float>(7)), Contains("attn_combine.bias"));
    CHECK_THROWS_WITH(Parameters::random({2, 3, 0, 5, 6}, 1), Contains("value_size1 must be > 0"));
    CHECK_THROWS_AS(Parameters::random({big, big, 1, 1, 1}, 1), ShapeError);
    CHECK_THROWS_WITH(Parameters::random({1, 1, big, 4, 1}, 1), Contains("overflows") || Contains("more elements"));
}

TEST_CASE("errors: every problem with a weights file is a FileError naming the file and the tensor", "[errors]") {
    const myattn::test::TempDir dir;
    const auto file = dir / "w.safetensors";
    // q = 2, k = 3, L = 4, d = 5, o = 6, with one tensor replaced by `bad` of `shape`.
    const auto load_with = [&](const char* name, Shape shape) {
        const std::vector<float> w1(4 * 5), b1(4), w2(6 * 7), b2(6), bad(shape.numel(), 0.0f);
        std::vector<safetensors::NamedTensor> tensors = {{"attn.weight", {w1.data(), {4, 5}}},
                                                         {"attn.bias", {b1.data(), {4}}},
                                                         {"attn_combine.weight", {w2.data(), {6, 7}}},
                                                         {"attn_combine.bias", {b2.data(), {6}}}};
        for (auto& t : tensors)
            if (t.name == name) t.tensor = {bad.data(), shape};
        safetensors::write(file, tensors);
        (void)Parameters::load(file, 2);
    };
    CHECK_NOTHROW(load_with("attn.bias", {4}));
    const struct {
        const char* tensor;
        Shape shape;
        const char* says;
    } cases[] = {
        {"attn.weight", {4, 5, 1}, "rank 2"},
        {"attn.weight", {4, 2}, "k >= 1"},
        {"attn.weight", {0, 5}, "extent of 0"},
        {"attn.bias", {3}, "expected [4]"},
        {"attn.bias", {4, 1}, "rank 1"},
        {"attn_combine.weight", {6, 2}, "d >= 1"},
        {"attn_combine.weight", {0, 7}, "extent of 0"},
        {"attn_combine.bias", {5}, "expected [6]"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.tensor, c.shape.to_string());
        CHECK_THROWS_AS(load_with(c.tensor, c.shape), FileError);
        CHECK_THROWS_WITH(load_with(c.tensor, c.shape),
                          Contains(file.string()) && Contains(std::string(c.tensor) + ": ") && Contains(c.says));
    }
    safetensors::write(file, std::vector<safetensors::NamedTensor>{});
    CHECK_THROWS_AS(Parameters::load(file, 2), FileError);
    CHECK_THROWS_WITH(Parameters::load(file, 2), Contains(file.string()) && Contains("missing tensor \"attn.weight\""));
}
