// The ISA choice, fed made-up CPUs: it never picks what the CPU lacks, and honours MYATTN_ISA.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <span>
#include <vector>

#include "amd_fp_width.hpp"
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

TEST_CASE("dispatch: the FMA rate that paces the V requests comes from the features", "[dispatch]") {
    CpuFeatures sapphire_rapids = zen4();
    sapphire_rapids.avx512_fp16 = true;
    CHECK(detail::fma_lanes_per_cycle(sapphire_rapids, Isa::avx512) == 32);
    CpuFeatures zen5 = zen4();
    zen5.fp512 = true;
    CHECK(detail::fma_lanes_per_cycle(zen5, Isa::avx512) == 32);
    CHECK(detail::fma_lanes_per_cycle(zen5, Isa::avx2) == 16);
    // Their ymm FMAs (AVX2 forced), Zen 4's zmm on 256-bit units, and Haswell: 16.
    CHECK(detail::fma_lanes_per_cycle(sapphire_rapids, Isa::avx2) == 16);
    CHECK(detail::fma_lanes_per_cycle(zen4(), Isa::avx512) == 16);
    CHECK(detail::fma_lanes_per_cycle(haswell(), Isa::avx2) == 16);
    CHECK(detail::fma_lanes_per_cycle(CpuFeatures{}, Isa::scalar) == 16);
}

TEST_CASE("dispatch: AMD's 512-bit datapath, from the CPUID leaf or, where its width bits are clear, the model",
          "[dispatch]") {
    constexpr unsigned movu = 1u << 1, fp256 = 1u << 2, fp512 = 1u << 3;
    // The leaf as the CPUs report it: Zen 5 EPYC (family 0x1A model 2), Zen 4 (0x19, 0x11).
    CHECK(detail::amd_fp512(movu | fp512, 0x1A, 0x02));
    CHECK_FALSE(detail::amd_fp512(movu | fp256, 0x19, 0x11));
    // The leaf's bits win over the model: a Zen 5 part that reports FP256 splits its operations.
    CHECK_FALSE(detail::amd_fp512(movu | fp256, 0x1A, 0x02));
    // Width bits cleared by a hypervisor, or no leaf at all: the model answers.
    for (unsigned eax : {movu, 0u}) {
        CHECK(detail::amd_fp512(eax, 0x1A, 0x02));       // EPYC 9005 (Zen 5)
        CHECK(detail::amd_fp512(eax, 0x1A, 0x11));       // EPYC 9005 (Zen 5c)
        CHECK(detail::amd_fp512(eax, 0x1A, 0x44));       // Ryzen 9000 desktop
        CHECK_FALSE(detail::amd_fp512(eax, 0x1A, 0x24)); // Ryzen AI 300 mobile: 256-bit units
        CHECK_FALSE(detail::amd_fp512(eax, 0x19, 0x11)); // Zen 4
        CHECK_FALSE(detail::amd_fp512(eax, 0x06, 0xCF)); // Intel (Emerald Rapids)
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
    std::size_t f32_rows = 0;
    for (const detail::Implementation& row : detail::compiled_implementations()) {
        CAPTURE(row.kernel_id);
        CHECK(row.kernels != nullptr);
        f32_rows += row.precision == Precision::f32;
        // Every compiled kernel set belongs to a compiled ISA.
        CHECK(std::find(compiled.begin(), compiled.end(), row.isa) != compiled.end());
        if (!detail::runs_on(row, cpu_features())) continue;
        const detail::KernelTable& t = row.kernels();
        CHECK(t.isa == row.isa);
        CHECK(t.precision == row.precision);
        CHECK(t.id == row.kernel_id);
        CHECK(t.mr == row.mr);
        CHECK(t.nr == row.nr);
        CHECK((t.quant_levels != 0) == (row.precision == Precision::int8));
        if (row.precision == Precision::f32) {
            CHECK(&detail::kernels_for(row.isa) == &t);
            CHECK(kernel_id(row.isa) == row.kernel_id);
        }
    }
    CHECK(f32_rows == compiled.size());
    // The kernels MyAttn gets for (ISA, precision) are the first of that pair this CPU runs and
    // is not known to run slower.
    const CpuFeatures& cpu = cpu_features();
    for (Isa isa : runnable_isas())
        for (Precision p : precisions()) {
            const detail::Implementation* best = nullptr;
            for (const detail::Implementation& row : detail::compiled_implementations())
                if (!best && row.isa == isa && row.precision == p && detail::runs_on(row, cpu) &&
                    (row.slower_with == nullptr || !(cpu.*row.slower_with)))
                    best = &row;
            CHECK(kernel_id(isa, p) == (best ? std::optional(best->kernel_id) : std::nullopt));
        }
    // A row is compiled exactly when CMake built its kernels (an f32 row: its ISA).
    for (const detail::Implementation& row : detail::implementations)
        if (row.precision == Precision::f32)
            CHECK((row.kernels != nullptr) == (std::find(compiled.begin(), compiled.end(), row.isa) != compiled.end()));
}

TEST_CASE("dispatch: each (ISA, precision) takes that ISA's best kernels the CPU runs, never another ISA's",
          "[dispatch][precision]") {
    auto variant = [&](const CpuFeatures& f, Isa isa, Precision p) {
        const detail::Implementation* i = detail::choose_kernels(f, all_x86, isa, p);
        if (i != nullptr) {
            CHECK(i->isa == isa); // never another ISA's
            CHECK(i->precision == p);
            CHECK(detail::runs_on(*i, f));
        }
        return i != nullptr ? std::string(i->variant) : std::string("none");
    };
    CpuFeatures emr = zen4();
    emr.avx512_vnni = emr.avx_vnni = true;
    CHECK(variant(emr, Isa::avx512, Precision::int8) == "avx512vnni");
    CHECK(variant(emr, Isa::avx2, Precision::int8) == "avx2vnni");
    CHECK(variant(emr, Isa::avx512, Precision::f32) == "avx512");
    // AMX takes int8 only where the OS granted this process the tile data, and never without
    // VNNI (which runs the groups past the last whole tile) or the ISA itself.
    CpuFeatures amx = emr;
    amx.amx_tile = amx.amx_int8 = true;
    CHECK(variant(amx, Isa::avx512, Precision::int8) == "avx512vnni");
    amx.amx_granted = true;
    CHECK(variant(amx, Isa::avx512, Precision::int8) == "avx512amx");
    CHECK(variant(amx, Isa::avx512, Precision::f32) == "avx512");
    CHECK(variant(amx, Isa::avx2, Precision::int8) == "avx2vnni");
    CpuFeatures amx_no_int8 = amx;
    amx_no_int8.amx_int8 = false;
    CHECK(variant(amx_no_int8, Isa::avx512, Precision::int8) == "avx512vnni");
    CpuFeatures amx_no_vnni = amx;
    amx_no_vnni.avx512_vnni = false;
    CHECK(variant(amx_no_vnni, Isa::avx512, Precision::int8) == "avx512");
    // bf16 on the native dot product where the CPU has AVX512-BF16 (Zen 4 and 5), but not on
    // Intel's cores with AVX512-FP16 (Sapphire Rapids on), whose vdpbf16ps is slower than
    // converting (Implementation::slower_with), with or without AMX (virtual machines hide it);
    // AVX2 has none.
    CpuFeatures zen5 = emr;
    zen5.avx512_bf16 = true;
    CHECK(variant(zen5, Isa::avx512, Precision::bf16) == "avx512bf16");
    CHECK(variant(zen5, Isa::avx2, Precision::bf16) == "avx2");
    CHECK(variant(emr, Isa::avx512, Precision::bf16) == "avx512");
    CpuFeatures emr_guest = zen5; // AMX hidden
    emr_guest.avx512_fp16 = true;
    CHECK(variant(emr_guest, Isa::avx512, Precision::bf16) == "avx512");
    CpuFeatures spr = amx;
    spr.avx512_bf16 = spr.avx512_fp16 = true;
    CHECK(variant(spr, Isa::avx512, Precision::bf16) == "avx512");
    // AVX-512 without VNNI (Skylake-X), AVX2 without AVX-VNNI (Haswell, Zen 3): the ISA's fallback.
    CHECK(variant(zen4(), Isa::avx512, Precision::int8) == "avx512");
    CHECK(variant(zen4(), Isa::avx2, Precision::int8) == "avx2");
    CHECK(variant(haswell(), Isa::avx2, Precision::int8) == "avx2");
    // An ISA the CPU lacks gets nothing, whatever the precision and the extensions it has.
    CHECK(variant(haswell(), Isa::avx512, Precision::int8) == "none");
    CpuFeatures vnni_flag_only = haswell();
    vnni_flag_only.avx512_vnni = true;
    CHECK(variant(vnni_flag_only, Isa::avx512, Precision::int8) == "none");
    CHECK(variant(vnni_flag_only, Isa::avx2, Precision::int8) == "avx2");
    CHECK(variant(CpuFeatures{}, Isa::scalar, Precision::int8) == "scalar");
    // MYATTN_ISA still picks the ISA from the f32 rows alone, whatever int8 rows there are.
    CHECK(detail::choose_isa(emr, all_x86, nullptr).isa == Isa::avx512);
    CHECK(detail::choose_isa(emr, all_x86, "avx2").isa == Isa::avx2);
    // Over every subset of the x86 features: the chosen int8 kernels (if any) are the first of
    // the ISA's int8 rows the CPU runs, and exist exactly when the CPU runs the ISA.
    for (unsigned mask = 0; mask < 64; ++mask) {
        CpuFeatures f = haswell();
        f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = mask & 1;
        f.avx2 = mask & 2, f.fma = mask & 2;
        f.avx512_vnni = mask & 4, f.avx_vnni = mask & 8;
        f.amx_tile = f.amx_int8 = f.amx_granted = mask & 16;
        for (Isa isa : {Isa::avx512, Isa::avx2, Isa::scalar}) {
            CAPTURE(mask, isa_name(isa));
            const detail::Implementation* i = detail::choose_kernels(f, all_x86, isa, Precision::int8);
            CHECK((i != nullptr) == cpu_runs(isa, f));
        }
    }
}
