// The weighted sum over V: a[m, :] = sum_l w[m, l] V[l, :].
//
// One register tile of M samples × NB vectors of columns runs down the rows of V, loading each
// V row segment once for all M samples and broadcasting each weight. A V per sample is that tile
// with M = 1 (V streams once, a wide column block hides the FMA latency, and a wide V goes a
// window of rows at a time, or, with rows of a page or more, one row at a time); a V shared by
// every sample is a small GEMM and takes M = MR, as the Linear's register tile does, from a
// contiguous copy of V's strips when more than one tile of rows reads them. Either way
// every a[m, j] is the chain
// fma(w_L-1, V_L-1,j, ... fma(w_0, V_0,j, 0)), in l order, so shared and copied V give bitwise
// the same result; the columns past the last whole vector take that chain in scalar code.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/bf16.hpp"
#include "kernels/blocking.hpp"
#include "kernels/simd.hpp"
#include "kernels/table.hpp"

namespace myattn::detail {
namespace {

/// M samples × NB whole vectors of columns, starting at the column V and a point to, over
/// `rows` rows of V (ldv values apart, float or bfloat16; w points at the weight of the first):
/// the sums start from 0, or resume from a (a later block of rows). The samples share one V,
/// each row segment loaded once for all of them, or (EachV) each reads its own, v_stride
/// values after the previous sample's.
template <class Arch, std::size_t M, std::size_t NB, class VT, bool EachV = false>
void weighted_sum_tile(const float* w, std::size_t ldw, const VT* V, std::size_t v_stride, std::size_t rows,
                       std::size_t ldv, float* a, std::size_t lda, bool resume) {
    constexpr std::size_t lanes = Blocking<Arch>::lanes;
    vfloat<Arch> acc[M][NB];
#pragma GCC unroll 16
    for (std::size_t m = 0; m < M; ++m)
#pragma GCC unroll 16
        for (std::size_t c = 0; c < NB; ++c)
            acc[m][c] = resume ? vfloat<Arch>::load_unaligned(a + m * lda + c * lanes) : vfloat<Arch>(0.0f);
    for (std::size_t l = 0; l < rows; ++l, V += ldv) {
        vfloat<Arch> v[NB];
        if constexpr (!EachV)
#pragma GCC unroll 16
            for (std::size_t c = 0; c < NB; ++c) v[c] = load_values<Arch>(V + c * lanes);
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) {
            const vfloat<Arch> wm(w[m * ldw + l]);
            if constexpr (EachV)
#pragma GCC unroll 16
                for (std::size_t c = 0; c < NB; ++c) v[c] = load_values<Arch>(V + m * v_stride + c * lanes);
#pragma GCC unroll 16
            for (std::size_t c = 0; c < NB; ++c) acc[m][c] = fmadd<Arch>(wm, v[c], acc[m][c]);
        }
    }
#pragma GCC unroll 16
    for (std::size_t m = 0; m < M; ++m)
#pragma GCC unroll 16
        for (std::size_t c = 0; c < NB; ++c) acc[m][c].store_unaligned(a + m * lda + c * lanes);
}

/// Whole-vector columns [col, end) over `rows` rows, NB vectors at a time, then the remainder
/// with fewer (weighted_sum_tile's V, shared or EachV).
template <class Arch, std::size_t M, std::size_t NB, class VT, bool EachV = false>
void weighted_sum_columns(const float* w, std::size_t ldw, const VT* V, std::size_t v_stride, std::size_t rows,
                          std::size_t ldv, float* a, std::size_t lda, std::size_t col, std::size_t end, bool resume) {
    constexpr std::size_t step = NB * Blocking<Arch>::lanes;
    for (; col + step <= end; col += step)
        weighted_sum_tile<Arch, M, NB, VT, EachV>(w, ldw, V + col, v_stride, rows, ldv, a + col, lda, resume);
    if constexpr (NB > 1)
        if (col < end)
            weighted_sum_columns<Arch, M, NB - 1, VT, EachV>(w, ldw, V, v_stride, rows, ldv, a, lda, col, end, resume);
}

/// Columns [0, n) over all `rows` rows of V (shared by the M samples, or M = 1), the sums
/// from 0, with V's loads aligned: the vectors from V's first vector boundary on load aligned,
/// and the columns before it and after the last whole vector take one unaligned vector each,
/// over columns the aligned ones also compute (the same chains, so the same bits, stored
/// twice). Where V is not aligned (16 bytes off a cache line, as malloc gives), every load would
/// otherwise straddle two lines, which took the weighted sum 1.5 times as long from L2
/// (docs/tuning.md). It runs where V's rows are whole vectors apart and at least twice
/// in_flight vectors wide, so that the one extra vector costs little: shape T's 16 and 32
/// gained, while S's 8 on AVX2 lost more than the aligned loads saved. Returns whether it ran.
template <class Arch, std::size_t M, std::size_t NB, class VT>
bool weighted_sum_aligned(const float* w, std::size_t ldw, const VT* V, std::size_t rows, std::size_t ldv, float* a,
                          std::size_t lda, std::size_t n) {
    constexpr std::size_t lanes = Blocking<Arch>::lanes;
    if (n < 2 * Blocking<Arch>::in_flight * lanes || ldv % lanes != 0) return false;
    const std::size_t head = (lanes - reinterpret_cast<std::uintptr_t>(V) / sizeof(VT) % lanes) % lanes,
                      end = head + (n - head) / lanes * lanes;
    if (head != 0) weighted_sum_tile<Arch, M, 1, VT>(w, ldw, V, 0, rows, ldv, a, lda, false);
    weighted_sum_columns<Arch, M, NB, VT>(w, ldw, V, 0, rows, ldv, a, lda, head, end, false);
    if (end != n) weighted_sum_tile<Arch, M, 1, VT>(w, ldw, V + n - lanes, 0, rows, ldv, a + n - lanes, lda, false);
    return true;
}

/// One step of the row stream (weighted_sum_stream), rows [0, R) of a column block: each sum
/// takes the R rows in order, so the chains are the one-row stream's, while the R rows (a page
/// apart in shape X) stream side by side: several streams at once kept more lines in flight than
/// one (docs/tuning.md).
template <class Arch, std::size_t R, class VT>
[[gnu::always_inline]] inline void stream_step(const float* w, const VT* row, std::size_t ldv, float* sum,
                                               std::size_t head, std::size_t body_end, std::size_t n) {
    using vf = vfloat<Arch>;
    constexpr std::size_t lanes = Blocking<Arch>::lanes;
    for (std::size_t j = 0; j < head; ++j)
        for (std::size_t r = 0; r < R; ++r) sum[j] = std::fma(w[r], value_of(row[r * ldv + j]), sum[j]);
    vf wr[R];
#pragma GCC unroll 16
    for (std::size_t r = 0; r < R; ++r) wr[r] = vf(w[r]);
    for (std::size_t j = head; j < body_end; j += lanes) {
        vf s = vf::load_aligned(sum + j);
#pragma GCC unroll 16
        for (std::size_t r = 0; r < R; ++r) s = fmadd<Arch>(wr[r], load_values<Arch>(row + r * ldv + j), s);
        s.store_aligned(sum + j);
    }
    for (std::size_t j = body_end; j < n; ++j)
        for (std::size_t r = 0; r < R; ++r) sum[j] = std::fma(w[r], value_of(row[r * ldv + j]), sum[j]);
}

/// Columns [0, d) of one sample's V (L rows, ldv values apart: whole 64-byte lines) streamed
/// down the rows, Blocking::stream_rows<VT> of them side by side, in order:
/// a[j] = fma(w_l, V[l, j], a[j]) for each l, the register tile's chains. The sums build in a
/// stack buffer laid out like V's rows modulo a cache line, so that the loads of V and of the
/// sums, and the stores of the sums, are all aligned (V 16 bytes off a line, as malloc gives,
/// and the same stream ran at half the bandwidth); the few columns before V's first line
/// boundary and after its last take the chain in scalar code. Blocks of stream_columns
/// columns, each streamed down all rows.
template <class Arch, class VT>
void weighted_sum_stream(const float* w, const VT* V, std::size_t L, std::size_t d, std::size_t ldv, float* a) {
    constexpr std::size_t lanes = Blocking<Arch>::lanes, line = 64 / sizeof(VT), sum_line = 64 / sizeof(float),
                          cols = Blocking<Arch>::stream_columns, R = Blocking<Arch>::template stream_rows<VT>;
    alignas(64) float buffer[cols + sum_line];
    // Values from V to its first line boundary: the same in every row and column block.
    const std::size_t to_line = (line - reinterpret_cast<std::uintptr_t>(V) / sizeof(VT) % line) % line;
    // sum + to_line is on a line boundary, as V + to_line is.
    float* sum = buffer + (sum_line - to_line % sum_line) % sum_line;
    for (std::size_t c0 = 0; c0 < d; c0 += cols) {
        const std::size_t n = d - c0 < cols ? d - c0 : cols, head = to_line < n ? to_line : n,
                          body_end = head + (n - head) / lanes * lanes;
        for (std::size_t j = 0; j < n; ++j) sum[j] = 0.0f;
        const VT* row = V + c0;
        std::size_t l = 0;
        for (; l + R <= L; l += R, row += R * ldv) stream_step<Arch, R>(w + l, row, ldv, sum, head, body_end, n);
        for (; l < L; ++l, row += ldv) stream_step<Arch, 1>(w + l, row, ldv, sum, head, body_end, n);
        for (std::size_t j = 0; j < n; ++j) a[c0 + j] = sum[j];
    }
}

/// Columns [full, d) of `rows` samples, past the last whole vector: the chain in scalar code.
template <class VT>
void weighted_sum_tail(std::size_t rows, const float* w, std::size_t ldw, const VT* V, std::size_t L, std::size_t d,
                       std::size_t ldv, std::size_t full, float* a, std::size_t lda) {
    for (std::size_t m = 0; m < rows; ++m)
        for (std::size_t j = full; j < d; ++j) {
            float acc = 0.0f;
            for (std::size_t l = 0; l < L; ++l) acc = std::fma(w[m * ldw + l], value_of(V[l * ldv + j]), acc);
            a[m * lda + j] = acc;
        }
}

/// M samples sharing one V: L rows of d columns, ldv values apart. A V that streams (M = 1)
/// goes down its rows (weighted_sum_stream) when they are long, else in blocks of rows spanning
/// at most Blocking::window bytes; one shared by a group (M > 1) is reused from cache, so each
/// column block runs down all of it. Whether rows are long is counted in values, not bytes: a
/// bf16 V of shape X (rows of 2 KiB) streams too, Blocking::stream_rows<VT> rows side by side
/// (docs/tuning.md).
template <class Arch, std::size_t M, class VT>
void weighted_sum_rows(const float* w, std::size_t ldw, const VT* V, std::size_t L, std::size_t d, std::size_t ldv,
                       float* a, std::size_t lda) {
    using B = Blocking<Arch>;
    if (M == 1 && d >= B::stream_row_values && ldv * sizeof(VT) % 64 == 0)
        return weighted_sum_stream<Arch>(w, V, L, d, ldv, a);
    constexpr std::size_t NB = B::nr_vectors * B::panels(M);
    const std::size_t block = M > 1 ? L : d * sizeof(VT) < B::window ? B::window / (d * sizeof(VT)) : 1;
    if (block >= L && weighted_sum_aligned<Arch, M, NB>(w, ldw, V, L, ldv, a, lda, d)) return;
    const std::size_t full = d - d % B::lanes;
    for (std::size_t l0 = 0; l0 < L; l0 += block)
        weighted_sum_columns<Arch, M, NB>(w + l0, ldw, V + l0 * ldv, 0, std::min(block, L - l0), ldv, a, lda, 0, full,
                                          l0 != 0);
    weighted_sum_tail(M, w, ldw, V, L, d, ldv, full, a, lda);
}

/// Rows [0, rows) of a V shared by more than one register tile of them, in strips as wide as
/// the widest tile (that of one row): each strip is copied a block of rows at a time into a contiguous
/// stack buffer of Blocking::pack_bytes, which every tile of rows then reads in order. In place,
/// a strip's rows are ldv values apart (shape X: a page), so each tile would walk V a page a
/// step, which neither the prefetchers nor the TLB follow (docs/tuning.md); copied, the walk
/// is paid once per strip instead of once per tile of rows. The sums are the same chains.
template <class Arch, std::size_t MR, class VT>
void weighted_sum_packed(const float* w, std::size_t ldw, const VT* V, std::size_t rows, std::size_t L, std::size_t d,
                         std::size_t ldv, float* a, std::size_t lda) {
    using B = Blocking<Arch>;
    constexpr std::size_t strip = B::nr_vectors * B::panels(1) * B::lanes,
                          block = B::pack_bytes / (strip * sizeof(VT)) > 0 ? B::pack_bytes / (strip * sizeof(VT)) : 1;
    alignas(64) VT packed[block * strip];
    const std::size_t full = d - d % B::lanes;
    for (std::size_t c0 = 0; c0 < full; c0 += strip) {
        const std::size_t width = std::min(strip, full - c0);
        for (std::size_t l0 = 0; l0 < L; l0 += block) {
            const std::size_t n = std::min(block, L - l0);
            for (std::size_t l = 0; l < n; ++l)
                std::memcpy(packed + l * strip, V + (l0 + l) * ldv + c0, width * sizeof(VT));
            for (std::size_t r = 0; r < rows; r += MR)
                with_size<MR>(rows - r, [&]<std::size_t M>(std::integral_constant<std::size_t, M>) {
                    weighted_sum_columns<Arch, M, B::nr_vectors * B::panels(M)>(
                        w + r * ldw + l0, ldw, packed, 0, n, strip, a + r * lda + c0, lda, 0, width, l0 != 0);
                });
        }
    }
    weighted_sum_tail(rows, w, ldw, V, L, d, ldv, full, a, lda);
}

/// Samples [0, G) of op's rows, each with its own V (v_stride values apart) of at most one
/// window, all L rows at once: each sample's sums are the chains of one sample alone, G samples'
/// side by side, so that more chains are in flight than one sample's columns give (S: 4).
template <class Arch, std::size_t G, class VT>
void weighted_sum_each(const float* w, std::size_t ldw, const VT* V, std::size_t v_stride, std::size_t L, std::size_t n,
                       std::size_t ldv, float* a, std::size_t lda) {
    using B = Blocking<Arch>;
    constexpr std::size_t NB = B::MR * B::nr_vectors / G > 0 ? B::MR * B::nr_vectors / G : 1;
    const std::size_t full = n - n % B::lanes;
    weighted_sum_columns<Arch, G, NB, VT, true>(w, ldw, V, v_stride, L, ldv, a, lda, 0, full, false);
    for (std::size_t m = 0; m < G; ++m)
        weighted_sum_tail(1, w + m * ldw, ldw, V + m * v_stride, L, n, ldv, full, a + m * lda, lda);
}

/// Columns [c.begin, c.end) of op: a block of V's columns, its rows op.d values apart. A shared
/// V runs groups of up to MR rows (MR = M for a caller that knows op.rows = M).
template <class Arch, class VT = float, std::size_t MR = Blocking<Arch>::MR>
void weighted_sum(const WeightedSumOf<VT>& op, Range c) {
    const std::size_t n = c.end - c.begin, ldw = op.ldw, lda = op.lda;
    const VT* V = op.V + c.begin;
    float* a = op.a + c.begin;
    if (op.v_stride != 0) {
        using B = Blocking<Arch>;
        constexpr std::size_t G = B::ws_samples;
        std::size_t r = 0;
        // Side by side where one sample's columns are fewer vectors than chains in flight.
        if (op.L * op.d * sizeof(VT) <= B::window && n < B::in_flight * B::lanes)
            for (; r + G <= op.rows; r += G)
                weighted_sum_each<Arch, G>(op.w + r * ldw, ldw, V + r * op.v_stride, op.v_stride, op.L, n, op.d,
                                           a + r * lda, lda);
        for (; r < op.rows; ++r)
            weighted_sum_rows<Arch, 1>(op.w + r * ldw, ldw, V + r * op.v_stride, op.L, n, op.d, a + r * lda, lda);
        return;
    }
    if (op.rows > MR) return weighted_sum_packed<Arch, MR>(op.w, ldw, V, op.rows, op.L, n, op.d, a, lda);
    if (op.rows != 0)
        with_size<MR>(op.rows, [&]<std::size_t M>(std::integral_constant<std::size_t, M>) {
            weighted_sum_rows<Arch, M>(op.w, ldw, V, op.L, n, op.d, a, lda);
        });
}

} // namespace
} // namespace myattn::detail
