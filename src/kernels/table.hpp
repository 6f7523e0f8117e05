// The interface between the baseline driver (attention.cpp) and one ISA's kernels.
//
// Each ISA translation unit fills one KernelTable of plain function pointers (its registry row,
// src/registry.hpp, points at it); the driver picks a table once per MyAttn and never looks at
// the CPU again. Only plain data crosses this boundary, so no inline function is shared between
// objects built with different flags.
//
// The interface is closed: only the kernel side knows how it packs the weights. `pack` returns
// where each Linear lies and how wide its panels are, and the driver splits work through the
// table (a Linear over a range of output features, a weighted sum over a range of columns)
// without any layout arithmetic of its own.
#pragma once

#include <cstddef>
#include <string_view>

#include "myattn/bfloat16.hpp"
#include "myattn/isa.hpp"
#include "myattn/parameters.hpp"
#include "myattn/precision.hpp"

namespace myattn::detail {

/// The four parameter tensors, unpacked (PyTorch layout).
struct WeightsView {
    const float* attn_weight;    // [L, q+k]
    const float* attn_bias;      // [L]
    const float* combine_weight; // [o, q+d]
    const float* combine_bias;   // [o]
};

/// One validated forward call over the caller's contiguous buffers; V holds floats, or
/// bfloat16s for the bf16 precision.
template <class VT>
struct BatchOf {
    std::size_t B;        // samples
    const float* Q;       // [B, q]
    const float* K;       // [B, k], or [k] shared
    const VT* V;          // [B, L, d], or [L, d] shared
    std::size_t k_stride; // k, or 0 when K is shared
    std::size_t v_stride; // L * d, or 0 when V is shared
    float* output;        // [B, o]
    float* attn_weights;  // [B, L]
};
using Batch = BatchOf<float>;

/// One packed Linear y = b + W [x1; x2], W [out, in]: `size` floats from `offset` in the packed
/// buffer, in panels of `panel` output features (a work split cuts it at multiples of `panel`).
/// x1 is the first n1 of the in inputs: the int8 kernels quantize each part on its own.
struct LinearLayout {
    std::size_t offset, size;
    std::size_t out, in;
    std::size_t panel;
    std::size_t n1;
};

/// The packed weights of the module: the scores' Linear, then the combine's.
struct PackedLayout {
    LinearLayout scores, combine;
    std::size_t size; // floats in all
};

/// A half-open range [begin, end) of output features or columns.
struct Range {
    std::size_t begin, end;
};

/// The input rows of a Linear, [x1; x2], never concatenated: row r is the n1 floats at
/// x1 + r * ld1 followed by the n2 floats at x2 + r * ld2 (a stride of 0 shares one row).
struct SplitRows {
    const float* x1;
    std::size_t ld1, n1;
    const float* x2;
    std::size_t ld2, n2;
};

/// Cache blocking of a Linear over many rows: KC inputs at a time (0: the kernels' own KC), NC
/// output features (a multiple of the panel width; 0: all of them) at a time.
struct LinearBlocking {
    std::size_t kc, nc;
};

/// Float lanes of FMA a core retires per cycle unless its features say more
/// (fma_lanes_per_cycle, src/dispatch.hpp): two 256-bit pipes, or Zen 4's one 512-bit.
inline constexpr std::size_t default_fma_lanes = 16;

/// Cache blocking of the fused forward, from the caches of the CPU at hand (src/forward_plan.hpp):
/// KC inputs per slice of a Linear, and the most bytes of V a group requests for the next one
/// while its Linears compute. 0 takes the kernels' constant (kernels/blocking.hpp). None of
/// them changes a bit of the results.
struct FusedBlocking {
    std::size_t kc = 0, prefetch_limit = 0;
    /// Float lanes of FMA the core retires per cycle, which paces the V requests
    /// (Blocking::prefetch_lines).
    std::size_t fma_lanes = default_fma_lanes;
    /// The batch's inputs come from memory: the requests take the next group's Q and K rows
    /// as well, before its V (docs/tuning.md).
    bool request_qk = false;
};

/// The operands of a weighted sum a[r, j] = sum_l w[r, l] V_r[l, j]: `rows` rows of weights
/// (ldw floats apart), V_r = V + r * v_stride (0: one V shared by every row) of L rows of d
/// values (float, or bfloat16 for the bf16 precision), results ld_a floats apart.
template <class VT>
struct WeightedSumOf {
    std::size_t rows;
    const float* w;
    std::size_t ldw;
    const VT* V;
    std::size_t v_stride, L, d;
    float* a;
    std::size_t lda;
};
using WeightedSum = WeightedSumOf<float>;

struct KernelTable {
    Isa isa;
    Precision precision;
    /// The registry row's kernel ID, e.g. "f32-linear-8x32-avx512".
    std::string_view id;
    /// Tile of the Linear micro-kernel: MR samples x NR output features (1 x 1 for scalar; 16
    /// rows on AMX's tiles, 8 in registers elsewhere), and the fused forward's group of samples.
    /// The driver tiles the batch in multiples of MR; tests and benchmarks aim edge cases at both.
    std::size_t mr, nr;
    /// int8: the activations' quantization steps (255, or 127 where the kernels need 7 bits:
    /// kernels/quantize.hpp); 0 at other precisions.
    int quant_levels;
    /// bf16: whether the Linears round their inputs to bf16 as well as their weights (the CPU's
    /// native bf16 dot product: kernels/bf16_dot_linear.hpp); false at other precisions.
    bool bf16_inputs;
    /// Where pack puts each Linear of `dims`, and the floats it needs.
    PackedLayout (*layout)(const Dims& dims);
    /// Packs the weights once, at construction, into `packed` (layout(dims).size floats).
    PackedLayout (*pack)(const Dims& dims, const WeightsView& weights, float* packed);
    /// Floats of scratch one thread needs to run `rows` samples at once.
    std::size_t (*scratch_size)(const Dims& dims, std::size_t rows);
    /// Runs samples [begin, end) of `batch` blocked as `b` says; `scratch` holds
    /// scratch_size(dims, end - begin) floats. Each sample's result depends on nothing but its
    /// own inputs, so results are bitwise identical whatever the tiling, blocking or thread count.
    void (*forward)(const Dims& dims, const PackedLayout& layout, const float* packed, const Batch& batch,
                    Range samples, const FusedBlocking& b, float* scratch);
    /// The same with a bf16 V; only the bf16 precision has it (null elsewhere).
    void (*forward_bf16v)(const Dims& dims, const PackedLayout& layout, const float* packed,
                          const BatchOf<bfloat16>& batch, Range samples, const FusedBlocking& b, float* scratch);

    // The kernels forward composes, for work split across threads, per-kernel tests and benchmarks.
    /// Where pack_linear puts a Linear of `out` >= 1 features over the inputs [x1; x2] of n1 and
    /// n2 floats (offset 0). Calls give it rows of the same parts (SplitRows with that n1).
    LinearLayout (*linear_layout)(std::size_t out, std::size_t n1, std::size_t n2);
    /// Packs W [out, in] (PyTorch layout) and b [out] at packed + l.offset.
    void (*pack_linear)(const LinearLayout& l, const float* W, const float* b, float* packed);
    /// y[r * ldy + j] = b[j] + sum_i W[j, i] x_r[i] for r < rows and j in `features` (begin a
    /// multiple of l.panel; end one too, or l.out). Writes nothing else.
    void (*linear)(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range features,
                   float* y, std::size_t ldy);
    /// The same outputs, bitwise, in BLIS order: for each block of b.nc features, for each slice
    /// of b.kc inputs, every group of rows, so that the block's weights are read from beyond L2
    /// once per call rather than once per group.
    void (*linear_blocked)(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows,
                           Range features, const LinearBlocking& b, float* y, std::size_t ldy);
    /// Softmax of the n > 0 floats at row, in place; non-finite inputs as in PyTorch.
    void (*softmax)(float* row, std::size_t n);
    /// a[r * lda + j] for the columns j in `columns` of each row r. Writes nothing else.
    void (*weighted_sum)(const WeightedSum& op, Range columns);
    /// The same with a bf16 V; only the bf16 precision has it (null elsewhere).
    void (*weighted_sum_bf16v)(const WeightedSumOf<bfloat16>& op, Range columns);
};

namespace {

/// The table's forward and weighted sum for a V of floats or, precision bf16, of bf16s (whose
/// entries the driver checked to be there).
inline void forward_with(const KernelTable& k, const Dims& d, const PackedLayout& l, const float* packed,
                         const Batch& x, Range s, const FusedBlocking& b, float* scratch) {
    k.forward(d, l, packed, x, s, b, scratch);
}
inline void forward_with(const KernelTable& k, const Dims& d, const PackedLayout& l, const float* packed,
                         const BatchOf<bfloat16>& x, Range s, const FusedBlocking& b, float* scratch) {
    k.forward_bf16v(d, l, packed, x, s, b, scratch);
}
inline void weighted_sum_with(const KernelTable& k, const WeightedSum& op, Range c) { k.weighted_sum(op, c); }
inline void weighted_sum_with(const KernelTable& k, const WeightedSumOf<bfloat16>& op, Range c) {
    k.weighted_sum_bf16v(op, c);
}

/// The module's two Linears back to back, each where `linear_layout` puts it.
template <class LinearLayoutOf>
PackedLayout module_layout(const Dims& d, LinearLayoutOf linear_layout) {
    LinearLayout scores = linear_layout(d.value_size1, d.query_size, d.key_size);
    LinearLayout combine = linear_layout(d.output_size, d.query_size, d.value_size2);
    combine.offset = scores.offset + scores.size;
    return {scores, combine, combine.offset + combine.size};
}

/// A table's layout and pack entries from those of its Linear.
template <auto linear_layout>
PackedLayout module_layout_of(const Dims& d) {
    return module_layout(d, linear_layout);
}
template <auto linear_layout, auto pack_linear>
PackedLayout pack_module(const Dims& d, const WeightsView& w, float* packed) {
    const PackedLayout l = module_layout(d, linear_layout);
    pack_linear(l.scores, w.attn_weight, w.attn_bias, packed);
    pack_linear(l.combine, w.combine_weight, w.combine_bias, packed);
    return l;
}

} // namespace
} // namespace myattn::detail
