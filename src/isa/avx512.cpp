// The avx512 kernels: kernels/ instantiated for xsimd::avx512f, all the float kernels need (the
// registry row still requires BW, DQ and VL, which the build flags enable). Exports nothing but
// avx512_kernels().
#include "kernels/forward.hpp"

namespace myattn::detail {

const KernelTable& avx512_kernels() {
    static constexpr KernelTable table = make_table<xsimd::avx512f, Isa::avx512>();
    return table;
}

} // namespace myattn::detail
