// The kernels forward composes, one thread, through each ISA's KernelTable (an internal
// interface): linear/<isa>/<shape>/<B> runs both Linears of the module (scores, then combine),
// softmax/... the B rows of scores, weighted_sum/... the B products w·V. Each call covers the
// whole batch, so the kernel's own blocking is what is measured, not the forward's tiling.
#include <vector>

#include "aligned_buffer.hpp"
#include "bench.hpp"
#include "dispatch.hpp"

namespace myattn_bench {
namespace {

using myattn::detail::KernelTable;
using myattn::detail::SplitRows;

void counters(benchmark::State& state, std::size_t batch, double flops_per_sample, double bytes_per_sample,
              double bytes_per_call) {
    const double calls = double(state.iterations()), samples = calls * double(batch);
    using benchmark::Counter;
    state.counters["samples/s"] = Counter(samples, Counter::kIsRate);
    state.counters["GFLOP/s"] = Counter(samples * flops_per_sample * 1e-9, Counter::kIsRate);
    state.counters["GB/s"] = Counter((samples * bytes_per_sample + calls * bytes_per_call) * 1e-9, Counter::kIsRate);
}

void linear(benchmark::State& state, myattn::Isa isa, const NamedShape* shape, std::size_t batch) {
    const KernelTable& kt = myattn::detail::kernels_for(isa);
    const Workload& w = workload(*shape, batch);
    const myattn::Dims& d = shape->dims;
    const std::size_t q = d.query_size, k = d.key_size, L = d.value_size1, v = d.value_size2, o = d.output_size;
    // Aligned as MyAttn aligns its packed weights.
    const myattn::detail::LinearLayout l1 = kt.linear_layout(L, q, k), l2 = kt.linear_layout(o, q, v);
    myattn::detail::AlignedBuffer packed1(l1.size), packed2(l2.size);
    kt.pack_linear(l1, w.params.attn_weight().data(), w.params.attn_bias().data(), packed1.data());
    kt.pack_linear(l2, w.params.combine_weight().data(), w.params.combine_bias().data(), packed2.data());
    // The combine's second input, a, is the weighted sum's output: any values do.
    const std::vector<float> a(w.V.begin(), w.V.begin() + std::ptrdiff_t(batch * v));
    std::vector<float> scores(batch * L), out(batch * o);
    const SplitRows qk{w.Q.data(), q, q, w.K.data(), k, k}, qa{w.Q.data(), q, q, a.data(), v, v};
    for (auto _ : state) {
        kt.linear(l1, packed1.data(), qk, batch, {0, L}, scores.data(), L);
        kt.linear(l2, packed2.data(), qa, batch, {0, o}, out.data(), o);
        benchmark::ClobberMemory();
    }
    counters(state, batch, myattn::detail::linear_flops_per_sample(d), 4.0 * double(q + k + L + q + v + o),
             weight_bytes(d));
}

void softmax(benchmark::State& state, myattn::Isa isa, const NamedShape* shape, std::size_t batch) {
    const KernelTable& kt = myattn::detail::kernels_for(isa);
    const Workload& w = workload(*shape, batch);
    const std::size_t L = shape->dims.value_size1;
    // In place: from the second call on it normalises probabilities, which costs the same.
    std::vector<float> rows(w.V.begin(), w.V.begin() + std::ptrdiff_t(batch * L));
    for (auto _ : state) {
        for (std::size_t r = 0; r < batch; ++r) kt.softmax(rows.data() + r * L, L);
        benchmark::ClobberMemory();
    }
    // Flops: max, subtract, sum and scale per element; the L exponentials are not counted
    // (design.md §1 counts them apart).
    counters(state, batch, 4.0 * double(L), 8.0 * double(L), 0);
}

void weighted_sum(benchmark::State& state, myattn::Isa isa, const NamedShape* shape, std::size_t batch) {
    const KernelTable& kt = myattn::detail::kernels_for(isa);
    const Workload& w = workload(*shape, batch);
    const std::size_t L = shape->dims.value_size1, v = shape->dims.value_size2;
    // Attention weights: any floats will do; the last B·L of V.
    const std::vector<float> weights(w.V.end() - std::ptrdiff_t(batch * L), w.V.end());
    std::vector<float> a(batch * v);
    for (auto _ : state) {
        kt.weighted_sum({.rows = batch,
                         .w = weights.data(),
                         .ldw = L,
                         .V = w.V.data(),
                         .v_stride = L * v,
                         .L = L,
                         .d = v,
                         .a = a.data(),
                         .lda = v},
                        {0, v});
        benchmark::ClobberMemory();
    }
    counters(state, batch, 2.0 * double(L * v), 4.0 * double(L + L * v + v), 0);
}

} // namespace

void register_kernels(const NamedShape& shape, std::size_t B) {
    const std::string tail = join({shape.name, std::to_string(B)});
    for (myattn::Isa isa : myattn::runnable_isas()) {
        const std::string name(myattn::isa_name(isa));
        benchmark::RegisterBenchmark(join({"linear", name, tail}).c_str(), linear, isa, &shape, B)->UseRealTime();
        benchmark::RegisterBenchmark(join({"softmax", name, tail}).c_str(), softmax, isa, &shape, B)->UseRealTime();
        benchmark::RegisterBenchmark(join({"weighted_sum", name, tail}).c_str(), weighted_sum, isa, &shape, B)
            ->UseRealTime();
    }
}

} // namespace myattn_bench
