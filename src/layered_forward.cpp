#include "layered_forward.hpp"

#include <algorithm>

#ifdef MYATTN_WITH_TBB
#include "parallel_for.hpp"
#endif

namespace myattn::detail {
namespace {

/// body(i) for i < n: on this thread, or shared by the arena's threads.
template <class Body>
void for_each_task(std::size_t n, std::size_t threads, const Body& body) {
#ifdef MYATTN_WITH_TBB
    if (threads > 1 && n > 1) {
        parallel_for(n, [&](const tbb::blocked_range<std::size_t>& r) {
            for (std::size_t i = r.begin(); i < r.end(); ++i) body(i);
        });
        return;
    }
#else
    (void)threads;
#endif
    for (std::size_t i = 0; i < n; ++i) body(i);
}

/// One Linear over `rows` samples, its features in blocks of at most NC, one task each: as many
/// blocks as NC needs, rounded up to a multiple of the threads, all of about the same number of
/// whole panels. Each weight is read by one task only.
void linear_layer(const KernelTable& k, const LinearLayout& l, const float* packed, const SplitRows& x,
                  std::size_t rows, const ForwardPlan& plan, std::size_t threads, float* y) {
    const std::size_t panels = (l.out + l.panel - 1) / l.panel;
    const std::size_t nc_panels = std::max<std::size_t>(1, plan.nc / l.panel);
    const std::size_t blocks = (panels + nc_panels - 1) / nc_panels;
    const std::size_t balanced = (blocks + threads - 1) / threads * threads;
    const std::size_t per_task = (panels + balanced - 1) / balanced;
    const std::size_t tasks = (panels + per_task - 1) / per_task;
    const LinearBlocking b{.kc = plan.kc, .nc = plan.nc};
    for_each_task(tasks, threads, [&](std::size_t t) {
        const Range f{t * per_task * l.panel, std::min(l.out, (t + 1) * per_task * l.panel)};
        k.linear_blocked(l, packed, x, rows, f, b, y, l.out);
    });
}

} // namespace

std::size_t layered_scratch_size(const Dims& d, const ForwardPlan& plan, std::size_t B) {
    return std::min(plan.mc, B) * d.value_size2;
}

namespace {

template <class VT>
void layered(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed, const BatchOf<VT>& x,
             const ForwardPlan& plan, std::size_t threads, float* a) {
    const std::size_t q = d.query_size, L = d.value_size1, D = d.value_size2, o = d.output_size;
    // A shared V is split in blocks of columns, each task running every sample of the block
    // over them (V read once per block); a V per sample goes one sample per task, all columns,
    // as one stream (kernels/weighted_sum.hpp).
    constexpr std::size_t block = 256; // 1 KiB of each row, whole cache lines
    const std::size_t column_blocks = threads > 1 ? (D + block - 1) / block : 1;
    const std::size_t columns = threads > 1 ? block : D;
    for (std::size_t s0 = 0; s0 < x.B; s0 += plan.mc) {
        const std::size_t rows = std::min(plan.mc, x.B - s0);
        const float* Q = x.Q + s0 * q;
        float* w = x.attn_weights + s0 * L;
        linear_layer(k, layout.scores, packed,
                     {.x1 = Q, .ld1 = q, .n1 = q, .x2 = x.K + s0 * x.k_stride, .ld2 = x.k_stride, .n2 = d.key_size},
                     rows, plan, threads, w);
        for (std::size_t r = 0; r < rows; ++r) k.softmax(w + r * L, L);
        const VT* V = x.V + s0 * x.v_stride;
        if (x.v_stride == 0) // one V for the block: each column block runs all rows, V read once
            for_each_task(column_blocks, threads, [&](std::size_t c) {
                weighted_sum_with(
                    k,
                    WeightedSumOf<VT>{
                        .rows = rows, .w = w, .ldw = L, .V = V, .v_stride = 0, .L = L, .d = D, .a = a, .lda = D},
                    {c * columns, std::min(D, (c + 1) * columns)});
            });
        else
            for_each_task(rows, threads, [&](std::size_t r) {
                weighted_sum_with(k,
                                  WeightedSumOf<VT>{.rows = 1,
                                                    .w = w + r * L,
                                                    .ldw = L,
                                                    .V = V + r * x.v_stride,
                                                    .v_stride = 0,
                                                    .L = L,
                                                    .d = D,
                                                    .a = a + r * D,
                                                    .lda = D},
                                  {0, D});
            });
        linear_layer(k, layout.combine, packed, {.x1 = Q, .ld1 = q, .n1 = q, .x2 = a, .ld2 = D, .n2 = D}, rows, plan,
                     threads, x.output + s0 * o);
    }
}

} // namespace

void layered_forward(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed,
                     const Batch& x, const ForwardPlan& plan, std::size_t threads, float* scratch) {
    layered(k, d, layout, packed, x, plan, threads, scratch);
}

void layered_forward(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed,
                     const BatchOf<bfloat16>& x, const ForwardPlan& plan, std::size_t threads, float* scratch) {
    layered(k, d, layout, packed, x, plan, threads, scratch);
}

} // namespace myattn::detail
