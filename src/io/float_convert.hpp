// Conversions between float and the other floating-point formats safetensors stores: IEEE binary16
// (F16), bfloat16 (BF16) and binary64 (F64). Narrowing rounds to nearest, ties to even, handles
// subnormals, saturates to infinity like the hardware does, and keeps NaN a NaN (quiet, same sign,
// top payload bits): a plain truncation would turn some signalling NaNs into infinities.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "myattn/bfloat16.hpp"

namespace myattn::safetensors::detail {

[[nodiscard]] inline float half_to_float(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13)); // inf, NaN
    if (exponent == 0) {
        // Zero or subnormal, m * 2^-24: exact in float.
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
        return sign ? -magnitude : magnitude;
    }
    return std::bit_cast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

/// Drops the low `shift` bits of `value`, rounding to nearest, ties to even. A carry out of the
/// mantissa correctly bumps the exponent field above it.
[[nodiscard]] inline std::uint32_t shift_right_round_even(std::uint32_t value, unsigned shift) noexcept {
    const std::uint32_t kept = value >> shift;
    const std::uint32_t rest = value & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
}

[[nodiscard]] inline std::uint16_t float_to_half(float f) noexcept {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
    const std::uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu); // NaN, made quiet
    if (magnitude >= 0x477ff000u) return sign | 0x7c00u; // >= 65520, halfway above 65504: rounds to inf
    if (magnitude >= 0x38800000u) {                      // >= 2^-14: a normal half
        const std::uint32_t rebiased = magnitude - ((127u - 15u) << 23);
        return static_cast<std::uint16_t>(sign | shift_right_round_even(rebiased, 13));
    }
    if (magnitude <= 0x33000000u) return sign; // <= 2^-25, half the smallest subnormal: ties to zero
    // Subnormal half: count units of 2^-24. The float is m * 2^(e-150) with the implicit bit in m.
    const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    const unsigned shift = 126u - (magnitude >> 23); // 150 - 24 - e, in 14..24 here
    return static_cast<std::uint16_t>(sign | shift_right_round_even(significand, shift));
}

[[nodiscard]] inline float bf16_to_float(std::uint16_t b) noexcept { return to_float(bfloat16{b}); }

[[nodiscard]] inline std::uint16_t float_to_bf16(float f) noexcept { return to_bfloat16(f).bits; }

[[nodiscard]] inline double float_to_double(float f) noexcept { return f; }

[[nodiscard]] inline float double_to_float(double d) noexcept {
    // Finite values beyond float's range are undefined behaviour for a C++ conversion, so
    // saturate here: from FLT_MAX + half an ulp (a tie, and FLT_MAX is odd) upward it is inf.
    constexpr double overflow = 0x1.ffffffp127;
    if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) {
        const float saturated =
            std::fabs(d) >= overflow ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::max();
        return std::signbit(d) ? -saturated : saturated;
    }
    return static_cast<float>(d); // rounds to nearest even, subnormals included
}

} // namespace myattn::safetensors::detail
