// The avx512 int8 kernels with AVX512-VNNI: kernels/ instantiated for xsimd::avx512f with
// vpdpbusd as the int8 step (8-bit activations). Built with the avx512 flags and -mavx512vnni;
// exports nothing but avx512vnni_int8_kernels().
#include "isa/avx512vnni_dot.hpp"

namespace myattn::detail {

const KernelTable& avx512vnni_int8_kernels() {
    static constexpr KernelTable table = make_table<xsimd::avx512f, Isa::avx512, Int8Linear<xsimd::avx512f, VnniDot>>();
    return table;
}

} // namespace myattn::detail
