// bfloat16: the top half of a float32 (sign, 8 exponent bits, 7 mantissa bits). A MyAttn of
// precision bf16 stores its weights so, and takes V so when the caller has it (half the bytes
// that the memory-bound shapes stream); arithmetic stays float32.
#pragma once

#include <bit>
#include <cstdint>

namespace myattn {

/// A bfloat16 value, as its 16 bits (PyTorch's torch.bfloat16 layout).
struct bfloat16 {
    std::uint16_t bits = 0;
    friend constexpr bool operator==(bfloat16, bfloat16) = default;
};

/// The bfloat16 nearest to x, ties to even; infinities stay, finite values beyond the largest
/// bfloat16 round to infinity as the hardware does, and a NaN stays a NaN (quiet, same sign,
/// top payload bits: truncating some signalling NaNs would make infinities).
[[nodiscard]] constexpr bfloat16 to_bfloat16(float x) noexcept {
    const auto u = std::bit_cast<std::uint32_t>(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((u >> 16) | 0x0040u)};
    // The bit pattern rounds as the value does: a carry out of the mantissa bumps the exponent,
    // up to infinity. Adding 0x7fff plus the kept part's lowest bit rounds half to even.
    return {static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}

/// The float32 of the same value (exact).
[[nodiscard]] constexpr float to_float(bfloat16 x) noexcept {
    return std::bit_cast<float>(static_cast<std::uint32_t>(x.bits) << 16);
}

} // namespace myattn
