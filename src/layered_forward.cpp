#include "layered_forward.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

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

/// Row g of a weighted sum over a V per sample: its weights, its V and its row of `a`.
template <class VT>
WeightedSumOf<VT> sample(WeightedSumOf<VT> op, std::size_t g) {
    op.rows = 1;
    op.w += g * op.ldw;
    op.V += g * op.v_stride;
    op.a += g * op.lda;
    return op;
}

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
        weighted_sum_with(*k, op.v_stride != 0 ? sample(op, g) : op, {c, std::min(op.d, c + columns)});
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

/// The blocks as a dataflow, for a V per sample on several threads. compose() records each
/// block's steps, then the threads take them as tasks in any order their inputs allow: a
/// block's scores at once; a sample's softmax and weighted sum once its block's scores are in;
/// the block's combine once all its weighted sums are. Half the threads prefer the combines,
/// then the scores; the other half the weighted sums. So some threads stream V (memory-bound)
/// while the others run the Linears (FMA-bound), with no join between blocks: one thread's
/// stream does not overlap with its own FMAs (docs/tuning.md). Each task runs what SharedSteps
/// would, so the bits are the same. Each block has its own rows of `a`. The records of at most
/// max_blocks blocks live on the stack: forward allocates nothing.
template <class VT>
class DataflowSteps {
  public:
    static constexpr bool partial_inputs = false;
    static constexpr std::size_t max_blocks = 32; // a join per 32 blocks: 1000s of samples of X

    DataflowSteps(const KernelTable& k, const PackedLayout& layout, const float* packed, const ForwardPlan& plan,
                  std::size_t threads)
        : k_(k), layout_(layout), packed_(packed), plan_(plan), threads_(threads) {}

    /// Starts recording a block, first running those recorded if there is no room.
    void begin_block() {
        if (size_ == max_blocks) run();
        blocks_[size_++] = Block{};
    }
    void linear(Layer which, const SplitRows& x, std::size_t rows, float* y, std::size_t ldy) {
        blocks_[size_ - 1].linear[which == Layer::scores ? 0 : 1].emplace(
            k_, which == Layer::scores ? layout_.scores : layout_.combine, packed_, plan_, threads_, x, rows, y, ldy);
    }
    void softmax(float* s, std::size_t /*rows*/, std::size_t n) {
        blocks_[size_ - 1].s = s;
        blocks_[size_ - 1].n = n;
    }
    void weighted_sum(const WeightedSumOf<VT>& op) { blocks_[size_ - 1].sum = op; }

    /// Runs the recorded blocks on the threads, then forgets them. A thread that finds nothing
    /// ready waits for another's task to end; whatever threads TBB gives, one alone runs all.
    void run() {
        for_each_task(threads_, threads_, [&](std::size_t i) { work(i % 2 == 0); });
        size_ = 0;
    }

  private:
    enum Stage : std::size_t { scores, sums, combine, stages };

    struct Block {
        std::optional<LinearTasks> linear[2]; // scores, combine
        float* s = nullptr;
        std::size_t n = 0;
        WeightedSumOf<VT> sum{};
        std::size_t next[stages]{}, done[stages]{};

        [[nodiscard]] std::size_t count(Stage st) const {
            return st == sums ? sum.rows : linear[st == scores ? 0 : 1]->count;
        }
    };
    struct Task {
        std::size_t block;
        Stage stage;
        std::size_t index;
    };

    /// Whether a block's stage may start: the scores at once, the weighted sums after the
    /// scores, the combine after the weighted sums.
    [[nodiscard]] static bool ready(const Block& x, Stage st) {
        return st == scores || x.done[st - 1] == x.count(static_cast<Stage>(st - 1));
    }

    /// The next task in order of preference, the earliest block first; none if nothing is ready.
    /// `left`: whether any task is still to be handed out.
    std::optional<Task> pick(bool computes, bool& left) {
        static constexpr Stage compute_first[] = {combine, scores, sums}, stream_first[] = {sums, combine, scores};
        left = false;
        for (const Stage st : computes ? compute_first : stream_first)
            for (std::size_t b = 0; b < size_; ++b) {
                Block& x = blocks_[b];
                if (x.next[st] == x.count(st)) continue;
                left = true;
                if (ready(x, st)) return Task{b, st, x.next[st]++};
            }
        return std::nullopt;
    }

    void execute(const Task& t) const {
        const Block& x = blocks_[t.block];
        if (t.stage != sums) return (*x.linear[t.stage == scores ? 0 : 1])(t.index);
        k_.softmax(x.s + t.index * x.n, x.n);
        weighted_sum_with(k_, sample(x.sum, t.index), {0, x.sum.d});
    }

    void work(bool computes) {
        for (;;) {
            bool left = false;
            std::optional<Task> t;
            std::size_t seen = 0;
            {
                const std::lock_guard<std::mutex> lock(mutex_);
                t = pick(computes, left);
                seen = ended_.load(std::memory_order_relaxed);
            }
            if (!left) return;
            if (t) {
                execute(*t);
                const std::lock_guard<std::mutex> lock(mutex_);
                ++blocks_[t->block].done[t->stage];
                ended_.fetch_add(1, std::memory_order_relaxed);
                continue;
            }
            // Nothing ready until another task ends: wait for that without the lock.
            while (ended_.load(std::memory_order_relaxed) == seen) std::this_thread::yield();
        }
    }

    const KernelTable& k_;
    const PackedLayout& layout_;
    const float* packed_;
    const ForwardPlan& plan_;
    std::size_t threads_;
    std::array<Block, max_blocks> blocks_{};
    std::size_t size_ = 0;
    std::mutex mutex_;
    std::atomic<std::size_t> ended_{0}; // tasks ended, read without the lock by threads that wait
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
    if (block_per_thread(B, plan.mc, mr, threads) != 0 || (plan.pipelined && threads > 1)) return B * d.value_size2;
    return std::min(plan.mc, B) * d.value_size2;
}

namespace {

template <class VT>
void layered(const KernelTable& k, const Dims& d, const PackedLayout& layout, const float* packed, const BatchOf<VT>& x,
             const ForwardPlan& plan, std::size_t threads, float* a) {
#ifdef MYATTN_WITH_TBB
    // A V per sample that streams from memory: its blocks as a dataflow.
    if (plan.pipelined && threads > 1 && x.v_stride != 0) {
        DataflowSteps<VT> steps(k, layout, packed, plan, threads);
        for (std::size_t s0 = 0; s0 < x.B; s0 += plan.mc) {
            steps.begin_block();
            compose(steps, d, x, {s0, std::min(x.B, s0 + plan.mc)}, a + s0 * d.value_size2);
        }
        steps.run();
        return;
    }
    // Whole blocks per thread, each with its own rows of `a`: no fork and join per layer.
    if (const std::size_t mc = block_per_thread(x.B, plan.mc, k.mr, threads); mc != 0) {
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
