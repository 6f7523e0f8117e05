// The article's module batches along dimension 1: Q [1,B,q], K [1,B,k] or [1,1,k], V [1,L,d]
// give output [1,B,o]. The memory is that of Q [B,1,q], so the results are the same bits.
#include <catch2/catch.hpp>

#include "myattn/myattn.hpp"
#include "support/random.hpp"

using namespace myattn;
using namespace myattn::test;
using Catch::Matchers::Contains;

TEST_CASE("article layout: the same bits as batch first, output [1, B, o]", "[forward][layout]") {
    const Dims d{5, 6, 7, 8, 9};
    const MyAttn attn(Parameters::random(d, 3));
    for (std::size_t B : {0, 1, 2, 17}) {
        for (bool shared_k : {false, true}) {
            CAPTURE(B, shared_k);
            const Inputs x = random_inputs(d, B, shared_k, true, 40 + B);
            const ForwardResult first = attn.forward(x.q(d), x.k(d), x.v(d));
            const std::size_t kb = shared_k ? 1 : B;
            const ForwardResult dim1 =
                attn.forward({x.Q.data(), {1, B, 5}}, {x.K.data(), {1, kb, 6}}, {x.V.data(), {1, 7, 8}});
            CHECK(dim1.output_shape == Shape{1, B, 9});
            CHECK(dim1.attn_weights_shape == Shape{B, 7});
            CHECK(dim1.output == first.output);
            CHECK(dim1.attn_weights == first.attn_weights);

            // The in-place forward takes output [1, B, o] and refuses [B, 1, o] (unless B is 1).
            std::vector<float> out(B * 9), w(B * 7);
            attn.forward({x.Q.data(), {1, B, 5}}, {x.K.data(), {1, kb, 6}}, {x.V.data(), {1, 7, 8}},
                         {out.data(), {1, B, 9}}, {w.data(), {B, 7}});
            CHECK(out == first.output);
            if (B > 1)
                CHECK_THROWS_WITH(attn.forward({x.Q.data(), {1, B, 5}}, {x.K.data(), {1, kb, 6}},
                                               {x.V.data(), {1, 7, 8}}, {out.data(), {B, 1, 9}}, {w.data(), {B, 7}}),
                                  Contains("output: expected shape [1, " + std::to_string(B) + ", 9]"));
        }
    }
}

TEST_CASE("article layout: [1, 1, q] is both layouts, with the same result", "[forward][layout]") {
    const Dims d{4, 4, 3, 2, 5};
    const MyAttn attn(Parameters::random(d, 4));
    const Inputs x = random_inputs(d, 1, false, false, 7);
    const ForwardResult r = attn.forward(x.q(d), x.k(d), x.v(d));
    CHECK(x.q(d).shape == Shape{1, 1, 4});
    CHECK(r.output_shape == Shape{1, 1, 5});
}

TEST_CASE("article layout: errors name both layouts", "[forward][layout][errors]") {
    const Dims d{2, 3, 4, 5, 6};
    const MyAttn attn(Parameters::random(d, 5));
    const std::vector<float> Q(3 * 2), K(3 * 3), V(3 * 4 * 5);
    const auto call = [&](Shape q, Shape k, Shape v) {
        (void)attn.forward({Q.data(), q}, {K.data(), k}, {V.data(), v});
    };
    CHECK_THROWS_AS(call({3, 3, 2}, {1, 3, 3}, {1, 4, 5}), ShapeError);
    CHECK_THROWS_WITH(call({3, 3, 2}, {1, 3, 3}, {1, 4, 5}),
                      Contains("Q: expected shape [B, 1, 2] or [1, B, 2], got [3, 3, 2]"));
    CHECK_THROWS_WITH(call({1, 3, 2}, {3, 1, 3}, {1, 4, 5}),
                      Contains("K: expected shape [1, 3, 3] or [1, 1, 3] (as Q is [1, B, q]), got [3, 1, 3]"));
    // V is shared in the article's layout: a per-sample V has no place in it.
    CHECK_THROWS_WITH(call({1, 3, 2}, {1, 3, 3}, {3, 4, 5}),
                      Contains("V: expected shape [1, 4, 5] (as Q is [1, B, q]), got [3, 4, 5]"));
}
