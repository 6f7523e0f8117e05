// The fused forward of one ISA, and its KernelTable: the kernels of this directory composed,
// over the Linear steps of one precision (`Lin`: F32Linear, kernels/linear.hpp, Int8Linear,
// kernels/int8_linear.hpp, or Bf16DotLinear, kernels/bf16_dot_linear.hpp). The softmax and the weighted sum are float32
// at every precision.
//
// A tile of samples runs in groups of MR, each through compose() (kernels/compose.hpp) over
// this ISA's register kernels: scores (straight into attn_weights) → softmax in place →
// weighted sum into scratch → combine into output, so each group's Q, K and V rows, weights
// and `a` are still in L1 for the next step. The packed weights are W1's panels then W2's
// (each in its Linear's layout, where module_layout puts it).
//
// Only src/isa/<isa>.cpp includes this, once, and exports nothing but its table accessor.
#pragma once

#include <cstddef>
#include <type_traits>

#include "kernels/blocking.hpp"
#include "kernels/compose.hpp"
#include "kernels/int8_linear.hpp"
#include "kernels/linear.hpp"
#include "kernels/prefetch.hpp"
#include "kernels/softmax.hpp"
#include "kernels/table.hpp"
#include "kernels/weighted_sum.hpp"
#include "registry.hpp"

namespace myattn::detail {
namespace {

/// `a` for one group of samples.
template <class Arch, class Lin>
std::size_t scratch_size(const Dims& d, std::size_t rows) {
    constexpr std::size_t G = Lin::group_rows;
    return (rows < G ? rows : G) * d.value_size2;
}

/// The register kernels of Lin's precision, for one group of M samples (compose's Steps): pf
/// requests the next group's V while the Linears compute; the float Linears slice their inputs
/// by kc (int8 has no slices: its parts are quantized whole). The weighted sum takes V's
/// element type from the batch (float, or bf16 for the bf16 precision).
template <class Arch, class Lin, std::size_t M, class Prefetch>
struct GroupSteps {
    const PackedLayout& layout;
    const float* packed;
    Prefetch& pf;
    std::size_t kc;
    /// What Lin carries from one of the group's Linears to the next (int8: the quantized Q).
    typename Lin::GroupState lin{};

    static constexpr bool partial_inputs = true;

    void linear(Layer which, const SplitRows& x, std::size_t /*rows: M*/, float* y, std::size_t ldy,
                Range inputs = {0, std::size_t(-1)}) {
        const LinearLayout& l = which == Layer::scores ? layout.scores : layout.combine;
        if constexpr (requires { Lin::runtime_kc; })
            Lin::template rows<M>(packed + l.offset, l.out, x, y, ldy, pf, lin, inputs.begin, inputs.end, kc);
        else
            Lin::template rows<M>(packed + l.offset, l.out, x, y, ldy, pf, lin, inputs.begin, inputs.end);
    }
    /// The group's rows side by side, Blocking::softmax_rows at a time, then the rest of them
    /// (AVX2's 6 rows: 4, then 2).
    void softmax(float* s, std::size_t /*rows: M*/, std::size_t n) {
        constexpr std::size_t R = Blocking<Arch>::softmax_rows, whole = M / R * R;
        for (std::size_t m = 0; m < whole; m += R) detail::softmax_rows<Arch, R>(s + m * n, n, n);
        if constexpr (M % R != 0) detail::softmax_rows<Arch, M % R>(s + whole * n, n, n);
    }
    /// A group wider than the register tile (AMX's 16 rows) runs the float kernels MR rows at a time.
    template <class VT>
    void weighted_sum(const WeightedSumOf<VT>& op) {
        constexpr std::size_t MR = Blocking<Arch>::MR;
        detail::weighted_sum<Arch, VT, (M < MR ? M : MR)>(op, {0, op.d});
    }
};

template <class Arch, class Lin, class VT>
void forward(const Dims& dims, const PackedLayout& layout, const float* packed, const BatchOf<VT>& x, Range samples,
             const FusedBlocking& blocking, float* scratch) {
    using B = Blocking<Arch>;
    constexpr std::size_t MR = B::MR, G = Lin::group_rows;
    const std::size_t begin = samples.begin, end = samples.end;
    const std::size_t kc = blocking.kc > 0 ? blocking.kc : B::KC;
    // Each full group requests the next group's V a few lines per step of its Linears, so that
    // it streams in while they compute (what it bought: docs/tuning.md): V per sample, at most
    // the prefetch limit (a quarter of L2) of it. A batch from memory has the next group's Q and
    // K rows requested first (the plan's request_qk): from L3 the hardware prefetch brings
    // them in time, from memory it did not.
    const std::size_t v_bytes = x.v_stride * sizeof(VT);
    const std::size_t qk_bytes = blocking.request_qk ? (dims.query_size + x.k_stride) * sizeof(float) : 0;
    const std::size_t limit = blocking.prefetch_limit > 0 ? blocking.prefetch_limit : B::prefetch_limit;
    const bool prefetch_v = v_bytes != 0 && G * v_bytes <= limit;
    const bool prefetch = prefetch_v || (qk_bytes != 0 && G * qk_bytes <= limit);
    const std::size_t lines = B::prefetch_lines(blocking.fma_lanes);
    auto group = [&]<std::size_t M>(std::size_t g, std::integral_constant<std::size_t, M>) {
        if constexpr (M >= MR)
            if (prefetch && g + M < end) {
                const std::size_t next = g + M, n = end - next < G ? end - next : G;
                PrefetchStream::Bytes ranges[3]; // Q, K, V
                std::size_t count = 0;
                const auto add = [&](const auto* p, std::size_t bytes) {
                    const char* b = reinterpret_cast<const char*>(p);
                    if (bytes != 0) ranges[count++] = {b, b + bytes};
                };
                if (qk_bytes != 0) {
                    add(x.Q + next * dims.query_size, n * dims.query_size * sizeof(float));
                    add(x.K + next * x.k_stride, n * x.k_stride * sizeof(float));
                }
                if (prefetch_v) add(x.V + next * x.v_stride, n * v_bytes);
                PrefetchStream pf(ranges, ranges + count, lines);
                GroupSteps<Arch, Lin, M, PrefetchStream> steps{layout, packed, pf, kc};
                return compose(steps, dims, x, {g, g + M}, scratch);
            }
        NoPrefetch none;
        GroupSteps<Arch, Lin, M, NoPrefetch> steps{layout, packed, none, kc};
        compose(steps, dims, x, {g, g + M}, scratch);
    };
    for_each_group<G, MR>(begin, end, group);
    if constexpr (requires { Lin::release(); }) Lin::release(); // AMX tiles: kernels/int8_linear.hpp
}

/// The table of `isa`'s kernels at Lin's precision, instantiated for Arch: the blocking
/// Blocking<Arch> derives must be the one the registry row pins. The bf16 precision's table
/// also takes a bf16 V.
template <class Arch, Isa isa, class Lin = F32Linear<Arch>>
constexpr KernelTable make_table() {
    constexpr const Implementation& row = implementation(isa, Lin::precision, Lin::variant);
    static_assert(Blocking<Arch>::registers == row.registers, "register file differs from the registry row");
    static_assert(Lin::group_rows == row.mr && Blocking<Arch>::NR == row.nr,
                  "register tile differs from the registry row");
    constexpr bool bf16 = Lin::precision == Precision::bf16;
    constexpr bool bf16_inputs = requires { Lin::bf16_inputs; };
    return {.isa = isa,
            .precision = row.precision,
            .id = row.kernel_id,
            .mr = Lin::group_rows,
            .nr = Blocking<Arch>::NR,
            .quant_levels = Lin::levels,
            .bf16_inputs = bf16_inputs,
            .layout = module_layout_of<Lin::layout>,
            .pack = pack_module<Lin::layout, Lin::pack>,
            .scratch_size = scratch_size<Arch, Lin>,
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
