// The int8 scheme: what the int8 kernels of every ISA and the scalar reference compute, in one
// place, so that their results are the same bits (docs/accuracy.md says what it costs).
//
// - Weights: int8, symmetric, one scale per output feature (max |W_j| / 127, at least the
//   smallest normal float), quantized once at construction; each feature keeps the sum of its
//   int8 weights over each part of the input row, for the zero-point correction.
// - Activations: each part of a Linear's input row [x1; x2] ([Q; K], [Q; a]) is quantized on its
//   own, per sample, at each call: unsigned, asymmetric, over [min(x, 0), max(x, 0)] in `levels`
//   steps (a scale of at least the smallest normal float) with an integer zero point. So a
//   sample's result never depends on the rest of the batch, and a small `a` next to a large Q
//   keeps its own resolution. levels = 255 (8 bits) where the CPU multiplies 8-bit unsigned by
//   signed bytes into 32 bits (VNNI, the Arm dot product, widening multiplies); 127 (7 bits) for
//   x86 without VNNI, whose vpmaddubsw would saturate its 16-bit pair sums with 8-bit
//   activations (255 * 127 * 2 > 32767).
// - Sums: int32, exact: sum_i w_ji (qx_i - zp) = sum_i w_ji qx_i - zp colsum_j.
// - Output: y_j = float(sum1_j) * (s_wj * s_x1), then fma(float(sum2_j), s_wj * s_x2, y_j), then
//   + b_j: the same roundings, in the same order, on every ISA.
//
// Plain loops in an anonymous namespace: included by the per-ISA objects and by baseline code
// alike, each gets its own copy (docs/design.md, ODR).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace myattn::detail {
namespace {

/// Largest |int8 weight|: symmetric, so -128 is never used and |w| |x| sums stay symmetric.
constexpr int weight_levels = 127;

/// Inputs per group of the packed weights: the four bytes vpdpbusd and sdot sum into one lane.
constexpr std::size_t int8_group = 4;

constexpr std::size_t round_up_group(std::size_t n) { return (n + int8_group - 1) / int8_group * int8_group; }

/// The largest input count whose int32 sums cannot overflow: n * 255 * 127 < 2^31.
constexpr std::size_t int8_max_inputs = 0x7fffffff / (255 * weight_levels);

/// The quantization of one part of one row: x ≈ scale * (q - zero_point).
struct RowQuant {
    float scale;
    std::int32_t zero_point;
};

/// The range of a part, from 0 (so that 0 is exact), and whether an input is not finite. Any
/// order of adds gives the same range: the kernels reduce it lane by lane.
struct RowRange {
    float lo = 0.0f, hi = 0.0f, poison = 0.0f;
    void add(float x) {
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
        poison += x * 0.0f; // NaN once any input is NaN or infinite
    }
};

/// The scale and zero point of a part of range r. A non-finite input makes the scale NaN, so
/// that every output the part feeds is NaN, as in float32 (the bytes are then unused: 0). The
/// scale is at least the smallest normal float, so that 1 / scale is finite and x / scale is
/// within about [-levels, levels] for every x of the part (parts of inputs all below about
/// 1e-36 in magnitude get fewer steps).
inline RowQuant row_quant(const RowRange& r, int levels) {
    float scale = (r.hi - r.lo) / static_cast<float>(levels);
    if (scale == 0.0f) scale = 1.0f; // all zeros
    if (scale < std::numeric_limits<float>::min()) scale = std::numeric_limits<float>::min();
    scale += r.poison;
    if (scale != scale) return {scale, 0};
    const float top = static_cast<float>(levels);
    float zp = std::nearbyint(-r.lo * (1.0f / scale));
    zp = zp < 0.0f ? 0.0f : zp > top ? top : zp;
    return {scale, static_cast<std::int32_t>(zp)};
}

/// One input's byte: round(x / scale) + zero point, within [0, levels] (x / scale as x times the
/// rounded reciprocal, as the vector code computes it).
inline std::uint8_t quantize_value(float x, const RowQuant& rq, int levels) {
    if (rq.scale != rq.scale) return 0;
    const float top = static_cast<float>(levels);
    float v = std::nearbyint(x * (1.0f / rq.scale)) + static_cast<float>(rq.zero_point);
    v = v < 0.0f ? 0.0f : v > top ? top : v;
    return static_cast<std::uint8_t>(v);
}

/// Quantizes the n floats at x into the bytes at q (round_up_group(n) of them; the padding
/// holds the zero point).
inline RowQuant quantize_row(const float* x, std::size_t n, int levels, std::uint8_t* q) {
    RowRange r;
    for (std::size_t i = 0; i < n; ++i) r.add(x[i]);
    const RowQuant rq = row_quant(r, levels);
    for (std::size_t i = 0; i < n; ++i) q[i] = quantize_value(x[i], rq, levels);
    for (std::size_t i = n; i < round_up_group(n); ++i) q[i] = static_cast<std::uint8_t>(rq.zero_point);
    return rq;
}

/// The scale of output feature j's int8 weights: max |W_j| / 127 (1 for an all-zero row; NaN
/// for a row with a non-finite weight, which then makes that feature's outputs NaN). As for the
/// activations, at least the smallest normal float: max |W_j| / 127 of a row of tiny subnormal
/// weights rounds to 0, and w / 0 has no byte (such rows, below about 1e-36, get fewer steps).
inline float weight_scale(const float* row, std::size_t n) {
    float m = 0.0f, poison = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
        const float a = std::fabs(row[i]);
        m = a > m ? a : m;
        poison += row[i] * 0.0f;
    }
    float scale = m == 0.0f ? 1.0f : m / static_cast<float>(weight_levels);
    if (scale < std::numeric_limits<float>::min()) scale = std::numeric_limits<float>::min();
    return scale + poison;
}

/// round(w / scale), within [-127, 127] (0 where the scale is NaN).
inline std::int8_t quantize_weight(float w, float scale) {
    if (scale != scale) return 0;
    float v = std::nearbyint(w / scale);
    v = v < -weight_levels ? -weight_levels : v > weight_levels ? weight_levels : v;
    return static_cast<std::int8_t>(v);
}

/// The first part's contribution to an output: float(sum) * (s_w * s_x).
inline float dequantize_first(std::int32_t sum, float weight_scale, float x_scale) {
    return static_cast<float>(sum) * (weight_scale * x_scale);
}

/// The second part's, added to the first's with one rounding.
inline float dequantize_add(std::int32_t sum, float weight_scale, float x_scale, float y) {
    return std::fma(static_cast<float>(sum), weight_scale * x_scale, y);
}

} // namespace
} // namespace myattn::detail
