// Softmax of one row, in place: exp(s - max s) / sum, three vector passes.
//
// A row that is not a whole number of vectors ends in one partial vector, loaded through a
// buffer padded with -inf and kept in a register across the passes: nothing past the row is
// read or written. The padding is harmless: it never raises the max, and its exp is 0, except
// when the max is itself -inf or NaN, rows PyTorch turns into NaN anyway. A row that is a whole
// number of vectors has no partial vector, and computes no exp for one.
//
// Non-finite scores follow PyTorch without a special case: a NaN, or a +inf (inf - inf), or a
// row of -inf (-inf - -inf) gives a NaN term, hence a NaN sum, hence a NaN row. That holds even
// where the vector max drops a NaN or leaves its lanes unequal, since exp(NaN - m) is NaN for
// any m.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/simd.hpp"

namespace myattn::detail {
namespace {

/// exp(x) for x in [-inf, 0] or NaN, within 2 ulp (1.01 ulp measured over every float of
/// [-87.3, 0]), or below the normal range: 0 for x < -126 ln 2, where exp(x) < FLT_MIN, and
/// possibly a subnormal just above. NaN gives NaN, -inf gives 0.
///
/// softmax calls it on s - max s only: every finite score is <= the max, so the argument is
/// <= 0, or -inf, or NaN (NaN and +inf scores, and -inf - -inf). Hence, unlike xsimd::exp, no
/// overflow side and one compare and select in all; and the reduction and the polynomial are
/// written as fused multiply-adds, which xsimd::exp does not get under -ffp-contract=off.
template <class Arch>
inline vfloat<Arch> exp_nonpositive(vfloat<Arch> x) {
    using vf = vfloat<Arch>;
    using vu = xsimd::batch<std::uint32_t, Arch>;
    // n = round(x log2 e), in float n and in the low bits of j (1.5 * 2^23 leaves no fraction
    // bits in j, and keeps it in [2^23, 2^24) for any |n| < 2^22). For x >= x_min, n >= -126.
    const vf shift(0x1.8p23f);
    const vf j = fmadd<Arch>(x, vf(0x1.715476p+0f), shift);
    const vf n = j - shift;
    // Cody-Waite: r = x - n ln 2, with ln 2 = hi + lo (hi = ln 2 rounded to float): |r| <= ~ln 2 / 2.
    vf r = fmadd<Arch>(n, vf(-0x1.62e430p-1f), x);
    r = fmadd<Arch>(n, vf(0x1.05c610p-29f), r);
    // exp(r) = 1 + r + r^2 P(r), P the degree-5 minimax polynomial of Cephes' expf.
    vf p = fmadd<Arch>(vf(1.9875691500e-4f), r, vf(1.3981999507e-3f));
    p = fmadd<Arch>(p, r, vf(8.3334519073e-3f));
    p = fmadd<Arch>(p, r, vf(4.1665795894e-2f));
    p = fmadd<Arch>(p, r, vf(1.6666665459e-1f));
    p = fmadd<Arch>(p, r, vf(5.0000001201e-1f));
    const vf er = fmadd<Arch>(p, r * r, r) + vf(1.0f);
    // 2^n, a normal float for n >= -126: the low 9 bits of j (n mod 2^9) shifted into the
    // exponent field, plus the bits of 1.0 (the bias), modulo 2^32. A product rather than an
    // add to the exponent bits: where exp(r) 2^-126 is subnormal it is still rounded right.
    const vu bits_of_one(0x3f800000u);
    const vf two_n = xsimd::bitwise_cast<vf>((xsimd::bitwise_cast<vu>(j) << 23) + bits_of_one);
    // x_min = -126 ln 2 rounded down: below it exp(x) < FLT_MIN, and n (or its bits, for -inf)
    // would leave the normal range, so 0. NaN compares false and stays NaN through r.
    const vf x_min(-0x1.5d58a0p+6f);
    return xsimd::select(x < x_min, vf(0.0f), er * two_n);
}

/// Softmax of M rows of n floats, ld apart, in place: the rows side by side, phase by phase, so
/// that their chains of dependent steps overlap. Each row's steps are its own, so its values are
/// those of the row alone (softmax, M = 1).
template <class Arch, std::size_t M>
void softmax_rows(float* s, std::size_t ld, std::size_t n) {
    using vf = vfloat<Arch>;
    constexpr std::size_t lanes = vf::size;
    constexpr float neg_inf = -std::numeric_limits<float>::infinity();
    const std::size_t full = n - n % lanes;
    const bool partial = full < n;
    vf tail[M], vmax[M], vm[M], etail[M], vsum[M], scale[M];
#pragma GCC unroll 16
    for (std::size_t m = 0; m < M; ++m) {
        tail[m] = partial ? load_tail<Arch>(s + m * ld + full, n - full, neg_inf) : vf(neg_inf);
        vmax[m] = tail[m];
    }
    for (std::size_t i = 0; i < full; i += lanes)
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) vmax[m] = xsimd::max(vmax[m], vf::load_unaligned(s + m * ld + i));
#pragma GCC unroll 16
    for (std::size_t m = 0; m < M; ++m) {
        vm[m] = all_lanes_max<Arch>(vmax[m]);
        etail[m] = partial ? exp_nonpositive<Arch>(tail[m] - vm[m]) : vf(0.0f);
        vsum[m] = etail[m];
    }
    for (std::size_t i = 0; i < full; i += lanes) {
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) {
            const vf e = exp_nonpositive<Arch>(vf::load_unaligned(s + m * ld + i) - vm[m]);
            e.store_unaligned(s + m * ld + i);
            vsum[m] += e;
        }
    }
    // One division, then products: within 2 ulp of the quotient, as the oracle budgets.
#pragma GCC unroll 16
    for (std::size_t m = 0; m < M; ++m) scale[m] = vf(1.0f / xsimd::hadd(vsum[m]));
    for (std::size_t i = 0; i < full; i += lanes)
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m)
            (vf::load_unaligned(s + m * ld + i) * scale[m]).store_unaligned(s + m * ld + i);
    if (partial)
#pragma GCC unroll 16
        for (std::size_t m = 0; m < M; ++m) store_tail<Arch>(s + m * ld + full, n - full, etail[m] * scale[m]);
}

/// Softmax of one row of n floats, in place.
template <class Arch>
void softmax(float* s, std::size_t n) {
    softmax_rows<Arch, 1>(s, n, n);
}

} // namespace
} // namespace myattn::detail
