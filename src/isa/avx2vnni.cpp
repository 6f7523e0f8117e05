// The avx2 int8 kernels with AVX-VNNI: kernels/ instantiated for AVX2 with the VEX-encoded
// vpdpbusd on ymm as the int8 step (8-bit activations). Built with -mavx2 -mfma -mavxvnni;
// exports nothing but avx2vnni_int8_kernels().
#include "kernels/forward.hpp"

namespace myattn::detail {
namespace {

using Arch = xsimd::fma3<xsimd::avx2>;

/// vpdpbusd: each int32 lane += four u8 x s8 products, no intermediate saturation.
struct VnniDot {
    static constexpr int levels = 255, offset = 0;
    static constexpr std::string_view variant = "avx2vnni";
    static vint<Arch> dot(vint<Arch> acc, vint<Arch> a, vint<Arch> w) { return _mm256_dpbusd_avx_epi32(acc, a, w); }
};

} // namespace

const KernelTable& avx2vnni_int8_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx2, Int8Linear<Arch, VnniDot>>();
    return table;
}

} // namespace myattn::detail
