// Softmax of one row, in place: exp(s - max s) / sum, three vector passes.
//
// A row that is not a whole number of vectors ends in one partial vector, loaded through a
// buffer padded with -inf and kept in a register across the passes: nothing past the row is
// read or written. The padding is harmless: it never raises the max, and its exp is 0, except
// when the max is itself -inf or NaN, rows PyTorch turns into NaN anyway.
//
// Non-finite scores follow PyTorch without a special case: a NaN, or a +inf (inf - inf), or a
// row of -inf (-inf - -inf) gives a NaN term, hence a NaN sum, hence a NaN row. That holds even
// where the vector max drops a NaN or leaves its lanes unequal, since exp(NaN - m) is NaN for
// any m.
#pragma once

#include <cstddef>
#include <limits>

#include "kernels/simd.hpp"

namespace myattn::detail {
namespace {

template <class Arch>
void softmax(float* s, std::size_t n) {
    using vf = vfloat<Arch>;
    constexpr std::size_t lanes = vf::size;
    constexpr float neg_inf = -std::numeric_limits<float>::infinity();
    const std::size_t full = n - n % lanes;
    const vf tail = full < n ? load_tail<Arch>(s + full, n - full, neg_inf) : vf(neg_inf);

    vf vmax = tail;
    for (std::size_t i = 0; i < full; i += lanes) vmax = xsimd::max(vmax, vf::load_unaligned(s + i));
    const vf vm = all_lanes_max<Arch>(vmax);
    const vf etail = xsimd::exp(tail - vm);
    vf vsum = etail;
    for (std::size_t i = 0; i < full; i += lanes) {
        const vf e = xsimd::exp(vf::load_unaligned(s + i) - vm);
        e.store_unaligned(s + i);
        vsum += e;
    }
    // One division, then products: within 2 ulp of the quotient, as the oracle budgets.
    const vf scale(1.0f / xsimd::hadd(vsum));
    for (std::size_t i = 0; i < full; i += lanes) (vf::load_unaligned(s + i) * scale).store_unaligned(s + i);
    if (full < n) store_tail<Arch>(s + full, n - full, etail * scale);
}

} // namespace
} // namespace myattn::detail
