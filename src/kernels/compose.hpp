// The module's composition, written once for every path that runs the kernels: the fused
// per-group kernels of one ISA (kernels/forward.hpp) and the drivers that share each step among
// threads (src/layered_forward.cpp). The reference (src/reference.hpp) composes its own plain
// loops, independently, as the oracle.
//
// compose() runs a block of samples through the steps in order, and says what each step reads
// and writes; a Steps type says how each step runs:
//
//   steps.linear(Layer, const SplitRows& x, rows, float* y, ldy)
//       y[r * ldy + j] = b[j] + sum_i W[j, i] x_r[i] for the block's rows r and every output j
//       of that Linear: the scores' (x = [Q; K]) or the combine's (x = [Q; a]).
//   Steps::partial_inputs, a constexpr bool; if true, also
//   steps.linear(Layer, x, rows, y, ldy, Range inputs)
//       the same sums over inputs [begin, end) only: from zero if begin is 0, else continuing
//       those already in y; the bias added once end is the last input.
//   steps.softmax(float* s, rows, n)
//       the block's rows of n scores from s (n apart), in place.
//   steps.weighted_sum(const WeightedSumOf<VT>& op)
//       a[r, :] = sum_l w[r, l] V_r[l, :] for the block's rows, all columns; VT is the batch's
//       V element type (float, or bfloat16 for the bf16 precision), so a Steps type takes each
//       VT it runs (a member template, or one overload per VT).
//
// A precision is the Steps' business, not compose()'s: the fused GroupSteps run Lin's register
// kernels (F32Linear at f32 and bf16, Int8Linear), the layered SharedSteps the table's, which
// are that precision's. The Linears' inputs and outputs are float rows whatever the precision.
//
// Nothing here depends on an ISA: the per-ISA objects and baseline code each instantiate it
// for their own Steps (anonymous namespace, as every kernel header: docs/design.md).
#pragma once

#include <cstddef>

#include "kernels/table.hpp"
#include "myattn/parameters.hpp"

namespace myattn::detail {
namespace {

/// The module's two Linears.
enum class Layer { scores, combine };

/// Samples [s.begin, s.end) of x through the module: scores = Linear([Q; K]) into
/// attn_weights, softmax of each row in place, a = the weighted sum of V's rows into `a`
/// ((s.end - s.begin) x value_size2 floats), output = Linear([Q; a]).
template <class Steps, class VT>
void compose(Steps& steps, const Dims& d, const BatchOf<VT>& x, Range s, float* a) {
    const std::size_t q = d.query_size, L = d.value_size1, D = d.value_size2, o = d.output_size;
    const std::size_t rows = s.end - s.begin;
    const auto* Q = x.Q + s.begin * q;
    float* w = x.attn_weights + s.begin * L;
    steps.linear(Layer::scores,
                 {.x1 = Q, .ld1 = q, .n1 = q, .x2 = x.K + s.begin * x.k_stride, .ld2 = x.k_stride, .n2 = d.key_size},
                 rows, w, L);
    // Steps that can run a Linear over a range of its inputs (Steps::partial_inputs: the fused
    // kernels) start the combine on Q here: it does not wait for `a`, so the core runs it beside
    // the softmax's chain of dependent steps. The second part continues the same sums in the
    // same order, then adds the bias: bitwise one pass.
    const SplitRows qa{.x1 = Q, .ld1 = q, .n1 = q, .x2 = a, .ld2 = D, .n2 = D};
    float* y = x.output + s.begin * o;
    if constexpr (Steps::partial_inputs) steps.linear(Layer::combine, qa, rows, y, o, Range{0, q});
    steps.softmax(w, rows, L);
    steps.weighted_sum(WeightedSumOf<VT>{.rows = rows,
                                         .w = w,
                                         .ldw = L,
                                         .V = x.V + s.begin * x.v_stride,
                                         .v_stride = x.v_stride,
                                         .L = L,
                                         .d = D,
                                         .a = a,
                                         .lda = D});
    if constexpr (Steps::partial_inputs)
        steps.linear(Layer::combine, qa, rows, y, o, Range{q, q + D});
    else
        steps.linear(Layer::combine, qa, rows, y, o);
}

} // namespace
} // namespace myattn::detail
