// The neon int8 kernels with the Armv8.2 dot product: kernels/ instantiated for xsimd::neon64
// with sdot as the int8 step (8-bit activations). Built with +dotprod; exports nothing but
// neondot_int8_kernels().
#include <arm_neon.h>

#include "kernels/forward.hpp"

namespace myattn::detail {
namespace {

using Arch = xsimd::neon64;

/// sdot multiplies signed bytes on both sides: the activations enter as q - 128 (their top bit
/// flipped), and the zero point moves by the same offset.
struct SdotDot {
    static constexpr int levels = 255, offset = 128;
    static constexpr std::string_view variant = "neondot";
    static vint<Arch> dot(vint<Arch> acc, vint<Arch> a, vint<Arch> w) {
        const int8x16_t centred = vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_s32(a), vdupq_n_u8(0x80)));
        return vdotq_s32(acc, vreinterpretq_s8_s32(w), centred);
    }
};

} // namespace

const KernelTable& neondot_int8_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::neon, Int8Linear<Arch, SdotDot>>();
    return table;
}

} // namespace myattn::detail
