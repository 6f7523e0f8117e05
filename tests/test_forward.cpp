// MyAttn::forward on each ISA under test (support/isas.hpp), each in a section named after it,
// against the float64 oracle, within the derived bound of support/oracle.hpp.
#include <catch2/catch.hpp>
#include <limits>

#include "shapes.hpp"
#include "support/check.hpp"
#include "support/isas.hpp"
#include "support/random.hpp"

using namespace myattn;
using namespace myattn::test;

namespace {

ForwardResult run(const MyAttn& attn, const Inputs& x) {
    const Dims& d = attn.dims();
    return attn.forward(x.q(d), x.k(d), x.v(d));
}

void check_against_oracle(Isa isa, const Parameters& p, const Inputs& x) {
    const MyAttn attn(p, isa);
    const ForwardResult got = run(attn, x);
    const OracleResult want = oracle(p, x);
    CAPTURE(isa_name(attn.isa()), p.dims().to_string(), x.B, x.shared_k, x.shared_v);
    check_within("attn_weights", got.attn_weights, want.attn_weights, want.attn_weights_bound);
    check_within("output", got.output, want.output, want.output_bound);
}

} // namespace

TEST_CASE("forward: random shapes, every size 1..70, L up to 130", "[forward][each_isa]") {
    FOR_EACH_ISA(isa) {
        std::mt19937_64 rng(7);
        std::uniform_int_distribution<std::size_t> small(1, 70), rows(1, 130);
        const std::size_t batches[] = {0, 1, 2, 3, 17};
        for (int i = 0; i < 60; ++i) {
            const Dims d{small(rng), small(rng), rows(rng), small(rng), small(rng)};
            const std::size_t B = batches[static_cast<std::size_t>(i) % 5];
            check_against_oracle(isa, Parameters::random(d, 100 + i),
                                 random_inputs(d, B, i % 3 == 1, i % 4 == 2, 200 + i));
        }
    }
}

TEST_CASE("forward: every size from 1 to 70 in each position", "[forward][each_isa]") {
    FOR_EACH_ISA(isa) {
        for (std::size_t n = 1; n <= 70; ++n) {
            const Dims dims[] = {{n, 3, 5, 7, 2}, {2, n, 3, 5, 7}, {7, 2, n, 3, 5}, {5, 7, 2, n, 3}, {3, 5, 7, 2, n}};
            for (const Dims& d : dims)
                check_against_oracle(isa, Parameters::random(d, n), random_inputs(d, 2, false, false, n));
        }
    }
}

TEST_CASE("forward: large batches and shared K / V", "[forward][each_isa]") {
    FOR_EACH_ISA(isa) {
        const Dims d{32, 32, 32, 64, 32};
        const Parameters p = Parameters::random(d, 1);
        for (bool sk : {false, true})
            for (bool sv : {false, true}) check_against_oracle(isa, p, random_inputs(d, 300, sk, sv, 3));
    }
}

TEST_CASE("forward: shape X", "[forward][large][each_isa]") {
    FOR_EACH_ISA(isa) {
        const Dims d = detail::shape_X;
        check_against_oracle(isa, Parameters::random(d, 11), random_inputs(d, 2, false, false, 12));
    }
}

TEST_CASE("forward: scores of magnitude >= 100 stay finite and accurate", "[forward][each_isa]") {
    FOR_EACH_ISA(isa) {
        const Dims d{16, 16, 40, 24, 8};
        const Parameters p = Parameters::random(d, 5);
        // Inputs scaled by 60 make |scores| reach several hundred: exp without the max shift overflows.
        const Inputs x = random_inputs(d, 9, false, false, 6, 60.0f);
        const OracleResult want = oracle(p, x);
        double largest = 0;
        for (double w : want.attn_weights) largest = std::max(largest, w);
        REQUIRE(largest > 0.5); // the test is only meaningful if some rows are sharp
        check_against_oracle(isa, p, x);
    }
}

TEST_CASE("forward: biases that dominate W x cost one rounding, not one per input", "[forward][each_isa]") {
    FOR_EACH_ISA(isa) {
        // Scores near -500 (and one sample's near +2000) from |W x| near 1, outputs near +-1e3: the
        // bound charges the bias u |s|, so a sum that started from the bias (rounding every step at
        // its magnitude) would exceed it.
        const Dims d{48, 48, 40, 24, 16};
        const Parameters r = Parameters::random(d, 21);
        std::vector<float> b1(d.value_size1), b2(d.output_size);
        for (std::size_t j = 0; j < b1.size(); ++j) b1[j] = -500.0f + 0.25f * static_cast<float>(j % 7);
        for (std::size_t j = 0; j < b2.size(); ++j) b2[j] = (j % 2 == 0 ? 1e3f : -3e3f) + static_cast<float>(j);
        const Parameters p(d, r.attn_weight(), b1, r.combine_weight(), b2);
        check_against_oracle(isa, p, random_inputs(d, 19, false, false, 22));
        std::vector<float> b1_high(b1);
        for (float& b : b1_high) b += 2500.0f;
        check_against_oracle(isa, Parameters(d, r.attn_weight(), b1_high, r.combine_weight(), b2),
                             random_inputs(d, 7, true, false, 23));
    }
}

TEST_CASE("forward: shared K / V give bitwise the same result as explicit copies", "[forward][each_isa]") {
    FOR_EACH_ISA(isa) {
        const Dims d{5, 7, 19, 13, 3};
        const Parameters p = Parameters::random(d, 9);
        const MyAttn attn(p, isa);
        const Inputs shared = random_inputs(d, 6, true, true, 10);
        Inputs copies = shared;
        copies.shared_k = copies.shared_v = false;
        copies.K.clear();
        copies.V.clear();
        for (std::size_t b = 0; b < shared.B; ++b) {
            copies.K.insert(copies.K.end(), shared.K.begin(), shared.K.end());
            copies.V.insert(copies.V.end(), shared.V.begin(), shared.V.end());
        }
        const ForwardResult a = run(attn, shared), b = run(attn, copies);
        CHECK(a.output == b.output);
        CHECK(a.attn_weights == b.attn_weights);
    }
}

TEST_CASE("forward: B = 0 is fine and writes nothing", "[forward][each_isa]") {
    FOR_EACH_ISA(isa) {
        const Dims d{4, 4, 4, 4, 4};
        const MyAttn attn(Parameters::random(d, 1), isa);
        const ForwardResult r = run(attn, random_inputs(d, 0, false, false, 1));
        CHECK(r.output_shape == Shape{0, 1, 4});
        CHECK(r.attn_weights_shape == Shape{0, 4});
        CHECK(r.output.empty());
    }
}

TEST_CASE("forward: softmax rows sum to 1", "[forward][softmax][each_isa]") {
    FOR_EACH_ISA(isa) {
        const Dims d{8, 8, 37, 8, 8};
        const MyAttn attn(Parameters::random(d, 2), isa);
        const Inputs x = random_inputs(d, 5, false, false, 2, 4.0f);
        const ForwardResult r = run(attn, x);
        for (std::size_t b = 0; b < x.B; ++b) {
            double sum = 0;
            for (std::size_t l = 0; l < d.value_size1; ++l) sum += r.attn_weights[b * d.value_size1 + l];
            // 37 rounded terms, each within (4 ulp exp + 2u) of exact, plus the summation.
            CHECK(std::fabs(sum - 1) <= gamma_n(37) + exp_rel_error + 2 * unit_roundoff + gamma_n(37));
        }
    }
}

TEST_CASE("forward: non-finite inputs follow PyTorch per sample", "[forward][nonfinite][each_isa]") {
    FOR_EACH_ISA(isa) {
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        const Dims d{3, 4, 21, 5, 6};
        const Parameters p = Parameters::random(d, 4);
        Inputs x = random_inputs(d, 4, false, false, 8);
        x.Q[0 * 3 + 1] = nan;      // sample 0: NaN query -> NaN scores, weights and output
        x.V[2 * 21 * 5 + 7] = inf; // sample 2: an inf in V -> inf or NaN output, finite weights
        x.K[3 * 4 + 0] = -inf;     // sample 3: -inf in K -> scores +-inf or NaN
        const MyAttn attn(p, isa);
        const ForwardResult got = run(attn, x);
        const OracleResult want = oracle(p, x);
        for (std::size_t i = 0; i < got.attn_weights.size(); ++i) {
            CAPTURE(i, got.attn_weights[i], want.attn_weights[i]);
            CHECK(std::isnan(got.attn_weights[i]) == std::isnan(want.attn_weights[i]));
        }
        for (std::size_t i = 0; i < got.output.size(); ++i) {
            CAPTURE(i, got.output[i], want.output[i]);
            CHECK(std::isnan(got.output[i]) == std::isnan(want.output[i]));
            CHECK(std::isinf(got.output[i]) == std::isinf(want.output[i]));
        }
        // Sample 1 is untouched and stays within its bound.
        for (std::size_t l = 0; l < 21; ++l) CHECK(std::isfinite(got.attn_weights[21 + l]));
        for (std::size_t l = 0; l < 21; ++l) CHECK(std::isnan(got.attn_weights[l]));
    }
}
