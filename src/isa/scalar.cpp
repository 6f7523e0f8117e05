// The `scalar` ISA: the reference's loops over unpacked weights, at float32 (the baseline that
// benchmarks compare against and the fallback every CPU runs), at int8 (the reference every
// int8 kernel matches bit for bit, with 8-bit activations) and at bf16 (the float loops over the
// weights rounded to bf16, kept as floats; V float or bf16).
#include <algorithm>
#include <cstdint>

#include "kernels/table.hpp"
#include "reference.hpp"
#include "registry.hpp"
#include "thread_bytes.hpp"

namespace myattn::detail {
namespace {

// float32. "Packing" a Linear is a plain copy: W, then b; a panel is one output feature.
struct F32 {
    static constexpr int levels = 0;
    static LinearLayout linear_layout(std::size_t out, std::size_t n1, std::size_t n2) {
        const std::size_t in = n1 + n2;
        return {.offset = 0, .size = out * (in + 1), .out = out, .in = in, .panel = 1, .n1 = n1};
    }

    static void pack_linear(const LinearLayout& l, const float* W, const float* b, float* packed) {
        std::copy_n(b, l.out, std::copy_n(W, l.out * l.in, packed + l.offset));
    }

    /// Row r's features f of l, written to y (features [0, f.end - f.begin)).
    static void row(const LinearLayout& l, const float* packed, const float* x1, const float* x2, Range f, float* y) {
        const float* W = packed + l.offset;
        reference_linear<float>(W + f.begin * l.in, W + l.out * l.in + f.begin, f.end - f.begin, x1, l.n1, x2,
                                l.in - l.n1, y);
    }
};

// bf16: float32 with the weights rounded to bf16 as they are packed.
struct Bf16 : F32 {
    static void pack_linear(const LinearLayout& l, const float* W, const float* b, float* packed) {
        std::copy_n(b, l.out, std::transform(W, W + l.out * l.in, packed + l.offset, [](float w) {
                        return to_float(to_bfloat16(w));
                    }));
    }
};

// int8 (kernels/quantize.hpp). A Linear is its scales, biases, the int32 sums of each feature's
// weights over x1 and over x2, then the int8 weights in W's own layout; a panel is one feature.
struct Int8 {
    static constexpr int levels = 255;

    struct Parts {
        float* scale;
        float* bias;
        std::int32_t* sum1;
        std::int32_t* sum2;
        std::int8_t* w;
    };
    static Parts parts(const LinearLayout& l, float* packed) {
        float* p = packed + l.offset;
        return {p, p + l.out, reinterpret_cast<std::int32_t*>(p + 2 * l.out),
                reinterpret_cast<std::int32_t*>(p + 3 * l.out), reinterpret_cast<std::int8_t*>(p + 4 * l.out)};
    }

    static LinearLayout linear_layout(std::size_t out, std::size_t n1, std::size_t n2) {
        const std::size_t in = n1 + n2;
        return {.offset = 0,
                .size = 4 * out + (out * in + sizeof(float) - 1) / sizeof(float),
                .out = out,
                .in = in,
                .panel = 1,
                .n1 = n1};
    }

    static void pack_linear(const LinearLayout& l, const float* W, const float* b, float* packed) {
        const Parts p = parts(l, packed);
        std::copy_n(b, l.out, p.bias);
        quantize_linear(W, l.out, l.n1, l.in - l.n1, p.w, p.scale, p.sum1, p.sum2);
    }

    static void row(const LinearLayout& l, const float* packed, const float* x1, const float* x2, Range f, float* y) {
        const Parts p = parts(l, const_cast<float*>(packed));
        const std::size_t j = f.begin, n2 = l.in - l.n1;
        reference_int8_linear({p.w + j * l.in, p.scale + j, p.sum1 + j, p.sum2 + j}, p.bias + j, f.end - j, x1, l.n1,
                              x2, n2, levels, thread_bytes(round_up_group(l.n1) + round_up_group(n2)), y);
    }
};

template <class P>
void linear(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f, float* y,
            std::size_t ldy) {
    for (std::size_t r = 0; r < rows; ++r)
        P::row(l, packed, x.x1 + r * x.ld1, x.x2 + r * x.ld2, f, y + r * ldy + f.begin);
}

// One output feature's chain runs over its own row of W: no blocking to do.
template <class P>
void linear_blocked(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f,
                    const LinearBlocking& /*b*/, float* y, std::size_t ldy) {
    linear<P>(l, packed, x, rows, f, y, ldy);
}

void softmax(float* row, std::size_t n) { reference_softmax<float>(row, n); }

template <class VT>
void weighted_sum(const WeightedSumOf<VT>& op, Range c) {
    for (std::size_t r = 0; r < op.rows; ++r)
        reference_weighted_sum<float>(op.w + r * op.ldw, op.V + r * op.v_stride + c.begin, op.L, c.end - c.begin, op.d,
                                      op.a + r * op.lda + c.begin);
}

// The weighted sum `a` is the only intermediate not written to the caller's buffers.
std::size_t scratch_size(const Dims& d, std::size_t /*rows*/) { return d.value_size2; }

// One sample at a time through whole rows: no cache blocking to apply.
template <class P, class VT>
void forward(const Dims& d, const PackedLayout& l, const float* packed, const BatchOf<VT>& x, Range samples,
             const FusedBlocking& /*blocking*/, float* scratch) {
    const std::size_t L = d.value_size1, o = d.output_size;
    for (std::size_t b = samples.begin; b < samples.end; ++b)
        reference_sample_with<float>(
            d,
            [&](const float* q, const float* k, float* y) {
                P::row(l.scores, packed, q, k, {0, L}, y);
            },
            [&](const float* q, const float* a, float* y) {
                P::row(l.combine, packed, q, a, {0, o}, y);
            },
            x.Q + b * d.query_size, x.K + b * x.k_stride, x.V + b * x.v_stride, x.attn_weights + b * L, scratch,
            x.output + b * o);
}

template <class P, Precision precision>
constexpr KernelTable make_table() {
    constexpr const Implementation& row = implementation(Isa::scalar, precision);
    constexpr bool bf16 = precision == Precision::bf16;
    return {.isa = Isa::scalar,
            .precision = precision,
            .id = row.kernel_id,
            .mr = row.mr,
            .nr = row.nr,
            .quant_levels = P::levels,
            .bf16_inputs = false,
            .layout = module_layout_of<P::linear_layout>,
            .pack = pack_module<P::linear_layout, P::pack_linear>,
            .scratch_size = scratch_size,
            .forward = forward<P, float>,
            .forward_bf16v = bf16 ? forward<P, bfloat16> : nullptr,
            .linear_layout = P::linear_layout,
            .pack_linear = P::pack_linear,
            .linear = linear<P>,
            .linear_blocked = linear_blocked<P>,
            .softmax = softmax,
            .weighted_sum = weighted_sum<float>,
            .weighted_sum_bf16v = bf16 ? weighted_sum<bfloat16> : nullptr};
}

} // namespace

const KernelTable& scalar_kernels() {
    static constexpr KernelTable table = make_table<F32, Precision::f32>();
    return table;
}

const KernelTable& scalar_int8_kernels() {
    static constexpr KernelTable table = make_table<Int8, Precision::int8>();
    return table;
}

const KernelTable& scalar_bf16_kernels() {
    static constexpr KernelTable table = make_table<Bf16, Precision::bf16>();
    return table;
}

} // namespace myattn::detail
