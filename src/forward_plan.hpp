// How a MyAttn runs a batch, chosen once at construction from the shapes, the kernels' register
// tile and the caches this CPU reports: a pure function, so tests pick made-up caches.
//
// - Fused: each group of MR samples runs the whole module (scores, softmax, weighted sum,
//   combine) while its rows are in L1. Every group reads all packed weights, so this wins only
//   while they stay in L2 (shapes S and T).
// - Layered: weights larger than that (shape X) would be streamed from L3 or memory once per
//   group. The batch then runs layer by layer over blocks of MC samples, each Linear BLIS
//   style: KC inputs × NC output features of the weights held in L2 while every group of the
//   block passes over them, so each weight is read from beyond L2 about once per MC samples.
//   Where a sample's V alone fills L2 (shape X), its weighted sum streams V from beyond L2,
//   bound by memory while the Linears are bound by the FMAs; several threads then run the
//   blocks pipelined, weighted sums on some threads beside the Linears of the blocks around
//   them on others (src/layered_forward.hpp).
// - Split by features (chosen per call, not here): too few samples for a group per thread
//   through large Linears (shape X at B = 1): the layered path with one block of the whole
//   batch, the threads sharing each Linear's panels.
// Either way every output is the same chain: one fused multiply-add per input, in input order,
// and its bias. The bits do not depend on the plan, KC, NC or MC.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "cache_info.hpp"
#include "kernels/table.hpp"
#include "myattn/parameters.hpp"

namespace myattn::detail {

struct ForwardPlan {
    bool layered;
    /// Inputs per slice of a Linear, on either path: the MR × KC sliver of inputs, reused by
    /// every panel, fills half of L1d while the panels stream past (0: the kernels' own KC).
    std::size_t kc;
    /// Output features per block of weights (a multiple of NR): KC × NC weights in half of L2
    /// (0: no blocks, each thread's share of the panels at once).
    std::size_t nc;
    /// Samples per layered block (a multiple of MR): the block's KC inputs and NC outputs of
    /// each sample in a quarter of L2, beside the weights.
    std::size_t mc;
    /// Fused path: the most bytes of a group's V that the group before requests during its
    /// Linears, a quarter of L2 (0: the kernels' own limit).
    std::size_t prefetch_limit = 0;
    /// Layered path: a sample's V of floats fills L2 or more, so on more than one thread the
    /// blocks run pipelined.
    bool pipelined = false;
    /// Fused path: float lanes of FMA the core retires per cycle, which paces those requests.
    std::size_t fma_lanes = default_fma_lanes;
    /// Fused path: a batch with more bytes of inputs than this (half of L3) comes from memory,
    /// and the requests take the next group's Q and K rows too (0: never).
    std::size_t inputs_in_cache = 0;

    /// The fused kernels' part of the plan, for a batch of input_bytes of Q, K and V.
    [[nodiscard]] FusedBlocking fused(std::size_t input_bytes) const {
        return {.kc = kc,
                .prefetch_limit = prefetch_limit,
                .fma_lanes = fma_lanes,
                .request_qk = inputs_in_cache != 0 && input_bytes > inputs_in_cache};
    }
};

/// Bytes of a batch's Q, K and V (K or V shared: once, not per sample).
template <class VT>
std::size_t input_bytes(const Dims& d, const BatchOf<VT>& x) {
    const std::size_t k = x.k_stride != 0 ? x.B * x.k_stride : d.key_size;
    const std::size_t v = x.v_stride != 0 ? x.B * x.v_stride : d.value_size1 * d.value_size2;
    return sizeof(float) * (x.B * d.query_size + k) + sizeof(VT) * v;
}

/// Floats of both Linears once packed: out × (in + 1) each, ignoring the panel padding.
inline std::size_t packed_weight_bytes(const Dims& d) {
    return sizeof(float) *
           (d.value_size1 * (d.query_size + d.key_size + 1) + d.output_size * (d.query_size + d.value_size2 + 1));
}

/// The plan for kernels of register tile mr × nr on a CPU with caches c, whose cores retire
/// fma_lanes float lanes of FMA per cycle (src/dispatch.hpp).
inline ForwardPlan plan_forward(const Dims& d, const CacheSizes& c, std::size_t mr, std::size_t nr,
                                std::size_t fma_lanes = default_fma_lanes) {
    constexpr std::size_t f = sizeof(float);
    const std::size_t kc = std::max<std::size_t>(64, c.l1d / 2 / (mr * f) / 64 * 64);
    const std::size_t nc = std::max(nr, c.l2 / 2 / (kc * f) / nr * nr);
    const std::size_t mc = std::max(mr, c.l2 / 4 / ((kc + nc) * f) / mr * mr);
    // The fused path keeps both Linears in L2 beside a group's rows; past three quarters of
    // it, they are evicted between groups.
    const bool layered = packed_weight_bytes(d) > c.l2 / 4 * 3;
    const bool v_fills_l2 = d.value_size1 * d.value_size2 * f >= c.l2;
    return {.layered = layered,
            .kc = kc,
            .nc = nc,
            .mc = mc,
            .prefetch_limit = c.l2 / 4,
            .pipelined = layered && v_fills_l2,
            .fma_lanes = fma_lanes,
            .inputs_in_cache = c.l3 / 2};
}

/// B samples too few for a group per thread, through large Linears: one block of them all,
/// each Linear's panels shared out among the threads with no NC blocks (each weight is read
/// once per call anyway), KC the kernels' own.
inline ForwardPlan plan_by_features(std::size_t B) { return {.layered = true, .kc = 0, .nc = 0, .mc = B}; }

/// "layered: MC 120, NC 320, KC 768" (", pipelined" where it is) or "fused: KC 768, V prefetch
/// 512 KiB" (0: the kernels' own; " at 32 FMA lanes a cycle" where the pace is not the
/// default; ", Q and K too past 16 MiB of inputs" where the plan says from which batch on).
inline std::string to_string(const ForwardPlan& p) {
    if (!p.layered)
        return "fused: KC " + std::to_string(p.kc) + ", V prefetch " + std::to_string(p.prefetch_limit / 1024) +
               " KiB" +
               (p.fma_lanes != default_fma_lanes ? " at " + std::to_string(p.fma_lanes) + " FMA lanes a cycle" : "") +
               (p.inputs_in_cache != 0
                    ? ", Q and K too past " + std::to_string(p.inputs_in_cache >> 20) + " MiB of inputs"
                    : "");
    return "layered: MC " + std::to_string(p.mc) + ", NC " + std::to_string(p.nc) + ", KC " + std::to_string(p.kc) +
           (p.pipelined ? ", pipelined" : "");
}

} // namespace myattn::detail
