// The scalar reference: plain loops in the article's order, obviously right.
//
// Templated on the accumulator type. With float it is the `scalar` ISA, the baseline every
// benchmark compares against; with double it is the oracle every test compares against.
// Only baseline translation units include this file (never a per-ISA one: see docs/design.md).
#pragma once

#include <cmath>
#include <cstddef>

#include "kernels/table.hpp"
#include "myattn/parameters.hpp"

namespace myattn::detail {

/// y[j] = sum_i W[j, i] * [x1; x2][i] + b[j] for j < rows(W): a Linear over a concatenation
/// that is never built. The bias comes last, as in PyTorch: the products sum at their own
/// magnitude, not at the bias's.
template <class Acc, class X2>
void reference_linear(const float* W, const float* b, std::size_t out, const float* x1, std::size_t n1, const X2* x2,
                      std::size_t n2, Acc* y) {
    for (std::size_t j = 0; j < out; ++j) {
        const float* row = W + j * (n1 + n2);
        Acc acc = 0;
        for (std::size_t i = 0; i < n1; ++i) acc += Acc(row[i]) * Acc(x1[i]);
        for (std::size_t i = 0; i < n2; ++i) acc += Acc(row[n1 + i]) * Acc(x2[i]);
        y[j] = acc + Acc(b[j]);
    }
}

/// In-place numerically stable softmax: exp(s - max s) / sum. Non-finite inputs follow
/// PyTorch: a NaN anywhere, an all -inf row, or a +inf makes the whole row NaN.
template <class Acc>
void reference_softmax(Acc* s, std::size_t n) {
    Acc m = s[0];
    for (std::size_t i = 1; i < n; ++i) m = (s[i] > m || std::isnan(s[i])) ? s[i] : m;
    Acc sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        s[i] = std::exp(s[i] - m);
        sum += s[i];
    }
    for (std::size_t i = 0; i < n; ++i) s[i] /= sum;
}

/// a[j] = sum_l w[l] * V[l, j], for j < d; V's rows are ldv floats apart.
template <class Acc>
void reference_weighted_sum(const Acc* w, const float* V, std::size_t L, std::size_t d, std::size_t ldv, Acc* a) {
    for (std::size_t j = 0; j < d; ++j) a[j] = 0;
    for (std::size_t l = 0; l < L; ++l)
        for (std::size_t j = 0; j < d; ++j) a[j] += w[l] * Acc(V[l * ldv + j]);
}

/// One sample: q [q], k [k], v [L, d] -> weights [L], output [o]. `a` is scratch of d.
template <class Acc>
void reference_sample(const Dims& dims, const WeightsView& w, const float* q, const float* k, const float* v,
                      Acc* weights, Acc* a, Acc* output) {
    const std::size_t Q = dims.query_size, L = dims.value_size1, d = dims.value_size2;
    reference_linear(w.attn_weight, w.attn_bias, L, q, Q, k, dims.key_size, weights);
    reference_softmax(weights, L);
    reference_weighted_sum(weights, v, L, d, d, a);
    reference_linear(w.combine_weight, w.combine_bias, dims.output_size, q, Q, a, d, output);
}

} // namespace myattn::detail
