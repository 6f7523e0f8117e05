// The interface between the baseline driver (attention.cpp) and one ISA's kernels.
//
// Each ISA translation unit fills one KernelTable of plain function pointers (its registry row,
// src/registry.hpp, points at it); the driver picks
// a table once per MyAttn and never looks at the CPU again. Only plain data crosses this
// boundary, so no inline function is shared between objects built with different flags.
#pragma once

#include <cstddef>
#include <string_view>

#include "myattn/isa.hpp"
#include "myattn/parameters.hpp"

namespace myattn::detail {

/// The four parameter tensors, unpacked (PyTorch layout).
struct WeightsView {
    const float* attn_weight;    // [L, q+k]
    const float* attn_bias;      // [L]
    const float* combine_weight; // [o, q+d]
    const float* combine_bias;   // [o]
};

/// One validated forward call over the caller's contiguous buffers.
struct Batch {
    const float* Q;       // [B, q]
    const float* K;       // [B, k], or [k] shared
    const float* V;       // [B, L, d], or [L, d] shared
    std::size_t k_stride; // k, or 0 when K is shared
    std::size_t v_stride; // L * d, or 0 when V is shared
    float* output;        // [B, o]
    float* attn_weights;  // [B, L]
};

/// The input rows of a Linear, [x1; x2], never concatenated: row r is the n1 floats at
/// x1 + r * ld1 followed by the n2 floats at x2 + r * ld2 (a stride of 0 shares one row).
struct SplitRows {
    const float* x1;
    std::size_t ld1, n1;
    const float* x2;
    std::size_t ld2, n2;
};

struct KernelTable {
    Isa isa;
    /// The registry row's kernel ID, e.g. "f32-linear-8x32-avx512".
    std::string_view id;
    /// Register tile of the Linear micro-kernel: MR samples x NR output features (1 x 1 for
    /// scalar). Tests and benchmarks aim edge cases at them.
    std::size_t mr, nr;
    /// Floats needed by the packed weights of `dims`.
    std::size_t (*packed_size)(const Dims& dims);
    /// Packs the weights once, at construction, into the layout this ISA's kernels read.
    void (*pack)(const Dims& dims, const WeightsView& weights, float* packed);
    /// Floats of scratch one thread needs to run `rows` samples at once.
    std::size_t (*scratch_size)(const Dims& dims, std::size_t rows);
    /// Runs samples [begin, end) of `batch`; `scratch` holds scratch_size(dims, end - begin)
    /// floats. Each sample's result depends on nothing but its own inputs, so results are
    /// bitwise identical whatever the tiling or the thread count.
    void (*forward)(const Dims& dims, const float* packed, const Batch& batch, std::size_t begin, std::size_t end,
                    float* scratch);

    // The kernels forward composes, for per-kernel tests and benchmarks.
    /// Floats needed by pack_linear for a Linear of `out` >= 1 features over `in` inputs.
    std::size_t (*linear_packed_size)(std::size_t out, std::size_t in);
    /// Packs W [out, in] (PyTorch layout) and b [out] for `linear`.
    void (*pack_linear)(const float* W, const float* b, std::size_t out, std::size_t in, float* packed);
    /// y[r * ldy + j] = b[j] + sum_i W[j, i] x_r[i] for r < rows, j < out, over x's split rows.
    /// Writes nothing else.
    void (*linear)(const float* packed, std::size_t out, std::size_t rows, const SplitRows& x, float* y,
                   std::size_t ldy);
    /// Softmax of the n > 0 floats at row, in place; non-finite inputs as in PyTorch.
    void (*softmax)(float* row, std::size_t n);
    /// a[r * lda + j] = sum_l w[r * ldw + l] V_r[l * ldv + j] for r < rows, j < d, where V_r =
    /// V + r * v_stride (v_stride 0: one V shared by every row); ldv >= d (d: V is [L, d]; more:
    /// a block of V's columns). Writes nothing else.
    void (*weighted_sum)(std::size_t rows, const float* w, std::size_t ldw, const float* V, std::size_t v_stride,
                         std::size_t L, std::size_t d, std::size_t ldv, float* a, std::size_t lda);
};

} // namespace myattn::detail
