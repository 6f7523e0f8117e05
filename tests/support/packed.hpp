// A module's weights packed by one kernel table, as MyAttn packs them at construction, for the
// tests that call the table's kernels directly.
#pragma once

#include <vector>

#include "kernels/table.hpp"
#include "myattn/parameters.hpp"

namespace myattn::test {

struct PackedWeights {
    std::vector<float> data; // layout.size floats
    detail::PackedLayout layout;
};

inline PackedWeights pack_weights(const detail::KernelTable& t, const Parameters& p) {
    const Dims& d = p.dims();
    PackedWeights w{.data = std::vector<float>(t.layout(d).size), .layout = {}};
    w.layout = t.pack(d,
                      {.attn_weight = p.attn_weight().data(),
                       .attn_bias = p.attn_bias().data(),
                       .combine_weight = p.combine_weight().data(),
                       .combine_bias = p.combine_bias().data()},
                      w.data.data());
    return w;
}

} // namespace myattn::test
