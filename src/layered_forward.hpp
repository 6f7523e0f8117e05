// The layered forward (src/forward_plan.hpp): the batch in blocks of MC samples, each block
// through one layer after the other (kernels/compose.hpp over the table's kernels), each Linear
// in BLIS order over the whole block. The feature split is its plan_by_features.
#pragma once

#include <cstddef>

#include "forward_plan.hpp"
#include "kernels/table.hpp"

namespace myattn::detail {

/// Samples per block when each of `threads` threads runs whole blocks, which saves a fork and a
/// join per layer, or 0 when the plan has fewer blocks of MC than threads: they then share each
/// layer of a block, so that each weight is still read once per MC samples, not once per
/// thread. The blocks, a multiple of MR and at most MC samples each (MC rounded up to MR), are
/// made as many as the next multiple of the threads, of about equal size.
std::size_t block_per_thread(std::size_t B, std::size_t mc, std::size_t mr, std::size_t threads);

/// Floats of scratch layered_forward needs for a batch of B samples through kernels of MR rows.
std::size_t layered_scratch_size(const Dims& d, const ForwardPlan& plan, std::size_t B, std::size_t mr,
                                 std::size_t threads);

/// Runs all of x. With samples enough (block_per_thread), the threads take whole blocks; else
/// they share each layer of a block (output features of the Linears, samples and columns of
/// the weighted sums). But a plan that says `pipelined`, with a V per sample, on more than one
/// thread, runs the blocks as a dataflow: each sample's weighted sum a task, which streams V on
/// some threads while others run the Linears of the blocks around it. Either way each weight is
/// read once per block, and every output is computed by the same chain as on the fused path:
/// the same bits for any thread count.
void layered_forward(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed,
                     const Batch& x, const ForwardPlan& plan, std::size_t threads, float* scratch);
/// The same with a bf16 V (precision bf16).
void layered_forward(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed,
                     const BatchOf<bfloat16>& x, const ForwardPlan& plan, std::size_t threads, float* scratch);

} // namespace myattn::detail
