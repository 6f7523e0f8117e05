#include "args.hpp"

#include <algorithm>
#include <charconv>

#include "myattn/errors.hpp"
#include "myattn/safetensors.hpp"

#ifdef MYATTN_WITH_TBB
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <cstdio>
#endif

namespace myattn::cli {

Args::Args(std::string_view command, std::span<char* const> args, const std::set<std::string>& allowed)
    : command_(command) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string a = args[i];
        if (a == "--help" || a == "-h") {
            help_ = true;
            continue;
        }
        if (a.rfind("--", 0) != 0 || !allowed.contains(a.substr(2)))
            throw UsageError(command_ + ": unknown argument " + safetensors::in_quotes(a) + " (see myattn " + command_ +
                             " --help)");
        if (i + 1 == args.size()) throw UsageError(command_ + ": " + a + " needs a value");
        if (!values_.emplace(a.substr(2), args[++i]).second) throw UsageError(command_ + ": " + a + " given twice");
    }
}

std::optional<std::string> Args::get(const std::string& name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::string Args::require(const std::string& name) const {
    if (auto v = get(name)) return *v;
    throw UsageError(command_ + ": --" + name + " is required (see myattn " + command_ + " --help)");
}

std::optional<std::size_t> Args::integer(const std::string& name, std::size_t least) const {
    const auto v = get(name);
    if (!v) return std::nullopt;
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc{} || end != v->data() + v->size() || n < least)
        throw UsageError(command_ + ": --" + name + " expects " + (least == 0 ? "a non-negative" : "a positive") +
                         " integer, got " + safetensors::in_quotes(*v));
    return n;
}

std::optional<Isa> Args::isa() const {
    const auto v = get("isa");
    if (!v) return std::nullopt;
    const auto isa = parse_isa(*v);
    const std::vector<Isa> runnable = runnable_isas();
    if (!isa)
        throw UsageError(command_ + ": --isa " + *v + ": unknown ISA (this build runs " + to_string(runnable, ", ") +
                         " here)");
    if (std::find(runnable.begin(), runnable.end(), *isa) == runnable.end())
        throw IsaError("--isa " + *v + ": not runnable here (compiled: " + to_string(compiled_isas(), ", ") +
                       "; this CPU runs: " + to_string(runnable, ", ") + ")");
    return isa;
}

Precision Args::precision() const {
    const auto v = get("precision");
    if (!v) return Precision::f32;
    try {
        return parse_precision(*v);
    } catch (const ArgumentError& e) {
        throw UsageError(command_ + ": --precision: " + e.what());
    }
}

void with_threads(std::optional<std::size_t> threads, const std::function<void()>& body) {
#ifdef MYATTN_WITH_TBB
    if (threads) {
        // More threads than TBB allows would make it warn over several lines of its own.
        const std::size_t most = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
        std::size_t n = *threads;
        if (n > most) {
            std::fprintf(stderr, "myattn: --threads %zu: TBB runs at most %zu threads here; using %zu\n", n, most,
                         most);
            n = most;
        }
        tbb::task_arena arena(static_cast<int>(n));
        arena.execute(body);
        return;
    }
#else
    if (threads && *threads != 1) throw UsageError("--threads: this build has no TBB, so only 1 thread is possible");
#endif
    body();
}

} // namespace myattn::cli
