// The `scalar` ISA: the float instantiation of the reference, over unpacked weights. It is
// the baseline that benchmarks compare against and the fallback every CPU runs.
#include <algorithm>

#include "kernels/table.hpp"
#include "reference.hpp"
#include "registry.hpp"

namespace myattn::detail {
namespace {

// "Packing" a Linear is a plain copy: W, then b.
std::size_t linear_packed_size(std::size_t out, std::size_t in) { return out * (in + 1); }

void pack_linear(const float* W, const float* b, std::size_t out, std::size_t in, float* packed) {
    std::copy_n(b, out, std::copy_n(W, out * in, packed));
}

void linear(const float* packed, std::size_t out, std::size_t rows, const SplitRows& x, float* y, std::size_t ldy) {
    const float* b = packed + out * (x.n1 + x.n2);
    for (std::size_t r = 0; r < rows; ++r)
        reference_linear<float>(packed, b, out, x.x1 + r * x.ld1, x.n1, x.x2 + r * x.ld2, x.n2, y + r * ldy);
}

void softmax(float* row, std::size_t n) { reference_softmax<float>(row, n); }

void weighted_sum(std::size_t rows, const float* w, std::size_t ldw, const float* V, std::size_t v_stride,
                  std::size_t L, std::size_t d, std::size_t ldv, float* a, std::size_t lda) {
    for (std::size_t r = 0; r < rows; ++r)
        reference_weighted_sum<float>(w + r * ldw, V + r * v_stride, L, d, ldv, a + r * lda);
}

std::size_t packed_size(const Dims& d) {
    return linear_packed_size(d.value_size1, d.query_size + d.key_size) +
           linear_packed_size(d.output_size, d.query_size + d.value_size2);
}

// W1, b1, W2, b2 back to back.
void pack(const Dims& d, const WeightsView& w, float* packed) {
    pack_linear(w.attn_weight, w.attn_bias, d.value_size1, d.query_size + d.key_size, packed);
    pack_linear(w.combine_weight, w.combine_bias, d.output_size, d.query_size + d.value_size2,
                packed + linear_packed_size(d.value_size1, d.query_size + d.key_size));
}

WeightsView unpack(const Dims& d, const float* packed) {
    WeightsView w{};
    w.attn_weight = packed;
    w.attn_bias = w.attn_weight + d.value_size1 * (d.query_size + d.key_size);
    w.combine_weight = w.attn_bias + d.value_size1;
    w.combine_bias = w.combine_weight + d.output_size * (d.query_size + d.value_size2);
    return w;
}

// The weighted sum `a` is the only intermediate not written to the caller's buffers.
std::size_t scratch_size(const Dims& d, std::size_t /*rows*/) { return d.value_size2; }

void forward(const Dims& d, const float* packed, const Batch& x, std::size_t begin, std::size_t end, float* scratch) {
    const WeightsView w = unpack(d, packed);
    const std::size_t L = d.value_size1;
    for (std::size_t b = begin; b < end; ++b)
        reference_sample<float>(d, w, x.Q + b * d.query_size, x.K + b * x.k_stride, x.V + b * x.v_stride,
                                x.attn_weights + b * L, scratch, x.output + b * d.output_size);
}

} // namespace

const KernelTable& scalar_kernels() {
    static constexpr KernelTable table{.isa = Isa::scalar,
                                       .id = implementation(Isa::scalar).kernel_id,
                                       .mr = implementation(Isa::scalar).mr,
                                       .nr = implementation(Isa::scalar).nr,
                                       .packed_size = packed_size,
                                       .pack = pack,
                                       .scratch_size = scratch_size,
                                       .forward = forward,
                                       .linear_packed_size = linear_packed_size,
                                       .pack_linear = pack_linear,
                                       .linear = linear,
                                       .softmax = softmax,
                                       .weighted_sum = weighted_sum};
    return table;
}

} // namespace myattn::detail
