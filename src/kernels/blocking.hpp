// Blocking constants of every ISA, in one place, derived from the register file and L1.
//
//            lanes  registers  NR (nr_vectors)  MR  KC   panels(1)  (tile of the MR = 1 path)
//   avx2       8       16         16 (2)         6   512     4       1 × 64
//   avx512    16       32         32 (2)         8   512     4       1 × 128
//   neon       4       32          8 (2)         8   512     4       1 × 32
#pragma once

#include <cstddef>
#include <type_traits>

#include "kernels/simd.hpp"

namespace myattn::detail {
namespace {

template <class Arch>
struct Blocking {
    /// Floats per vector.
    static constexpr std::size_t lanes = vfloat<Arch>::size;
    /// Architectural vector registers: 16 ymm with AVX2; 32 zmm with AVX-512, 32 v with NEON.
    static constexpr std::size_t registers = lanes == 8 ? 16 : 32;
    /// Independent accumulators that keep the FMA pipes busy: FMA latency × vectors issued per
    /// cycle is 4 × 2 on Haswell and Zen 4 (ymm; Zen 4 issues one zmm), Skylake-X (zmm) and
    /// Cortex-A76 / Neoverse N1.
    static constexpr std::size_t in_flight = 8;

    /// NR = two vectors of outputs per panel: each broadcast input feeds two independent FMAs,
    /// and a zero-padded last panel wastes less than two vectors.
    static constexpr std::size_t nr_vectors = 2;
    static constexpr std::size_t NR = nr_vectors * lanes;

    /// MR samples: MR × nr_vectors accumulators, nr_vectors panel loads and one broadcast fill
    /// the register file (AVX2: 6 × 2 + 3 = 15 of 16). Capped at 8: past that each extra row
    /// costs one broadcast per two FMAs and gains no latency hiding, while the edge groups of
    /// small batches grow.
    static constexpr std::size_t MR_fit = (registers - nr_vectors - 1) / nr_vectors;
    static constexpr std::size_t MR = MR_fit < 8 ? MR_fit : 8;

    /// KC inputs per pass over the panels: the MR × KC sliver of inputs, reused by every panel,
    /// stays in half of a 32 KiB L1 (the smallest L1 of the targets) while panels stream past.
    /// The fallback: MyAttn derives its KC from the detected L1d (src/forward_plan.hpp) and
    /// hands it to both paths; this one serves the per-kernel entries and callers that pass
    /// none. Any KC gives the same bits: a slice only continues each sum.
    static constexpr std::size_t l1_bytes = 32 * 1024;
    static constexpr std::size_t KC = [] {
        std::size_t kc = 64;
        while (2 * kc * MR * sizeof(float) <= l1_bytes / 2) kc *= 2;
        return kc;
    }();

    /// Bytes of V rows the weighted sum sweeps at once, column block by column block: so narrow
    /// a window keeps a wide V (shape X: rows 4 KiB apart) streaming in order for the hardware
    /// prefetchers, where running each column block down all L rows would not; `a` is reloaded
    /// once per window.
    static constexpr std::size_t window = 16 * 1024;
    /// Softmax rows a fused group runs side by side (kernels/softmax.hpp). Four, not a whole
    /// group of 8: as fast, and the code for 8 rows at once compiled far slower under the
    /// sanitizers (docs/tuning.md).
    static constexpr std::size_t softmax_rows = 4;
    /// Samples whose V (one each) fits one window, with fewer columns than in_flight vectors,
    /// are summed this many at a time, side by side (kernels/weighted_sum.hpp): one sample of
    /// shape S on AVX-512 has 4 chains of 32 dependent FMAs, too few to fill the FMA pipes. 4
    /// measured faster than 2 on Zen 5 (docs/tuning.md).
    static constexpr std::size_t ws_samples = 4;
    /// Bytes of a shared V's strip the weighted sum copies at once, a block of rows of it, for
    /// every tile of rows to read in order (kernels/weighted_sum.hpp): half of the smallest L1
    /// of the targets, as KC's sliver.
    static constexpr std::size_t pack_bytes = 16 * 1024;
    /// A V per sample whose rows have this many values or more (shape X: 1024, 4 KiB in float32
    /// and 2 KiB in bf16), and whole cache lines, streams down the rows instead, whole rows at
    /// a time, the sums reloaded from L1 once per stream_rows rows: long sequential streams,
    /// which the hardware prefetchers follow better than a window's short ones
    /// (docs/tuning.md). Shorter rows (T: 256 values) keep the window: there the reloads cost
    /// more than they save.
    static constexpr std::size_t stream_row_values = 1024;
    /// Columns of the row stream's sums at once, in a stack buffer: 4 KiB, a quarter of L1.
    static constexpr std::size_t stream_columns = 1024;
    /// Rows the row stream reads side by side, each sum still taking them in order: several
    /// streams a page apart keep more of V in flight than one, and the hardware prefetchers
    /// follow them without requests of ours. Eight rows of float32, on every ISA: measured
    /// fastest on Zen 3 (AVX2) and Zen 5 (AVX-512), level with four rows and requests on
    /// Emerald Rapids; NEON is not timed. A step of a bf16 V reads half the bytes a row, so it
    /// takes as many rows as read a float step's bytes, where their broadcast weights fit in
    /// half the register file (AVX2's 16 keep eight: sixteen measured no faster there): eight
    /// bf16 rows read V at about half the float stream's rate on Zen 5 (docs/tuning.md).
    static constexpr std::size_t float_stream_rows = 8;
    template <class VT>
    static constexpr std::size_t stream_rows = [] {
        const std::size_t same_bytes = float_stream_rows * sizeof(float) / sizeof(VT);
        return same_bytes <= registers / 2 ? same_bytes : float_stream_rows;
    }();

    /// The fused forward requests the next group's V during this group's Linears, when it is at
    /// most a quarter of L2 (shapes S and T; X's 16 MiB could not wait in cache): of the
    /// detected L2 (src/forward_plan.hpp), or of a 1 MiB one here, the fallback.
    static constexpr std::size_t prefetch_limit = 256 * 1024;
    /// Cache lines requested per step of the Linear micro-kernel (MR × nr_vectors FMAs): one
    /// per ~8 cycles of FMAs, about the rate one core's DRAM stream delivers lines at (64 bytes
    /// per 10 cycles at 22 GB/s and 3.7 GHz), on a core that retires `fma_lanes` float lanes of
    /// FMA per cycle: 16 on Haswell and Zen 4 (AVX-512 steps of 16 cycles, 2 lines; AVX2's of 6
    /// and NEON's: 1), 32 where two 512-bit FMA pipes run AVX-512 (steps of 8 cycles, 1 line;
    /// src/dispatch.hpp says which CPUs). Denser requests were slower (docs/tuning.md).
    static constexpr std::size_t prefetch_lines(std::size_t fma_lanes) {
        const std::size_t cycles = MR * nr_vectors * lanes / fma_lanes;
        return cycles / 8 > 1 ? cycles / 8 : 1;
    }
    /// Steps of the Linear micro-kernel a PrefetchStream is paced against (PrefetchStream::paced).
    static constexpr std::size_t tile_fmas = MR * nr_vectors;

    /// Panels a tile of M samples covers at once. Full tiles (M = MR) take one; smaller ones
    /// (edge groups, and the B = 1 matrix-vector path) take several, so they still have about
    /// `in_flight` independent sums without exceeding the MR × nr_vectors accumulators.
    static constexpr std::size_t panels(std::size_t M) {
        const std::size_t p = MR / M;
        const std::size_t most = in_flight / nr_vectors;
        return p < 1 ? 1 : p > most ? most : p;
    }
};

/// Calls f(std::integral_constant<std::size_t, N>{}) with N = min(n, Max), n >= 1: runs a
/// group of n samples (or a panel of n vectors) through the code compiled for exactly that many.
template <std::size_t Max, class F>
inline void with_size(std::size_t n, F&& f) {
    if constexpr (Max > 1)
        if (n < Max) return with_size<Max - 1>(n, f);
    f(std::integral_constant<std::size_t, Max>{});
}

/// Runs rows [begin, end) in groups: f(r, std::integral_constant<std::size_t, M>{}) with M = G
/// while G rows remain, then G / 2 and so on down to MR, then M = min(rest, MR) (with_size). G
/// is MR but for a Linear whose Dot has tiles of more rows (AMX: 32, two tiles of 16).
template <std::size_t G, std::size_t MR, class F>
inline void for_each_group(std::size_t begin, std::size_t end, F&& f) {
    static_assert(G >= MR && G % MR == 0, "a group is whole register tiles");
    if constexpr (G > MR) {
        for (; end - begin >= G; begin += G) f(begin, std::integral_constant<std::size_t, G>{});
        for_each_group<(G / 2 > MR ? G / 2 : MR), MR>(begin, end, f);
    } else {
        for (; begin < end; begin += MR)
            with_size<MR>(end - begin, [&]<std::size_t M>(std::integral_constant<std::size_t, M> m) { f(begin, m); });
    }
}

} // namespace
} // namespace myattn::detail
