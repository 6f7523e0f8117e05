// Random test data from a seeded generator.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "oracle.hpp"

namespace myattn::test {

inline std::vector<float> normal(std::mt19937_64& rng, std::size_t n, float scale = 1.0f) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

inline Inputs random_inputs(const Dims& d, std::size_t B, bool shared_k, bool shared_v, std::uint64_t seed,
                            float scale = 1.0f) {
    std::mt19937_64 rng(seed);
    Inputs x;
    x.B = B;
    x.shared_k = shared_k;
    x.shared_v = shared_v;
    x.Q = normal(rng, B * d.query_size, scale);
    x.K = normal(rng, (shared_k ? 1 : B) * d.key_size, scale);
    x.V = normal(rng, (shared_v ? 1 : B) * d.value_size1 * d.value_size2, scale);
    return x;
}

} // namespace myattn::test
