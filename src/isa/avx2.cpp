// The avx2 kernels: kernels/ instantiated for AVX2 with FMA3 (xsimd's plain `avx2` arch would
// multiply then add). Built with -mavx2 -mfma only; exports nothing but avx2_kernels().
#include "kernels/forward.hpp"

namespace myattn::detail {

const KernelTable& avx2_kernels() {
    static constexpr KernelTable table = make_table<xsimd::fma3<xsimd::avx2>, Isa::avx2>();
    return table;
}

} // namespace myattn::detail
