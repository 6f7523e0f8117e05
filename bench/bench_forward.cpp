// End-to-end forward: forward/<impl>/<shape>/<B>/<threads> for every ISA this CPU runs and
// every peer built in. Only the calls are timed; inputs are made (and peers checked) before.
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <span>

#include "bench.hpp"
#include "peers/peer.hpp"

namespace myattn_bench {
namespace {

void forward_myattn(benchmark::State& state, myattn::Isa isa, const NamedShape* shape, std::size_t batch, int threads) {
    const Workload& w = workload(*shape, batch);
    const myattn::MyAttn attn(w.params, isa);
    const myattn::Dims& d = shape->dims;
    std::vector<float> out(batch * d.output_size), weights(batch * d.value_size1);
    // The library runs in the caller's arena: this is how a caller limits its threads.
    tbb::task_arena(threads).execute([&] {
        for (auto _ : state) {
            attn.forward(w.q(), w.k(), w.v(), {out.data(), {batch, 1, d.output_size}},
                         {weights.data(), {batch, d.value_size1}});
            benchmark::DoNotOptimize(out.data());
            benchmark::ClobberMemory();
        }
    });
    set_forward_counters(state, d, batch);
}

// Why `got` differs from `want` by more than 1e-4 of want's largest magnitude, if it does.
std::optional<std::string> mismatch(const char* what, std::span<const float> want, const float* got) {
    float scale = 0, worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        scale = std::max(scale, std::abs(want[i]));
        const float diff = std::abs(got[i] - want[i]);
        if (std::isnan(diff) || diff > worst) worst = diff; // a NaN, once seen, stays
    }
    if (worst <= 1e-4f * scale) return std::nullopt;
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
    auto bad = mismatch("output", ref.output, impl->output());
    if (!bad) bad = mismatch("attn_weights", ref.attn_weights, impl->attn_weights());
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
            benchmark::RegisterBenchmark(join({"forward", std::string(myattn::isa_name(isa)), tail}).c_str(),
                                         forward_myattn, isa, &shape, B, t)
                ->UseRealTime();
        for (const PeerInfo& peer : available_peers())
            benchmark::RegisterBenchmark(join({"forward", peer.name, tail}).c_str(), forward_peer, peer, &shape, B, t)
                ->UseRealTime();
    }
}

} // namespace myattn_bench
