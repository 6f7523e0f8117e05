// Comparing a float result with the oracle, element by element, within its bound or bitwise.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
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

/// Every element bitwise equal to `want`. One assertion for the whole span (an assertion per
/// element, stringified values and all, cost minutes of the emulated CPU runs), which reports
/// the first difference with its index and both values.
inline void check_same_bits(const char* what, std::span<const float> got, std::span<const float> want) {
    REQUIRE(got.size() == want.size());
    std::size_t i = 0;
    while (i < got.size() && std::memcmp(&got[i], &want[i], sizeof(float)) == 0) ++i;
    if (i < got.size()) INFO(what << "[" << i << "] = " << got[i] << ", expected " << want[i] << " bitwise");
    REQUIRE(i == got.size());
}

} // namespace myattn::test
