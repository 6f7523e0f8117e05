// Running a test once per implementation, each run named after its ISA.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <vector>

#include "myattn/isa.hpp"

namespace myattn::test {

/// The ISA MYATTN_ISA forces (ctest's isa/<name> runs), or every ISA this CPU runs.
inline std::vector<Isa> isas_under_test() {
    if (std::getenv("MYATTN_ISA") != nullptr) return {active_isa()};
    return runnable_isas();
}

} // namespace myattn::test

/// FOR_EACH_ISA(isa) { ... }: the block runs once per ISA under test, as a section named
/// "isa <name>", so that the log says which ISA failed and a failure on one hides no other.
/// A test that uses it is tagged [each_isa]: ctest's forced isa/<name> runs skip it, since its
/// own run already covered every ISA (tests/CMakeLists.txt).
#define FOR_EACH_ISA(isa)                                                                                              \
    const ::myattn::Isa isa = GENERATE(from_range(::myattn::test::isas_under_test()));                                 \
    DYNAMIC_SECTION("isa " << ::myattn::isa_name(isa))
