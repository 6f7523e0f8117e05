// The few vector helpers the kernels share, over xsimd 8.1.
//
// Included only by the per-ISA translation units (src/isa/<isa>.cpp), never by baseline code.
// Everything in kernels/ lives in an anonymous namespace: each ISA object gets its own private
// copy, so the linker can never substitute one ISA's code for another's (the ODR trap of
// docs/platforms.md). For the same reason the kernels call no std:: function
// templates (std::min, std::copy_n...), which would be weak symbols shared between objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <xsimd/xsimd.hpp>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace myattn::detail {
namespace {

template <class Arch>
using vfloat = xsimd::batch<float, Arch>;

/// x * y + z with a single rounding. Every kernel accumulates through this, so a sum is the
/// same chain of fused operations in every lane, in every tile shape and in the scalar tails.
template <class Arch>
inline vfloat<Arch> fmadd(vfloat<Arch> x, vfloat<Arch> y, vfloat<Arch> z) {
#if defined(__AVX512F__)
    // xsimd 8.1 has no AVX-512 fma: its generic fallback is a multiply then an add, fused only
    // if the compiler contracts it (GCC does at -O2, but not under -fsanitize=undefined).
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) return _mm512_fmadd_ps(x, y, z);
#endif
    return xsimd::fma(x, y, z);
}

template <unsigned Step>
struct RotateLanes {
    static constexpr unsigned get(unsigned i, unsigned n) { return (i + Step) % n; }
};

/// Every lane = the largest lane of v, in log2(lanes) rotate-and-max steps (lanes disagree only
/// where v holds a NaN).
template <class Arch, unsigned Step = vfloat<Arch>::size / 2>
[[gnu::always_inline]] inline vfloat<Arch> all_lanes_max(vfloat<Arch> v) {
    using index = xsimd::batch<std::uint32_t, Arch>;
    v = xsimd::max(v, xsimd::swizzle(v, xsimd::make_batch_constant<index, RotateLanes<Step>>()));
    if constexpr (Step > 1)
        return all_lanes_max<Arch, Step / 2>(v);
    else
        return v;
}

/// The `n` floats at p (n < lanes), the other lanes `fill`: reads nothing past p + n. Inlined
/// (as store_tail): a call in a tile's epilogue would spill every live accumulator around it.
template <class Arch>
[[gnu::always_inline]] inline vfloat<Arch> load_tail(const float* p, std::size_t n, float fill) {
#if defined(__AVX512F__)
    // A masked load: the lanes past n neither read memory nor fault. The buffer below would be
    // written a float at a time and read as one vector, which no store forwards to a load.
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>)
        return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), static_cast<__mmask16>((1u << n) - 1), p);
#endif
    float buf[vfloat<Arch>::size];
    for (std::size_t i = 0; i < vfloat<Arch>::size; ++i) buf[i] = i < n ? p[i] : fill;
    return vfloat<Arch>::load_unaligned(buf);
}

/// Stores the first `n` lanes of v at p (n < lanes): writes nothing past p + n.
/// (Through a buffer even on AVX-512: a masked store measured slower on Zen 5, docs/tuning.md.)
template <class Arch>
[[gnu::always_inline]] inline void store_tail(float* p, std::size_t n, vfloat<Arch> v) {
    float buf[vfloat<Arch>::size];
    v.store_unaligned(buf);
    for (std::size_t i = 0; i < n; ++i) p[i] = buf[i];
}

/// Loads the vector at p of which only `n` floats exist (any n; lanes past n read as 0).
template <class Arch>
inline vfloat<Arch> load_upto(const float* p, std::size_t n) {
    return n >= vfloat<Arch>::size ? vfloat<Arch>::load_unaligned(p) : load_tail<Arch>(p, n, 0.0f);
}

/// Stores the vector v at p, of which only `n` floats exist (any n).
template <class Arch>
inline void store_upto(float* p, std::size_t n, vfloat<Arch> v) {
    if (n >= vfloat<Arch>::size)
        v.store_unaligned(p);
    else
        store_tail<Arch>(p, n, v);
}

/// Stores the lanes of v, each clamped to [0, top], as bytes at p (xsimd 8.1 has no narrowing).
/// Where the narrowing saturates, it does part of the clamp itself.
template <class Arch, int top>
inline void store_clamped_bytes(std::uint8_t* p, xsimd::batch<std::int32_t, Arch> v) {
    static_assert(top > 0 && top <= 255, "a byte");
    using I = xsimd::batch<std::int32_t, Arch>;
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) {
        // From 0 up, vpmovusdb saturates to 255 and vpmovsdb to 127: the two levels of the scheme.
        static_assert(top == 255 || top == 127, "kernels/quantize.hpp: 8-bit or 7-bit activations");
        v = xsimd::max(v, I(0));
        const __m128i bytes = top == 255 ? _mm512_cvtusepi32_epi8(v) : _mm512_cvtsepi32_epi8(v);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), bytes);
        return;
    }
#endif
#if defined(__AVX2__)
    if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>) {
        // Both packs saturate a signed lane to unsigned: to [0, 65535], then to [0, 255].
        if constexpr (top < 255) v = xsimd::min(v, I(top));
        const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(words, words));
        return;
    }
#endif
    v = xsimd::min(xsimd::max(v, I(0)), I(top));
    alignas(64) std::int32_t lanes[vfloat<Arch>::size];
    v.store_aligned(lanes);
    for (std::size_t i = 0; i < vfloat<Arch>::size; ++i) p[i] = static_cast<std::uint8_t>(lanes[i]);
}

/// Stores the lanes of v[0], ..., v[3], in that order, each clamped to [0, top], as bytes at p;
/// every lane must be at most 32767 (quantize_bytes_simd's are at most about 2 x top). Where
/// the CPU packs two vectors at once, four take three packs and a permute of the dwords back
/// into order, against two narrowing uops and a store per vector one at a time.
template <class Arch, int top>
inline void store_clamped_bytes4(std::uint8_t* p, const xsimd::batch<std::int32_t, Arch> (&v)[4]) {
    static_assert(top > 0 && top <= 255, "a byte");
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<Arch, xsimd::avx512f>) {
        static_assert(top == 255 || top == 127, "kernels/quantize.hpp: 8-bit or 7-bit activations");
        // Signed dwords to words saturate to [0, 65535]; words below 32768 then to bytes in
        // [0, 255] (unsigned) or [0, 127] (signed): the clamp. Each 128-bit lane k then holds
        // v[j]'s lanes 4k..4k+3 in its dword j.
        const __m512i w01 = _mm512_packus_epi32(v[0], v[1]), w23 = _mm512_packus_epi32(v[2], v[3]);
        const __m512i bytes = top == 255 ? _mm512_packus_epi16(w01, w23) : _mm512_packs_epi16(w01, w23);
        const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
        _mm512_storeu_si512(p, _mm512_permutexvar_epi32(order, bytes));
        return;
    }
#endif
#if defined(__AVX2__)
    if constexpr (std::is_same_v<Arch, xsimd::fma3<xsimd::avx2>>) {
        // As on AVX-512, with two 128-bit lanes: lane k holds v[j]'s lanes 4k..4k+3 in dword j.
        const __m256i w01 = _mm256_packus_epi32(v[0], v[1]), w23 = _mm256_packus_epi32(v[2], v[3]);
        const __m256i bytes = top == 255 ? _mm256_packus_epi16(w01, w23) : _mm256_packs_epi16(w01, w23);
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_permutevar8x32_epi32(bytes, order));
        return;
    }
#endif
    for (std::size_t j = 0; j < 4; ++j) store_clamped_bytes<Arch, top>(p + j * vfloat<Arch>::size, v[j]);
}

} // namespace
} // namespace myattn::detail
