// The fused forward of one ISA, and its KernelTable: the kernels of this directory composed,
// over the Linear steps of one precision (`Lin`: F32Linear, kernels/linear.hpp, or Int8Linear,
// kernels/int8_linear.hpp). The softmax and the weighted sum are float32 at every precision.
//
// A tile of samples runs in groups of MR: scores (straight into attn_weights) → softmax in
// place → weighted sum into scratch → combine into output, so each group's Q, K and V rows,
// weights and `a` are still in L1 for the next step. The packed weights are W1's panels then
// W2's (pack_linear's layout each, where layout() says).
//
// Only src/isa/<isa>.cpp includes this, once, and exports nothing but its table accessor.
#pragma once

#include <cstddef>
#include <type_traits>

#include "kernels/blocking.hpp"
#include "kernels/int8_linear.hpp"
#include "kernels/linear.hpp"
#include "kernels/prefetch.hpp"
#include "kernels/softmax.hpp"
#include "kernels/table.hpp"
#include "kernels/weighted_sum.hpp"
#include "registry.hpp"

namespace myattn::detail {
namespace {

template <class Lin>
PackedLayout layout(const Dims& d) {
    return module_layout(d, Lin::layout);
}

template <class Lin>
PackedLayout pack(const Dims& d, const WeightsView& w, float* packed) {
    const PackedLayout l = layout<Lin>(d);
    Lin::pack(l.scores, w.attn_weight, w.attn_bias, packed);
    Lin::pack(l.combine, w.combine_weight, w.combine_bias, packed);
    return l;
}

/// `a` for one group of MR samples.
template <class Arch>
std::size_t scratch_size(const Dims& d, std::size_t rows) {
    constexpr std::size_t MR = Blocking<Arch>::MR;
    return (rows < MR ? rows : MR) * d.value_size2;
}

/// One group of M samples, from g, through the whole module; pf requests the next group's V
/// while the Linears compute.
template <class Arch, class Lin, std::size_t M, class VT, class Prefetch>
void forward_group(const Dims& dims, const float* W1, const float* W2, const BatchOf<VT>& x, std::size_t g,
                   float* scratch, Prefetch& pf) {
    const std::size_t q = dims.query_size, k = dims.key_size, L = dims.value_size1, d = dims.value_size2,
                      o = dims.output_size;
    const float* Q = x.Q + g * q;
    float* w = x.attn_weights + g * L;
    Lin::template rows<M>(W1, L, {.x1 = Q, .ld1 = q, .n1 = q, .x2 = x.K + g * x.k_stride, .ld2 = x.k_stride, .n2 = k},
                          w, L, pf);
    const SplitRows qa{.x1 = Q, .ld1 = q, .n1 = q, .x2 = scratch, .ld2 = d, .n2 = d};
    float* y = x.output + g * o;
    // The combine's Q part first: it does not wait for the attention, so the core runs it
    // beside the softmax's chain of dependent steps. The second pass continues the same sums in
    // the same order, then adds the bias: bitwise one pass.
    Lin::template rows<M>(W2, o, qa, y, o, pf, 0, q);
    for (std::size_t m = 0; m < M; ++m) softmax<Arch>(w + m * L, L);
    if (x.v_stride == 0)
        weighted_sum_rows<Arch, M>(w, L, x.V, L, d, d, scratch, d);
    else
        for (std::size_t m = 0; m < M; ++m)
            weighted_sum_rows<Arch, 1>(w + m * L, L, x.V + (g + m) * x.v_stride, L, d, d, scratch + m * d, d);
    Lin::template rows<M>(W2, o, qa, y, o, pf, q);
}

template <class Arch, class Lin, class VT>
void forward(const Dims& dims, const PackedLayout& layout, const float* packed, const BatchOf<VT>& x, Range samples,
             float* scratch) {
    constexpr std::size_t MR = Blocking<Arch>::MR;
    const std::size_t begin = samples.begin, end = samples.end;
    const float* W1 = packed + layout.scores.offset;
    const float* W2 = packed + layout.combine.offset;
    // Each full group requests the next group's V a few lines per step of its Linears, so that
    // it streams in while they compute (what it bought: docs/tuning.md). Only
    // V per sample, and at most Blocking::prefetch_limit bytes of it.
    const std::size_t v_bytes = x.v_stride * sizeof(VT);
    const bool prefetch_v = v_bytes != 0 && MR * v_bytes <= Blocking<Arch>::prefetch_limit;
    for (std::size_t g = begin; g < end; g += MR)
        with_size<MR>(end - g, [&]<std::size_t M>(std::integral_constant<std::size_t, M>) {
            if constexpr (M == MR)
                if (prefetch_v && g + M < end) {
                    const char* next = reinterpret_cast<const char*>(x.V + (g + M) * x.v_stride);
                    PrefetchStream pf{next, next + (end - g - M < MR ? end - g - M : MR) * v_bytes};
                    return forward_group<Arch, Lin, M>(dims, W1, W2, x, g, scratch, pf);
                }
            NoPrefetch none;
            forward_group<Arch, Lin, M>(dims, W1, W2, x, g, scratch, none);
        });
}

/// The table of `isa`'s kernels at Lin's precision, instantiated for Arch: the blocking
/// Blocking<Arch> derives must be the one the registry row pins. The bf16 precision's table
/// also takes a bf16 V.
template <class Arch, Isa isa, class Lin = F32Linear<Arch>>
constexpr KernelTable make_table() {
    constexpr const Implementation& row = implementation(isa, Lin::precision, Lin::variant);
    static_assert(Blocking<Arch>::registers == row.registers, "register file differs from the registry row");
    static_assert(Blocking<Arch>::MR == row.mr && Blocking<Arch>::NR == row.nr,
                  "register tile differs from the registry row");
    constexpr bool bf16 = Lin::precision == Precision::bf16;
    return {.isa = isa,
            .precision = row.precision,
            .id = row.kernel_id,
            .mr = Blocking<Arch>::MR,
            .nr = Blocking<Arch>::NR,
            .quant_levels = Lin::levels,
            .layout = layout<Lin>,
            .pack = pack<Lin>,
            .scratch_size = scratch_size<Arch>,
            .forward = forward<Arch, Lin, float>,
            .forward_bf16v = bf16 ? forward<Arch, Lin, bfloat16> : nullptr,
            .linear_layout = Lin::layout,
            .pack_linear = Lin::pack,
            .linear = Lin::linear,
            .linear_blocked = Lin::linear_blocked,
            .softmax = softmax<Arch>,
            .weighted_sum = weighted_sum<Arch, float>,
            .weighted_sum_bf16v = bf16 ? weighted_sum<Arch, bfloat16> : nullptr};
}

} // namespace
} // namespace myattn::detail
