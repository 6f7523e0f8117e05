// Which ISA runs: chosen once, at first use, then read from an atomic on every construction.
// Every list of ISAs here is the registry (registry.hpp) filtered.
#include "dispatch.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "myattn/errors.hpp"

namespace myattn {
namespace detail {
namespace {

// The rows with kernels, in registry order (best first). Filtered at first use, not at compile
// time: under -fsanitize, GCC does not take a function's address compared with null as a
// constant expression.
std::span<const Implementation> compiled_rows() {
    struct Rows {
        std::array<Implementation, std::size(implementations)> row{};
        std::size_t n = 0;
    };
    static const Rows rows = [] {
        Rows r;
        for (const Implementation& i : implementations)
            if (i.kernels != nullptr) r.row[r.n++] = i;
        return r;
    }();
    return {rows.row.data(), rows.n};
}

const Implementation* find(std::span<const Implementation> list, Isa isa) {
    for (const Implementation& i : list)
        if (i.isa == isa) return &i;
    return nullptr;
}

std::string names(std::span<const Implementation> list) {
    std::vector<Isa> isas;
    for (const Implementation& i : list) isas.push_back(i.isa);
    return to_string(isas, ", ");
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
            IsaChoice c = choose_isa(cpu_features(), compiled_rows(), std::getenv("MYATTN_ISA"));
            s.reason = std::move(c.reason);
            s.isa.store(static_cast<int>(c.isa));
        } catch (const IsaError& e) {
            s.error = e.what();
        }
    });
}

} // namespace

bool runs_on(const Implementation& impl, const CpuFeatures& f) noexcept {
    return std::ranges::all_of(impl.needs, [&](bool CpuFeatures::*need) { return need == nullptr || f.*need; });
}

std::span<const Implementation> compiled_implementations() { return compiled_rows(); }

IsaChoice choose_isa(const CpuFeatures& cpu, std::span<const Implementation> compiled, const char* forced) {
    if (forced != nullptr) {
        const std::optional<Isa> isa = parse_isa(forced);
        if (!isa)
            throw IsaError("MYATTN_ISA=" + std::string(forced) + ": unknown ISA (expected one of " +
                           names(implementations) + ")");
        const Implementation* impl = find(compiled, *isa);
        if (impl == nullptr)
            throw IsaError("MYATTN_ISA=" + std::string(forced) +
                           ": not compiled into this build (compiled: " + names(compiled) + ")");
        if (!runs_on(*impl, cpu))
            throw IsaError("MYATTN_ISA=" + std::string(forced) +
                           ": this CPU cannot run it (CPU features: " + to_string(cpu) + ")");
        return {*isa, "forced by MYATTN_ISA=" + std::string(forced)};
    }
    for (const Implementation& impl : compiled)
        if (runs_on(impl, cpu))
            return {impl.isa, impl.isa == Isa::scalar ? std::string("no SIMD ISA compiled in runs on this CPU")
                                                      : "best compiled ISA this CPU runs"};
    throw IsaError("no compiled ISA runs on this CPU"); // unreachable while scalar is compiled
}

const KernelTable& kernels_for(Isa isa) {
    const Implementation* impl = find(compiled_rows(), isa);
    if (impl == nullptr || !runs_on(*impl, cpu_features()))
        throw IsaError("ISA " + std::string(isa_name(isa)) +
                       " is not runnable here (runnable: " + to_string(runnable_isas(), ", ") + ")");
    return impl->kernels();
}

} // namespace detail

std::string_view isa_name(Isa isa) noexcept {
    for (const detail::Implementation& i : detail::implementations)
        if (i.isa == isa) return i.name;
    return "unknown";
}

std::optional<Isa> parse_isa(std::string_view name) noexcept {
    for (const detail::Implementation& i : detail::implementations)
        if (i.name == name) return i.isa;
    return std::nullopt;
}

std::string_view kernel_id(Isa isa) noexcept {
    for (const detail::Implementation& i : detail::implementations)
        if (i.isa == isa) return i.kernel_id;
    return "unknown";
}

bool cpu_runs(Isa isa, const CpuFeatures& f) noexcept {
    for (const detail::Implementation& i : detail::implementations)
        if (i.isa == isa) return detail::runs_on(i, f);
    return false;
}

std::string to_string(std::span<const Isa> isas, std::string_view separator) {
    std::string s;
    for (Isa isa : isas) {
        if (!s.empty()) s += separator;
        s += isa_name(isa);
    }
    return s;
}

std::vector<Isa> compiled_isas() {
    std::vector<Isa> out;
    for (const detail::Implementation& i : detail::compiled_rows()) out.push_back(i.isa);
    return out;
}

std::vector<Isa> runnable_isas() {
    std::vector<Isa> out;
    for (const detail::Implementation& i : detail::compiled_rows())
        if (detail::runs_on(i, cpu_features())) out.push_back(i.isa);
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
