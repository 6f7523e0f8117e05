// What the Linears' kernels share: which parts of the split rows a call covers, where a tile's
// vectors lie in a panel, the walks over panels (tiles of P, blocks of NC), a tile's sums
// loaded from and stored to y, and the first part a fused group keeps converted (int8's bytes,
// the bf16 dot product's pairs) for both of its Linears.
#pragma once

#include <cstddef>
#include <type_traits>

#include "kernels/blocking.hpp"
#include "kernels/simd.hpp"
#include "kernels/table.hpp"

namespace myattn::detail {
namespace {

/// Where vector c of a tile's panels (PV vectors each, stride words apart) starts in a panel.
template <class Arch, std::size_t PV>
constexpr std::size_t tile_column(std::size_t c, std::size_t stride) {
    return c / PV * stride + c % PV * Blocking<Arch>::lanes;
}

/// A Linear of `out` features over n1 + n2 inputs in panels of nr features, the last one as
/// wide as the others, `words` 32-bit words each.
inline LinearLayout whole_panels_layout(std::size_t nr, std::size_t words, std::size_t out, std::size_t n1,
                                        std::size_t n2) {
    return {.offset = 0, .size = (out + nr - 1) / nr * words, .out = out, .in = n1 + n2, .panel = nr, .n1 = n1};
}

/// Which parts a range of inputs [k_begin, k_end) covers, k_begin 0 or n1 and k_end n1 or past
/// the end: x1, x2, or both. Only a range from 0 may be empty, so that with no inputs y is the bias.
struct Parts {
    bool first, second;
    static Parts of(const SplitRows& x, std::size_t k_begin, std::size_t k_end) {
        const std::size_t in = x.n1 + x.n2;
        if (k_end > in) k_end = in;
        if (k_begin != 0 && k_begin >= k_end) return {false, false};
        return {k_begin == 0, k_end == in};
    }
};

/// Tiles of P panels over panels [p, np), then the rest with fewer: f(p, P as an integral_constant).
template <std::size_t P, class F>
[[gnu::always_inline]] inline void for_each_panel_tile(std::size_t p, std::size_t np, F&& f) {
    for (; p + P <= np; p += P) f(p, std::integral_constant<std::size_t, P>{});
    if constexpr (P > 1)
        if (p < np) for_each_panel_tile<P - 1>(p, np, f);
}

/// The tiles over panels [p, np) of a Linear of `out` features whose panels are all packed
/// full width (int8, the bf16 dot product): f(t, P, PV) for P panels of PV = nr_vectors vectors
/// from panel t, P at a time, then fewer (for_each_panel_tile); but a last panel of at most one
/// vector of features takes a tile one vector wide (P = PV = 1), half the products of a full
/// one, the rest being the packing's zero padding (shape T's 10 scores).
template <class Arch, std::size_t P, class F>
[[gnu::always_inline]] inline void for_each_full_width_tile(std::size_t p, std::size_t np, std::size_t out, F&& f) {
    using B = Blocking<Arch>;
    using one = std::integral_constant<std::size_t, 1>;
    const std::size_t full = out / B::NR, rest = out % B::NR;
    const bool narrow = np > full && rest != 0 && rest <= B::lanes;
    for_each_panel_tile<P>(p, narrow ? full : np,
                           [&]<std::size_t Q>(std::size_t t, std::integral_constant<std::size_t, Q> q) {
                               f(t, q, std::integral_constant<std::size_t, B::nr_vectors>{});
                           });
    if (narrow) f(full, one{}, one{});
}

/// Blocks of nc output features (whole panels of nr, at least one; nc = 0: all) over `panels`
/// panels, in order: f(p0, p1).
template <class F>
void for_each_nc_block(std::size_t panels, std::size_t nc, std::size_t nr, F&& f) {
    const std::size_t step = nc == 0 ? panels : nc >= nr ? nc / nr : 1;
    for (std::size_t p0 = 0; p0 < panels; p0 += step) f(p0, panels - p0 > step ? p0 + step : panels);
}

/// A tile's M x V sums from zero.
template <class Arch, std::size_t M, std::size_t V>
[[gnu::always_inline]] inline void zero_tile(vfloat<Arch> (&acc)[M][V]) {
#pragma GCC unroll 16
    for (std::size_t m = 0; m < M; ++m)
#pragma GCC unroll 16
        for (std::size_t c = 0; c < V; ++c) acc[m][c] = vfloat<Arch>(0.0f);
}

/// Each row of a tile's sums plus the biases at the head of its panels (PV vectors each,
/// `stride` words apart from `panel`).
template <class Arch, std::size_t PV, std::size_t M, std::size_t V>
[[gnu::always_inline]] inline void add_bias(vfloat<Arch> (&acc)[M][V], const float* panel, std::size_t stride) {
#pragma GCC unroll 16
    for (std::size_t c = 0; c < V; ++c) {
        const auto bias = vfloat<Arch>::load_unaligned(panel + tile_column<Arch, PV>(c, stride));
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) acc[m][c] += bias;
    }
}

/// A tile's M x V sums continued from y (of whose columns `cols` are real; the rest read as 0).
template <class Arch, std::size_t M, std::size_t V>
[[gnu::always_inline]] inline void load_tile(vfloat<Arch> (&acc)[M][V], const float* y, std::size_t ldy,
                                             std::size_t cols) {
    constexpr std::size_t lanes = Blocking<Arch>::lanes;
#pragma GCC unroll 16
    for (std::size_t m = 0; m < M; ++m)
#pragma GCC unroll 16
        for (std::size_t c = 0; c < V; ++c)
            acc[m][c] = load_upto<Arch>(y + m * ldy + c * lanes, cols > c * lanes ? cols - c * lanes : 0);
}

/// A tile's M x V sums back to y, its first `cols` columns.
template <class Arch, std::size_t M, std::size_t V>
[[gnu::always_inline]] inline void store_tile(const vfloat<Arch> (&acc)[M][V], float* y, std::size_t ldy,
                                              std::size_t cols) {
    constexpr std::size_t lanes = Blocking<Arch>::lanes;
#pragma GCC unroll 16
    for (std::size_t m = 0; m < M; ++m)
#pragma GCC unroll 16
        for (std::size_t c = 0; c < V; ++c)
            if (cols > c * lanes) store_upto<Arch>(y + m * ldy + c * lanes, cols - c * lanes, acc[m][c]);
}

/// What a fused group's Linears share: x1's rows converted once (both of the module's Linears
/// take the group's Q as x1, so the combine reuses what the scores converted).
template <class Part>
struct HeldFirstPart {
    bool held = false;
    const float* x1 = nullptr;
    std::size_t ld1 = 0, n1 = 0;
    Part part{};
    /// x's first part converted: the one held if it is of the same rows, else convert()'s, then held.
    template <class Convert>
    const Part& of(const SplitRows& x, Convert&& convert) {
        if (!held || x1 != x.x1 || ld1 != x.ld1 || n1 != x.n1) *this = {true, x.x1, x.ld1, x.n1, convert()};
        return part;
    }
};

} // namespace
} // namespace myattn::detail
