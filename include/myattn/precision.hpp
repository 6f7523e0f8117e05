// Arithmetic precision of a MyAttn, chosen at construction. Inputs and outputs are float32
// whatever the precision; it says how the two Linears compute (the softmax is always float32).
//
// - f32: float32 throughout (the default).
// - int8: both Linears dynamically quantized: int8 weights (one scale per output feature,
//   quantized once at construction), activations quantized per sample at each call, int32 sums.
// - bf16: weights stored as bfloat16; computed in float32 on them, or, on CPUs whose bf16 dot
//   product is faster than that (AVX512-BF16 without AMX), on the Linears' inputs rounded to
//   bf16 as well (kernel_id() says which).
//
// A precision runs on every ISA: where an ISA lacks the instructions that make it fast (for
// int8, VNNI or the Arm dot product), its own fallback kernels run it, never another ISA's.
// docs/accuracy.md states what each precision costs in accuracy.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "myattn/export.hpp"
#include "myattn/isa.hpp"

namespace myattn {

enum class Precision { f32, int8, bf16 };

/// "f32", "int8", "bf16".
[[nodiscard]] MYATTN_EXPORT std::string_view precision_name(Precision p) noexcept;
/// The inverse of precision_name; throws ArgumentError, listing the valid names, for any other.
[[nodiscard]] MYATTN_EXPORT Precision parse_precision(std::string_view name);
/// Every precision, f32 first.
[[nodiscard]] MYATTN_EXPORT std::span<const Precision> precisions() noexcept;

/// The kernel ID a MyAttn of `isa` and `p` would run on this CPU (e.g. "i8-linear-16x32-avx512vnni"),
/// or nullopt when this build has no such kernels this CPU runs.
[[nodiscard]] MYATTN_EXPORT std::optional<std::string_view> kernel_id(Isa isa, Precision p) noexcept;

} // namespace myattn
