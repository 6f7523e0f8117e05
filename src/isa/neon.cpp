// The neon kernels: kernels/ instantiated for xsimd::neon64 (AArch64 Advanced SIMD, part of
// the baseline there), at float32 and at bf16 (the float kernels over bf16 weights:
// kernels/bf16.hpp). Exports nothing but the accessors.
#include "kernels/forward.hpp"

namespace myattn::detail {

const KernelTable& neon_kernels() {
    static constexpr KernelTable table = make_table<xsimd::neon64, Isa::neon>();
    return table;
}

const KernelTable& neon_bf16_kernels() {
    static constexpr KernelTable table = make_table<xsimd::neon64, Isa::neon, F32Linear<xsimd::neon64, Bf16Weights>>();
    return table;
}

} // namespace myattn::detail
