// The element types of V (float, or bfloat16 for the bf16 precision), read as floats.
//
// In an anonymous namespace: the reference (baseline objects) and the kernels (per-ISA objects)
// both include it, and each object keeps its own copy (docs/design.md, "ODR and per-ISA objects").
#pragma once

#include "myattn/bfloat16.hpp"

namespace myattn::detail {
namespace {

inline float value_of(float x) { return x; }
inline float value_of(bfloat16 x) { return to_float(x); }

} // namespace
} // namespace myattn::detail
