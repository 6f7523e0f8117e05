// The avx512 bf16 kernels on the native bf16 dot product (AVX512-BF16): kernels/ instantiated for
// xsimd::avx512f with vdpbf16ps as the Linear's step and vcvtne2ps2bf16 rounding the
// activations. Built with the avx512 flags and -mavx512bf16; exports nothing but
// avx512bf16_bf16_kernels().
#include "kernels/bf16_dot_linear.hpp"
#include "kernels/forward.hpp"

namespace myattn::detail {
namespace {

using Arch = xsimd::avx512f;

struct Avx512Bf16Dot {
    static constexpr std::string_view variant = "avx512bf16";

    static vfloat<Arch> dot(vfloat<Arch> acc, vword<Arch> a, vword<Arch> w) {
        return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(__m512i(a)), reinterpret_cast<__m512bh>(__m512i(w)));
    }

    /// 32 floats at a time into 16 words: vcvtne2ps2bf16 puts its second operand's bf16s in the
    /// low half, in order, so consecutive inputs land in consecutive halves. The tail goes
    /// through the same instruction, zero-padded, so that every input rounds alike.
    static void round_pairs(const float* x, std::size_t n, std::uint32_t* words) {
        std::size_t i = 0;
        for (; i + 32 <= n; i += 32)
            _mm512_storeu_si512(words + i / 2, convert(_mm512_loadu_ps(x + i), _mm512_loadu_ps(x + i + 16)));
        if (i < n) {
            alignas(64) float tail[32] = {};
            alignas(64) std::uint32_t out[16];
            for (std::size_t k = i; k < n; ++k) tail[k - i] = x[k];
            _mm512_store_si512(out, convert(_mm512_load_ps(tail), _mm512_load_ps(tail + 16)));
            for (std::size_t k = 0; k < bf16_pairs(n - i); ++k) words[i / 2 + k] = out[k];
        }
    }

  private:
    static __m512i convert(__m512 low, __m512 high) {
        return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(high, low));
    }
};

} // namespace

const KernelTable& avx512bf16_bf16_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx512, Bf16DotLinear<Arch, Avx512Bf16Dot>>();
    return table;
}

} // namespace myattn::detail
