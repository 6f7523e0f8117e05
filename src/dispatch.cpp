// Which ISA runs: chosen once, at first use, then read from an atomic on every construction.
// Every list of ISAs here is the registry (registry.hpp) filtered.
#include "dispatch.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>

#include "myattn/errors.hpp"
#include "myattn/safetensors.hpp"

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

// The ISA's f32 row in `list`: each ISA's own, through which it is named, listed and chosen.
const Implementation* find(std::span<const Implementation> list, Isa isa) {
    for (const Implementation& i : list)
        if (i.isa == isa && i.precision == Precision::f32) return &i;
    return nullptr;
}

std::string names(std::span<const Implementation> list) {
    std::vector<Isa> isas;
    for (const Implementation& i : list)
        if (i.precision == Precision::f32) isas.push_back(i.isa);
    return to_string(isas, ", ");
}

std::string precision_names(std::span<const Implementation> list, Isa isa) {
    std::string s;
    for (Precision p : precisions())
        if (std::ranges::any_of(list, [&](const Implementation& i) { return i.isa == isa && i.precision == p; }))
            s += (s.empty() ? "" : ", ") + std::string(precision_name(p));
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
        if (impl.precision == Precision::f32 && runs_on(impl, cpu))
            return {impl.isa, impl.isa == Isa::scalar ? std::string("no SIMD ISA compiled in runs on this CPU")
                                                      : "best compiled ISA this CPU runs"};
    throw IsaError("no compiled ISA runs on this CPU"); // unreachable while scalar is compiled
}

const Implementation* choose_kernels(const CpuFeatures& cpu, std::span<const Implementation> compiled, Isa isa,
                                     Precision p) noexcept {
    const Implementation* own = find(compiled, isa);
    if (own == nullptr || !runs_on(*own, cpu)) return nullptr;
    for (const Implementation& i : compiled)
        if (i.isa == isa && i.precision == p && runs_on(i, cpu) && (i.slower_with == nullptr || !(cpu.*i.slower_with)))
            return &i;
    return nullptr;
}

std::size_t fma_lanes_per_cycle(const CpuFeatures& cpu, Isa isa) noexcept {
    return isa == Isa::avx512 && (cpu.avx512_fp16 || cpu.fp512) ? 2 * default_fma_lanes : default_fma_lanes;
}

const KernelTable& kernels_for(Isa isa, Precision p) {
    const Implementation* own = find(compiled_rows(), isa);
    if (own == nullptr || !runs_on(*own, cpu_features()))
        throw IsaError("ISA " + std::string(isa_name(isa)) +
                       " is not runnable here (runnable: " + to_string(runnable_isas(), ", ") + ")");
    const Implementation* impl = choose_kernels(cpu_features(), compiled_rows(), isa, p);
    if (impl == nullptr)
        throw IsaError("precision " + std::string(precision_name(p)) + ": no kernels for ISA " +
                       std::string(isa_name(isa)) +
                       " in this build (its precisions here: " + precision_names(compiled_rows(), isa) + ")");
    return impl->kernels();
}

} // namespace detail

std::string_view isa_name(Isa isa) noexcept {
    const detail::Implementation* i = detail::find(detail::implementations, isa);
    return i != nullptr ? i->name : "unknown";
}

std::optional<Isa> parse_isa(std::string_view name) noexcept {
    for (const detail::Implementation& i : detail::implementations)
        if (i.name == name) return i.isa;
    return std::nullopt;
}

std::string_view kernel_id(Isa isa) noexcept {
    const detail::Implementation* i = detail::find(detail::implementations, isa);
    return i != nullptr ? i->kernel_id : "unknown";
}

bool cpu_runs(Isa isa, const CpuFeatures& f) noexcept {
    const detail::Implementation* i = detail::find(detail::implementations, isa);
    return i != nullptr && detail::runs_on(*i, f);
}

std::string_view precision_name(Precision p) noexcept {
    switch (p) {
    case Precision::f32:
        return "f32";
    case Precision::int8:
        return "int8";
    case Precision::bf16:
        return "bf16";
    }
    return "unknown";
}

std::span<const Precision> precisions() noexcept {
    static constexpr Precision all[] = {Precision::f32, Precision::int8, Precision::bf16};
    return all;
}

Precision parse_precision(std::string_view name) {
    std::string valid;
    for (Precision p : precisions()) {
        if (precision_name(p) == name) return p;
        valid += (valid.empty() ? "" : ", ") + std::string(precision_name(p));
    }
    throw ArgumentError("unknown precision " + safetensors::in_quotes(name) + " (expected one of " + valid + ")");
}

std::optional<std::string_view> kernel_id(Isa isa, Precision p) noexcept {
    const detail::Implementation* i =
        detail::choose_kernels(cpu_features(), detail::compiled_implementations(), isa, p);
    if (i == nullptr) return std::nullopt;
    return i->kernel_id;
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
    for (const detail::Implementation& i : detail::compiled_rows())
        if (i.precision == Precision::f32) out.push_back(i.isa);
    return out;
}

std::vector<Isa> runnable_isas() {
    std::vector<Isa> out;
    for (const detail::Implementation& i : detail::compiled_rows())
        if (i.precision == Precision::f32 && detail::runs_on(i, cpu_features())) out.push_back(i.isa);
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
