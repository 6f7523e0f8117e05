// The ISA choice, fed made-up CPUs: it never picks what the CPU lacks, and honours MYATTN_ISA.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <span>
#include <vector>

#include "dispatch.hpp"
#include "myattn/myattn.hpp"

using namespace myattn;
using Catch::Matchers::Contains;

namespace {

CpuFeatures zen4() {
    CpuFeatures f;
    f.avx2 = f.fma = f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = true;
    return f;
}
CpuFeatures haswell() {
    CpuFeatures f;
    f.avx2 = f.fma = true;
    return f;
}
// The registry's rows, as if every one were compiled in; and only the x86 ones.
constexpr std::span<const detail::Implementation> all_rows = detail::implementations;
std::vector<detail::Implementation> rows_of(std::initializer_list<Isa> isas) {
    std::vector<detail::Implementation> out;
    for (const detail::Implementation& i : detail::implementations)
        if (std::find(isas.begin(), isas.end(), i.isa) != isas.end()) out.push_back(i);
    return out;
}
const std::vector<detail::Implementation> all_x86 = rows_of({Isa::avx512, Isa::avx2, Isa::scalar});

} // namespace

TEST_CASE("dispatch: best runnable ISA first", "[dispatch]") {
    CHECK(detail::choose_isa(zen4(), all_x86, nullptr).isa == Isa::avx512);
    CHECK(detail::choose_isa(haswell(), all_x86, nullptr).isa == Isa::avx2);
    CHECK(detail::choose_isa(CpuFeatures{}, all_x86, nullptr).isa == Isa::scalar);
    // AVX2 without FMA, or AVX-512F without BW/DQ/VL (Knights Landing), is not enough.
    CpuFeatures avx2_no_fma = haswell();
    avx2_no_fma.fma = false;
    CHECK(detail::choose_isa(avx2_no_fma, all_x86, nullptr).isa == Isa::scalar);
    CpuFeatures knl = haswell();
    knl.avx512f = true;
    CHECK(detail::choose_isa(knl, all_x86, nullptr).isa == Isa::avx2);
    CpuFeatures a64;
    a64.neon = true;
    CHECK(detail::choose_isa(a64, rows_of({Isa::neon, Isa::scalar}), nullptr).isa == Isa::neon);
}

TEST_CASE("dispatch: never an ISA the CPU lacks, for every feature subset", "[dispatch]") {
    for (unsigned mask = 0; mask < 128; ++mask) {
        CpuFeatures f;
        f.avx2 = mask & 1, f.fma = mask & 2, f.avx512f = mask & 4, f.avx512bw = mask & 8;
        f.avx512dq = mask & 16, f.avx512vl = mask & 32, f.neon = mask & 64;
        const Isa chosen = detail::choose_isa(f, all_rows, nullptr).isa;
        CAPTURE(mask, isa_name(chosen));
        CHECK(cpu_runs(chosen, f));
        // and it is the best: nothing earlier in the registry runs
        for (const detail::Implementation& better : all_rows) {
            if (better.isa == chosen) break;
            CHECK_FALSE(cpu_runs(better.isa, f));
        }
    }
}

TEST_CASE("dispatch: MYATTN_ISA forces exactly, or fails", "[dispatch]") {
    CHECK(detail::choose_isa(zen4(), all_x86, "avx2").isa == Isa::avx2);
    CHECK(detail::choose_isa(zen4(), all_x86, "scalar").isa == Isa::scalar);
    CHECK_THROWS_AS(detail::choose_isa(haswell(), all_x86, "avx512"), IsaError);
    CHECK_THROWS_WITH(detail::choose_isa(haswell(), all_x86, "avx512"), Contains("this CPU cannot run it"));
    CHECK_THROWS_WITH(detail::choose_isa(zen4(), all_x86, "sse9"), Contains("unknown ISA"));
    CHECK_THROWS_WITH(detail::choose_isa(zen4(), all_x86, "neon"), Contains("not compiled into this build"));
}

TEST_CASE("dispatch: the active ISA is the one MYATTN_ISA names", "[dispatch]") {
    const char* forced = std::getenv("MYATTN_ISA");
    if (forced != nullptr)
        CHECK(isa_name(active_isa()) == forced);
    else
        CHECK(active_isa() == runnable_isas().front());
    const MyAttn attn(Parameters::random({1, 1, 1, 1, 1}, 1));
    CHECK(attn.isa() == active_isa());
}

TEST_CASE("dispatch: names round-trip, unknown names are refused", "[dispatch]") {
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon}) CHECK(parse_isa(isa_name(isa)) == isa);
    CHECK(to_string(std::vector<Isa>{Isa::avx2, Isa::scalar}, ",") == "avx2,scalar");
    CHECK_FALSE(parse_isa("AVX2").has_value());
    CHECK_FALSE(parse_isa("").has_value());
    CHECK(compiled_isas().back() == Isa::scalar);
    for (Isa isa : runnable_isas()) CHECK(cpu_runs(isa, cpu_features()));
    const Isa foreign = cpu_features().neon ? Isa::avx2 : Isa::neon;
    CHECK_THROWS_AS(MyAttn(Parameters::random({1, 1, 1, 1, 1}, 1), foreign), IsaError);
}

TEST_CASE("registry: the compiled rows are the runnable ones' superset, each table is its row's", "[dispatch]") {
    const std::vector<Isa> compiled = compiled_isas();
    REQUIRE(compiled.size() == detail::compiled_implementations().size());
    for (const detail::Implementation& row : detail::compiled_implementations()) {
        CAPTURE(row.name);
        CHECK(row.kernels != nullptr);
        if (!cpu_runs(row.isa, cpu_features())) continue;
        const detail::KernelTable& t = detail::kernels_for(row.isa);
        CHECK(t.isa == row.isa);
        CHECK(t.id == row.kernel_id);
        CHECK(kernel_id(row.isa) == row.kernel_id);
        CHECK(t.mr == row.mr);
        CHECK(t.nr == row.nr);
    }
    // A row is compiled exactly when CMake built its kernels.
    for (const detail::Implementation& row : detail::implementations)
        CHECK((row.kernels != nullptr) == (std::find(compiled.begin(), compiled.end(), row.isa) != compiled.end()));
}
