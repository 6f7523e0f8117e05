// The layered forward (src/forward_plan.hpp): the batch in blocks of MC samples, each block
// through one layer after the other (kernels/compose.hpp over the table's kernels), each Linear
// in BLIS order over the whole block. The feature split is its plan_by_features.
#pragma once

#include <cstddef>

#include "forward_plan.hpp"
#include "kernels/table.hpp"

namespace myattn::detail {

/// Floats of scratch layered_forward needs for a batch of B samples.
std::size_t layered_scratch_size(const Dims& d, const ForwardPlan& plan, std::size_t B);

/// Runs all of x; `threads` share each layer of a block (output features of the Linears,
/// samples and columns of the weighted sums), so that each weight is still read once per
/// block. Every output is computed by the same chain as on the fused path: the same bits for
/// any thread count.
void layered_forward(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed,
                     const Batch& x, const ForwardPlan& plan, std::size_t threads, float* scratch);
/// The same with a bf16 V (precision bf16).
void layered_forward(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed,
                     const BatchOf<bfloat16>& x, const ForwardPlan& plan, std::size_t threads, float* scratch);

} // namespace myattn::detail
