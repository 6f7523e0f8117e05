// Every error path of the API: the exception type, the tensor named, expected vs actual.
#include <catch2/catch.hpp>
#include <limits>
#include <vector>

#include "myattn/myattn.hpp"
#include "support/cli.hpp"
#include "support/valid_call.hpp"

using namespace myattn;
using Catch::Matchers::Contains;

using Call = myattn::test::ValidCall;
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

TEST_CASE("errors: forward shapes name the tensor, expected and actual", "[errors]") {
    Call c;
    CHECK_NOTHROW(c.run());
    SECTION("Q") {
        c.q.shape = {2, 2};
        CHECK_THROWS_AS(c.run(), ShapeError);
        CHECK_THROWS_WITH(c.run(), Contains("Q: expected shape [B, 1, 2] or [1, B, 2], got [2, 2]"));
        c.q.shape = {2, 1, 3};
        CHECK_THROWS_WITH(c.run(), Contains("Q: expected shape [B, 1, 2] or [1, B, 2], got [2, 1, 3]"));
    }
    SECTION("K batch mismatch") {
        c.k.shape = {3, 1, 3};
        CHECK_THROWS_WITH(c.run(), Contains("K: expected shape [2, 1, 3] or [1, 1, 3], got [3, 1, 3]"));
    }
    SECTION("V width") {
        c.v.shape = {2, 4, 4};
        CHECK_THROWS_WITH(c.run(), Contains("V: expected shape [2, 4, 5] or [1, 4, 5], got [2, 4, 4]"));
    }
    SECTION("outputs") {
        c.o.shape = {2, 6};
        CHECK_THROWS_WITH(c.run(), Contains("output: expected shape [2, 1, 6], got [2, 6]"));
        c.o.shape = {2, 1, 6};
        c.a.shape = {1, 4};
        CHECK_THROWS_WITH(c.run(), Contains("attn_weights: expected shape [2, 4], got [1, 4]"));
    }
    SECTION("overflowing shapes") {
        c.q.shape = {big, 1, 2};
        CHECK_THROWS_AS(c.run(), ShapeError);
        CHECK_THROWS_WITH(c.run(), Contains("Q") && Contains("size_t"));
    }
}

TEST_CASE("errors: null data, aliasing outputs", "[errors]") {
    Call c;
    SECTION("null data with elements") {
        c.v.data = nullptr;
        CHECK_THROWS_AS(c.run(), ArgumentError);
        CHECK_THROWS_WITH(c.run(), Contains("V: data is null"));
    }
    SECTION("output aliasing an input") {
        c.o.data = const_cast<float*>(c.V.data());
        CHECK_THROWS_WITH(c.run(), Contains("output: output buffer overlaps V"));
    }
    SECTION("outputs aliasing each other") {
        std::vector<float> both(20);
        c.o.data = both.data();
        c.a.data = both.data() + 4;
        CHECK_THROWS_WITH(c.run(), Contains("overlaps"));
    }
}

TEST_CASE("errors: nothing is written when a call is refused", "[errors]") {
    Call c;
    std::fill(c.out.begin(), c.out.end(), 42.0f);
    std::fill(c.w.begin(), c.w.end(), 42.0f);
    c.v.shape = {2, 4, 4};
    CHECK_THROWS(c.run());
    for (float x : c.out) CHECK(x == 42.0f);
    for (float x : c.w) CHECK(x == 42.0f);
}

TEST_CASE("errors: unaligned pointers work", "[errors]") {
    const Dims d{3, 5, 7, 9, 11};
    const MyAttn attn(Parameters::random(d, 3));
    std::vector<float> Q(3 + 1, 0.5f), K(5 + 1, 0.25f), V(63 + 1, 1.0f), out(11 + 1), w(7 + 1);
    const ForwardResult ref = attn.forward({Q.data(), {1, 1, 3}}, {K.data(), {1, 1, 5}}, {V.data(), {1, 7, 9}});
    attn.forward({Q.data() + 1, {1, 1, 3}}, {K.data() + 1, {1, 1, 5}}, {V.data() + 1, {1, 7, 9}},
                 {out.data() + 1, {1, 1, 11}}, {w.data() + 1, {1, 7}});
    CHECK(std::vector<float>(out.begin() + 1, out.end()) == ref.output);
    CHECK(std::vector<float>(w.begin() + 1, w.end()) == ref.attn_weights);
}

TEST_CASE("errors: a moved-from MyAttn throws MovedFromError, a logic_error", "[errors]") {
    MyAttn a(Parameters::random({2, 3, 4, 5, 6}, 1), Isa::scalar);
    const MyAttn b(std::move(a));
    CHECK(b.dims().value_size1 == 4);
    const std::vector<float> Q(2), K(3), V(4 * 5);
    std::vector<float> out(6), w(4);
    // NOLINTBEGIN(bugprone-use-after-move): using it is the point
    CHECK_THROWS_AS(a.dims(), MovedFromError);
    CHECK_THROWS_AS(a.isa(), std::logic_error);
    CHECK_THROWS_WITH(a.parameters(), Contains("MyAttn") && Contains("moved from"));
    CHECK_THROWS_AS(a.forward({Q.data(), {1, 1, 2}}, {K.data(), {1, 1, 3}}, {V.data(), {1, 4, 5}}), MovedFromError);
    CHECK_THROWS_AS(a.forward({Q.data(), {1, 1, 2}}, {K.data(), {1, 1, 3}}, {V.data(), {1, 4, 5}},
                              {out.data(), {1, 1, 6}}, {w.data(), {1, 4}}),
                    MovedFromError);
    // Assigning makes it usable again.
    a = MyAttn(Parameters::random({2, 3, 4, 5, 6}, 2), Isa::scalar);
    CHECK(a.dims().output_size == 6);
    // NOLINTEND(bugprone-use-after-move)
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
