#include "bench.hpp"

#include <tbb/info.h>

#include <cstdint>

namespace myattn_bench {

bool skipped(const NamedShape& shape, std::size_t batch) { return shape.name[0] == 'X' && batch > 1024; }

std::vector<int> thread_counts() {
    const int all = tbb::info::default_concurrency();
    return all > 1 ? std::vector<int>{1, all} : std::vector<int>{1};
}

void set_forward_counters(benchmark::State& state, const myattn::Dims& d, std::size_t batch) {
    const double calls = double(state.iterations()), samples = calls * double(batch);
    using benchmark::Counter;
    state.counters["samples/s"] = Counter(samples, Counter::kIsRate);
    state.counters["GFLOP/s"] = Counter(samples * flops_per_sample(d) * 1e-9, Counter::kIsRate);
    state.counters["GB/s"] =
        Counter((samples * bytes_per_sample(d) + calls * weight_bytes(d)) * 1e-9, Counter::kIsRate);
}

namespace {

// Uniform in [-1, 1) from a 64-bit LCG: hundreds of MiB are filled in well under a second,
// and the values only need to be ordinary floats.
Placed<float> random_floats(std::size_t n, std::uint64_t seed) {
    Placed<float> v(n);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15u + 1;
    for (float& f : v) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        f = float(std::int32_t(x >> 32)) * 0x1p-31f;
    }
    return v;
}

} // namespace

Workload::Workload(const NamedShape& s, std::size_t b)
    : shape(&s), batch(b), params(myattn::Parameters::random(s.dims, 1)), Q(random_floats(b * s.dims.query_size, 2)),
      K(random_floats(b * s.dims.key_size, 3)), V(random_floats(b * s.dims.value_size1 * s.dims.value_size2, 4)) {}

const myattn::ForwardResult& Workload::reference() const {
    if (!reference_) {
        const myattn::MyAttn scalar(params, myattn::Isa::scalar);
        reference_ = std::make_unique<myattn::ForwardResult>(scalar.forward(q(), k(), v()));
    }
    return *reference_;
}

const Workload& workload(const NamedShape& shape, std::size_t batch) {
    static std::unique_ptr<Workload> current;
    if (!current || current->shape != &shape || current->batch != batch) {
        current.reset(); // free the previous set before making the next
        current = std::make_unique<Workload>(shape, batch);
    }
    return *current;
}

std::string join(std::initializer_list<std::string> parts) {
    std::string s;
    for (const std::string& p : parts) {
        if (!s.empty()) s += '/';
        s += p;
    }
    return s;
}

} // namespace myattn_bench
