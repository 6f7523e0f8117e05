// Comparing a float result with the oracle, element by element, within its bound.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <span>
#include <string>

#include "oracle.hpp"

namespace myattn::test {

/// Every element within its bound (NaN where and only where the oracle has NaN). Reports the
/// first failure with its index, value, reference and bound.
inline void check_within(const char* what, std::span<const float> got, std::span<const double> want,
                         std::span<const double> bound) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double g = got[i], w = want[i];
        const bool ok = std::isnan(w) ? std::isnan(g) : std::fabs(g - w) <= bound[i];
        if (!ok) {
            INFO(what << "[" << i << "] = " << g << ", reference " << w << ", |diff| " << std::fabs(g - w)
                      << " > bound " << bound[i]);
            REQUIRE(ok);
        }
    }
}

} // namespace myattn::test
