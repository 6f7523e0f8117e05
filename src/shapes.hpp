// The reference shapes the tests, the benchmarks and docs/performance/ speak of, and the work a
// forward call does on any shape: one definition for the driver's decisions, the benchmarks'
// counters and, through the benchmark's JSON context, tools/bench-report.
#pragma once

#include "myattn/parameters.hpp"

namespace myattn::detail {

struct NamedShape {
    const char* name;
    Dims dims;
};

/// S: the article's example; T: wide inputs and few scores; X: large Linears and a 2 MiB V per sample.
inline constexpr NamedShape reference_shapes[] = {
    {"S", {32, 32, 32, 64, 32}},
    {"T", {256, 256, 10, 256, 256}},
    {"X", {1024, 1024, 512, 1024, 1024}},
};
inline constexpr Dims shape_S = reference_shapes[0].dims, shape_T = reference_shapes[1].dims,
                      shape_X = reference_shapes[2].dims;

/// 2L(q+k) + 2o(q+d): both Linears of one sample, a multiply and an add per weight.
constexpr double linear_flops_per_sample(const Dims& d) {
    return 2.0 * (double(d.value_size1) * double(d.query_size + d.key_size) +
                  double(d.output_size) * double(d.query_size + d.value_size2));
}

/// The Linears and the weighted sum (2Ld); softmax's exponentials are not counted.
constexpr double flops_per_sample(const Dims& d) {
    return linear_flops_per_sample(d) + 2.0 * double(d.value_size1) * double(d.value_size2);
}

/// 4(q + k + Ld + o + L): inputs read and outputs written once.
constexpr double bytes_per_sample(const Dims& d) {
    return 4.0 * double(d.query_size + d.key_size + d.value_size1 * d.value_size2 + d.output_size + d.value_size1);
}

/// 4(L(q+k+1) + o(q+d+1)): the parameters, read once per call.
constexpr double weight_bytes(const Dims& d) {
    return 4.0 *
           double(d.value_size1 * (d.query_size + d.key_size + 1) + d.output_size * (d.query_size + d.value_size2 + 1));
}

} // namespace myattn::detail
