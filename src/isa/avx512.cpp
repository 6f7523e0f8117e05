// The avx512 kernels: kernels/ instantiated for xsimd::avx512f, all the float kernels need (the
// registry row still requires BW, DQ and VL, which the build flags enable), at float32, at
// int8 without VNNI (avx512vnni.cpp has the kernels with it) and at bf16 (the float kernels over
// bf16 weights: kernels/bf16.hpp). Exports nothing but the accessors.
#include "kernels/forward.hpp"

namespace myattn::detail {
namespace {

using Arch = xsimd::avx512f;

/// The int8 step without VNNI: vpmaddubsw sums two u8 x s8 products into int16, which
/// saturates unless the activations have 7 bits (kernels/quantize.hpp); vpmaddwd by ones adds
/// the pairs into the int32 lanes.
struct MaddubsDot {
    static constexpr int levels = 127, offset = 0;
    static constexpr std::string_view variant = "avx512";
    static vint<Arch> dot(vint<Arch> acc, vint<Arch> a, vint<Arch> w) {
        const __m512i pairs = _mm512_maddubs_epi16(a, w);
        return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
    }
};

} // namespace

const KernelTable& avx512_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx512>();
    return table;
}

const KernelTable& avx512_int8_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx512, Int8Linear<Arch, MaddubsDot>>();
    return table;
}

const KernelTable& avx512_bf16_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx512, F32Linear<Arch, Bf16Weights>>();
    return table;
}

} // namespace myattn::detail
