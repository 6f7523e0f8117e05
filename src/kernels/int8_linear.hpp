// The int8 Linear over split rows, y = W [x1; x2] + b, written once for every ISA: the scheme of
// kernels/quantize.hpp, the same bits as the scalar int8 reference (reference.hpp).
//
// Each ISA's file supplies `Dot`, the one raw-intrinsic step: acc += the sums of four products
// of unsigned activation bytes (one 4-byte group, broadcast) and signed weight bytes (a 4-byte
// group per lane): vpdpbusd with VNNI; vpmaddubsw + vpmaddwd without (7-bit activations: see
// quantize.hpp); sdot on Arm, which takes signed bytes on both sides, so it sees q - 128 and
// the zero point moves by the same `offset`.
//
// Packed, per panel of NR output features: NR weight scales, NR biases, NR int32 sums of each
// feature's weights over x1's inputs and NR over x2's, negated (the accumulators start from
// -zero point x sum: the correction, exact in int32), then x1's inputs in groups of four (NR
// features x 4 bytes: a vector load gives each lane its feature's group), zero-padded to a
// whole group, then x2's the same way. Each part of a row is quantized on its own and summed
// whole, so a call runs x1, x2 or both, never a slice of one: the int32 sums cannot continue
// through the float y, and the parts need no KC slicing (a row of 4096 inputs is 4 KiB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "kernels/blocking.hpp"
#include "kernels/linear_parts.hpp"
#include "kernels/prefetch.hpp"
#include "kernels/quantize.hpp"
#include "kernels/simd.hpp"
#include "kernels/table.hpp"
#include "thread_bytes.hpp"

namespace myattn::detail {
namespace {

template <class Arch>
using vint = xsimd::batch<std::int32_t, Arch>;

/// Where a Linear's parts lie in each of its packed panels.
struct Int8Panel {
    std::size_t nr;     // features per panel
    std::size_t g1, g2; // 4-byte groups of x1's and of x2's inputs
    /// 32-bit words per panel: scales, biases, two sums, then the groups.
    [[nodiscard]] std::size_t words() const { return nr * (4 + g1 + g2); }
    static Int8Panel of(std::size_t nr, std::size_t n1, std::size_t n2) {
        return {nr, round_up_group(n1) / int8_group, round_up_group(n2) / int8_group};
    }
};

template <class Arch>
LinearLayout int8_linear_layout(std::size_t out, std::size_t n1, std::size_t n2) {
    constexpr std::size_t NR = Blocking<Arch>::NR;
    return whole_panels_layout(NR, Int8Panel::of(NR, n1, n2).words(), out, n1, n2);
}

template <class Arch>
void int8_pack_linear(const LinearLayout& l, const float* W, const float* b, float* packed) {
    constexpr std::size_t NR = Blocking<Arch>::NR;
    const std::size_t in = l.in, n1 = l.n1;
    const Int8Panel pl = Int8Panel::of(NR, n1, in - n1);
    float* panel = packed + l.offset;
    for (std::size_t j0 = 0; j0 < l.out; j0 += NR, panel += pl.words()) {
        auto* sums = reinterpret_cast<std::int32_t*>(panel + 2 * NR);
        auto* groups = reinterpret_cast<std::int8_t*>(panel + 4 * NR);
        std::memset(groups, 0, (pl.g1 + pl.g2) * NR * int8_group);
        for (std::size_t c = 0; c < NR; ++c) {
            const std::size_t j = j0 + c;
            const bool real = j < l.out;
            const float* row = W + j * in;
            const float scale = real ? weight_scale(row, in) : 1.0f;
            panel[c] = scale;
            panel[NR + c] = real ? b[j] : 0.0f;
            sums[c] = sums[NR + c] = 0; // negated: each weight subtracted
            for (std::size_t i = 0; real && i < in; ++i) {
                const std::int8_t w = quantize_weight(row[i], scale);
                const bool first = i < n1;
                const std::size_t k = first ? i : i - n1, g = (first ? 0 : pl.g1) + k / int8_group;
                groups[(g * NR + c) * int8_group + k % int8_group] = w;
                sums[(first ? 0 : NR) + c] -= w;
            }
        }
    }
}

/// acc[m][c] += the dot products of `groups` 4-byte groups: row m's bytes at q + m * ldq, and
/// vector c's weights (P panels of PV vectors, panel_stride words apart) from w on.
template <class Arch, class Dot, std::size_t M, std::size_t P, std::size_t PV, class Prefetch>
inline void int8_accumulate(vint<Arch> (&acc)[M][P * PV], const std::int32_t* w, std::size_t panel_stride,
                            const std::uint8_t* q, std::size_t ldq, std::size_t groups, Prefetch& pf) {
    constexpr std::size_t lanes = Blocking<Arch>::lanes, NR = Blocking<Arch>::NR, V = P * PV;
    // A local copy of the stream, handed back after the loop (kernels/prefetch.hpp).
    Prefetch ahead = pf.template paced<M * V, Blocking<Arch>::tile_fmas>();
    for (std::size_t g = 0; g < groups; ++g, w += NR) {
        ahead.step();
        vint<Arch> wv[V];
#pragma GCC unroll 16
        for (std::size_t c = 0; c < V; ++c)
            wv[c] = vint<Arch>::load_unaligned(w + c / PV * panel_stride + c % PV * lanes);
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) {
            std::int32_t bytes;
            std::memcpy(&bytes, q + m * ldq + g * int8_group, sizeof bytes);
            const vint<Arch> a(bytes);
#pragma GCC unroll 16
            for (std::size_t c = 0; c < V; ++c) acc[m][c] = Dot::dot(acc[m][c], a, wv[c]);
        }
    }
    pf = ahead;
}

/// A Dot with tile registers of its own (AMX) sums a part's whole blocks of groups itself
/// (tile_sums, for one panel, into an int32 buffer that int8_tile adds to the accumulators), on
/// tiles it configures on first use in a thread and keeps
/// configured until release(), which each table call (linear, linear_blocked, the fused
/// forward) makes before it returns: configuring costs more than a small tile's work, and no
/// tile state outlives a call.
template <class Dot>
concept TileDot = requires {
    Dot::release();
};

/// quantize_row's range (kernels/quantize.hpp) a vector at a time: the same bounds, and a poison
/// that is NaN exactly when the scalar one is.
template <class Arch>
RowRange row_range_simd(const float* x, std::size_t n) {
    using V = vfloat<Arch>;
    constexpr std::size_t lanes = V::size;
    const std::size_t body = n / lanes * lanes;
    // Where a lane is NaN min and max may keep it or not: the poison then discards the range. It
    // ORs in the bits of v - v, +0 for a finite v and NaN otherwise: a one-cycle chain, where
    // the scalar code's v * 0 summed would be a chain of FMA latencies, the longest of the loop.
    // Two sets of running bounds: half the latency of one chain per vector.
    V lo(0.0f), hi(0.0f), poison(0.0f), lo2(0.0f), hi2(0.0f);
    std::size_t pair = 0;
    for (; pair + 2 * lanes <= body; pair += 2 * lanes) {
        const V v = V::load_unaligned(x + pair), w = V::load_unaligned(x + pair + lanes);
        lo = xsimd::min(lo, v);
        hi = xsimd::max(hi, v);
        lo2 = xsimd::min(lo2, w);
        hi2 = xsimd::max(hi2, w);
        poison = poison | ((v - v) | (w - w));
    }
    if (pair < body) {
        const V v = V::load_unaligned(x + pair);
        lo = xsimd::min(lo, v);
        hi = xsimd::max(hi, v);
        poison = poison | (v - v);
    }
    lo = xsimd::min(lo, lo2);
    hi = xsimd::max(hi, hi2);
    // Every lane the range's bound (NaN aside, which the poison covers), then lane 0 of each.
    alignas(64) float l[lanes], h[lanes];
    (-all_lanes_max<Arch>(-lo)).store_aligned(l);
    all_lanes_max<Arch>(hi).store_aligned(h);
    RowRange r{.lo = l[0], .hi = h[0], .poison = xsimd::hadd(poison)};
    for (std::size_t i = body; i < n; ++i) r.add(x[i]);
    return r;
}

/// quantize_row's bytes a vector at a time, for the scale and zero point rq of the row.
template <class Arch, int levels>
void quantize_bytes_simd(const float* x, std::size_t n, const RowQuant& rq, std::uint8_t* q) {
    using V = vfloat<Arch>;
    constexpr std::size_t lanes = V::size;
    const std::size_t body = n / lanes * lanes;
    if (rq.scale != rq.scale) {
        for (std::size_t i = 0; i < round_up_group(n); ++i) q[i] = 0;
        return;
    }
    // In integers: x / scale is within about [-levels, levels] (row_quant keeps 1 / scale finite),
    // so rounding to int32, adding the zero point and clamping give quantize_value's byte.
    using I = vint<Arch>;
    const V inv(1.0f / rq.scale);
    const I zp(rq.zero_point);
    auto bytes = [&](std::size_t i) { return xsimd::nearbyint_as_int(V::load_unaligned(x + i) * inv) + zp; };
    std::size_t i = 0;
    for (; i + 4 * lanes <= body; i += 4 * lanes) {
        const I four[4] = {bytes(i), bytes(i + lanes), bytes(i + 2 * lanes), bytes(i + 3 * lanes)};
        store_clamped_bytes4<Arch, levels>(q + i, four);
    }
    for (; i < body; i += lanes) store_clamped_bytes<Arch, levels>(q + i, bytes(i));
    for (; i < n; ++i) q[i] = quantize_value(x[i], rq, levels);
    for (; i < round_up_group(n); ++i) q[i] = static_cast<std::uint8_t>(rq.zero_point);
}

/// One part of quantized rows: row m's bytes at q + m * ld, its scale and zero point r[m].
struct QuantizedPart {
    const std::uint8_t* q;
    std::size_t ld;
    const RowQuant* r;
    [[nodiscard]] QuantizedPart from(std::size_t row) const { return {q + row * ld, ld, r + row}; }
};

/// Both parts of quantized rows (a part a call does not run is left empty).
struct QuantizedRows {
    QuantizedPart first, second;
    [[nodiscard]] QuantizedRows from(std::size_t row) const { return {first.from(row), second.from(row)}; }
};

/// Quantizes `rows` rows of n floats, ldx apart, into this thread's scratch slot `slot`.
template <class Arch, class Dot>
QuantizedPart quantize_part(const float* x, std::size_t ldx, std::size_t n, std::size_t rows, std::size_t slot) {
    const std::size_t ld = round_up_group(n);
    const std::size_t at = (rows * ld + alignof(RowQuant) - 1) / alignof(RowQuant) * alignof(RowQuant);
    std::uint8_t* bytes = thread_bytes(at + rows * sizeof(RowQuant), slot);
    auto* r = reinterpret_cast<RowQuant*>(bytes + at);
    // Phase by phase over a few rows at a time: each row's range, scale and bytes are a chain
    // of dependent steps, and rows side by side overlap their chains.
    constexpr std::size_t chunk = 8;
    for (std::size_t m0 = 0; m0 < rows; m0 += chunk) {
        const std::size_t m1 = rows - m0 < chunk ? rows : m0 + chunk;
        RowRange ranges[chunk];
        for (std::size_t m = m0; m < m1; ++m) ranges[m - m0] = row_range_simd<Arch>(x + m * ldx, n);
        for (std::size_t m = m0; m < m1; ++m) r[m] = row_quant(ranges[m - m0], Dot::levels);
        for (std::size_t m = m0; m < m1; ++m)
            quantize_bytes_simd<Arch, Dot::levels>(x + m * ldx, n, r[m], bytes + m * ld);
    }
    return {bytes, ld, r};
}

/// Both parts of rows [0, rows) of x, x1's into slot 0 and x2's into slot 1.
template <class Arch, class Dot>
QuantizedRows quantize_rows(const SplitRows& x, std::size_t rows) {
    return {quantize_part<Arch, Dot>(x.x1, x.ld1, x.n1, rows, 0), quantize_part<Arch, Dot>(x.x2, x.ld2, x.n2, rows, 1)};
}

/// What the Linears of one fused group share (GroupSteps keep one per group): the x1 rows whose
/// bytes slot 0 holds, so that Q is quantized once per group, not twice.
using Int8Group = HeldFirstPart<QuantizedPart>;

/// One part of a tile, M rows x P panels of PV vectors: its int32 sums from the zero-point
/// correction (-zero point x the negated weight sums) over its `groups` groups, dequantized:
/// y = f(c, y, n, float(sum), scale). `summed`, when not null, holds the sums of the first
/// `done` groups, which a tile Dot computed (int8_tile): rows NR apart, panels summed_stride apart.
template <class Arch, class Dot, std::size_t M, std::size_t P, std::size_t PV, class Prefetch, class F>
[[gnu::always_inline]] inline void int8_part(const float* panel, std::size_t stride, const std::int32_t* w,
                                             std::size_t which, const QuantizedPart& part, std::size_t groups,
                                             const std::int32_t* summed, std::size_t summed_stride, std::size_t done,
                                             float* y, std::size_t ldy, std::size_t cols, Prefetch& pf, F&& f) {
    constexpr std::size_t lanes = Blocking<Arch>::lanes, NR = Blocking<Arch>::NR, V = P * PV;
    const auto* words = reinterpret_cast<const std::int32_t*>(panel);
    auto column = [&](std::size_t c) { return tile_column<Arch, PV>(c, stride); };
    vint<Arch> acc[M][V];
#pragma GCC unroll 16
    for (std::size_t c = 0; c < V; ++c) {
        const vint<Arch> negated = vint<Arch>::load_unaligned(words + (2 + which) * NR + column(c));
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) acc[m][c] = negated * vint<Arch>(part.r[m].zero_point - Dot::offset);
    }
    if (summed != nullptr) {
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m)
#pragma GCC unroll 16
            for (std::size_t c = 0; c < V; ++c)
                acc[m][c] += vint<Arch>::load_aligned(summed + c / PV * summed_stride + m * NR + c % PV * lanes);
    }
    int8_accumulate<Arch, Dot, M, P, PV>(acc, w + done * NR, stride, part.q + done * int8_group, part.ld, groups - done,
                                         pf);
#pragma GCC unroll 16
    for (std::size_t c = 0; c < V; ++c) {
        if (cols <= c * lanes) continue;
        const std::size_t n = cols - c * lanes;
        const vfloat<Arch> ws = vfloat<Arch>::load_unaligned(panel + column(c));
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) {
            float* out = y + m * ldy + c * lanes;
            store_upto<Arch>(out, n, f(c, out, n, xsimd::to_float(acc[m][c]), ws * vfloat<Arch>(part.r[m].scale)));
        }
    }
}

/// One tile: M rows x P panels of PV vectors, the parts asked for. The first part's result goes
/// to y as it is; the second continues from y's and adds the bias. (Keeping the first in
/// registers would hold twice the accumulators across the second's loop: spills.) Rows past MR
/// (groups of 16 on AVX-512) run MR at a time over the same panel, whose weights the first MR
/// rows brought into L1. A Dot with tiles of its own (AMX) first sums each part's whole blocks
/// on them for all the tile's rows at once (up to 32: each weight tile loaded once for them),
/// then the rest finishes MR rows at a time in registers.
template <class Arch, class Dot, std::size_t M, std::size_t P, std::size_t PV, class Prefetch>
void int8_tile(const float* panel, const Int8Panel& pl, const QuantizedRows& x, bool first, bool second, float* y,
               std::size_t ldy, std::size_t cols, Prefetch& pf) {
    constexpr std::size_t NR = Blocking<Arch>::NR, MR = Blocking<Arch>::MR;
    static_assert(M <= MR || (P == 1 && M % MR == 0), "rows past MR are one panel's");
    constexpr std::size_t H = M < MR ? M : MR;
    const std::size_t stride = pl.words();
    const auto* words = reinterpret_cast<const std::int32_t*>(panel);
    auto run = [&](std::size_t which, const QuantizedPart& part, std::size_t groups, auto&& f) {
        const std::int32_t* w = words + 4 * NR + (which == 0 ? 0 : pl.g1 * NR);
        if constexpr (TileDot<Dot>) {
            // Whole blocks on the tiles, panel by panel, for all M rows at once; then MR rows at a
            // time in registers: the rest of the groups, and the epilogue.
            alignas(64) std::int32_t sums[P][M * NR];
            std::size_t done = 0;
            for (std::size_t p = 0; p < P; ++p)
                done = Dot::template tile_sums<M>(sums[p], w + p * stride, part.q, part.ld, groups, pf);
            for (std::size_t h = 0; h < M; h += H)
                int8_part<Arch, Dot, H, P, PV>(panel, stride, w, which, part.from(h), groups,
                                               done > 0 ? &sums[0][h * NR] : nullptr, M * NR, done, y + h * ldy, ldy,
                                               cols, pf, f);
        } else {
            for (std::size_t h = 0; h < M; h += H)
                int8_part<Arch, Dot, H, P, PV>(panel, stride, w, which, part.from(h), groups, nullptr, 0, 0,
                                               y + h * ldy, ldy, cols, pf, f);
        }
    };
    if (first)
        run(0, x.first, pl.g1,
            [](std::size_t, const float*, std::size_t, vfloat<Arch> s, vfloat<Arch> scale) { return s * scale; });
    if (second)
        run(1, x.second, pl.g2,
            [&](std::size_t c, const float* out, std::size_t n, vfloat<Arch> s, vfloat<Arch> scale) {
                const vfloat<Arch> bias = vfloat<Arch>::load_unaligned(panel + NR + tile_column<Arch, PV>(c, stride));
                return fmadd<Arch>(s, scale, load_upto<Arch>(out, n)) + bias;
            });
}

/// Panels [p, np) for M quantized rows, P at a time, then the remainder with fewer (a narrow
/// last panel one vector wide: for_each_full_width_tile).
template <class Arch, class Dot, std::size_t M, std::size_t P, class Prefetch>
void int8_panels(const float* packed, const Int8Panel& pl, std::size_t p, std::size_t np, std::size_t out,
                 const QuantizedRows& x, bool first, bool second, float* y, std::size_t ldy, Prefetch& pf) {
    using B = Blocking<Arch>;
    for_each_full_width_tile<Arch, P>(p, np, out,
                                      [&]<std::size_t Q, std::size_t PV>(std::size_t t,
                                                                         std::integral_constant<std::size_t, Q>,
                                                                         std::integral_constant<std::size_t, PV>) {
                                          int8_tile<Arch, Dot, M, Q, PV>(packed + t * pl.words(), pl, x, first, second,
                                                                         y + t * B::NR, ldy, out - t * B::NR, pf);
                                      });
}

/// y for M rows over the parts [k_begin, k_end) covers (both by default), panels [p0, p1).
template <class Arch, class Dot, std::size_t M, class Prefetch>
void int8_block(const float* packed, std::size_t out, const SplitRows& x, const QuantizedRows& qx, Parts parts,
                float* y, std::size_t ldy, Prefetch& pf, std::size_t p0, std::size_t p1) {
    using B = Blocking<Arch>;
    const Int8Panel pl = Int8Panel::of(B::NR, x.n1, x.n2);
    int8_panels<Arch, Dot, M, B::panels(M)>(packed, pl, p0, p1, out, qx, parts.first, parts.second, y, ldy, pf);
}

/// The fused forward's Linear step: M rows, every panel, the parts [k_begin, k_end) covers
/// (k_begin 0 or x.n1; k_end x.n1 or the end). x1's bytes come from the group when it holds
/// those rows, else are quantized into slot 0 and the group holds them; x2's go to slot 1.
template <class Arch, class Dot, std::size_t M, class Prefetch>
void int8_rows(const float* packed, std::size_t out, const SplitRows& x, float* y, std::size_t ldy, Prefetch& pf,
               Int8Group& group, std::size_t k_begin, std::size_t k_end) {
    const Parts parts = Parts::of(x, k_begin, k_end);
    if (!parts.first && !parts.second) return;
    QuantizedRows qx{};
    if (parts.first) qx.first = group.of(x, [&] { return quantize_part<Arch, Dot>(x.x1, x.ld1, x.n1, M, 0); });
    if (parts.second) qx.second = quantize_part<Arch, Dot>(x.x2, x.ld2, x.n2, M, 1);
    const std::size_t panels = (out + Blocking<Arch>::NR - 1) / Blocking<Arch>::NR;
    int8_block<Arch, Dot, M>(packed, out, x, qx, parts, y, ldy, pf, 0, panels);
}

/// Rows per fused group: a tile Dot's (AMX: 16), else the register tile's MR.
template <class Arch, class Dot>
constexpr std::size_t int8_group_rows() {
    if constexpr (requires { Dot::group_rows; })
        return Dot::group_rows;
    else
        return Blocking<Arch>::MR;
}

/// Rows at a time in the table's Linears, over many rows: a tile Dot's (AMX: 32), else a
/// fused group's.
template <class Arch, class Dot>
constexpr std::size_t int8_linear_rows() {
    if constexpr (requires { Dot::linear_rows; })
        return Dot::linear_rows;
    else
        return int8_group_rows<Arch, Dot>();
}

/// Output features [f.begin, f.end) of l (whole panels from f.begin), both parts, with the
/// weights in blocks of b.nc features (0: all of them) outermost, every group of rows passing
/// over a block while L2 holds it. b.kc does not apply: each part is summed whole.
template <class Arch, class Dot>
void int8_linear_blocked(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f,
                         const LinearBlocking& b, float* y, std::size_t ldy) {
    using B = Blocking<Arch>;
    const Int8Panel pl = Int8Panel::of(B::NR, x.n1, x.n2);
    packed += l.offset + f.begin / B::NR * pl.words();
    y += f.begin;
    const std::size_t out = f.end - f.begin, panels = (out + B::NR - 1) / B::NR;
    const QuantizedRows qx = quantize_rows<Arch, Dot>(x, rows);
    for_each_nc_block(panels, b.nc, B::NR, [&](std::size_t p0, std::size_t p1) {
        for_each_group<int8_linear_rows<Arch, Dot>(), B::MR>(
            0, rows, [&]<std::size_t M>(std::size_t r, std::integral_constant<std::size_t, M>) {
                NoPrefetch none;
                int8_block<Arch, Dot, M>(packed, out, x, qx.from(r), {true, true}, y + r * ldy, ldy, none, p0, p1);
            });
    });
    if constexpr (TileDot<Dot>) Dot::release();
}

/// The same outputs, the weights in one block.
template <class Arch, class Dot>
void int8_linear(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f, float* y,
                 std::size_t ldy) {
    int8_linear_blocked<Arch, Dot>(l, packed, x, rows, f, {.kc = 0, .nc = 0}, y, ldy);
}

/// The int8 Linear steps, for the fused forward and the table (kernels/forward.hpp).
template <class Arch, class Dot>
struct Int8Linear {
    static constexpr Precision precision = Precision::int8;
    static constexpr std::string_view variant = Dot::variant;
    static constexpr int levels = Dot::levels;
    static constexpr auto layout = int8_linear_layout<Arch>;
    static constexpr auto pack = int8_pack_linear<Arch>;
    static constexpr auto linear = int8_linear<Arch, Dot>;
    static constexpr auto linear_blocked = int8_linear_blocked<Arch, Dot>;
    /// Samples per fused group.
    static constexpr std::size_t group_rows = int8_group_rows<Arch, Dot>();
    using GroupState = Int8Group;
    /// What the fused forward calls before it returns: the Dot's tiles released, if it has any.
    static void release() {
        if constexpr (TileDot<Dot>) Dot::release();
    }
    template <std::size_t M, class Prefetch>
    static void rows(const float* packed, std::size_t out, const SplitRows& x, float* y, std::size_t ldy, Prefetch& pf,
                     GroupState& group, std::size_t k_begin, std::size_t k_end) {
        int8_rows<Arch, Dot, M>(packed, out, x, y, ldy, pf, group, k_begin, k_end);
    }
};

} // namespace
} // namespace myattn::detail
