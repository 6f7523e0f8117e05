// MyAttn: validation, packing, and the parallel driver over tiles of the batch.
#include "myattn/attention.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "aligned_buffer.hpp"
#include "dispatch.hpp"
#include "forward_plan.hpp"
#include "kernels/quantize.hpp"
#include "layered_forward.hpp"
#include "myattn/errors.hpp"
#include "shapes.hpp"
#include "tiling.hpp"

#ifdef MYATTN_WITH_TBB
#include <tbb/task_arena.h>

#include "parallel_for.hpp"
#endif

namespace myattn {
namespace {

using detail::Batch;
using detail::KernelTable;
using detail::PackedLayout;

std::string shape_str(std::initializer_list<std::size_t> s) { return Shape(s).to_string(); }

// Expected shapes are spelled out only when a check fails: forward builds no strings (and so
// allocates nothing) on the valid path.
template <class Expected>
[[noreturn]] void bad_shape(const char* name, Expected expected, const Shape& got) {
    throw ShapeError(std::string(name) + ": expected shape " + expected() + ", got " + got.to_string());
}

// Checks rank and returns the number of elements; null data with elements is refused.
template <class T, class Expected>
std::size_t checked_numel(const char* name, const TensorView<T>& t, std::size_t rank, Expected expected) {
    if (t.shape.rank() != rank) bad_shape(name, expected, t.shape);
    const std::size_t n = t.shape.numel(name);
    if (n != 0 && t.data == nullptr)
        throw ArgumentError(std::string(name) + ": data is null but shape " + t.shape.to_string() + " has " +
                            std::to_string(n) + " elements");
    return n;
}

struct Span {
    const char* name;
    const void* begin;
    std::size_t bytes;
    bool overlaps(const Span& o) const {
        if (bytes == 0 || o.bytes == 0) return false;
        const auto* a = static_cast<const char*>(begin);
        const auto* b = static_cast<const char*>(o.begin);
        // std::less gives a total order even for pointers into different objects.
        return std::less<>{}(a, b + o.bytes) && std::less<>{}(b, a + bytes);
    }
};

// What validate_inputs learns: the batch, the layout, and the elements of Q, K and V.
struct InputSizes {
    std::size_t B, nq, nk, nv;
    bool batch_in_dim1; // the article's layout: Q [1,B,q], output [1,B,o]
    std::size_t k_stride, v_stride;
    [[nodiscard]] Shape output_shape(std::size_t o) const { return batch_in_dim1 ? Shape{1, B, o} : Shape{B, 1, o}; }
};

// Validates Q, K and V against Dims and each other. Two layouts, the same memory:
//   batch first (Q [B,1,q], K [B,1,k] or [1,1,k], V [B,L,d] or [1,L,d]) -> output [B,1,o];
//   the article's (Q [1,B,q], K [1,B,k] or [1,1,k], V [1,L,d]) -> output [1,B,o].
// Q [1,1,q] is both, with B = 1: the two then agree on every shape.
// V holds floats, or bfloat16s (precision bf16).
template <class VT>
InputSizes validate_inputs(const Dims& dims, const ConstTensor& Q, const ConstTensor& K,
                           const TensorView<const VT>& V) {
    const std::size_t q = dims.query_size, k = dims.key_size, L = dims.value_size1, d = dims.value_size2;
    const auto q_expect = [&] { return "[B, 1, " + std::to_string(q) + "] or [1, B, " + std::to_string(q) + "]"; };
    const std::size_t nq = checked_numel("Q", Q, 3, q_expect);
    if (Q.shape[2] != q || (Q.shape[0] != 1 && Q.shape[1] != 1)) bad_shape("Q", q_expect, Q.shape);
    const bool dim1 = Q.shape[1] != 1;
    const std::size_t B = dim1 ? Q.shape[1] : Q.shape[0];

    const auto k_expect = [&] {
        return dim1 ? shape_str({1, B, k}) + " or " + shape_str({1, 1, k}) + " (as Q is [1, B, q])"
                    : shape_str({B, 1, k}) + " or " + shape_str({1, 1, k});
    };
    const std::size_t nk = checked_numel("K", K, 3, k_expect);
    const std::size_t kb = dim1 ? K.shape[1] : K.shape[0], kone = dim1 ? K.shape[0] : K.shape[1];
    if ((kb != B && kb != 1) || kone != 1 || K.shape[2] != k) bad_shape("K", k_expect, K.shape);

    const auto v_expect = [&] {
        return dim1 ? shape_str({1, L, d}) + " (as Q is [1, B, q])"
                    : shape_str({B, L, d}) + " or " + shape_str({1, L, d});
    };
    const std::size_t nv = checked_numel("V", V, 3, v_expect);
    if ((V.shape[0] != B && V.shape[0] != 1) || (dim1 && V.shape[0] != 1) || V.shape[1] != L || V.shape[2] != d)
        bad_shape("V", v_expect, V.shape);
    // With B = 1 a K or V of one sample is both per-sample and shared: the stride does not matter.
    const std::size_t k_stride = kb == B && B != 1 ? k : 0, v_stride = V.shape[0] == B && B != 1 ? L * d : 0;
    return {B, nq, nk, nv, dim1, k_stride, v_stride};
}

// Validates every tensor against Dims and each other; nothing is written before this returns.
template <class VT>
detail::BatchOf<VT> validate_call(const Dims& dims, const ConstTensor& Q, const ConstTensor& K,
                                  const TensorView<const VT>& V, const MutableTensor& output,
                                  const MutableTensor& attn_weights) {
    const std::size_t L = dims.value_size1, o = dims.output_size;
    const InputSizes sizes = validate_inputs(dims, Q, K, V);
    const std::size_t B = sizes.B; // a plain variable: clang 14 cannot capture structured bindings

    const Shape o_shape = sizes.output_shape(o);
    const auto o_expect = [&] { return o_shape.to_string(); };
    const std::size_t no = checked_numel("output", output, 3, o_expect);
    if (!(output.shape == o_shape)) bad_shape("output", o_expect, output.shape);
    const auto w_expect = [&] { return shape_str({B, L}); };
    const std::size_t nw = checked_numel("attn_weights", attn_weights, 2, w_expect);
    if (!(attn_weights.shape == Shape{B, L})) bad_shape("attn_weights", w_expect, attn_weights.shape);

    constexpr std::size_t f = sizeof(float);
    const Span outs[] = {{"output", output.data, no * f}, {"attn_weights", attn_weights.data, nw * f}};
    const Span ins[] = {
        {"Q", Q.data, sizes.nq * f}, {"K", K.data, sizes.nk * f}, {"V", V.data, sizes.nv * sizeof(VT)}, outs[1]};
    for (const Span& out : outs)
        for (const Span& in : ins)
            if (out.begin != in.begin || out.name != in.name)
                if (out.overlaps(in))
                    throw ArgumentError(std::string(out.name) + ": output buffer overlaps " + in.name);

    return {.B = B,
            .Q = Q.data,
            .K = K.data,
            .V = V.data,
            .k_stride = sizes.k_stride,
            .v_stride = sizes.v_stride,
            .output = output.data,
            .attn_weights = attn_weights.data};
}

// Per-thread scratch that grows to the largest tile seen and is then reused: after the first
// call on a thread, forward allocates nothing.
float* thread_scratch(std::size_t floats) {
    thread_local detail::AlignedBuffer buffer;
    if (buffer.size() < floats) buffer = detail::AlignedBuffer(floats);
    return buffer.data();
}

#ifdef MYATTN_WITH_TBB
// Too few samples for one group per thread, but large Linears (shape X at B = 1): the threads
// share each step instead (detail::plan_by_features). Each output is still computed by the
// same kernel in the same order: the bits do not change.
constexpr double split_min_flops = 1 << 22; // ~40 µs of one core: dwarfs a parallel_for's cost

bool large_linears(const Dims& d) { return detail::linear_flops_per_sample(d) >= split_min_flops; }

bool split_features(const KernelTable& k, const Dims& d, std::size_t B, std::size_t threads) {
    return (B + k.mr - 1) / k.mr < threads && large_linears(d);
}
#endif

} // namespace

struct MyAttn::Impl {
    Parameters params;
    const KernelTable* kernels;
    PackedLayout layout;
    detail::AlignedBuffer packed;
    detail::ForwardPlan plan;
};

MyAttn::MyAttn(Parameters params) : MyAttn(std::move(params), active_isa()) {}

MyAttn::MyAttn(Parameters params, Precision p) : MyAttn(std::move(params), active_isa(), p) {}

MyAttn::MyAttn(Parameters params, Isa isa, Precision p) {
    const KernelTable& kernels = detail::kernels_for(isa, p);
    const Dims& d = params.dims();
    if (p == Precision::int8)
        for (auto [name, n] :
             {std::pair{"query_size", d.query_size}, {"key_size", d.key_size}, {"value_size2", d.value_size2}})
            if (n > detail::int8_max_inputs)
                throw ArgumentError("precision int8: " + std::string(name) + " = " + std::to_string(n) +
                                    " is over the " + std::to_string(detail::int8_max_inputs) +
                                    " inputs whose int32 sums cannot overflow");
    detail::AlignedBuffer packed(kernels.layout(d).size);
    const PackedLayout layout = kernels.pack(d,
                                             {.attn_weight = params.attn_weight().data(),
                                              .attn_bias = params.attn_bias().data(),
                                              .combine_weight = params.combine_weight().data(),
                                              .combine_bias = params.combine_bias().data()},
                                             packed.data());
    const detail::ForwardPlan plan = detail::plan_forward(d, detail::cache_sizes(), kernels.mr, kernels.nr,
                                                          detail::fma_lanes_per_cycle(cpu_features(), kernels.isa));
    impl_ = std::make_unique<Impl>(Impl{std::move(params), &kernels, layout, std::move(packed), plan});
}

MyAttn::~MyAttn() = default;
MyAttn::MyAttn(MyAttn&&) noexcept = default;
MyAttn& MyAttn::operator=(MyAttn&&) noexcept = default;

const MyAttn::Impl& MyAttn::impl() const {
    if (!impl_) throw MovedFromError("MyAttn: used after it was moved from");
    return *impl_;
}

const Dims& MyAttn::dims() const { return impl().params.dims(); }
const Parameters& MyAttn::parameters() const { return impl().params; }
Isa MyAttn::isa() const { return impl().kernels->isa; }
Precision MyAttn::precision() const { return impl().kernels->precision; }
std::string_view MyAttn::kernel_id() const { return impl().kernels->id; }
std::string MyAttn::plan() const { return detail::to_string(impl().plan); }

namespace {

// A validated call, V of floats or bf16s.
template <class VT>
void run(const KernelTable& kernels, const Dims& dims, const PackedLayout& layout, const float* packed,
         const detail::ForwardPlan& plan, const detail::BatchOf<VT>& batch) {
    const std::size_t B = batch.B;
    if (B == 0) return;
#ifdef MYATTN_WITH_TBB
    // One group of samples through small Linears is one task on this thread, whatever the
    // arena: asking it costs a tenth of such a call (shape S at B = 1).
    const bool one_task = B <= kernels.mr && !large_linears(dims);
    const auto threads = one_task ? 1 : static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
    const bool by_features = split_features(kernels, dims, B, threads);
#else
    const std::size_t threads = 1;
    const bool by_features = false;
#endif
    // Weights beyond L2 and more than one group: each Linear once per block of MC samples.
    if (by_features || (plan.layered && B > kernels.mr)) {
        const detail::ForwardPlan p = by_features ? detail::plan_by_features(B) : plan;
        return detail::layered_forward(kernels, dims, layout, packed, batch, p, threads,
                                       thread_scratch(detail::layered_scratch_size(dims, p, B, kernels.mr, threads)));
    }
    // A batch of at most one group is one tile: no cache arithmetic, no division (S at B = 1).
    const std::size_t rows = B <= kernels.mr ? B : detail::rows_per_tile(dims, B, kernels.mr, threads);
    const std::size_t tiles = rows == B ? 1 : (B + rows - 1) / rows;
    const detail::FusedBlocking blocking = plan.fused(detail::input_bytes(dims, batch));
    auto run_tiles = [&](std::size_t first, std::size_t last) {
        float* scratch = thread_scratch(kernels.scratch_size(dims, rows));
        for (std::size_t t = first; t < last; ++t)
            detail::forward_with(kernels, dims, layout, packed, batch, {t * rows, std::min(B, (t + 1) * rows)},
                                 blocking, scratch);
    };
#ifdef MYATTN_WITH_TBB
    if (tiles > 1) {
        detail::parallel_for(tiles, [&](const tbb::blocked_range<std::size_t>& r) { run_tiles(r.begin(), r.end()); });
        return;
    }
#endif
    run_tiles(0, tiles);
}

// The owned-result forward: inputs checked before the outputs are sized.
template <class VT, class Forward>
ForwardResult forward_owned(const Dims& d, ConstTensor Q, ConstTensor K, TensorView<const VT> V, Forward forward) {
    // Inputs are checked before the outputs are sized: a bad shape is a ShapeError, never a
    // huge allocation.
    const InputSizes sizes = validate_inputs(d, Q, K, V);
    const std::size_t B = sizes.B;
    ForwardResult r;
    r.output_shape = sizes.output_shape(d.output_size);
    r.attn_weights_shape = Shape{B, d.value_size1};
    r.output.resize(r.output_shape.numel("output"));
    r.attn_weights.resize(r.attn_weights_shape.numel("attn_weights"));
    forward(MutableTensor{r.output.data(), r.output_shape}, MutableTensor{r.attn_weights.data(), r.attn_weights_shape});
    return r;
}

// Only the bf16 precision's kernels read a bf16 V.
void check_takes_bf16_v(const KernelTable& k) {
    if (k.forward_bf16v == nullptr)
        throw ArgumentError("V: a bfloat16 V needs a MyAttn of precision bf16 (this one runs " + std::string(k.id) +
                            ")");
}

} // namespace

void MyAttn::forward(ConstTensor Q, ConstTensor K, ConstTensor V, MutableTensor output,
                     MutableTensor attn_weights) const {
    const Impl& s = impl();
    const Dims& dims = s.params.dims();
    run(*s.kernels, dims, s.layout, s.packed.data(), s.plan, validate_call(dims, Q, K, V, output, attn_weights));
}

void MyAttn::forward_bf16(ConstTensor Q, ConstTensor K, TensorView<const bfloat16> V, MutableTensor output,
                          MutableTensor attn_weights) const {
    const Impl& s = impl();
    check_takes_bf16_v(*s.kernels);
    const Dims& dims = s.params.dims();
    run(*s.kernels, dims, s.layout, s.packed.data(), s.plan, validate_call(dims, Q, K, V, output, attn_weights));
}

ForwardResult MyAttn::forward(ConstTensor Q, ConstTensor K, ConstTensor V) const {
    return forward_owned(dims(), Q, K, V, [&](MutableTensor o, MutableTensor w) { forward(Q, K, V, o, w); });
}

ForwardResult MyAttn::forward_bf16(ConstTensor Q, ConstTensor K, TensorView<const bfloat16> V) const {
    check_takes_bf16_v(*impl().kernels); // before anything is sized
    return forward_owned(dims(), Q, K, V, [&](MutableTensor o, MutableTensor w) { forward_bf16(Q, K, V, o, w); });
}

} // namespace myattn
