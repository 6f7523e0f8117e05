// The reference itself: a case small enough to compute by hand, and the softmax properties.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "reference.hpp"

using namespace myattn;

TEST_CASE("reference: hand-computed tiny case", "[reference]") {
    // q = k = 1, L = 2, d = 2, o = 1.
    // scores = W1 [q; k] + b1 = [1*1 + 0*2 + 0, 0*1 + 1*2 + 0] = [1, 2]
    // w = softmax([1, 2]) = [1, e] / (1 + e)
    // a = w0 [1, 0] + w1 [0, 1] = w
    // y = W2 [q; a] + b2 = 1*1 + 2*w0 + 3*w1 + 0.5
    const Dims dims{1, 1, 2, 2, 1};
    const float W1[] = {1, 0, 0, 1}, b1[] = {0, 0}, W2[] = {1, 2, 3}, b2[] = {0.5f};
    const float q[] = {1}, k[] = {2}, V[] = {1, 0, 0, 1};
    const detail::WeightsView w{W1, b1, W2, b2};
    double weights[2], a[2], y[1];
    detail::reference_sample<double>(dims, w, q, k, V, weights, a, y);
    const double e = std::exp(1.0);
    CHECK(weights[0] == Approx(1 / (1 + e)).epsilon(1e-15));
    CHECK(weights[1] == Approx(e / (1 + e)).epsilon(1e-15));
    CHECK(y[0] == Approx(1.5 + 2 / (1 + e) + 3 * e / (1 + e)).epsilon(1e-15));
}

TEST_CASE("reference softmax: rows sum to 1, stable at large magnitude", "[reference][softmax]") {
    for (double offset : {0.0, 100.0, -100.0, 1e4}) {
        double s[] = {offset + 1, offset + 2, offset + 3, offset - 50};
        detail::reference_softmax(s, 4);
        CAPTURE(offset);
        CHECK(s[0] + s[1] + s[2] + s[3] == Approx(1.0).epsilon(1e-15));
        // Shift invariance: the same as softmax([1, 2, 3, -50]).
        const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(-50.0);
        CHECK(s[2] == Approx(std::exp(3.0) / z).epsilon(1e-12));
    }
}

TEST_CASE("reference softmax: non-finite scores follow PyTorch", "[reference][softmax][nonfinite]") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    SECTION("NaN anywhere makes the row NaN") {
        float s[] = {1, nan, 3};
        detail::reference_softmax(s, 3);
        for (float x : s) CHECK(std::isnan(x));
    }
    SECTION("all -inf gives NaN") {
        float s[] = {-inf, -inf};
        detail::reference_softmax(s, 2);
        for (float x : s) CHECK(std::isnan(x));
    }
    SECTION("+inf makes the row NaN") {
        float s[] = {inf, 1};
        detail::reference_softmax(s, 2);
        for (float x : s) CHECK(std::isnan(x));
    }
    SECTION("a -inf among finite scores gets weight 0") {
        float s[] = {-inf, 0, 0};
        detail::reference_softmax(s, 3);
        CHECK(s[0] == 0.0f);
        CHECK(s[1] == 0.5f);
        CHECK(s[2] == 0.5f);
    }
}
