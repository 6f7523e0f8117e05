// Whether an AMD core runs 512-bit operations on full-width units (Zen 5's desktop and server
// cores) rather than in two 256-bit halves (Zen 4, Zen 5's mobile cores): what paces the
// fused kernels' requests (fma_lanes_per_cycle, src/dispatch.hpp).
#pragma once

namespace myattn::detail {

/// From CPUID 0x8000001A's EAX (0 where the leaf is absent) and leaf 1's display family and
/// model. The leaf's width bits answer where any is set: FP128 (bit 0), FP256 (bit 2, Zen 4),
/// FP512 (bit 3, full width). A hypervisor may clear them all (a Zen 5 EPYC guest read EAX 0x2,
/// MOVU alone, where another guest of the same CPU read 0xA); then the model answers: family
/// 0x1A models 0x00-0x1F (EPYC 9005, Zen 5 and Zen 5c) and 0x40-0x4F (Ryzen 9000 desktop) are
/// full width, the rest of the family (its mobile parts) and every other family not.
constexpr bool amd_fp512(unsigned leaf_1a_eax, unsigned family, unsigned model) {
    constexpr unsigned fp128 = 1u << 0, fp256 = 1u << 2, fp512 = 1u << 3;
    if ((leaf_1a_eax & (fp128 | fp256 | fp512)) != 0) return (leaf_1a_eax & fp512) != 0;
    return family == 0x1A && (model <= 0x1F || (model >= 0x40 && model <= 0x4F));
}

} // namespace myattn::detail
