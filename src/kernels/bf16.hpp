// bfloat16 in the kernels: conversions and the Linear's weight formats.
//
// A bfloat16 is the top half of a float, so widening is a shift and needs no rounding; the
// kernels convert on load and run the float32 chains of fused multiply-adds, so that a bf16
// result is bitwise the float32 result of the bf16-rounded operands. Narrowing (at packing time)
// rounds to nearest even and keeps NaN a NaN, as myattn::to_bfloat16 does.
//
// The Linear's packed panels hold, for each input, a panel row of weights: F32Weights stores
// them as floats; Bf16Weights pairs them, one 32-bit word per lane holding the bf16 of output
// vector 2v in its low half and of vector 2v + 1 in its high half. Widening a pair is then a
// shift and a mask, lane by lane, with no shuffle across lanes (which the Linear, issuing two
// loads per input beside its FMAs, would pay for on the shuffle port). The biases stay float32
// in both: rounding a bias of 500 to bf16 moves every score by up to 1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/simd.hpp"
#include "myattn/bfloat16.hpp"
#include "myattn/precision.hpp"
#include "value_types.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif
#if defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace myattn::detail {
namespace {

template <class Arch>
using vword = xsimd::batch<std::uint32_t, Arch>;

/// x rounded to bfloat16, to nearest even (NaN kept, made quiet), as the top half of each word.
template <class Arch>
inline vword<Arch> round_to_bf16(vfloat<Arch> x) {
    using vint = xsimd::batch<std::int32_t, Arch>;
    const auto u = xsimd::bitwise_cast<vint>(x);
    // Adding 0x7fff plus the kept part's lowest bit rounds half to even; a carry out of the
    // mantissa bumps the exponent, up to infinity. Words wrap (SIMD adds), as unsigned would.
    const vint rounded = u + vint(0x7fff) + ((u >> 16) & vint(1));
    const auto nan = (u & vint(0x7fffffff)) > vint(0x7f800000);
    return xsimd::bitwise_cast<vword<Arch>>(xsimd::select(nan, u | vint(0x00400000), rounded) & vint(-0x10000));
}

/// The floats of the bf16s in the low halves of u's words.
template <class Arch>
inline vfloat<Arch> low_bf16(vword<Arch> u) {
    return xsimd::bitwise_cast<vfloat<Arch>>(u << 16);
}

/// The floats of the bf16s in the high halves of u's words.
template <class Arch>
inline vfloat<Arch> high_bf16(vword<Arch> u) {
    return xsimd::bitwise_cast<vfloat<Arch>>(u & vword<Arch>(0xffff0000u));
}

/// The floats of `lanes` consecutive bf16s at p (xsimd 8.1 has no widening load: one
/// instruction each on AVX2, AVX-512 and NEON).
template <class Arch>
inline vfloat<Arch> load_bf16(const bfloat16* p) {
    if constexpr (false) {
    }
#if defined(__AVX512F__)
    else if constexpr (std::is_same_v<Arch, xsimd::avx512f>)
        return _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
#endif
#if defined(__AVX2__)
    else if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>)
        return _mm256_castsi256_ps(
            _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
#endif
#if defined(__ARM_NEON)
    else if constexpr (std::is_same_v<Arch, xsimd::neon64>)
        return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(reinterpret_cast<const std::uint16_t*>(p)), 16));
#endif
    else
        static_assert(!std::is_same_v<Arch, Arch>, "load_bf16: no widening load for this arch");
}

/// The floats of the n < lanes bf16s at p, the other lanes 0: reads nothing past p + n.
template <class Arch>
inline vfloat<Arch> load_bf16_tail(const bfloat16* p, std::size_t n) {
    float buf[vfloat<Arch>::size];
    for (std::size_t i = 0; i < vfloat<Arch>::size; ++i) buf[i] = i < n ? to_float(p[i]) : 0.0f;
    return vfloat<Arch>::load_unaligned(buf);
}

/// The vector of floats at p, or of the floats of the bf16s at p.
template <class Arch>
inline vfloat<Arch> load_values(const float* p) {
    return vfloat<Arch>::load_unaligned(p);
}
template <class Arch>
inline vfloat<Arch> load_values(const bfloat16* p) {
    return load_bf16<Arch>(p);
}

/// Weights stored as floats: a panel row is its `width` floats.
struct F32Weights {
    static constexpr Precision precision = Precision::f32;
    /// 32-bit words of a panel row of `width` floats (whole vectors of `lanes`).
    static constexpr std::size_t row_words(std::size_t width, std::size_t /*lanes*/) { return width; }

    /// The PV vectors of the panel row at w.
    template <class Arch, std::size_t PV>
    static void load_row(const float* w, vfloat<Arch>* wv) {
        constexpr std::size_t lanes = vfloat<Arch>::size;
#pragma GCC unroll 16
        for (std::size_t v = 0; v < PV; ++v) wv[v] = vfloat<Arch>::load_unaligned(w + v * lanes);
    }

    /// The panel row of the `width` floats at x.
    template <class Arch>
    static void pack_row(const float* x, std::size_t width, float* row) {
        for (std::size_t c = 0; c < width; ++c) row[c] = x[c];
    }
};

/// Weights stored as bf16, in pairs of vectors (see the top of this file); an odd last vector
/// takes the low halves of its words alone.
struct Bf16Weights {
    static constexpr Precision precision = Precision::bf16;
    static constexpr std::size_t row_words(std::size_t width, std::size_t lanes) {
        return (width / lanes + 1) / 2 * lanes;
    }

    template <class Arch, std::size_t PV>
    static void load_row(const float* w, vfloat<Arch>* wv) {
        constexpr std::size_t lanes = vfloat<Arch>::size;
        const auto* words = reinterpret_cast<const std::uint32_t*>(w);
#pragma GCC unroll 16
        for (std::size_t v = 0; v < PV; v += 2) {
            const auto u = vword<Arch>::load_unaligned(words + v / 2 * lanes);
            wv[v] = low_bf16<Arch>(u);
            if (v + 1 < PV) wv[v + 1] = high_bf16<Arch>(u);
        }
    }

    template <class Arch>
    static void pack_row(const float* x, std::size_t width, float* row) {
        constexpr std::size_t lanes = vfloat<Arch>::size;
        auto* words = reinterpret_cast<std::uint32_t*>(row);
        for (std::size_t v = 0; v < width / lanes; v += 2) {
            const vword<Arch> low = round_to_bf16<Arch>(vfloat<Arch>::load_unaligned(x + v * lanes)) >> 16;
            const vword<Arch> high = v + 1 < width / lanes
                                         ? round_to_bf16<Arch>(vfloat<Arch>::load_unaligned(x + (v + 1) * lanes))
                                         : vword<Arch>(0u);
            (low | high).store_unaligned(words + v / 2 * lanes);
        }
    }
};

} // namespace
} // namespace myattn::detail
