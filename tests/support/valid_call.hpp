// A valid forward call (q=2 k=3 L=4 d=5 o=6, B=2), each tensor in a buffer of its own, for tests
// that break one thing at a time.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "myattn/myattn.hpp"

namespace myattn::test {

/// A size whose products with anything > 1 overflow size_t.
inline constexpr std::size_t overflowing = std::numeric_limits<std::size_t>::max() / 2 + 1;

struct ValidCall {
    Dims d{2, 3, 4, 5, 6};
    std::size_t B = 2;
    std::vector<float> Q = std::vector<float>(B * 2, 0.5f), K = std::vector<float>(B * 3, 0.25f),
                       V = std::vector<float>(B * 20, 1.0f), out = std::vector<float>(B * 6),
                       w = std::vector<float>(B * 4);
    ConstTensor q{Q.data(), {B, 1, 2}}, k{K.data(), {B, 1, 3}}, v{V.data(), {B, 4, 5}};
    MutableTensor o{out.data(), {B, 1, 6}}, a{w.data(), {B, 4}};
    MyAttn attn{Parameters::random(d, 1)};
    void run() const { attn.forward(q, k, v, o, a); }
};

} // namespace myattn::test
