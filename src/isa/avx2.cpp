// The avx2 kernels: kernels/ instantiated for AVX2 with FMA3 (xsimd's plain `avx2` arch would
// multiply then add), at float32, at int8 without AVX-VNNI (avx2vnni.cpp has the kernels with
// it) and at bf16 (the float kernels over bf16 weights: kernels/bf16.hpp). Built with -mavx2
// -mfma only; exports nothing but the accessors.
#include "kernels/forward.hpp"

namespace myattn::detail {
namespace {

using Arch = xsimd::fma3<xsimd::avx2>;

/// The int8 step without VNNI: vpmaddubsw sums two u8 x s8 products into int16, which
/// saturates unless the activations have 7 bits (kernels/quantize.hpp); vpmaddwd by ones adds
/// the pairs into the int32 lanes.
struct MaddubsDot {
    static constexpr int levels = 127, offset = 0;
    static constexpr std::string_view variant = "avx2";
    static vint<Arch> dot(vint<Arch> acc, vint<Arch> a, vint<Arch> w) {
        const __m256i pairs = _mm256_maddubs_epi16(a, w);
        return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
    }
};

} // namespace

const KernelTable& avx2_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx2>();
    return table;
}

const KernelTable& avx2_int8_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx2, Int8Linear<Arch, MaddubsDot>>();
    return table;
}

const KernelTable& avx2_bf16_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx2, F32Linear<Arch, Bf16Weights>>();
    return table;
}

} // namespace myattn::detail
