// The `scalar` ISA: the float instantiation of the reference, over unpacked weights. It is
// the baseline that benchmarks compare against and the fallback every CPU runs.
#include <algorithm>

#include "kernels/table.hpp"
#include "reference.hpp"
#include "registry.hpp"

namespace myattn::detail {
namespace {

// "Packing" a Linear is a plain copy: W, then b; a panel is one output feature.
LinearLayout linear_layout(std::size_t out, std::size_t in) {
    return {.offset = 0, .size = out * (in + 1), .out = out, .in = in, .panel = 1};
}

void pack_linear(const LinearLayout& l, const float* W, const float* b, float* packed) {
    std::copy_n(b, l.out, std::copy_n(W, l.out * l.in, packed + l.offset));
}

const float* weight(const LinearLayout& l, const float* packed) { return packed + l.offset; }
const float* bias(const LinearLayout& l, const float* packed) { return packed + l.offset + l.out * l.in; }

void linear(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f, float* y,
            std::size_t ldy) {
    const float* W = weight(l, packed) + f.begin * l.in;
    const float* b = bias(l, packed) + f.begin;
    for (std::size_t r = 0; r < rows; ++r)
        reference_linear<float>(W, b, f.end - f.begin, x.x1 + r * x.ld1, x.n1, x.x2 + r * x.ld2, x.n2,
                                y + r * ldy + f.begin);
}

// One output feature's chain runs over its own row of W: no blocking to do.
void linear_blocked(const LinearLayout& l, const float* packed, const SplitRows& x, std::size_t rows, Range f,
                    const LinearBlocking& /*b*/, float* y, std::size_t ldy) {
    linear(l, packed, x, rows, f, y, ldy);
}

void softmax(float* row, std::size_t n) { reference_softmax<float>(row, n); }

void weighted_sum(const WeightedSum& op, Range c) {
    for (std::size_t r = 0; r < op.rows; ++r)
        reference_weighted_sum<float>(op.w + r * op.ldw, op.V + r * op.v_stride + c.begin, op.L, c.end - c.begin, op.d,
                                      op.a + r * op.lda + c.begin);
}

PackedLayout layout(const Dims& d) { return module_layout(d, linear_layout); }

PackedLayout pack(const Dims& d, const WeightsView& w, float* packed) {
    const PackedLayout l = layout(d);
    pack_linear(l.scores, w.attn_weight, w.attn_bias, packed);
    pack_linear(l.combine, w.combine_weight, w.combine_bias, packed);
    return l;
}

// The weighted sum `a` is the only intermediate not written to the caller's buffers.
std::size_t scratch_size(const Dims& d, std::size_t /*rows*/) { return d.value_size2; }

void forward(const Dims& d, const PackedLayout& l, const float* packed, const Batch& x, Range samples, float* scratch) {
    const WeightsView w{.attn_weight = weight(l.scores, packed),
                        .attn_bias = bias(l.scores, packed),
                        .combine_weight = weight(l.combine, packed),
                        .combine_bias = bias(l.combine, packed)};
    const std::size_t L = d.value_size1;
    for (std::size_t b = samples.begin; b < samples.end; ++b)
        reference_sample<float>(d, w, x.Q + b * d.query_size, x.K + b * x.k_stride, x.V + b * x.v_stride,
                                x.attn_weights + b * L, scratch, x.output + b * d.output_size);
}

} // namespace

const KernelTable& scalar_kernels() {
    constexpr const Implementation& row = implementation(Isa::scalar);
    static constexpr KernelTable table{.isa = Isa::scalar,
                                       .id = row.kernel_id,
                                       .mr = row.mr,
                                       .nr = row.nr,
                                       .layout = layout,
                                       .pack = pack,
                                       .scratch_size = scratch_size,
                                       .forward = forward,
                                       .linear_layout = linear_layout,
                                       .pack_linear = pack_linear,
                                       .linear = linear,
                                       .linear_blocked = linear_blocked,
                                       .softmax = softmax,
                                       .weighted_sum = weighted_sum};
    return table;
}

} // namespace myattn::detail
