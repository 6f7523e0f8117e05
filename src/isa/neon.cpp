// The neon kernels: kernels/ instantiated for xsimd::neon64 (AArch64 Advanced SIMD, part of
// the baseline there), at float32, at bf16 (the float kernels over bf16 weights:
// kernels/bf16.hpp) and at int8 without the dot product extension (neondot.cpp has the kernels
// with it). Exports nothing but the accessors.
#include <arm_neon.h>

#include "kernels/forward.hpp"

namespace myattn::detail {
namespace {

using Arch = xsimd::neon64;

/// The int8 step without the dot product: bytes widened to 16 bits, multiplied into 32-bit
/// products (255 x 127 fits), then pairs added twice, so that each lane gets its four products.
struct WideningDot {
    static constexpr int levels = 255, offset = 0;
    static constexpr std::string_view variant = "neon";
    static vint<Arch> dot(vint<Arch> acc, vint<Arch> a, vint<Arch> w) {
        const int16x8_t x = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(vreinterpretq_u8_s32(a))));
        const int8x16_t wb = vreinterpretq_s8_s32(w);
        const int16x8_t w01 = vmovl_s8(vget_low_s8(wb)), w23 = vmovl_high_s8(wb);
        const int32x4_t p0 = vmull_s16(vget_low_s16(w01), vget_low_s16(x));
        const int32x4_t p1 = vmull_high_s16(w01, x);
        const int32x4_t p2 = vmull_s16(vget_low_s16(w23), vget_low_s16(x));
        const int32x4_t p3 = vmull_high_s16(w23, x);
        return vaddq_s32(acc, vpaddq_s32(vpaddq_s32(p0, p1), vpaddq_s32(p2, p3)));
    }
};

} // namespace

const KernelTable& neon_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::neon>();
    return table;
}

const KernelTable& neon_int8_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::neon, Int8Linear<Arch, WideningDot>>();
    return table;
}

const KernelTable& neon_bf16_kernels() {
    static constexpr KernelTable table = make_table<xsimd::neon64, Isa::neon, F32Linear<xsimd::neon64, Bf16Weights>>();
    return table;
}

} // namespace myattn::detail
