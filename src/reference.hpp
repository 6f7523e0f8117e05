// The scalar reference: plain loops in the article's order, obviously right.
//
// Templated on the accumulator type. With float it is the `scalar` ISA, the baseline every
// benchmark compares against; with double it is the oracle every test compares against.
// Only baseline translation units include this file (never a per-ISA one: see docs/design.md).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/quantize.hpp"
#include "kernels/table.hpp"
#include "myattn/parameters.hpp"
#include "value_types.hpp"

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

/// a[j] = sum_l w[l] * V[l, j], for j < d; V's rows are ldv values (float or bfloat16) apart.
template <class Acc, class VT>
void reference_weighted_sum(const Acc* w, const VT* V, std::size_t L, std::size_t d, std::size_t ldv, Acc* a) {
    for (std::size_t j = 0; j < d; ++j) a[j] = 0;
    for (std::size_t l = 0; l < L; ++l)
        for (std::size_t j = 0; j < d; ++j) a[j] += w[l] * Acc(value_of(V[l * ldv + j]));
}

/// One sample through the module, its Linears given: scores(q, k, weights) and
/// combine(q, a, output). q [q], k [k], v [L, d] -> weights [L], output [o]; `a` is scratch of d.
template <class Acc, class Scores, class Combine, class VT>
void reference_sample_with(const Dims& dims, const Scores& scores, const Combine& combine, const float* q,
                           const float* k, const VT* v, Acc* weights, Acc* a, Acc* output) {
    const std::size_t L = dims.value_size1, d = dims.value_size2;
    scores(q, k, weights);
    reference_softmax(weights, L);
    reference_weighted_sum(weights, v, L, d, d, a);
    combine(q, static_cast<const Acc*>(a), output);
}

/// One sample with float32 weights, summed in Acc; V float or bf16.
template <class Acc, class VT>
void reference_sample(const Dims& dims, const WeightsView& w, const float* q, const float* k, const VT* v, Acc* weights,
                      Acc* a, Acc* output) {
    const std::size_t Q = dims.query_size;
    reference_sample_with<Acc>(
        dims,
        [&](const float* x1, const float* x2, Acc* y) {
            reference_linear(w.attn_weight, w.attn_bias, dims.value_size1, x1, Q, x2, dims.key_size, y);
        },
        [&](const float* x1, const Acc* x2, Acc* y) {
            reference_linear(w.combine_weight, w.combine_bias, dims.output_size, x1, Q, x2, dims.value_size2, y);
        },
        q, k, v, weights, a, output);
}

/// The int8 weights of a Linear (kernels/quantize.hpp): W [out, n1 + n2] as int8 in the same
/// layout, each feature's scale, and the sums of its int8 weights over x1's and over x2's inputs.
struct Int8Weights {
    const std::int8_t* w;
    const float* scale;
    const std::int32_t* sum1;
    const std::int32_t* sum2;
};

/// Quantizes W [out, n1 + n2] feature by feature into w, scale, sum1 and sum2.
inline void quantize_linear(const float* W, std::size_t out, std::size_t n1, std::size_t n2, std::int8_t* w,
                            float* scale, std::int32_t* sum1, std::int32_t* sum2) {
    const std::size_t n = n1 + n2;
    for (std::size_t j = 0; j < out; ++j) {
        scale[j] = weight_scale(W + j * n, n);
        sum1[j] = sum2[j] = 0;
        for (std::size_t i = 0; i < n; ++i) {
            w[j * n + i] = quantize_weight(W[j * n + i], scale[j]);
            (i < n1 ? sum1[j] : sum2[j]) += w[j * n + i];
        }
    }
}

/// The int8 Linear over one row [x1; x2] (kernels/quantize.hpp), features [0, out) of q (rows
/// n1 + n2 apart): each part quantized into `bytes` (round_up_group(n1) + round_up_group(n2)),
/// int32 sums corrected by the zero points, dequantized, the bias added last.
inline void reference_int8_linear(const Int8Weights& q, const float* b, std::size_t out, const float* x1,
                                  std::size_t n1, const float* x2, std::size_t n2, int levels, std::uint8_t* bytes,
                                  float* y) {
    const std::size_t n = n1 + n2;
    std::uint8_t* q2 = bytes + round_up_group(n1);
    const RowQuant r1 = quantize_row(x1, n1, levels, bytes), r2 = quantize_row(x2, n2, levels, q2);
    for (std::size_t j = 0; j < out; ++j) {
        const std::int8_t* row = q.w + j * n;
        std::int32_t s1 = 0, s2 = 0;
        for (std::size_t i = 0; i < n1; ++i) s1 += row[i] * std::int32_t(bytes[i]);
        for (std::size_t i = 0; i < n2; ++i) s2 += row[n1 + i] * std::int32_t(q2[i]);
        s1 -= r1.zero_point * q.sum1[j];
        s2 -= r2.zero_point * q.sum2[j];
        const float part = dequantize_first(s1, q.scale[j], r1.scale);
        y[j] = dequantize_add(s2, q.scale[j], r2.scale, part) + b[j];
    }
}

} // namespace myattn::detail
