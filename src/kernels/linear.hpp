// Linear with bias over split input rows: y = W · [x1; x2] + b, never building [x1; x2].
//
// The weights are packed once (pack_linear) into panels of NR output features, BLIS style:
// NR biases, then for every input i the NR weights W[j0 .. j0 + NR, i], as floats or, for the
// bf16 precision, as bf16 pairs converted on load (Fmt: kernels/bf16.hpp); the biases and the
// arithmetic are float32 either way. A last panel of fewer
// features is only as many whole vectors wide as they need (zero-padded to that), so a small
// Linear (shape T's 10 scores on AVX-512) does not pay for a full NR of padding.
//
// The micro-kernel keeps M samples × P panels of accumulators in registers and broadcasts each
// input of each sample once per step. Every output is one fused multiply-add per input from
// zero, in input order (x1 then x2), then its bias added once, whatever M, P, the panel width or
// the KC block: a sample's result is bitwise the same in any tile, row position or thread. The
// bias comes last, as in PyTorch, so that the products round at the magnitude of their own
// partial sums, not at the bias's (docs/accuracy.md).
#pragma once

#include <cstddef>
#include <string_view>

#include "kernels/bf16.hpp"
#include "kernels/blocking.hpp"
#include "kernels/linear_parts.hpp"
#include "kernels/prefetch.hpp"
#include "kernels/simd.hpp"
#include "kernels/table.hpp"

namespace myattn::detail {
namespace {

/// Floats per panel row (outputs) of the last panel: NR, or the whole vectors its features need.
template <class Arch>
std::size_t last_panel_width(std::size_t out) {
    using B = Blocking<Arch>;
    const std::size_t rest = out % B::NR;
    return rest == 0 ? B::NR : (rest + B::lanes - 1) / B::lanes * B::lanes;
}

/// 32-bit words of a panel `width` floats wide over `in` inputs: the biases, then a row per input.
template <class Arch, class Fmt>
constexpr std::size_t panel_words(std::size_t width, std::size_t in) {
    return width + in * Fmt::row_words(width, Blocking<Arch>::lanes);
}

template <class Arch, class Fmt = F32Weights>
LinearLayout linear_layout(std::size_t out, std::size_t n1, std::size_t n2) {
    constexpr std::size_t NR = Blocking<Arch>::NR;
    const std::size_t in = n1 + n2;
    return {.offset = 0,
            .size = (out - 1) / NR * panel_words<Arch, Fmt>(NR, in) +
                    panel_words<Arch, Fmt>(last_panel_width<Arch>(out), in),
            .out = out,
            .in = in,
            .panel = NR,
            .n1 = n1};
}

template <class Arch, class Fmt = F32Weights>
void pack_linear(const LinearLayout& l, const float* W, const float* b, float* packed) {
    constexpr std::size_t NR = Blocking<Arch>::NR;
    const std::size_t out = l.out, in = l.in;
    packed += l.offset;
    for (std::size_t j0 = 0; j0 < out; j0 += NR) {
        const std::size_t width = out - j0 >= NR ? NR : last_panel_width<Arch>(out);
        const std::size_t row = Fmt::row_words(width, Blocking<Arch>::lanes);
        float x[NR];
        for (std::size_t c = 0; c < width; ++c) packed[c] = j0 + c < out ? b[j0 + c] : 0.0f;
        for (std::size_t i = 0; i < in; ++i) {
            for (std::size_t c = 0; c < width; ++c) x[c] = j0 + c < out ? W[(j0 + c) * in + i] : 0.0f;
            Fmt::template pack_row<Arch>(x, width, packed + width + i * row);
        }
        packed += panel_words<Arch, Fmt>(width, in);
    }
}

/// acc[m][·] += x_m[i] · w_i for i < n, in order: x_m = x + m * ldx, w_i the weights of input i
/// in each of P panels of PV vectors, `panel_stride` apart, starting at w.
template <class Arch, std::size_t M, std::size_t P, std::size_t PV, class Fmt, class Prefetch>
inline void linear_accumulate(vfloat<Arch> (&acc)[M][P * PV], const float* w, std::size_t panel_stride, const float* x,
                              std::size_t ldx, std::size_t n, Prefetch& pf) {
    constexpr std::size_t V = P * PV, row = Fmt::row_words(PV * Blocking<Arch>::lanes, Blocking<Arch>::lanes);
    // A local copy of the stream, handed back after the loop (kernels/prefetch.hpp).
    Prefetch ahead = pf.template paced<M * V, Blocking<Arch>::tile_fmas>();
    for (std::size_t i = 0; i < n; ++i, w += row) {
        ahead.step();
        vfloat<Arch> wv[V];
#pragma GCC unroll 16
        for (std::size_t p = 0; p < P; ++p) Fmt::template load_row<Arch, PV>(w + p * panel_stride, wv + p * PV);
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) {
            const vfloat<Arch> xm(x[m * ldx + i]);
#pragma GCC unroll 16
            for (std::size_t c = 0; c < V; ++c) acc[m][c] = fmadd<Arch>(xm, wv[c], acc[m][c]);
        }
    }
    pf = ahead;
}

/// One tile: M samples × P panels of PV vectors over inputs [k0, k1). The accumulators start
/// from zero (k0 = 0) or from y (a later KC block), take the bias after the last input, and go
/// back to y, of whose columns `cols` are real.
template <class Arch, std::size_t M, std::size_t P, std::size_t PV, class Fmt, class Prefetch>
void linear_tile(const float* panel, std::size_t panel_stride, const SplitRows& x, std::size_t k0, std::size_t k1,
                 float* y, std::size_t ldy, std::size_t cols, Prefetch& pf) {
    constexpr std::size_t lanes = Blocking<Arch>::lanes, V = P * PV;
    vfloat<Arch> acc[M][V];
    if (k0 == 0)
        zero_tile<Arch>(acc);
    else
        load_tile<Arch>(acc, y, ldy, cols);
    constexpr std::size_t row = Fmt::row_words(PV * lanes, lanes);
    const float* w = panel + PV * lanes + k0 * row;
    if (k0 < x.n1) {
        const std::size_t n = (k1 < x.n1 ? k1 : x.n1) - k0;
        linear_accumulate<Arch, M, P, PV, Fmt>(acc, w, panel_stride, x.x1 + k0, x.ld1, n, pf);
        w += n * row;
    }
    if (k1 > x.n1) {
        const std::size_t from = k0 > x.n1 ? k0 : x.n1;
        linear_accumulate<Arch, M, P, PV, Fmt>(acc, w, panel_stride, x.x2 + (from - x.n1), x.ld2, k1 - from, pf);
    }
    if (k1 == x.n1 + x.n2) add_bias<Arch, PV>(acc, panel, panel_stride);
    store_tile<Arch>(acc, y, ldy, cols);
}

/// Full-width panels [p, np) over inputs [k0, k1), P at a time, then the remainder with fewer.
template <class Arch, std::size_t M, std::size_t P, class Fmt, class Prefetch>
void linear_panels(const float* packed, std::size_t panel_stride, std::size_t p, std::size_t np, std::size_t out,
                   const SplitRows& x, std::size_t k0, std::size_t k1, float* y, std::size_t ldy, Prefetch& pf) {
    using B = Blocking<Arch>;
    for_each_panel_tile<P>(p, np, [&]<std::size_t Q>(std::size_t t, std::integral_constant<std::size_t, Q>) {
        linear_tile<Arch, M, Q, B::nr_vectors, Fmt>(packed + t * panel_stride, panel_stride, x, k0, k1, y + t * B::NR,
                                                    ldy, out - t * B::NR, pf);
    });
}

/// Panels [p0, p1) of y for M samples over inputs [k0, k1), continuing the sums in y unless
/// k0 = 0: the full-width panels, then the narrower last one if the range holds it.
template <class Arch, std::size_t M, class Fmt, class Prefetch>
void linear_block(const float* packed, std::size_t out, const SplitRows& x, float* y, std::size_t ldy, Prefetch& pf,
                  std::size_t p0, std::size_t p1, std::size_t k0, std::size_t k1) {
    using B = Blocking<Arch>;
    const std::size_t full = out / B::NR, panel_stride = panel_words<Arch, Fmt>(B::NR, x.n1 + x.n2);
    linear_panels<Arch, M, B::panels(M), Fmt>(packed, panel_stride, p0, p1 < full ? p1 : full, out, x, k0, k1, y, ldy,
                                              pf);
    if (p1 > full && out % B::NR != 0)
        with_size<B::nr_vectors>(last_panel_width<Arch>(out) / B::lanes,
                                 [&]<std::size_t PV>(std::integral_constant<std::size_t, PV>) {
                                     linear_tile<Arch, M, 1, PV, Fmt>(packed + full * panel_stride, 0, x, k0, k1,
                                                                      y + full * B::NR, ldy, out - full * B::NR, pf);
                                 });
}

/// y for M samples over inputs [k_begin, k_end) (all of them by default): from zero if
/// k_begin = 0, else continuing the sums already in y; the bias is added once the last input is
/// in. Each step over an input requests a few lines of pf (a PrefetchStream, or NoPrefetch).
/// Slices of kc inputs outermost (the kernels' KC by default, or the one the caller derived
/// from the CPU's L1d), so that the M × kc input sliver stays in L1 while every panel streams
/// past it.
template <class Arch, std::size_t M, class Fmt = F32Weights, class Prefetch>
void linear_rows(const float* packed, std::size_t out, const SplitRows& x, float* y, std::size_t ldy, Prefetch& pf,
                 std::size_t k_begin = 0, std::size_t k_end = std::size_t(-1), std::size_t kc = Blocking<Arch>::KC) {
    using B = Blocking<Arch>;
    const std::size_t in = x.n1 + x.n2, panels = (out + B::NR - 1) / B::NR;
    if (k_end > in) k_end = in;
    // Nothing to continue (the bias is in already once the range ends at `in`); only a range
    // from 0 runs empty, once, so that with no inputs y is the bias.
    if (k_begin != 0 && k_begin >= k_end) return;
    std::size_t k0 = k_begin;
    do {
        const std::size_t k1 = k_end - k0 > kc ? k0 + kc : k_end;
        linear_block<Arch, M, Fmt>(packed, out, x, y, ldy, pf, 0, panels, k0, k1);
        k0 = k1;
    } while (k0 < k_end);
}

/// Rows r0.. of x, as SplitRows of their own.
inline SplitRows rows_from(const SplitRows& x, std::size_t r0) {
    return {.x1 = x.x1 + r0 * x.ld1, .ld1 = x.ld1, .n1 = x.n1, .x2 = x.x2 + r0 * x.ld2, .ld2 = x.ld2, .n2 = x.n2};
}

/// Output features [f.begin, f.end) of l: whole panels from f.begin.
template <class Arch, class Fmt = F32Weights>
void linear(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f, float* y,
            std::size_t ldy) {
    constexpr std::size_t MR = Blocking<Arch>::MR;
    packed += l.offset + f.begin / l.panel * panel_words<Arch, Fmt>(l.panel, l.in);
    y += f.begin;
    const std::size_t out = f.end - f.begin;
    for (std::size_t r = 0; r < rows; r += MR)
        with_size<MR>(rows - r, [&]<std::size_t M>(std::integral_constant<std::size_t, M>) {
            NoPrefetch none;
            linear_rows<Arch, M, Fmt>(packed, out, rows_from(x, r), y + r * ldy, ldy, none);
        });
}

/// The same outputs in BLIS order: blocks of b.nc features outermost, then slices of b.kc
/// inputs, then the groups of MR rows, which all pass over the block's KC × NC weights while
/// L2 holds them. Each output's sums only continue from slice to slice: the same bits.
template <class Arch, class Fmt = F32Weights>
void linear_blocked(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f,
                    const LinearBlocking& b, float* y, std::size_t ldy) {
    using B = Blocking<Arch>;
    packed += l.offset + f.begin / l.panel * panel_words<Arch, Fmt>(l.panel, l.in);
    y += f.begin;
    const std::size_t out = f.end - f.begin, in = l.in, panels = (out + B::NR - 1) / B::NR;
    const std::size_t kc = b.kc > 0 ? b.kc : B::KC;
    for_each_nc_block(panels, b.nc, B::NR, [&](std::size_t p0, std::size_t p1) {
        std::size_t k0 = 0;
        do { // at least once: with no inputs y is the bias
            const std::size_t k1 = in - k0 > kc ? k0 + kc : in;
            for (std::size_t r = 0; r < rows; r += B::MR)
                with_size<B::MR>(rows - r, [&]<std::size_t M>(std::integral_constant<std::size_t, M>) {
                    NoPrefetch none;
                    linear_block<Arch, M, Fmt>(packed, out, rows_from(x, r), y + r * ldy, ldy, none, p0, p1, k0, k1);
                });
            k0 = k1;
        } while (k0 < in);
    });
}

/// The float32 Linear steps, for the fused forward and the table (kernels/forward.hpp), over
/// weights stored as Fmt says: floats (precision f32) or bf16s (precision bf16).
template <class Arch, class Fmt = F32Weights>
struct F32Linear {
    static constexpr Precision precision = Fmt::precision;
    static constexpr std::string_view variant = {}; // the ISA's own name
    static constexpr int levels = 0;
    static constexpr auto layout = linear_layout<Arch, Fmt>;
    static constexpr auto pack = pack_linear<Arch, Fmt>;
    static constexpr auto linear = myattn::detail::linear<Arch, Fmt>;
    static constexpr auto linear_blocked = myattn::detail::linear_blocked<Arch, Fmt>;
    /// Samples per fused group: the register tile's.
    static constexpr std::size_t group_rows = Blocking<Arch>::MR;
    /// Nothing carries from one of a group's Linears to the next.
    struct GroupState {};
    /// rows() takes the fused forward's KC (GroupSteps, kernels/forward.hpp).
    static constexpr bool runtime_kc = true;
    template <std::size_t M, class Prefetch>
    static void rows(const float* packed, std::size_t out, const SplitRows& x, float* y, std::size_t ldy, Prefetch& pf,
                     GroupState& /*group*/, std::size_t k_begin, std::size_t k_end, std::size_t kc) {
        linear_rows<Arch, M, Fmt>(packed, out, x, y, ldy, pf, k_begin, k_end, kc);
    }
};

} // namespace
} // namespace myattn::detail
