// The double-precision oracle and the error bound every float path is held to.
//
// Bound (u = 2^-24, gamma_n = n u / (1 - n u), Higham's bound for any summation order, FMA or
// not): with S_j = |b1_j| + sum_i |W1_ji| |x_i| the score error is e_j <= gamma_{q+k+1} S_j;
// with eps = max_j e_j, each weight w_l = exp(s_l - m) / sum is within
//   w_l * (exp(2 eps) - 1 + exp_rel + gamma_L + 2u)
// plus 2^-126 (a shift of every score by at most eps moves each ratio by at most exp(2 eps);
// exp_rel is the exp implementation's relative error, budgeted at 4 ulp; gamma_L the sum; 2u the
// division or reciprocal-multiply; 2^-126 = FLT_MIN absorbs exp results that underflow below the
// normal range, to a subnormal or to 0, since the sum is >= 1); the weighted sum a_j is off by sum_l |dw_l| |V_lj| +
// gamma_L sum_l w_l |V_lj|; and the output y by sum_i |W2_ji| |da_i| + gamma_{q+d+1} (|b2| + sum |W2| |[q; a]|). Each
// of these is a worst case, so a path that exceeds it is wrong, not unlucky.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "myattn/myattn.hpp"
#include "reference.hpp"

namespace myattn::test {

inline constexpr double unit_roundoff = 0x1p-24;
inline constexpr double exp_rel_error = 4 * 0x1p-23;

inline double gamma_n(std::size_t n) {
    const double nu = static_cast<double>(n) * unit_roundoff;
    return nu / (1 - nu);
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
    std::vector<double> a(D), da(D);
    for (std::size_t b = 0; b < x.B; ++b) {
        const float* qb = x.Q.data() + b * q;
        const float* kb = x.K.data() + (x.shared_k ? 0 : b * k);
        const float* vb = x.V.data() + (x.shared_v ? 0 : b * L * D);
        double* wb = r.attn_weights.data() + b * L;
        double* yb = r.output.data() + b * o;
        detail::reference_sample<double>(d, w, qb, kb, vb, wb, a.data(), yb);

        double eps = 0;
        for (std::size_t j = 0; j < L; ++j) {
            const float* row = w.attn_weight + j * (q + k);
            double s = std::fabs(w.attn_bias[j]);
            for (std::size_t i = 0; i < q; ++i) s += std::fabs(row[i] * double(qb[i]));
            for (std::size_t i = 0; i < k; ++i) s += std::fabs(row[q + i] * double(kb[i]));
            eps = std::max(eps, gamma_n(q + k + 1) * s);
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
            double prop = 0, mag = std::fabs(w.combine_bias[j]);
            for (std::size_t i = 0; i < q; ++i) mag += std::fabs(row[i] * double(qb[i]));
            for (std::size_t i = 0; i < D; ++i) {
                mag += std::fabs(row[q + i] * a[i]);
                prop += std::fabs(double(row[q + i])) * da[i];
            }
            r.output_bound[b * o + j] = prop + gamma_n(q + D + 1) * mag;
        }
    }
    return r;
}

} // namespace myattn::test
