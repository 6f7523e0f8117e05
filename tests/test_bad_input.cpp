// The bad-input contract of docs/contract.md at the API, for the classes test_api_errors.cpp
// does not already cover: null data for every tensor, every kind of aliasing, batch mismatches
// in V and the outputs, zero sizes, overflowing shapes of every tensor, and misaligned
// pointers on every runnable ISA.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <vector>

#include "myattn/myattn.hpp"
#include "support/isas.hpp"
#include "support/random.hpp"
#include "support/valid_call.hpp"

using namespace myattn;
using Catch::Matchers::Contains;

using Call = myattn::test::ValidCall;
constexpr std::size_t big = myattn::test::overflowing;

TEST_CASE("contract: null data with elements is refused for every tensor", "[errors][contract]") {
    Call c;
    REQUIRE_NOTHROW(c.run());
    SECTION("Q") {
        c.q.data = nullptr;
        CHECK_THROWS_AS(c.run(), ArgumentError);
        CHECK_THROWS_WITH(c.run(), "Q: data is null but shape [2, 1, 2] has 4 elements");
    }
    SECTION("K") {
        c.k.data = nullptr;
        CHECK_THROWS_WITH(c.run(), "K: data is null but shape [2, 1, 3] has 6 elements");
    }
    SECTION("output") {
        c.o.data = nullptr;
        CHECK_THROWS_AS(c.run(), ArgumentError);
        CHECK_THROWS_WITH(c.run(), Contains("output: data is null"));
    }
    SECTION("attn_weights") {
        c.a.data = nullptr;
        CHECK_THROWS_WITH(c.run(), Contains("attn_weights: data is null"));
    }
    SECTION("Parameters spans") {
        CHECK_THROWS_AS(Parameters(c.d, {}, std::vector<float>(4), std::vector<float>(42), std::vector<float>(6)),
                        ShapeError);
    }
}

TEST_CASE("contract: null data without elements is fine (B = 0)", "[errors][contract]") {
    const Call c;
    CHECK_NOTHROW(c.attn.forward({nullptr, {0, 1, 2}}, {nullptr, {0, 1, 3}}, {nullptr, {0, 4, 5}}, {nullptr, {0, 1, 6}},
                                 {nullptr, {0, 4}}));
    // A shared K / V still holds elements at B = 0, so it must not be null.
    CHECK_THROWS_WITH(c.attn.forward({nullptr, {0, 1, 2}}, {nullptr, {0, 1, 3}}, {nullptr, {1, 4, 5}},
                                     {nullptr, {0, 1, 6}}, {nullptr, {0, 4}}),
                      Contains("V: data is null"));
}

TEST_CASE("contract: outputs that alias inputs or each other are refused", "[errors][contract]") {
    Call c;
    std::vector<float> arena(200);
    SECTION("attn_weights over Q") {
        c.a.data = const_cast<float*>(c.Q.data());
        CHECK_THROWS_AS(c.run(), ArgumentError);
        CHECK_THROWS_WITH(c.run(), "attn_weights: output buffer overlaps Q");
    }
    SECTION("output starting inside K") {
        std::copy(c.K.begin(), c.K.end(), arena.begin());
        c.k.data = arena.data();
        c.o.data = arena.data() + 5; // K is [0, 6): one float shared
        CHECK_THROWS_WITH(c.run(), "output: output buffer overlaps K");
    }
    SECTION("output ending inside V") {
        std::copy(c.V.begin(), c.V.end(), arena.begin() + 12);
        c.v.data = arena.data() + 12;
        c.o.data = arena.data() + 1; // output is [1, 13), V is [12, 52)
        CHECK_THROWS_WITH(c.run(), "output: output buffer overlaps V");
    }
    SECTION("outputs in one place") {
        c.a.data = c.o.data;
        CHECK_THROWS_WITH(c.run(), Contains("overlaps"));
    }
    SECTION("a shared K or V inside an output") {
        c.k = {arena.data() + 2, {1, 1, 3}};
        c.o.data = arena.data();
        CHECK_THROWS_WITH(c.run(), "output: output buffer overlaps K");
    }
    SECTION("adjacent buffers are fine") {
        // Q, K, V, output, attn_weights back to back in one array: touching is not overlapping.
        float* p = arena.data();
        std::fill(arena.begin(), arena.end(), 0.5f);
        c.q.data = p;
        c.k.data = p + 4;
        c.v.data = p + 10;
        c.o.data = p + 50;
        c.a.data = p + 62;
        CHECK_NOTHROW(c.run());
    }
    SECTION("inputs may alias each other") {
        std::fill(arena.begin(), arena.end(), 0.5f);
        c.q.data = c.k.data = c.v.data = arena.data();
        CHECK_NOTHROW(c.run());
    }
}

TEST_CASE("contract: a batch that disagrees between tensors is refused", "[errors][contract]") {
    Call c;
    SECTION("V") {
        c.v.shape = {3, 4, 5};
        CHECK_THROWS_AS(c.run(), ShapeError);
        CHECK_THROWS_WITH(c.run(), "V: expected shape [2, 4, 5] or [1, 4, 5], got [3, 4, 5]");
    }
    SECTION("output") {
        c.o.shape = {1, 1, 6};
        CHECK_THROWS_WITH(c.run(), "output: expected shape [2, 1, 6], got [1, 1, 6]");
    }
    SECTION("Q smaller than a per-sample K") {
        c.q.shape = {1, 1, 2};
        c.o.shape = {1, 1, 6};
        c.a.shape = {1, 4};
        CHECK_THROWS_WITH(c.run(), Contains("K: expected shape [1, 1, 3]") && Contains("got [2, 1, 3]"));
    }
}

TEST_CASE("contract: zero sizes", "[errors][contract]") {
    SECTION("each of the five sizes, with its name") {
        const char* names[] = {"query_size", "key_size", "value_size1", "value_size2", "output_size"};
        for (std::size_t i = 0; i < 5; ++i) {
            std::size_t s[5] = {2, 3, 4, 5, 6};
            s[i] = 0;
            const Dims d{s[0], s[1], s[2], s[3], s[4]};
            CAPTURE(names[i]);
            CHECK_THROWS_AS(Parameters::random(d, 1), ShapeError);
            CHECK_THROWS_WITH(Parameters::random(d, 1),
                              Contains(std::string("Dims: ") + names[i] + " must be > 0, got 0") &&
                                  Contains(d.to_string()));
            CHECK_THROWS_AS(validate(d), ShapeError);
        }
    }
    SECTION("through the copying constructor") {
        CHECK_THROWS_WITH(Parameters({2, 3, 0, 5, 6}, {}, {}, std::vector<float>(42), std::vector<float>(6)),
                          Contains("value_size1 must be > 0"));
    }
    SECTION("a zero L or d in V does not match the model") {
        Call c;
        c.v.shape = {2, 0, 5};
        CHECK_THROWS_WITH(c.run(), "V: expected shape [2, 4, 5] or [1, 4, 5], got [2, 0, 5]");
        c.v.shape = {2, 4, 0};
        CHECK_THROWS_WITH(c.run(), "V: expected shape [2, 4, 5] or [1, 4, 5], got [2, 4, 0]");
    }
    SECTION("B = 0 is fine") {
        const Call c;
        const ForwardResult r =
            c.attn.forward({c.Q.data(), {0, 1, 2}}, {c.K.data(), {0, 1, 3}}, {c.V.data(), {0, 4, 5}});
        CHECK(r.output.empty());
        CHECK(r.attn_weights_shape == Shape{0, 4});
    }
}

TEST_CASE("contract: shapes whose element count overflows size_t are refused for every tensor", "[errors][contract]") {
    Call c;
    SECTION("K") {
        c.k.shape = {big, 1, 3 * 4};
        CHECK_THROWS_AS(c.run(), ShapeError);
        CHECK_THROWS_WITH(c.run(), Contains("K: shape") && Contains("more elements than size_t holds"));
    }
    SECTION("V") {
        c.v.shape = {2, big, big};
        CHECK_THROWS_WITH(c.run(), Contains("V: shape") && Contains("more elements than size_t holds"));
    }
    SECTION("output") {
        c.o.shape = {big, 1, 6};
        CHECK_THROWS_WITH(c.run(), Contains("output") && Contains("size_t"));
    }
    SECTION("attn_weights") {
        c.a.shape = {big, 4};
        CHECK_THROWS_WITH(c.run(), Contains("attn_weights") && Contains("size_t"));
    }
    SECTION("Q of a huge batch whose product fits is a shape error, not an allocation") {
        c.q.shape = {big / 4, 1, 2};
        CHECK_THROWS_WITH(c.run(), Contains("K: expected shape"));
    }
    SECTION("Dims") {
        constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
        CHECK_THROWS_WITH(validate({max, 1, 1, 1, 1}), Contains("overflows size_t"));
        CHECK_THROWS_WITH(validate({1, 1, big, 1, 1}), Contains("size_t"));
        CHECK_THROWS_WITH(validate({1, 1, 1, big, big}), Contains("size_t"));
    }
}

TEST_CASE("contract: misaligned pointers work on every runnable ISA, bitwise as aligned ones",
          "[errors][contract][unaligned]") {
    // Sizes that are no multiple of any vector width, and a batch the kernels tile.
    const Dims d{19, 13, 37, 29, 23};
    const std::size_t B = 5;
    const Parameters p = Parameters::random(d, 17);
    const test::Inputs x = test::random_inputs(d, B, false, false, 18);
    const std::size_t nq = x.Q.size(), nk = x.K.size(), nv = x.V.size(), no = B * d.output_size, nw = B * d.value_size1;
    FOR_EACH_ISA(isa) {
        const MyAttn attn(p, isa);
        const ForwardResult want = attn.forward(x.q(d), x.k(d), x.v(d));
        // Offsets of 1 to 15 floats: every misalignment a 16-float (64-byte) vector can see.
        for (std::size_t shift = 1; shift < 16; ++shift) {
            CAPTURE(shift);
            std::vector<float> buf(shift + nq + nk + nv + no + nw + 64);
            float* q = buf.data() + shift;
            float* k = q + nq;
            float* v = k + nk + 1; // a different misalignment for each tensor
            float* o = v + nv + 2;
            float* w = o + no + 3;
            std::memcpy(q, x.Q.data(), nq * sizeof(float));
            std::memcpy(k, x.K.data(), nk * sizeof(float));
            std::memcpy(v, x.V.data(), nv * sizeof(float));
            attn.forward({q, {B, 1, d.query_size}}, {k, {B, 1, d.key_size}}, {v, {B, d.value_size1, d.value_size2}},
                         {o, {B, 1, d.output_size}}, {w, {B, d.value_size1}});
            CHECK(std::memcmp(o, want.output.data(), no * sizeof(float)) == 0);
            CHECK(std::memcmp(w, want.attn_weights.data(), nw * sizeof(float)) == 0);
        }
    }
}
