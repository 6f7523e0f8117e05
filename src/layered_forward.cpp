#include "layered_forward.hpp"

#include <algorithm>
#include <optional>

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

/// A Linear over a block's rows as tasks: its features in blocks of at most NC (or one
/// block), as many blocks as NC needs, rounded up to a multiple of the threads, all of about the
/// same number of whole panels. Each weight is read by one task only.
struct LinearTasks {
    const KernelTable* k;
    const LinearLayout* l;
    const float* packed;
    SplitRows x;
    std::size_t rows;
    float* y;
    std::size_t ldy;
    LinearBlocking b;
    std::size_t per_task, count;

    LinearTasks(const KernelTable& table, const LinearLayout& layout, const float* weights, const ForwardPlan& plan,
                std::size_t threads, const SplitRows& in, std::size_t n, float* out, std::size_t ld)
        : k(&table), l(&layout), packed(weights), x(in), rows(n), y(out), ldy(ld), b{.kc = plan.kc, .nc = plan.nc} {
        const std::size_t panels = (l->out + l->panel - 1) / l->panel;
        const std::size_t nc_panels = plan.nc == 0 ? panels : std::max<std::size_t>(1, plan.nc / l->panel);
        const std::size_t blocks = (panels + nc_panels - 1) / nc_panels;
        const std::size_t balanced = (blocks + threads - 1) / threads * threads;
        per_task = (panels + balanced - 1) / balanced;
        count = (panels + per_task - 1) / per_task;
    }
    void operator()(std::size_t t) const {
        const Range f{t * per_task * l->panel, std::min(l->out, (t + 1) * per_task * l->panel)};
        k->linear_blocked(*l, packed, x, rows, f, b, y, ldy);
    }
};

/// A block's weighted sum as tasks. A V per sample streams best whole, one task per sample
/// (kernels/weighted_sum.hpp), when there are samples enough to share out; otherwise, and for
/// a V shared by the rows (read once per column block), the tasks take blocks of columns. V of
/// floats or, precision bf16, of bf16s (the driver checked the table has those kernels).
template <class VT>
struct WeightedSumTasks {
    static constexpr std::size_t block = 256; // 1 KiB of each row, whole cache lines

    const KernelTable* k;
    WeightedSumOf<VT> op;
    std::size_t columns, column_blocks, count;

    WeightedSumTasks(const KernelTable& table, const WeightedSumOf<VT>& sum, std::size_t threads)
        : k(&table), op(sum), columns(threads == 1 || (sum.v_stride != 0 && sum.rows >= 4 * threads) ? sum.d : block),
          column_blocks((sum.d + columns - 1) / columns), count((sum.v_stride != 0 ? sum.rows : 1) * column_blocks) {}
    void operator()(std::size_t t) const {
        const std::size_t g = t / column_blocks, c = t % column_blocks * columns;
        WeightedSumOf<VT> part = op;
        if (op.v_stride != 0) {
            part.rows = 1;
            part.w += g * op.ldw;
            part.V += g * op.v_stride;
            part.a += g * op.lda;
        }
        weighted_sum_with(*k, part, {c, std::min(op.d, c + columns)});
    }
};

/// The table's kernels, each step of a block shared by the threads (compose's Steps).
struct SharedSteps {
    const KernelTable& k;
    const PackedLayout& layout;
    const float* packed;
    const ForwardPlan& plan;
    std::size_t threads;

    static constexpr bool partial_inputs = false; // the combine as one Linear: a pass fewer

    void linear(Layer which, const SplitRows& x, std::size_t rows, float* y, std::size_t ldy) const {
        const LinearTasks tasks(k, which == Layer::scores ? layout.scores : layout.combine, packed, plan, threads, x,
                                rows, y, ldy);
        for_each_task(tasks.count, threads, tasks);
    }

    void softmax(float* s, std::size_t rows, std::size_t n) const {
        for (std::size_t r = 0; r < rows; ++r) k.softmax(s + r * n, n);
    }

    template <class VT>
    void weighted_sum(const WeightedSumOf<VT>& op) const {
        const WeightedSumTasks<VT> tasks(k, op, threads);
        for_each_task(tasks.count, threads, tasks);
    }
};

/// The blocks in a pipeline, for a V per sample on several threads: each block's weighted sum
/// (memory-bound) shares one fork and join with the scores of the block after and the combine
/// of the block before (compute-bound), which is all the blocks' order in compose() allows, as
/// a combine waits only for its own block's `a`. One thread's memory stream does not overlap
/// with its own FMAs (docs/tuning.md), but while some threads stream V the others compute. The
/// blocks' `a` alternate between two buffers; the softmax is SharedSteps'.
template <class VT>
struct PipelinedSteps : SharedSteps {
    /// The last block's weighted sum, not run yet; its combine, which waits for it; and the
    /// combine of the block before, which does not.
    std::optional<WeightedSumTasks<VT>> sum{};
    std::optional<LinearTasks> blocked{}, ready{};

    void linear(Layer which, const SplitRows& x, std::size_t rows, float* y, std::size_t ldy) {
        if (which == Layer::combine) {
            blocked.emplace(k, layout.combine, packed, plan, threads, x, rows, y, ldy);
            return;
        }
        run(LinearTasks(k, layout.scores, packed, plan, threads, x, rows, y, ldy));
    }
    void weighted_sum(const WeightedSumOf<VT>& op) { sum.emplace(k, op, threads); }
    /// What the last blocks left.
    void flush() {
        run(std::nullopt);
        run(std::nullopt);
    }

  private:
    /// The waiting weighted sum, the scores, if any, and the ready combine as one set of tasks,
    /// the weighted sum's first: it is the longest, and its V starts streaming at once. Then the
    /// blocked combine is ready.
    void run(const std::optional<LinearTasks>& scores) {
        const std::size_t n_sum = sum ? sum->count : 0, n_scores = scores ? scores->count : 0,
                          n_ready = ready ? ready->count : 0;
        for_each_task(n_sum + n_scores + n_ready, threads, [&](std::size_t t) {
            if (t < n_sum) return (*sum)(t);
            if (t < n_sum + n_scores) return (*scores)(t - n_sum);
            (*ready)(t - n_sum - n_scores);
        });
        sum.reset();
        ready = blocked;
        blocked.reset();
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
    if (block_per_thread(B, plan.mc, mr, threads) != 0) return B * d.value_size2;
    return std::min(plan.pipelined && threads > 1 ? 2 * plan.mc : plan.mc, B) * d.value_size2;
}

namespace {

template <class VT>
void layered(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed, const BatchOf<VT>& x,
             const ForwardPlan& plan, std::size_t threads, float* a) {
#ifdef MYATTN_WITH_TBB
    const std::size_t mc = block_per_thread(x.B, plan.mc, k.mr, threads);
    // A V per sample that streams from memory, and at most one whole block per thread: those
    // would all stream V at once, then all compute. The blocks pipelined instead, a fork and
    // join per block. From two blocks each on, the threads drift apart and overlap their
    // streams with each other's Linears by themselves, with no join at all (docs/tuning.md).
    if (plan.pipelined && threads > 1 && x.v_stride != 0 && (mc == 0 || x.B <= mc * threads)) {
        PipelinedSteps<VT> steps{{.k = k, .layout = layout, .packed = packed, .plan = plan, .threads = threads}};
        for (std::size_t s0 = 0; s0 < x.B; s0 += plan.mc)
            compose(steps, d, x, {s0, std::min(x.B, s0 + plan.mc)}, a + s0 / plan.mc % 2 * plan.mc * d.value_size2);
        steps.flush();
        return;
    }
    // Whole blocks per thread, each with its own rows of `a`: no fork and join per layer.
    if (mc != 0) {
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
