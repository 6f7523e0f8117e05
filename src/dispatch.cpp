// Which ISA runs: chosen once, at first use, then read from an atomic on every construction.
#include "dispatch.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "myattn/errors.hpp"

namespace myattn {
namespace detail {
namespace {

// Best first. MYATTN_HAVE_<ISA> is defined by CMake for each ISA translation unit it builds.
constexpr Isa compiled_list[] = {
#ifdef MYATTN_HAVE_AVX512
    Isa::avx512,
#endif
#ifdef MYATTN_HAVE_AVX2
    Isa::avx2,
#endif
#ifdef MYATTN_HAVE_NEON
    Isa::neon,
#endif
    Isa::scalar,
};

bool contains(std::span<const Isa> list, Isa isa) {
    for (Isa i : list)
        if (i == isa) return true;
    return false;
}

std::string names(std::span<const Isa> list) {
    std::string s;
    for (Isa i : list) {
        if (!s.empty()) s += ", ";
        s += isa_name(i);
    }
    return s;
}

struct State {
    std::once_flag once;
    std::mutex mutex; // guards reason and error
    std::atomic<int> isa{-1};
    std::string reason;
    std::string error; // set when MYATTN_ISA names an unusable ISA and set_isa was not called
};

State& state() {
    static State s;
    return s;
}

void choose_once() {
    State& s = state();
    std::call_once(s.once, [&] {
        std::lock_guard lock(s.mutex);
        if (s.isa.load() >= 0) return; // set_isa came first
        try {
            IsaChoice c = choose_isa(cpu_features(), compiled_list, std::getenv("MYATTN_ISA"));
            s.reason = std::move(c.reason);
            s.isa.store(static_cast<int>(c.isa));
        } catch (const IsaError& e) {
            s.error = e.what();
        }
    });
}

} // namespace

IsaChoice choose_isa(const CpuFeatures& cpu, std::span<const Isa> compiled, const char* forced) {
    if (forced != nullptr) {
        const std::optional<Isa> isa = parse_isa(forced);
        if (!isa)
            throw IsaError("MYATTN_ISA=" + std::string(forced) +
                           ": unknown ISA (expected one of scalar, avx2, avx512, neon)");
        if (!contains(compiled, *isa))
            throw IsaError("MYATTN_ISA=" + std::string(forced) +
                           ": not compiled into this build (compiled: " + names(compiled) + ")");
        if (!cpu_runs(*isa, cpu))
            throw IsaError("MYATTN_ISA=" + std::string(forced) +
                           ": this CPU cannot run it (CPU features: " + to_string(cpu) + ")");
        return {*isa, "forced by MYATTN_ISA=" + std::string(forced)};
    }
    for (Isa isa : compiled)
        if (cpu_runs(isa, cpu))
            return {isa, isa == Isa::scalar ? std::string("no SIMD ISA compiled in runs on this CPU")
                                            : "best compiled ISA this CPU runs"};
    throw IsaError("no compiled ISA runs on this CPU"); // unreachable while scalar is compiled
}

const KernelTable& kernels_for(Isa isa) {
    if (!contains(compiled_list, isa) || !cpu_runs(isa, cpu_features()))
        throw IsaError("ISA " + std::string(isa_name(isa)) +
                       " is not runnable here (runnable: " + names(runnable_isas()) + ")");
    switch (isa) {
#ifdef MYATTN_HAVE_AVX512
    case Isa::avx512:
        return avx512_table();
#endif
#ifdef MYATTN_HAVE_AVX2
    case Isa::avx2:
        return avx2_table();
#endif
#ifdef MYATTN_HAVE_NEON
    case Isa::neon:
        return neon_table();
#endif
    default:
        return scalar_table();
    }
}

} // namespace detail

std::string_view isa_name(Isa isa) noexcept {
    switch (isa) {
    case Isa::scalar:
        return "scalar";
    case Isa::avx2:
        return "avx2";
    case Isa::avx512:
        return "avx512";
    case Isa::neon:
        return "neon";
    }
    return "unknown";
}

std::optional<Isa> parse_isa(std::string_view name) noexcept {
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon})
        if (name == isa_name(isa)) return isa;
    return std::nullopt;
}

std::vector<Isa> compiled_isas() { return {std::begin(detail::compiled_list), std::end(detail::compiled_list)}; }

std::vector<Isa> runnable_isas() {
    std::vector<Isa> out;
    for (Isa isa : detail::compiled_list)
        if (cpu_runs(isa, cpu_features())) out.push_back(isa);
    return out;
}

Isa active_isa() {
    detail::choose_once();
    detail::State& s = detail::state();
    const int isa = s.isa.load();
    if (isa < 0) {
        std::lock_guard lock(s.mutex);
        throw IsaError(s.error);
    }
    return static_cast<Isa>(isa);
}

std::string active_isa_reason() {
    (void)active_isa();
    detail::State& s = detail::state();
    std::lock_guard lock(s.mutex);
    return s.reason;
}

void set_isa(Isa isa) {
    (void)detail::kernels_for(isa); // throws if not runnable
    detail::State& s = detail::state();
    std::lock_guard lock(s.mutex);
    s.reason = "set by set_isa(" + std::string(isa_name(isa)) + ")";
    s.error.clear();
    s.isa.store(static_cast<int>(isa));
}

} // namespace myattn
