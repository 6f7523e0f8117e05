// Running a test once per implementation, each run named after its ISA or its kernels.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <span>
#include <vector>

#include "dispatch.hpp"
#include "myattn/isa.hpp"
#include "myattn/precision.hpp"

namespace myattn::test {

/// The ISA MYATTN_ISA forces (ctest's isa/<name> runs), or every ISA this CPU runs.
inline std::vector<Isa> isas_under_test() {
    if (std::getenv("MYATTN_ISA") != nullptr) return {active_isa()};
    return runnable_isas();
}

/// The kernel sets of the precisions ps under test: every compiled one this CPU runs, of the
/// ISAs under test: an ISA's fallback kernels too (int8 without VNNI on a CPU with it), not only
/// the ones a MyAttn picks.
inline std::vector<const detail::Implementation*> kernel_sets_under_test(std::span<const Precision> ps) {
    std::vector<const detail::Implementation*> out;
    for (Isa isa : isas_under_test())
        for (const detail::Implementation& row : detail::compiled_implementations())
            if (row.isa == isa && std::find(ps.begin(), ps.end(), row.precision) != ps.end() &&
                detail::runs_on(row, cpu_features()))
                out.push_back(&row);
    return out;
}

} // namespace myattn::test

/// FOR_EACH_ISA(isa) { ... }: the block runs once per ISA under test, as a section named
/// "isa <name>", so that the log says which ISA failed and a failure on one hides no other.
/// A test that uses it is tagged [each_isa]: ctest's forced isa/<name> runs skip it, since its
/// own run already covered every ISA (tests/CMakeLists.txt).
#define FOR_EACH_ISA(isa)                                                                                              \
    const ::myattn::Isa isa = GENERATE(from_range(::myattn::test::isas_under_test()));                                 \
    DYNAMIC_SECTION("isa " << ::myattn::isa_name(isa))

/// FOR_EACH_KERNELS(t, precisions) { ... }: the block runs once per kernel set of those
/// precisions (a span) under test, with `t` its KernelTable, in a section named after its kernel ID.
/// A test that uses it is tagged [each_isa], like FOR_EACH_ISA's.
#define FOR_EACH_KERNELS(t, precisions)                                                                                \
    const ::myattn::detail::Implementation* t##_row =                                                                  \
        GENERATE_COPY(from_range(::myattn::test::kernel_sets_under_test(precisions)));                                 \
    const ::myattn::detail::KernelTable& t = t##_row->kernels();                                                       \
    DYNAMIC_SECTION("kernels " << t##_row->kernel_id)
