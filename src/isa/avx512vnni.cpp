// The avx512 int8 kernels with AVX512-VNNI: kernels/ instantiated for xsimd::avx512f with
// vpdpbusd as the int8 step (8-bit activations). Built with the avx512 flags and -mavx512vnni;
// exports nothing but avx512vnni_int8_kernels().
#include "kernels/forward.hpp"

namespace myattn::detail {
namespace {

using Arch = xsimd::avx512f;

/// vpdpbusd: each int32 lane += four u8 x s8 products, no intermediate saturation.
struct VnniDot {
    static constexpr int levels = 255, offset = 0;
    static constexpr std::string_view variant = "avx512vnni";
    static vint<Arch> dot(vint<Arch> acc, vint<Arch> a, vint<Arch> w) { return _mm512_dpbusd_epi32(acc, a, w); }
};

} // namespace

const KernelTable& avx512vnni_int8_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx512, Int8Linear<Arch, VnniDot>>();
    return table;
}

} // namespace myattn::detail
