#include "layered_forward.hpp"

#include <algorithm>

#include "kernels/compose.hpp"

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

/// The table's kernels, each step of a block shared by the threads (compose's Steps).
struct SharedSteps {
    const KernelTable& k;
    const PackedLayout& layout;
    const float* packed;
    const ForwardPlan& plan;
    std::size_t threads;

    static constexpr bool partial_inputs = false; // the combine as one Linear: a pass fewer

    /// A Linear's features in blocks of at most NC (or one block), one task each: as many blocks
    /// as NC needs, rounded up to a multiple of the threads, all of about the same number of
    /// whole panels. Each weight is read by one task only.
    void linear(Layer which, const SplitRows& x, std::size_t rows, float* y, std::size_t ldy) const {
        const LinearLayout& l = which == Layer::scores ? layout.scores : layout.combine;
        const std::size_t panels = (l.out + l.panel - 1) / l.panel;
        const std::size_t nc_panels = plan.nc == 0 ? panels : std::max<std::size_t>(1, plan.nc / l.panel);
        const std::size_t blocks = (panels + nc_panels - 1) / nc_panels;
        const std::size_t balanced = (blocks + threads - 1) / threads * threads;
        const std::size_t per_task = (panels + balanced - 1) / balanced;
        const std::size_t tasks = (panels + per_task - 1) / per_task;
        const LinearBlocking b{.kc = plan.kc, .nc = plan.nc};
        for_each_task(tasks, threads, [&](std::size_t t) {
            const Range f{t * per_task * l.panel, std::min(l.out, (t + 1) * per_task * l.panel)};
            k.linear_blocked(l, packed, x, rows, f, b, y, ldy);
        });
    }

    void softmax(float* s, std::size_t rows, std::size_t n) const {
        for (std::size_t r = 0; r < rows; ++r) k.softmax(s + r * n, n);
    }

    /// A V per sample streams best whole, one task per sample (kernels/weighted_sum.hpp), when
    /// there are samples enough to share out; otherwise, and for a V shared by the rows (read
    /// once per column block), the tasks take blocks of columns. V of floats or, precision
    /// bf16, of bf16s (the driver checked the table has those kernels).
    template <class VT>
    void weighted_sum(const WeightedSumOf<VT>& op) const {
        constexpr std::size_t block = 256; // 1 KiB of each row, whole cache lines
        const bool per_sample = op.v_stride != 0;
        const std::size_t columns = threads == 1 || (per_sample && op.rows >= 4 * threads) ? op.d : block;
        const std::size_t column_blocks = (op.d + columns - 1) / columns, groups = per_sample ? op.rows : 1;
        for_each_task(groups * column_blocks, threads, [&](std::size_t t) {
            const std::size_t g = t / column_blocks, c = t % column_blocks * columns;
            WeightedSumOf<VT> part = op;
            if (per_sample) {
                part.rows = 1;
                part.w += g * op.ldw;
                part.V += g * op.v_stride;
                part.a += g * op.lda;
            }
            weighted_sum_with(k, part, {c, std::min(op.d, c + columns)});
        });
    }
};

} // namespace

std::size_t block_per_thread(std::size_t B, std::size_t mc, std::size_t mr, std::size_t threads) {
    const std::size_t planned = (B + mc - 1) / mc;
    if (threads < 2 || planned < threads) return 0;
    const std::size_t blocks = (planned + threads - 1) / threads * threads;
    return ((B + blocks - 1) / blocks + mr - 1) / mr * mr;
}

std::size_t layered_scratch_size(const Dims& d, const ForwardPlan& plan, std::size_t B, std::size_t mr,
                                 std::size_t threads) {
    return (block_per_thread(B, plan.mc, mr, threads) != 0 ? B : std::min(plan.mc, B)) * d.value_size2;
}

namespace {

template <class VT>
void layered(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed, const BatchOf<VT>& x,
             const ForwardPlan& plan, std::size_t threads, float* a) {
#ifdef MYATTN_WITH_TBB
    // Whole blocks per thread, each with its own rows of `a`: no fork and join per layer.
    if (const std::size_t mc = block_per_thread(x.B, plan.mc, k.mr, threads)) {
        const SharedSteps steps{.k = k, .layout = layout, .packed = packed, .plan = plan, .threads = 1};
        for_each_task((x.B + mc - 1) / mc, threads, [&](std::size_t i) {
            const Range s{i * mc, std::min(x.B, (i + 1) * mc)};
            compose(steps, d, x, s, a + s.begin * d.value_size2);
        });
        return;
    }
#endif
    const SharedSteps steps{.k = k, .layout = layout, .packed = packed, .plan = plan, .threads = threads};
    for (std::size_t s0 = 0; s0 < x.B; s0 += plan.mc) compose(steps, d, x, {s0, std::min(x.B, s0 + plan.mc)}, a);
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
