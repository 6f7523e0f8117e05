// The double-precision oracle and the error bound every float path is held to.
//
// Bound (u = 2^-24, gamma_n = n u / (1 - n u)). Every Linear sums its n products from zero, in
// any order, FMA or not (Higham: error <= gamma_n sum |W_ji| |x_i|), then adds the bias once,
// which rounds once more: fl(P^ + b) = (P^ + b)(1 + d), |d| <= u, so with P_j = sum_i |W_ji| |x_i|
// and s_j the exact score, the score error is
//   e_j <= (1 + u) gamma_{q+k} P_j + u |s_j|.
// The bias costs one rounding at the result's magnitude, never n at its own (adding it first
// would cost gamma_{q+k+1} |b_j|). |s_j| is the float64 score plus that score's own error,
// gamma_{q+k+1} (P_j + |b_j|) in double precision. With eps = max_j e_j, each weight
// w_l = exp(s_l - m) / sum is within
//   w_l * (exp(2 eps) - 1 + exp_rel + gamma_L + 2u)
// plus 2^-126 (a shift of every score by at most eps moves each ratio by at most exp(2 eps);
// exp_rel is the exp implementation's relative error, budgeted at 4 ulp; gamma_L the sum; 2u the
// division or reciprocal-multiply; 2^-126 = FLT_MIN absorbs exp results that underflow below the
// normal range, to a subnormal or to 0, since the sum is >= 1); the weighted sum a_j is off by
// da_j = sum_l |dw_l| |V_lj| + gamma_L sum_l w_l |V_lj|. The output y_j, a Linear over [q; a^]
// with a^ = a + da, is off by the propagated prop_j = sum_i |W2_ji| da_i plus the same rounding
// as a score, over magnitudes that include the propagated error:
//   (1 + u) (prop_j + gamma_{q+d} (M_j + prop_j)) + u |y_j|,  M_j = sum |W2_j| |[q; a]|.
// Each of these is a worst case, so a path that exceeds it is wrong, not unlucky.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "myattn/myattn.hpp"
#include "reference.hpp"

namespace myattn::test {

inline constexpr double unit_roundoff = 0x1p-24;
inline constexpr double exp_rel_error = 4 * 0x1p-23;

inline double gamma_n(std::size_t n, double unit = unit_roundoff) {
    const double nu = static_cast<double>(n) * unit;
    return nu / (1 - nu);
}

/// An upper bound on |t| for the exact value t of a sum whose float64 value is t64 and whose
/// terms' magnitudes add up to `mag`, over n roundings.
inline double exact_magnitude(double t64, double mag, std::size_t n) {
    return std::fabs(t64) + gamma_n(n, 0x1p-53) * mag;
}

/// Inputs of one forward call, owned; K and V may be shared ([1, ...]).
struct Inputs {
    std::size_t B = 0;
    bool shared_k = false, shared_v = false;
    std::vector<float> Q, K, V;
    [[nodiscard]] ConstTensor q(const Dims& d) const { return {Q.data(), {B, 1, d.query_size}}; }
    [[nodiscard]] ConstTensor k(const Dims& d) const { return {K.data(), {shared_k ? 1 : B, 1, d.key_size}}; }
    [[nodiscard]] ConstTensor v(const Dims& d) const {
        return {V.data(), {shared_v ? 1 : B, d.value_size1, d.value_size2}};
    }
};

struct OracleResult {
    std::vector<double> output, attn_weights;             // the float64 reference
    std::vector<double> output_bound, attn_weights_bound; // how far a float path may be
};

inline OracleResult oracle(const Parameters& p, const Inputs& x) {
    const Dims& d = p.dims();
    const std::size_t q = d.query_size, k = d.key_size, L = d.value_size1, D = d.value_size2, o = d.output_size;
    const detail::WeightsView w{p.attn_weight().data(), p.attn_bias().data(), p.combine_weight().data(),
                                p.combine_bias().data()};
    OracleResult r;
    r.output.resize(x.B * o);
    r.attn_weights.resize(x.B * L);
    r.output_bound.resize(x.B * o);
    r.attn_weights_bound.resize(x.B * L);
    std::vector<double> a(D), da(D), scores(L);
    for (std::size_t b = 0; b < x.B; ++b) {
        const float* qb = x.Q.data() + b * q;
        const float* kb = x.K.data() + (x.shared_k ? 0 : b * k);
        const float* vb = x.V.data() + (x.shared_v ? 0 : b * L * D);
        double* wb = r.attn_weights.data() + b * L;
        double* yb = r.output.data() + b * o;
        detail::reference_sample<double>(d, w, qb, kb, vb, wb, a.data(), yb);
        detail::reference_linear<double>(w.attn_weight, w.attn_bias, L, qb, q, kb, k, scores.data());

        double eps = 0;
        for (std::size_t j = 0; j < L; ++j) {
            const float* row = w.attn_weight + j * (q + k);
            double mag = 0;
            for (std::size_t i = 0; i < q; ++i) mag += std::fabs(row[i] * double(qb[i]));
            for (std::size_t i = 0; i < k; ++i) mag += std::fabs(row[q + i] * double(kb[i]));
            const double s = exact_magnitude(scores[j], mag + std::fabs(w.attn_bias[j]), q + k + 1);
            eps = std::max(eps, (1 + unit_roundoff) * gamma_n(q + k) * mag + unit_roundoff * s);
        }
        const double w_rel = std::expm1(2 * eps) + exp_rel_error + gamma_n(L) + 2 * unit_roundoff;
        double* wbound = r.attn_weights_bound.data() + b * L;
        for (std::size_t l = 0; l < L; ++l) wbound[l] = wb[l] * w_rel + 0x1p-126;
        for (std::size_t j = 0; j < D; ++j) {
            double dw = 0, mag = 0;
            for (std::size_t l = 0; l < L; ++l) {
                dw += wbound[l] * std::fabs(vb[l * D + j]);
                mag += wb[l] * std::fabs(vb[l * D + j]);
            }
            da[j] = dw + gamma_n(L) * mag;
        }
        for (std::size_t j = 0; j < o; ++j) {
            const float* row = w.combine_weight + j * (q + D);
            double prop = 0, mag = 0;
            for (std::size_t i = 0; i < q; ++i) mag += std::fabs(row[i] * double(qb[i]));
            for (std::size_t i = 0; i < D; ++i) {
                mag += std::fabs(row[q + i] * a[i]);
                prop += std::fabs(double(row[q + i])) * da[i];
            }
            const double y = exact_magnitude(yb[j], mag + std::fabs(w.combine_bias[j]), q + D + 1);
            r.output_bound[b * o + j] =
                (1 + unit_roundoff) * (prop + gamma_n(q + D) * (mag + prop)) + unit_roundoff * y;
        }
    }
    return r;
}

} // namespace myattn::test
