// Linear with bias over split input rows: y = b + W · [x1; x2], never building [x1; x2].
//
// The weights are packed once (pack_linear) into panels of NR output features, BLIS style:
// NR biases, then for every input i the NR weights W[j0 .. j0 + NR, i], zero-padded past the
// last feature. The micro-kernel keeps M samples × P panels of accumulators in registers and
// broadcasts each input of each sample once per step. Every output is its bias followed by
// one fused multiply-add per input, in input order (x1 then x2), whatever M, P or the KC block:
// a sample's result is bitwise the same in any tile, row position or thread.
#pragma once

#include <cstddef>

#include "kernels/blocking.hpp"
#include "kernels/simd.hpp"
#include "kernels/table.hpp"

namespace myattn::detail {
namespace {

template <class Arch>
std::size_t linear_packed_size(std::size_t out, std::size_t in) {
    constexpr std::size_t NR = Blocking<Arch>::NR;
    return (out + NR - 1) / NR * NR * (in + 1);
}

template <class Arch>
void pack_linear(const float* W, const float* b, std::size_t out, std::size_t in, float* packed) {
    constexpr std::size_t NR = Blocking<Arch>::NR;
    for (std::size_t j0 = 0; j0 < out; j0 += NR, packed += NR * (in + 1))
        for (std::size_t c = 0; c < NR; ++c) {
            const bool real = j0 + c < out;
            packed[c] = real ? b[j0 + c] : 0.0f;
            for (std::size_t i = 0; i < in; ++i) packed[NR * (1 + i) + c] = real ? W[(j0 + c) * in + i] : 0.0f;
        }
}

/// acc[m][·] += x_m[i] · w_i for i < n, in order: x_m = x + m * ldx, w_i the NR weights of
/// input i in each of P panels `panel_stride` apart, starting at w.
template <class Arch, std::size_t M, std::size_t P>
inline void linear_accumulate(vfloat<Arch> (&acc)[M][P * Blocking<Arch>::nr_vectors], const float* w,
                              std::size_t panel_stride, const float* x, std::size_t ldx, std::size_t n) {
    using B = Blocking<Arch>;
    constexpr std::size_t V = P * B::nr_vectors;
    for (std::size_t i = 0; i < n; ++i, w += B::NR) {
        vfloat<Arch> wv[V];
#pragma GCC unroll 16
        for (std::size_t c = 0; c < V; ++c)
            wv[c] = vfloat<Arch>::load_unaligned(w + c / B::nr_vectors * panel_stride + c % B::nr_vectors * B::lanes);
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) {
            const vfloat<Arch> xm(x[m * ldx + i]);
#pragma GCC unroll 16
            for (std::size_t c = 0; c < V; ++c) acc[m][c] = fmadd<Arch>(xm, wv[c], acc[m][c]);
        }
    }
}

/// One tile: M samples × P panels over inputs [k0, k1). The accumulators start from the bias
/// (k0 = 0) or from y (a later KC block) and go back to y, of whose columns `cols` are real.
template <class Arch, std::size_t M, std::size_t P>
void linear_tile(const float* panel, std::size_t panel_stride, const SplitRows& x, std::size_t k0, std::size_t k1,
                 float* y, std::size_t ldy, std::size_t cols) {
    using B = Blocking<Arch>;
    constexpr std::size_t V = P * B::nr_vectors;
    vfloat<Arch> acc[M][V];
    if (k0 == 0) {
#pragma GCC unroll 16
        for (std::size_t c = 0; c < V; ++c) {
            const auto bias =
                vfloat<Arch>::load_unaligned(panel + c / B::nr_vectors * panel_stride + c % B::nr_vectors * B::lanes);
#pragma GCC unroll 16
            for (std::size_t m = 0; m < M; ++m) acc[m][c] = bias;
        }
    } else {
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m)
#pragma GCC unroll 16
            for (std::size_t c = 0; c < V; ++c)
                acc[m][c] = load_upto<Arch>(y + m * ldy + c * B::lanes, cols > c * B::lanes ? cols - c * B::lanes : 0);
    }
    const float* w = panel + B::NR * (1 + k0);
    if (k0 < x.n1) {
        const std::size_t n = (k1 < x.n1 ? k1 : x.n1) - k0;
        linear_accumulate<Arch, M, P>(acc, w, panel_stride, x.x1 + k0, x.ld1, n);
        w += n * B::NR;
    }
    if (k1 > x.n1) {
        const std::size_t from = k0 > x.n1 ? k0 : x.n1;
        linear_accumulate<Arch, M, P>(acc, w, panel_stride, x.x2 + (from - x.n1), x.ld2, k1 - from);
    }
#pragma GCC unroll 16
    for (std::size_t m = 0; m < M; ++m)
#pragma GCC unroll 16
        for (std::size_t c = 0; c < V; ++c)
            if (cols > c * B::lanes) store_upto<Arch>(y + m * ldy + c * B::lanes, cols - c * B::lanes, acc[m][c]);
}

/// Panels [p, np) over inputs [k0, k1), P at a time, then the remainder with fewer.
template <class Arch, std::size_t M, std::size_t P>
void linear_panels(const float* packed, std::size_t panel_stride, std::size_t p, std::size_t np, std::size_t out,
                   const SplitRows& x, std::size_t k0, std::size_t k1, float* y, std::size_t ldy) {
    constexpr std::size_t NR = Blocking<Arch>::NR;
    for (; p + P <= np; p += P)
        linear_tile<Arch, M, P>(packed + p * panel_stride, panel_stride, x, k0, k1, y + p * NR, ldy, out - p * NR);
    if constexpr (P > 1)
        if (p < np) linear_panels<Arch, M, P - 1>(packed, panel_stride, p, np, out, x, k0, k1, y, ldy);
}

/// y for M samples: KC blocks of inputs outermost, so that the M × KC input sliver stays in
/// L1 while every panel streams past it.
template <class Arch, std::size_t M>
void linear_rows(const float* packed, std::size_t out, const SplitRows& x, float* y, std::size_t ldy) {
    using B = Blocking<Arch>;
    const std::size_t in = x.n1 + x.n2, np = (out + B::NR - 1) / B::NR, panel_stride = B::NR * (in + 1);
    std::size_t k0 = 0;
    do { // at least once: with no inputs y is the bias
        const std::size_t k1 = in - k0 > B::KC ? k0 + B::KC : in;
        linear_panels<Arch, M, B::panels(M)>(packed, panel_stride, 0, np, out, x, k0, k1, y, ldy);
        k0 = k1;
    } while (k0 < in);
}

template <class Arch>
void linear(const float* packed, std::size_t out, std::size_t rows, const SplitRows& x, float* y, std::size_t ldy) {
    constexpr std::size_t MR = Blocking<Arch>::MR;
    for (std::size_t r = 0; r < rows; r += MR) {
        const SplitRows xr{x.x1 + r * x.ld1, x.ld1, x.n1, x.x2 + r * x.ld2, x.ld2, x.n2};
        with_rows<MR>(rows - r, [&]<std::size_t M>(std::integral_constant<std::size_t, M>) {
            linear_rows<Arch, M>(packed, out, xr, y + r * ldy, ldy);
        });
    }
}

} // namespace
} // namespace myattn::detail
