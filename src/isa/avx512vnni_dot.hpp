// The int8 step with AVX512-VNNI, for the kernel sets that use it (avx512vnni.cpp, and
// avx512amx.cpp for what its tiles leave). Included only by objects built with -mavx512vnni.
#pragma once

#include "kernels/forward.hpp"

namespace myattn::detail {
namespace {

/// vpdpbusd: each int32 lane += four u8 x s8 products, no intermediate saturation.
struct VnniDot {
    static constexpr int levels = 255, offset = 0;
    static constexpr std::string_view variant = "avx512vnni";
    /// Rows of the fused forward's groups: 16, two register tiles of 8 over each panel, so that
    /// the second finds the panel's weights in L1 (32 features over 512 inputs: 16 KiB) instead
    /// of reading them from L2 again (docs/tuning.md).
    static constexpr std::size_t group_rows = 16;
    static vint<xsimd::avx512f> dot(vint<xsimd::avx512f> acc, vint<xsimd::avx512f> a, vint<xsimd::avx512f> w) {
        return _mm512_dpbusd_epi32(acc, a, w);
    }
};

} // namespace
} // namespace myattn::detail
