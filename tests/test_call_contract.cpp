// The call contract of docs/contract.md at the API: forward's shapes name the tensor, expected
// and actual; null data for every tensor; every kind of aliasing; batch mismatches in V and the
// outputs; zero sizes; overflowing shapes of every tensor; misaligned pointers on every
// runnable ISA; nothing written when a call is refused; a moved-from MyAttn.
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
          "[errors][contract][unaligned][each_isa]") {
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
