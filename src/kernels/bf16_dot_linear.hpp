// The bf16 Linear on the native bf16 dot product, y = W [x1; x2] + b, written once for every ISA
// that has one: weights and activations both rounded to bf16, each step multiplying a pair of
// inputs by a pair of weights and adding both products to a float32 accumulator.
//
// Each ISA's file supplies `Dot`, the raw-intrinsic layer: dot(acc, a, w), the step on one
// broadcast pair of activations (a 32-bit word: the bf16 of input 2i in its low half, of 2i + 1
// in its high half) and a vector of weight pairs laid out the same way (vdpbf16ps on
// AVX512-BF16); and round_pairs(x, n, words), a row of n floats rounded to bf16 by the CPU's
// conversion (to nearest even) into (n + 1) / 2 such words, the last one's high half 0 when n
// is odd.
//
// Packed, per panel of NR output features: NR float biases, then x1's inputs in pairs (NR words
// per pair: a vector load gives each lane its feature's pair), zero-padded to a whole pair, then
// x2's the same way. Where the CPU's bf16 dot product is faster than converting to float32 (it
// is on some CPUs, not on others: docs/tuning.md), this is the bf16 precision's kernel set; its
// activations rounded to bf16 are what PyTorch's autocast rounds too.
//
// Every output is one chain over x1's pairs then x2's in order, from zero, then its bias: a
// sample's result is bitwise the same in any tile, row position or thread. The chain continues
// through y between the two parts (float32 both ways: exact), so a call may run either part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/bf16.hpp"
#include "kernels/blocking.hpp"
#include "kernels/linear_parts.hpp"
#include "kernels/prefetch.hpp"
#include "kernels/simd.hpp"
#include "kernels/table.hpp"
#include "thread_bytes.hpp"

namespace myattn::detail {
namespace {

/// Pairs of n inputs, the last one padded.
constexpr std::size_t bf16_pairs(std::size_t n) { return (n + 1) / 2; }

/// Where a Linear's parts lie in each of its packed panels.
struct Bf16DotPanel {
    std::size_t nr;     // features per panel
    std::size_t p1, p2; // pairs of x1's and of x2's inputs
    /// 32-bit words per panel: the biases, then the pairs.
    [[nodiscard]] std::size_t words() const { return nr * (1 + p1 + p2); }
    static Bf16DotPanel of(std::size_t nr, std::size_t n1, std::size_t n2) {
        return {nr, bf16_pairs(n1), bf16_pairs(n2)};
    }
};

template <class Arch>
LinearLayout bf16_dot_layout(std::size_t out, std::size_t n1, std::size_t n2) {
    constexpr std::size_t NR = Blocking<Arch>::NR;
    return whole_panels_layout(NR, Bf16DotPanel::of(NR, n1, n2).words(), out, n1, n2);
}

template <class Arch>
void bf16_dot_pack(const LinearLayout& l, const float* W, const float* b, float* packed) {
    constexpr std::size_t NR = Blocking<Arch>::NR;
    const std::size_t in = l.in, n1 = l.n1;
    const Bf16DotPanel pl = Bf16DotPanel::of(NR, n1, in - n1);
    float* panel = packed + l.offset;
    for (std::size_t j0 = 0; j0 < l.out; j0 += NR, panel += pl.words()) {
        auto* pairs = reinterpret_cast<std::uint32_t*>(panel + NR);
        for (std::size_t c = 0; c < NR; ++c) {
            const std::size_t j = j0 + c;
            const bool real = j < l.out;
            panel[c] = real ? b[j] : 0.0f;
            for (std::size_t p = 0; p < pl.p1 + pl.p2; ++p) pairs[p * NR + c] = 0;
            for (std::size_t i = 0; real && i < in; ++i) {
                const bool first = i < n1;
                const std::size_t k = first ? i : i - n1, p = (first ? 0 : pl.p1) + k / 2;
                pairs[p * NR + c] |= std::uint32_t{to_bfloat16(W[j * in + i]).bits} << (k % 2 * 16);
            }
        }
    }
}

/// One part of rounded rows: row m's pairs at a + m * ld.
struct Bf16Part {
    const std::uint32_t* a;
    std::size_t ld;
    [[nodiscard]] Bf16Part from(std::size_t row) const { return {a + row * ld, ld}; }
};

/// Both parts of rounded rows (a part a call does not run is left empty).
struct Bf16Rows {
    Bf16Part first, second;
    [[nodiscard]] Bf16Rows from(std::size_t row) const { return {first.from(row), second.from(row)}; }
};

/// Rounds `rows` rows of n floats, ldx apart, into this thread's scratch slot `slot`.
template <class Dot>
Bf16Part round_part(const float* x, std::size_t ldx, std::size_t n, std::size_t rows, std::size_t slot) {
    const std::size_t ld = bf16_pairs(n);
    auto* a = reinterpret_cast<std::uint32_t*>(thread_bytes(rows * ld * sizeof(std::uint32_t), slot));
    for (std::size_t m = 0; m < rows; ++m) Dot::round_pairs(x + m * ldx, n, a + m * ld);
    return {a, ld};
}

/// What the Linears of one fused group share: the x1 rows whose pairs slot 0 holds, so that Q
/// is rounded once per group, not twice.
using Bf16DotGroup = HeldFirstPart<Bf16Part>;

/// acc[m][c] += the pair products of `pairs` pairs: row m's at a + m * lda, and vector c's
/// weights (P panels of PV vectors, panel_stride words apart) from w on.
template <class Arch, class Dot, std::size_t M, std::size_t P, std::size_t PV, class Prefetch>
inline void bf16_dot_accumulate(vfloat<Arch> (&acc)[M][P * PV], const std::uint32_t* w, std::size_t panel_stride,
                                const std::uint32_t* a, std::size_t lda, std::size_t pairs, Prefetch& pf) {
    constexpr std::size_t NR = Blocking<Arch>::NR, V = P * PV;
    // A local copy of the stream, handed back after the loop (kernels/prefetch.hpp).
    Prefetch ahead = pf.template paced<M * V, Blocking<Arch>::tile_fmas>();
    for (std::size_t p = 0; p < pairs; ++p, w += NR) {
        ahead.step();
        vword<Arch> wv[V];
#pragma GCC unroll 16
        for (std::size_t c = 0; c < V; ++c)
            wv[c] = vword<Arch>::load_unaligned(w + tile_column<Arch, PV>(c, panel_stride));
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) {
            const vword<Arch> am(a[m * lda + p]);
#pragma GCC unroll 16
            for (std::size_t c = 0; c < V; ++c) acc[m][c] = Dot::dot(acc[m][c], am, wv[c]);
        }
    }
    pf = ahead;
}

/// One tile: M rows x P panels of PV vectors over the parts asked for, from zero (with the first
/// part) or from y's sums, the bias added with the second part; back to y, of whose columns
/// `cols` are real.
template <class Arch, class Dot, std::size_t M, std::size_t P, std::size_t PV, class Prefetch>
void bf16_dot_tile(const float* panel, const Bf16DotPanel& pl, const Bf16Rows& x, Parts parts, float* y,
                   std::size_t ldy, std::size_t cols, Prefetch& pf) {
    constexpr std::size_t NR = Blocking<Arch>::NR, V = P * PV;
    const std::size_t stride = pl.words();
    vfloat<Arch> acc[M][V];
    if (parts.first)
        zero_tile<Arch>(acc);
    else
        load_tile<Arch>(acc, y, ldy, cols);
    const auto* pairs = reinterpret_cast<const std::uint32_t*>(panel + NR);
    if (parts.first) bf16_dot_accumulate<Arch, Dot, M, P, PV>(acc, pairs, stride, x.first.a, x.first.ld, pl.p1, pf);
    if (parts.second) {
        bf16_dot_accumulate<Arch, Dot, M, P, PV>(acc, pairs + pl.p1 * NR, stride, x.second.a, x.second.ld, pl.p2, pf);
        add_bias<Arch, PV>(acc, panel, stride);
    }
    store_tile<Arch>(acc, y, ldy, cols);
}

/// Panels [p, np) for M rounded rows, P at a time, then the remainder with fewer (a narrow
/// last panel one vector wide: for_each_full_width_tile).
template <class Arch, class Dot, std::size_t M, std::size_t P, class Prefetch>
void bf16_dot_panels(const float* packed, const Bf16DotPanel& pl, std::size_t p, std::size_t np, std::size_t out,
                     const Bf16Rows& x, Parts parts, float* y, std::size_t ldy, Prefetch& pf) {
    using B = Blocking<Arch>;
    for_each_full_width_tile<Arch, P>(p, np, out,
                                      [&]<std::size_t Q, std::size_t PV>(std::size_t t,
                                                                         std::integral_constant<std::size_t, Q>,
                                                                         std::integral_constant<std::size_t, PV>) {
                                          bf16_dot_tile<Arch, Dot, M, Q, PV>(packed + t * pl.words(), pl, x, parts,
                                                                             y + t * B::NR, ldy, out - t * B::NR, pf);
                                      });
}

/// The fused forward's Linear step: M rows, every panel, the parts [k_begin, k_end) covers
/// (k_begin 0 or x.n1; k_end x.n1 or the end). x1's pairs come from the group when it holds
/// those rows, else are rounded into slot 0 and the group holds them; x2's go to slot 1.
template <class Arch, class Dot, std::size_t M, class Prefetch>
void bf16_dot_rows(const float* packed, std::size_t out, const SplitRows& x, float* y, std::size_t ldy, Prefetch& pf,
                   Bf16DotGroup& group, std::size_t k_begin, std::size_t k_end) {
    using B = Blocking<Arch>;
    const Parts parts = Parts::of(x, k_begin, k_end);
    if (!parts.first && !parts.second) return;
    Bf16Rows rx{};
    if (parts.first) rx.first = group.of(x, [&] { return round_part<Dot>(x.x1, x.ld1, x.n1, M, 0); });
    if (parts.second) rx.second = round_part<Dot>(x.x2, x.ld2, x.n2, M, 1);
    const std::size_t panels = (out + B::NR - 1) / B::NR;
    bf16_dot_panels<Arch, Dot, M, B::panels(M)>(packed, Bf16DotPanel::of(B::NR, x.n1, x.n2), 0, panels, out, rx, parts,
                                                y, ldy, pf);
}

/// Output features [f.begin, f.end) of l (whole panels from f.begin), both parts, with the
/// weights in blocks of b.nc features (0: all of them) outermost, every group of rows passing
/// over a block while L2 holds it. b.kc does not apply: each part is summed whole.
template <class Arch, class Dot>
void bf16_dot_linear_blocked(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f,
                             const LinearBlocking& b, float* y, std::size_t ldy) {
    using B = Blocking<Arch>;
    const Bf16DotPanel pl = Bf16DotPanel::of(B::NR, x.n1, x.n2);
    packed += l.offset + f.begin / B::NR * pl.words();
    y += f.begin;
    const std::size_t out = f.end - f.begin, panels = (out + B::NR - 1) / B::NR;
    const Bf16Rows rx{round_part<Dot>(x.x1, x.ld1, x.n1, rows, 0), round_part<Dot>(x.x2, x.ld2, x.n2, rows, 1)};
    for_each_nc_block(panels, b.nc, B::NR, [&](std::size_t p0, std::size_t p1) {
        for_each_group<B::MR, B::MR>(0, rows,
                                     [&]<std::size_t M>(std::size_t r, std::integral_constant<std::size_t, M>) {
                                         NoPrefetch none;
                                         bf16_dot_panels<Arch, Dot, M, B::panels(M)>(
                                             packed, pl, p0, p1, out, rx.from(r), {true, true}, y + r * ldy, ldy, none);
                                     });
    });
}

/// The same outputs, the weights in one block.
template <class Arch, class Dot>
void bf16_dot_linear(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f,
                     float* y, std::size_t ldy) {
    bf16_dot_linear_blocked<Arch, Dot>(l, packed, x, rows, f, {.kc = 0, .nc = 0}, y, ldy);
}

/// The bf16 Linear steps on the native dot product, for the fused forward and the table
/// (kernels/forward.hpp).
template <class Arch, class Dot>
struct Bf16DotLinear {
    static constexpr Precision precision = Precision::bf16;
    static constexpr std::string_view variant = Dot::variant;
    static constexpr int levels = 0;
    /// The inputs are rounded to bf16 (KernelTable::bf16_inputs).
    static constexpr bool bf16_inputs = true;
    static constexpr auto layout = bf16_dot_layout<Arch>;
    static constexpr auto pack = bf16_dot_pack<Arch>;
    static constexpr auto linear = bf16_dot_linear<Arch, Dot>;
    static constexpr auto linear_blocked = bf16_dot_linear_blocked<Arch, Dot>;
    /// Samples per fused group: the register tile's.
    static constexpr std::size_t group_rows = Blocking<Arch>::MR;
    using GroupState = Bf16DotGroup;
    template <std::size_t M, class Prefetch>
    static void rows(const float* packed, std::size_t out, const SplitRows& x, float* y, std::size_t ldy, Prefetch& pf,
                     GroupState& group, std::size_t k_begin, std::size_t k_end) {
        bf16_dot_rows<Arch, Dot, M>(packed, out, x, y, ldy, pf, group, k_begin, k_end);
    }
};

} // namespace
} // namespace myattn::detail
