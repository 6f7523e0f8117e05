// Thread safety: one MyAttn shared by many threads, the ISA choice made by many threads at once,
// and results that do not depend on the thread count. Every test here is tagged [parallel] and
// named "concurrency: ..."; the tsan preset runs exactly these under ThreadSanitizer.
//
// Threads never call Catch's assertion macros (Catch2 v2 is not thread-safe): they record what
// they saw and the main thread checks it after joining them.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dispatch.hpp"
#include "forward_plan.hpp"
#include "layered_forward.hpp"
#include "myattn/myattn.hpp"
#include "shapes.hpp"
#include "support/isas.hpp"
#include "support/packed.hpp"
#include "support/random.hpp"

#ifdef MYATTN_WITH_TBB
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#endif

using namespace myattn;
using namespace myattn::test;

namespace {

/// Calls per thread in the shared-object test: the 10 000, or MYATTN_CONCURRENCY_CALLS
/// (to soak longer, or to shorten a run under a slow tool). The shape is tiny, so even under
/// ThreadSanitizer the default takes well under a second.
std::size_t calls_per_thread() {
    if (const char* env = std::getenv("MYATTN_CONCURRENCY_CALLS")) {
        const long n = std::strtol(env, nullptr, 10);
        if (n > 0) return static_cast<std::size_t>(n);
    }
    return 10'000;
}

bool same_bits(const std::vector<float>& a, const float* b, std::size_t n) {
    return a.size() == n && (n == 0 || std::memcmp(a.data(), b, n * sizeof(float)) == 0);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) { return same_bits(a, b.data(), b.size()); }

struct Case {
    Inputs x;
    ForwardResult want; // serial result
};

} // namespace

TEST_CASE("concurrency: one MyAttn shared by 8 threads gives bitwise the serial results", "[parallel]") {
    const Dims d{5, 3, 7, 6, 4};
    const MyAttn attn(Parameters::random(d, 21));
    // Distinct inputs of several batch sizes, shared and per-sample K / V; the last batch is
    // large enough for the driver to split it into tiles (run by TBB where the build has it).
    std::vector<Case> cases;
    for (std::size_t i = 0; i < 23; ++i)
        cases.push_back({random_inputs(d, 1 + i % 4, i % 3 == 1, i % 5 == 2, 1000 + i), {}});
    cases.push_back({random_inputs(d, 40, false, true, 2000), {}});
    std::size_t max_b = 0;
    for (Case& c : cases) {
        c.want = attn.forward(c.x.q(d), c.x.k(d), c.x.v(d));
        max_b = std::max(max_b, c.x.B);
    }

    constexpr std::size_t threads = 8;
    const std::size_t calls = calls_per_thread();
    std::vector<std::size_t> mismatches(threads, 0), errors(threads, 0);
    std::latch start(threads);
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            std::vector<float> out(max_b * d.output_size), w(max_b * d.value_size1);
            start.arrive_and_wait(); // all threads call forward at the same time
            for (std::size_t i = 0; i < calls; ++i) {
                const Case& c = cases[(t * 7 + i) % cases.size()];
                const std::size_t B = c.x.B;
                try {
                    if (i % 16 == 0) { // now and then the owning overload
                        const ForwardResult r = attn.forward(c.x.q(d), c.x.k(d), c.x.v(d));
                        if (!same_bits(c.want.output, r.output.data(), r.output.size()) ||
                            !same_bits(c.want.attn_weights, r.attn_weights.data(), r.attn_weights.size()))
                            ++mismatches[t];
                        continue;
                    }
                    attn.forward(c.x.q(d), c.x.k(d), c.x.v(d), {out.data(), {B, 1, d.output_size}},
                                 {w.data(), {B, d.value_size1}});
                    if (!same_bits(c.want.output, out.data(), B * d.output_size) ||
                        !same_bits(c.want.attn_weights, w.data(), B * d.value_size1))
                        ++mismatches[t];
                } catch (...) {
                    ++errors[t];
                }
            }
        });
    for (std::thread& th : pool) th.join();
    for (std::size_t t = 0; t < threads; ++t) {
        CAPTURE(t, calls);
        CHECK(mismatches[t] == 0);
        CHECK(errors[t] == 0);
    }
}

// ctest runs each test case in a process of its own, so there this really is the first use of
// the process-global ISA choice (in a whole-binary run, isa/<name>, it was made earlier and the
// test checks only that concurrent readers agree).
TEST_CASE("concurrency: the first-use ISA choice is thread-safe", "[parallel]") {
    constexpr std::size_t threads = 16;
    const Dims d{3, 2, 4, 3, 2};
    const Parameters p = Parameters::random(d, 5);
    const Inputs x = random_inputs(d, 2, false, false, 6);
    std::vector<int> seen(threads, -1), built_with(threads, -1);
    std::vector<std::string> reasons(threads);
    std::vector<ForwardResult> results(threads);
    std::vector<std::string> failures(threads);
    std::latch start(threads);
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            start.arrive_and_wait();
            try {
                // Half the threads ask first, half construct first: both paths make the choice.
                if (t % 2 == 0) seen[t] = static_cast<int>(active_isa());
                const MyAttn attn(p);
                built_with[t] = static_cast<int>(attn.isa());
                if (t % 2 == 1) seen[t] = static_cast<int>(active_isa());
                reasons[t] = active_isa_reason();
                results[t] = attn.forward(x.q(d), x.k(d), x.v(d));
            } catch (const std::exception& e) {
                failures[t] = e.what();
            }
        });
    for (std::thread& th : pool) th.join();
    const int chosen = static_cast<int>(active_isa());
    for (std::size_t t = 0; t < threads; ++t) {
        CAPTURE(t, failures[t]);
        CHECK(failures[t].empty());
        CHECK(seen[t] == chosen);
        CHECK(built_with[t] == chosen);
        CHECK(reasons[t] == reasons[0]);
        CHECK(same_bits(results[t].output, results[0].output));
        CHECK(same_bits(results[t].attn_weights, results[0].attn_weights));
    }
    CHECK_FALSE(reasons[0].empty());
}

TEST_CASE("concurrency: results are bitwise the same for any thread count, tiling or feature split",
          "[parallel][each_isa]") {
    FOR_EACH_ISA(isa) {
        const Dims d{16, 12, 33, 20, 10};
        const MyAttn attn(Parameters::random(d, 8), isa);
        const Inputs x = random_inputs(d, 300, false, false, 9); // B = 300: the driver runs ~16 tiles
        const ForwardResult base = attn.forward(x.q(d), x.k(d), x.v(d));

        // One sample at a time: no tiling, no parallelism.
        std::vector<float> out(d.output_size), w(d.value_size1);
        std::size_t per_sample_mismatches = 0;
        for (std::size_t b = 0; b < x.B; ++b) {
            attn.forward({x.Q.data() + b * d.query_size, {1, 1, d.query_size}},
                         {x.K.data() + b * d.key_size, {1, 1, d.key_size}},
                         {x.V.data() + b * d.value_size1 * d.value_size2, {1, d.value_size1, d.value_size2}},
                         {out.data(), {1, 1, d.output_size}}, {w.data(), {1, d.value_size1}});
            if (std::memcmp(out.data(), base.output.data() + b * d.output_size, out.size() * sizeof(float)) != 0 ||
                std::memcmp(w.data(), base.attn_weights.data() + b * d.value_size1, w.size() * sizeof(float)) != 0)
                ++per_sample_mismatches;
        }
        CHECK(per_sample_mismatches == 0);

#ifdef MYATTN_WITH_TBB
        // Allow 4 threads even on a 2-core machine (CI's): without this TBB caps every arena at the
        // number of cores, and the 4-thread run would quietly use 2.
        const tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
        // The 300 samples run as tiles; X at B <= 3 has more threads than tiles, so the threads
        // share each Linear's features and the weighted sums' columns instead.
        const MyAttn x_attn(Parameters::random(detail::shape_X, 21), isa);
        const Inputs x1 = random_inputs(detail::shape_X, 1, false, false, 22),
                     x3 = random_inputs(detail::shape_X, 3, false, true, 22);
        const std::pair<const MyAttn*, const Inputs*> cases[] = {{&attn, &x}, {&x_attn, &x1}, {&x_attn, &x3}};
        // Plain pointers, not a structured binding: clang 14 cannot capture bindings in lambdas.
        for (const auto& c : cases) {
            const MyAttn* a = c.first;
            const Inputs* in = c.second;
            const Dims& dims = a->dims();
            std::vector<ForwardResult> results;
            for (int n : {1, 2, 4}) {
                tbb::task_arena arena(n);
                arena.execute([&] { results.push_back(a->forward(in->q(dims), in->k(dims), in->v(dims))); });
            }
            CAPTURE(dims.to_string(), in->B);
            if (in == &x) CHECK(same_bits(results[0].output, base.output));
            for (const ForwardResult& r : results) {
                CHECK(same_bits(r.output, results[0].output));
                CHECK(same_bits(r.attn_weights, results[0].attn_weights));
            }
        }
#endif
    }
}

TEST_CASE("concurrency: the layered dataflow of a V per sample gives the same bits on 1, 2 and 4 threads",
          "[parallel][each_isa]") {
#ifdef MYATTN_WITH_TBB
    const tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = detail::kernels_for(isa);
        const Dims d{13, 40, 71, 21, 35};
        const PackedWeights w = pack_weights(t, Parameters::random(d, 41));
        constexpr std::size_t B = 40;
        const Inputs x = random_inputs(d, B, false, false, 42);
        // Blocks of one sample: 40 blocks, more than the driver records at a time, whose tasks the
        // threads take in any order their inputs allow; on 1 thread the blocks run in order.
        const detail::ForwardPlan plan{.layered = true, .kc = 16, .nc = t.nr, .mc = 1, .pipelined = true};
        std::vector<float> out[3], weights[3];
        const std::size_t threads[] = {1, 2, 4};
        for (int i = 0; i < 3; ++i) {
            out[i].resize(B * d.output_size);
            weights[i].resize(B * d.value_size1);
            std::vector<float> s(detail::layered_scratch_size(d, plan, B, t.mr, threads[i]));
            const detail::Batch batch{B,
                                      x.Q.data(),
                                      x.K.data(),
                                      x.V.data(),
                                      d.key_size,
                                      d.value_size1 * d.value_size2,
                                      out[i].data(),
                                      weights[i].data()};
            tbb::task_arena(static_cast<int>(threads[i])).execute([&] {
                detail::layered_forward(t, d, w.layout, w.data.data(), batch, plan, threads[i], s.data());
            });
        }
        CHECK(same_bits(out[1], out[0]));
        CHECK(same_bits(out[2], out[0]));
        CHECK(same_bits(weights[1], weights[0]));
        CHECK(same_bits(weights[2], weights[0]));
    }
#endif
}
