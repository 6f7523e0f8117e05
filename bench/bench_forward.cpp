// End-to-end forward: forward/<impl>/<shape>/<B>/<threads> for every ISA this CPU runs (at
// float32; forward/<isa>-int8/... at int8) and every peer built in. Only the calls are timed; inputs are made (and
// peers checked) before. Beside them, for shapes whose plan is layered (src/forward_plan.hpp), one thread each:
// fused/<isa>/... runs the batch through the fused kernel in the driver's tiles, as a layered
// plan replaces it (an A/B within one run); forward_shared_v/<isa>/... and fused_shared_v/...
// the same with one V shared by the batch: the Linears without V's stream (and
// forward_shared_v/<isa>-int8/... at int8). forward_bf16v/<isa>-bf16/... is the bf16 precision
// given V as bf16 (converted before the timing), beside forward/<isa>-bf16/... with a float V.
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <span>

#include "aligned_buffer.hpp"
#include "bench.hpp"
#include "dispatch.hpp"
#include "forward_plan.hpp"
#include "peers/peer.hpp"
#include "tiling.hpp"

namespace myattn_bench {
namespace {

myattn::detail::ForwardPlan plan_of(myattn::Isa isa, const myattn::Dims& d,
                                    myattn::Precision precision = myattn::Precision::f32) {
    const myattn::detail::KernelTable& k = myattn::detail::kernels_for(isa, precision);
    return myattn::detail::plan_forward(d, myattn::detail::cache_sizes(), k.mr, k.nr);
}

/// Weight bytes the kernels stream per call over the packed size, as the path implies (not a
/// hardware count): once per layered block of MC samples, once per fused group of MR (once in
/// all for one group). Where the weights exceed L2 (X), each pass comes from L3 or memory.
double weight_passes(myattn::Isa isa, const myattn::Dims& d, std::size_t batch, bool fused,
                     myattn::Precision precision = myattn::Precision::f32) {
    const std::size_t mr = myattn::detail::kernels_for(isa, precision).mr;
    const myattn::detail::ForwardPlan p = plan_of(isa, d, precision);
    const std::size_t per_pass = batch <= mr ? batch : !fused && p.layered ? p.mc : mr;
    return double((batch + per_pass - 1) / per_pass);
}

void forward_myattn(benchmark::State& state, myattn::Isa isa, myattn::Precision precision, const NamedShape* shape,
                    std::size_t batch, int threads, bool shared_v, bool bf16_v) {
    const Workload& w = workload(*shape, batch);
    const myattn::MyAttn attn(w.params, isa, precision);
    const myattn::Dims& d = shape->dims;
    std::vector<float> out(batch * d.output_size), weights(batch * d.value_size1);
    const myattn::ConstTensor V = shared_v ? myattn::ConstTensor{w.V.data(), {1, d.value_size1, d.value_size2}} : w.v();
    Placed<myattn::bfloat16> V_bf16(bf16_v ? V.shape.numel() : 0);
    if (bf16_v) {
        std::transform(V.data, V.data + V_bf16.size(), V_bf16.begin(), [](float v) { return myattn::to_bfloat16(v); });
    }
    const myattn::TensorView<const myattn::bfloat16> Vb{V_bf16.data(), V.shape};
    // The library runs in the caller's arena: this is how a caller limits its threads.
    tbb::task_arena(threads).execute([&] {
        for (auto _ : state) {
            const myattn::MutableTensor o{out.data(), {batch, 1, d.output_size}},
                a{weights.data(), {batch, d.value_size1}};
            if (bf16_v)
                attn.forward(w.q(), w.k(), Vb, o, a);
            else
                attn.forward(w.q(), w.k(), V, o, a);
            benchmark::DoNotOptimize(out.data());
            benchmark::ClobberMemory();
        }
    });
    set_forward_counters(state, d, batch);
    state.counters["weight_passes"] = weight_passes(isa, d, batch, false, precision);
}

/// "avx512", or "avx512-int8" at another precision than float32.
std::string impl_name(myattn::Isa isa, myattn::Precision precision) {
    std::string name(myattn::isa_name(isa));
    if (precision != myattn::Precision::f32) name += "-" + std::string(myattn::precision_name(precision));
    return name;
}

/// The precisions `isa` runs here, float32 first.
std::vector<myattn::Precision> precisions_of(myattn::Isa isa) {
    std::vector<myattn::Precision> out;
    for (myattn::Precision p : myattn::precisions())
        if (myattn::kernel_id(isa, p)) out.push_back(p);
    return out;
}

// The fused kernel over the driver's tiles on one thread: what forward ran before layered plans.
void forward_fused(benchmark::State& state, myattn::Isa isa, const NamedShape* shape, std::size_t batch,
                   bool shared_v) {
    namespace detail = myattn::detail;
    const Workload& w = workload(*shape, batch);
    const detail::KernelTable& k = detail::kernels_for(isa);
    const myattn::Dims& d = shape->dims;
    const myattn::Parameters& p = w.params;
    detail::AlignedBuffer packed(k.layout(d).size);
    const detail::PackedLayout layout = k.pack(d,
                                               {.attn_weight = p.attn_weight().data(),
                                                .attn_bias = p.attn_bias().data(),
                                                .combine_weight = p.combine_weight().data(),
                                                .combine_bias = p.combine_bias().data()},
                                               packed.data());
    std::vector<float> out(batch * d.output_size), weights(batch * d.value_size1);
    const std::size_t rows = detail::rows_per_tile(d, batch, k.mr, 1);
    detail::AlignedBuffer scratch(k.scratch_size(d, rows));
    const detail::Batch x{.B = batch,
                          .Q = w.Q.data(),
                          .K = w.K.data(),
                          .V = w.V.data(),
                          .k_stride = d.key_size,
                          .v_stride = shared_v ? 0 : d.value_size1 * d.value_size2,
                          .output = out.data(),
                          .attn_weights = weights.data()};
    const detail::FusedBlocking fused_blocking = plan_of(isa, d).fused(detail::input_bytes(d, x));
    for (auto _ : state) {
        for (std::size_t b = 0; b < batch; b += rows)
            k.forward(d, layout, packed.data(), x, {b, std::min(batch, b + rows)}, fused_blocking, scratch.data());
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    set_forward_counters(state, d, batch);
    state.counters["weight_passes"] = weight_passes(isa, d, batch, true);
}

// Why `got` differs from `want` by more than `tolerance` of want's largest magnitude, if it does.
std::optional<std::string> mismatch(const char* what, std::span<const float> want, const float* got, float tolerance) {
    float scale = 0, worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        scale = std::max(scale, std::abs(want[i]));
        const float diff = std::abs(got[i] - want[i]);
        if (std::isnan(diff) || diff > worst) worst = diff; // a NaN, once seen, stays
    }
    if (worst <= tolerance * scale) return std::nullopt;
    return std::string(what) + " differs from myattn's scalar result: max |diff| " + std::to_string(worst) +
           ", max |value| " + std::to_string(scale);
}

void forward_peer(benchmark::State& state, PeerInfo peer, const NamedShape* shape, std::size_t batch, int threads) {
    const Workload& w = workload(*shape, batch);
    const myattn::Dims& d = shape->dims;
    const myattn::Parameters& p = w.params;
    std::unique_ptr<Peer> impl;
    try {
        impl = peer.make({d.query_size, d.key_size, d.value_size1, d.value_size2, d.output_size, batch,
                          p.attn_weight().data(), p.attn_bias().data(), p.combine_weight().data(),
                          p.combine_bias().data(), w.Q.data(), w.K.data(), w.V.data(), threads});
        impl->run();
    } catch (const std::exception& e) {
        state.SkipWithError((std::string(peer.name) + ": " + e.what()).c_str());
        return;
    }
    const myattn::ForwardResult& ref = w.reference();
    auto bad = mismatch("output", ref.output, impl->output(), peer.tolerance);
    if (!bad) bad = mismatch("attn_weights", ref.attn_weights, impl->attn_weights(), peer.tolerance);
    if (bad) {
        state.SkipWithError(bad->c_str());
        return;
    }
    for (auto _ : state) {
        impl->run();
        benchmark::ClobberMemory();
    }
    set_forward_counters(state, d, batch);
}

} // namespace

void register_forward(const NamedShape& shape, std::size_t B) {
    for (int t : thread_counts()) {
        const std::string tail = join({shape.name, std::to_string(B), std::to_string(t)});
        for (myattn::Isa isa : myattn::runnable_isas())
            for (myattn::Precision precision : precisions_of(isa))
                benchmark::RegisterBenchmark(join({"forward", impl_name(isa, precision), tail}).c_str(), forward_myattn,
                                             isa, precision, &shape, B, t, false, false)
                    ->UseRealTime();
        for (myattn::Isa isa : myattn::runnable_isas())
            if (myattn::kernel_id(isa, myattn::Precision::bf16))
                benchmark::RegisterBenchmark(
                    join({"forward_bf16v", impl_name(isa, myattn::Precision::bf16), tail}).c_str(), forward_myattn, isa,
                    myattn::Precision::bf16, &shape, B, t, false, true)
                    ->UseRealTime();
        for (const PeerInfo& peer : available_peers())
            benchmark::RegisterBenchmark(join({"forward", peer.name, tail}).c_str(), forward_peer, peer, &shape, B, t)
                ->UseRealTime();
    }
    for (myattn::Isa isa : myattn::runnable_isas())
        if (B > 1 && isa != myattn::Isa::scalar && plan_of(isa, shape.dims).layered) {
            const std::string tail = join({std::string(myattn::isa_name(isa)), shape.name, std::to_string(B), "1"});
            benchmark::RegisterBenchmark(join({"fused", tail}).c_str(), forward_fused, isa, &shape, B, false)
                ->UseRealTime();
            benchmark::RegisterBenchmark(join({"fused_shared_v", tail}).c_str(), forward_fused, isa, &shape, B, true)
                ->UseRealTime();
            for (myattn::Precision precision : precisions_of(isa))
                benchmark::RegisterBenchmark(
                    join({"forward_shared_v", impl_name(isa, precision), shape.name, std::to_string(B), "1"}).c_str(),
                    forward_myattn, isa, precision, &shape, B, 1, true, false)
                    ->UseRealTime();
        }
}

} // namespace myattn_bench
