#include "args.hpp"

#include <charconv>

#include "myattn/errors.hpp"

#ifdef MYATTN_WITH_TBB
#include <tbb/task_arena.h>
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
            throw UsageError(command_ + ": unknown argument '" + a + "' (see myattn " + command_ + " --help)");
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

std::optional<std::size_t> Args::count(const std::string& name) const {
    const auto v = get(name);
    if (!v) return std::nullopt;
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc{} || end != v->data() + v->size() || n == 0)
        throw UsageError(command_ + ": --" + name + " expects a positive integer, got '" + *v + "'");
    return n;
}

std::optional<Isa> Args::isa() const {
    const auto v = get("isa");
    if (!v) return std::nullopt;
    const auto isa = parse_isa(*v);
    if (!isa) throw UsageError(command_ + ": --isa " + *v + ": unknown ISA (expected scalar, avx2, avx512 or neon)");
    set_isa(*isa); // throws IsaError if this build or CPU cannot run it
    return isa;
}

void with_threads(std::optional<std::size_t> threads, const std::function<void()>& body) {
#ifdef MYATTN_WITH_TBB
    if (threads) {
        tbb::task_arena arena(static_cast<int>(*threads));
        arena.execute(body);
        return;
    }
#else
    if (threads && *threads != 1) throw UsageError("--threads: this build has no TBB, so only 1 thread is possible");
#endif
    body();
}

} // namespace myattn::cli
