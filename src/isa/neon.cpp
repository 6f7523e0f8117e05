// The neon kernels: kernels/ instantiated for xsimd::neon64 (AArch64 Advanced SIMD, part of
// the baseline there). Exports nothing but neon_kernels().
#include "kernels/forward.hpp"

namespace myattn::detail {

const KernelTable& neon_kernels() {
    static constexpr KernelTable table = make_table<xsimd::neon64, Isa::neon>();
    return table;
}

} // namespace myattn::detail
