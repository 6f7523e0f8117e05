// The layered forward for weights beyond L2 (src/forward_plan.hpp): the plan as a pure function
// of made-up caches, and bitwise equality with the fused path it replaces, at odd sizes, for
// made-up blockings, the feature split's plan, and 1 or 2 threads, at every precision.
#include <catch2/catch.hpp>
#include <cstring>
#include <initializer_list>
#include <utility>
#include <vector>

#include "dispatch.hpp"
#include "forward_plan.hpp"
#include "layered_forward.hpp"
#include "shapes.hpp"
#include "support/isas.hpp"
#include "support/oracle.hpp"
#include "support/random.hpp"

#ifdef MYATTN_WITH_TBB
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#endif

using namespace myattn;
using namespace myattn::test;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

constexpr detail::CacheSizes zen4{.l1d = 32 * 1024, .l2 = 1024 * 1024, .l3 = 32 * 1024 * 1024};
constexpr detail::CacheSizes zen3{.l1d = 32 * 1024, .l2 = 512 * 1024, .l3 = 32 * 1024 * 1024};
constexpr detail::CacheSizes emerald_rapids{.l1d = 48 * 1024, .l2 = 2048 * 1024, .l3 = 260 * 1024 * 1024};

/// Runs `body` on `threads` threads (or on this one without TBB).
template <class Body>
void on_threads(int threads, const Body& body) {
#ifdef MYATTN_WITH_TBB
    tbb::task_arena(threads).execute(body);
#else
    (void)threads;
    body();
#endif
}

struct Packed {
    detail::PackedLayout layout;
    std::vector<float> weights;
};

Packed pack(const detail::KernelTable& t, const Parameters& p) {
    Packed r{t.layout(p.dims()), std::vector<float>(t.layout(p.dims()).size)};
    t.pack(p.dims(),
           {.attn_weight = p.attn_weight().data(),
            .attn_bias = p.attn_bias().data(),
            .combine_weight = p.combine_weight().data(),
            .combine_bias = p.combine_bias().data()},
           r.weights.data());
    return r;
}

} // namespace

TEST_CASE("plan: blocking and path from made-up caches", "[plan]") {
    using detail::plan_forward;
    // AVX-512's 8 x 32 tile: the 8 x KC input sliver in half of L1d, KC x NC weights in half of
    // L2, MC samples' KC inputs and NC outputs in a quarter of L2.
    const detail::ForwardPlan z = plan_forward(detail::shape_X, zen4, 8, 32);
    CHECK(z.layered);
    CHECK(z.kc == 512);
    CHECK(z.nc == 256);
    CHECK(z.mc == 80);
    const detail::ForwardPlan e = plan_forward(detail::shape_X, emerald_rapids, 8, 32);
    CHECK(e.layered);
    CHECK(e.kc == 768);
    CHECK(e.nc == 320);
    CHECK(e.mc == 120);
    // A sample's V of X (2 MiB) fills L2 on each: more threads run the blocks pipelined.
    CHECK(z.pipelined);
    CHECK(e.pipelined);
    CHECK(detail::to_string(e) == "layered: MC 120, NC 320, KC 768, pipelined");
    CHECK_FALSE(plan_forward(detail::shape_X, {.l1d = 48 * 1024, .l2 = 4 * 1024 * 1024, .l3 = 0}, 8, 32).pipelined);
    // AVX2's 6 x 16 tile: whole multiples of the tile, whatever the quotients.
    const detail::ForwardPlan a = plan_forward(detail::shape_X, emerald_rapids, 6, 16);
    CHECK(a.kc == 1024);
    CHECK(a.nc == 256);
    CHECK(a.mc % 6 == 0);
    CHECK(a.mc * (a.kc + a.nc) * 4 <= emerald_rapids.l2 / 4);
    // S (33 KB of weights) and T (546 KB) stay fused where their weights fit in L2 with room to spare.
    for (const detail::CacheSizes& c : {zen4, emerald_rapids}) {
        CHECK_FALSE(plan_forward(detail::shape_S, c, 8, 32).layered);
        CHECK_FALSE(plan_forward(detail::shape_T, c, 8, 32).layered);
    }
    // With half of that L2 (Zen 3), T's weights no longer fit beside a group's rows: layered.
    const detail::ForwardPlan t3 = plan_forward(detail::shape_T, zen3, 6, 16);
    CHECK(t3.layered);
    CHECK_FALSE(t3.pipelined); // a sample's V is 10 KiB
    CHECK(detail::to_string(t3) == "layered: MC 42, NC 96, KC 640");
    // The fused kernels' blocking comes from the same caches: KC as the layered path's, the next
    // group's V requested only while it fits in a quarter of L2.
    const detail::FusedBlocking fz = plan_forward(detail::shape_T, zen4, 8, 32).fused(0);
    CHECK(fz.kc == 512); // the kernels' constant, which assumes this L1d
    CHECK(fz.prefetch_limit == 256 * 1024);
    const detail::ForwardPlan te = plan_forward(detail::shape_T, emerald_rapids, 8, 32);
    CHECK(te.fused(0).kc == 768);
    CHECK(te.fused(0).prefetch_limit == 512 * 1024);
    CHECK(detail::to_string(te) == "fused: KC 768, V prefetch 512 KiB, Q and K too past 130 MiB of inputs");
    CHECK(te.fused(0).fma_lanes == 16);
    // Two 512-bit FMA pipes (src/dispatch.hpp): the requests paced for twice the FMAs a cycle.
    const detail::ForwardPlan tw = plan_forward(detail::shape_T, emerald_rapids, 8, 32, 32);
    CHECK(tw.fused(0).fma_lanes == 32);
    CHECK(detail::to_string(tw) ==
          "fused: KC 768, V prefetch 512 KiB at 32 FMA lanes a cycle, Q and K too past 130 MiB of inputs");
    CHECK(plan_forward(detail::shape_T, emerald_rapids, 6, 16).fused(0).kc == 1024);
    // A batch whose inputs exceed half of L3 comes from memory: its Q and K are requested too.
    const std::size_t t_sample = 4 * (256 + 256 + 10 * 256); // T's Q, K and V
    CHECK_FALSE(fz.request_qk);
    const detail::Batch own{4, nullptr, nullptr, nullptr, 256, 10 * 256, nullptr, nullptr},
        shared{4, nullptr, nullptr, nullptr, 0, 0, nullptr, nullptr};
    CHECK(detail::input_bytes(detail::shape_T, own) == 4 * t_sample);
    CHECK(detail::input_bytes(detail::shape_T, shared) == 4 * (4 * 256 + 256 + 10 * 256));
    CHECK_FALSE(plan_forward(detail::shape_T, zen4, 8, 32).fused(1024 * t_sample).request_qk);
    CHECK(plan_forward(detail::shape_T, zen4, 8, 32).fused(16384 * t_sample).request_qk);
    CHECK_FALSE(te.fused(8192 * t_sample).request_qk);
    CHECK(te.fused(16384 * t_sample).request_qk);
    // X below one group per thread runs fused with the layered plan's KC.
    CHECK(e.fused(0).kc == 768);
    // Tiny or unknown-looking caches never give empty blocks.
    const detail::ForwardPlan tiny = plan_forward(detail::shape_S, {.l1d = 1024, .l2 = 4096, .l3 = 0}, 8, 32);
    CHECK(tiny.layered);
    CHECK(tiny.kc == 64);
    CHECK(tiny.nc == 32);
    CHECK(tiny.mc == 8);
    CHECK(tiny.prefetch_limit == 1024);
    // The feature split keeps the kernels' own blocking.
    CHECK(detail::plan_by_features(3).fused(0).kc == 0);
    CHECK(detail::plan_by_features(3).fused(0).prefetch_limit == 0);
    CHECK_FALSE(detail::plan_by_features(3).fused(std::size_t(-1)).request_qk);
}

TEST_CASE("layered: threads take whole blocks when the plan has one for each, evened out", "[plan]") {
    using detail::block_per_thread;
    CHECK(block_per_thread(1024, 42, 6, 1) == 0);   // one thread: nothing to share
    CHECK(block_per_thread(42, 42, 6, 2) == 0);     // one block of MC: the threads share its layers
    CHECK(block_per_thread(43, 42, 6, 2) == 24);    // two: 24 + 19
    CHECK(block_per_thread(64, 42, 6, 2) == 36);    // 36 + 28, not 42 + 22
    CHECK(block_per_thread(1024, 42, 6, 2) == 42);  // 25 blocks of at most MC, made 26
    CHECK(block_per_thread(1000, 80, 8, 16) == 0);  // 13 blocks for 16 threads
    CHECK(block_per_thread(4096, 80, 8, 16) == 64); // 52 blocks, made 64
    for (std::size_t B : {24, 65, 300, 1024, 4097})
        for (std::size_t threads : {2, 3, 16}) {
            CAPTURE(B, threads);
            const std::size_t m = block_per_thread(B, 40, 8, threads);
            if ((B + 39) / 40 < threads) {
                CHECK(m == 0);
                continue;
            }
            CHECK(m % 8 == 0);
            CHECK(m <= 40);
            CHECK((B + m - 1) / m >= threads);
        }
}

TEST_CASE("layered: blocked Linear at out = 1030, in = 2051 gives the per-group bits", "[layered][linear][each_isa]") {
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = detail::kernels_for(isa);
        if (isa == Isa::scalar) {
            SUCCEED("the scalar blocked Linear is its plain one: nothing to compare");
            return;
        }
        const std::size_t out = 1030, n1 = 1027, n2 = 1024, n = n1 + n2;
        std::mt19937_64 rng(5);
        const std::vector<float> W = normal(rng, out * n), b = normal(rng, out);
        const detail::LinearLayout l = t.linear_layout(out, n1, n2);
        std::vector<float> packed(l.size);
        t.pack_linear(l, W.data(), b.data(), packed.data());
        // KC slices that end inside x1, on its end and inside x2; NC blocks of 3 panels and a
        // last short one. Few rows: this case runs under emulation too (the batches and
        // threads are covered at smaller sizes below).
        const detail::LinearBlocking blk{.kc = 300, .nc = 3 * t.nr};
        for (std::size_t rows : {1, 7}) {
            CAPTURE(rows);
            const std::vector<float> x1 = normal(rng, rows * n1), x2 = normal(rng, rows * n2);
            const detail::SplitRows x{.x1 = x1.data(), .ld1 = n1, .n1 = n1, .x2 = x2.data(), .ld2 = n2, .n2 = n2};
            std::vector<float> want(rows * out), got(rows * out);
            t.linear(l, packed.data(), x, rows, {0, out}, want.data(), out);
            t.linear_blocked(l, packed.data(), x, rows, {0, out}, blk, got.data(), out);
            CHECK(same_bits(got, want));
        }
    }
}

namespace {

/// Table t's layered driver gives its fused path's bits at odd sizes (partial panels, KC slices
/// inside q and inside k or d) for B samples, with made-up blockings and the feature split's
/// plan, on 1 to 3 threads, pipelined or not; so does the fused path with made-up KCs, with and
/// without the next group's V (and Q and K) requested ahead.
void check_layered_is_fused(const detail::KernelTable& t, std::initializer_list<std::size_t> batches) {
    const Dims d{13, 40, 71, 21, 35};
    const Parameters p = Parameters::random(d, 31);
    const Packed w = pack(t, p);
    const detail::ForwardPlan plans[] = {{.layered = true, .kc = 16, .nc = 2 * t.nr, .mc = 3 * t.mr},
                                         {.layered = true, .kc = 50, .nc = t.nr, .mc = 5}};
    for (std::size_t B : batches)
        for (bool shared : {false, true}) {
            const Inputs x = random_inputs(d, B, shared, shared, B);
            const std::size_t ks = shared ? 0 : d.key_size, vs = shared ? 0 : d.value_size1 * d.value_size2;
            const auto batch = [&](std::vector<float>& out, std::vector<float>& weights) {
                return detail::Batch{B, x.Q.data(), x.K.data(), x.V.data(), ks, vs, out.data(), weights.data()};
            };
            std::vector<float> out(B * d.output_size), weights(B * d.value_size1);
            std::vector<float> scratch(t.scratch_size(d, B));
            t.forward(d, w.layout, w.weights.data(), batch(out, weights), {0, B}, {}, scratch.data());
            for (const detail::FusedBlocking fb :
                 {detail::FusedBlocking{.kc = 16, .prefetch_limit = 1},
                  detail::FusedBlocking{.kc = 50, .prefetch_limit = 1 << 30},
                  detail::FusedBlocking{.kc = 50, .prefetch_limit = 1 << 30, .fma_lanes = 32},
                  detail::FusedBlocking{.kc = 50, .prefetch_limit = 1 << 30, .request_qk = true},
                  detail::FusedBlocking{.kc = 16, .prefetch_limit = 1, .request_qk = true}}) {
                CAPTURE(B, shared, fb.kc, fb.prefetch_limit, fb.fma_lanes, fb.request_qk);
                std::vector<float> o(out.size()), a(weights.size());
                t.forward(d, w.layout, w.weights.data(), batch(o, a), {0, B}, fb, scratch.data());
                CHECK(same_bits(o, out));
                CHECK(same_bits(a, weights));
            }
            // The pipeline, a V per sample's dataflow: two blocks, and as many as B allows up to
            // 13, on 2 threads; three on 3. The feature split too: one block of all B samples,
            // the Linears in whole panels.
            const auto pipelined = [&](std::size_t blocks) {
                return detail::ForwardPlan{
                    .layered = true, .kc = 50, .nc = t.nr, .mc = (B + blocks - 1) / blocks, .pipelined = true};
            };
            const std::pair<detail::ForwardPlan, int> runs[] = {{plans[0], 1},
                                                                {plans[0], 2},
                                                                {plans[1], 2},
                                                                {pipelined(2), 2},
                                                                {pipelined(3), 3},
                                                                {pipelined(13), 2},
                                                                {detail::plan_by_features(B), 2}};
            for (const auto& run : runs) {
                // Named, not structured bindings: clang 14 cannot capture bindings in lambdas.
                const detail::ForwardPlan& plan = run.first;
                const int threads = run.second;
                CAPTURE(B, shared, plan.kc, plan.nc, plan.mc, threads);
                std::vector<float> o(out.size()), a(weights.size());
                std::vector<float> s(detail::layered_scratch_size(d, plan, B, t.mr, static_cast<std::size_t>(threads)));
                on_threads(threads, [&] {
                    detail::layered_forward(t, d, w.layout, w.weights.data(), batch(o, a), plan,
                                            static_cast<std::size_t>(threads), s.data());
                });
                CHECK(same_bits(o, out));
                CHECK(same_bits(a, weights));
            }
        }
}

} // namespace

TEST_CASE("layered: same bits as the fused path at odd sizes, any blocking or feature split, 1 or 2 threads",
          "[layered][forward][each_isa]") {
#ifdef MYATTN_WITH_TBB
    const tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 2);
#endif
    FOR_EACH_ISA(isa) {
        // Its reference is slow under emulation: scalar leaves out the largest batch.
        if (isa == Isa::scalar)
            check_layered_is_fused(detail::kernels_for(isa), {1, 7, 65});
        else
            check_layered_is_fused(detail::kernels_for(isa), {1, 7, 65, 300});
    }
}

TEST_CASE("layered: int8 and bf16 kernel sets, same bits as their fused path, any blocking or feature split",
          "[layered][forward][int8][bf16][each_isa]") {
#ifdef MYATTN_WITH_TBB
    const tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 2);
#endif
    // The Steps are the f32 ones with another Linear: a group and a half, and two blocks, suffice.
    constexpr Precision reduced[] = {Precision::int8, Precision::bf16};
    FOR_EACH_KERNELS(t, reduced) { check_layered_is_fused(t, {7, 65}); }
}

TEST_CASE("layered: MyAttn with 4 MiB of weights runs layered, a sample's bits as when run alone",
          "[layered][each_isa]") {
#ifdef MYATTN_WITH_TBB
    const tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 2);
#endif
    FOR_EACH_ISA(isa) {
        // 4.2 MB of weights: layered on every CPU with less than 5.6 MB of L2 per core.
        const Dims d{512, 512, 512, 512, 512};
        const MyAttn attn(Parameters::random(d, 41), isa);
        REQUIRE(attn.plan().starts_with("layered"));
        // One sample more than a group: the smallest batch that runs layered. V shared (2 MiB).
        const std::size_t B = detail::kernels_for(isa).mr + 1;
        const Inputs x = random_inputs(d, B, false, true, 42);
        std::vector<float> alone_out(B * d.output_size), alone_w(B * d.value_size1);
        for (std::size_t b = 0; b < B; ++b)
            attn.forward({x.Q.data() + b * d.query_size, {1, 1, d.query_size}},
                         {x.K.data() + b * d.key_size, {1, 1, d.key_size}}, x.v(d),
                         {alone_out.data() + b * d.output_size, {1, 1, d.output_size}},
                         {alone_w.data() + b * d.value_size1, {1, d.value_size1}});
        // 2 threads (1 thread and other blockings: the odd-size case above).
        ForwardResult r;
        on_threads(2, [&] { r = attn.forward(x.q(d), x.k(d), x.v(d)); });
        CHECK(same_bits(r.output, alone_out));
        CHECK(same_bits(r.attn_weights, alone_w));
    }
}
