#include <cstdio>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "myattn/myattn.hpp"

namespace myattn::cli {
int info(std::span<char* const> args) {
    const Args opts("info", args, {"weights", "query-size"});
    if (opts.help()) {
        std::puts("usage: myattn info [--weights W.safetensors --query-size Q]\n\n"
                  "Prints the CPU features seen, the ISAs compiled in, those this CPU runs,\n"
                  "and the active ISA with the reason for the choice (MYATTN_ISA forces one) and, for each\n"
                  "precision (myattn run --precision), the kernel ID it runs on this CPU.\n"
                  "With --weights (and the query size, which the weights do not carry): the module's sizes and\n"
                  "how forward runs its batches on this CPU (fused with its KC and V prefetch limit, or layered\n"
                  "with its MC, NC and KC).");
        return 0;
    }
    const auto weights = opts.get("weights");
    const auto query_size = opts.count("query-size");
    if (weights.has_value() != query_size.has_value())
        throw UsageError("info: --weights and --query-size go together (see myattn info --help)");
    std::printf("myattn %s\n", version_string);
    std::printf("cpu features:  %s\n", to_string(cpu_features()).c_str());
    std::printf("compiled isas: %s\n", to_string(compiled_isas()).c_str());
    std::printf("runnable isas: %s\n", to_string(runnable_isas()).c_str());
    std::fflush(stdout);
    // Last, so that an unusable MYATTN_ISA (an error, exit 2) still shows all of the above.
    const Isa active = active_isa();
    std::printf("active isa:    %s (%s)\n", std::string(isa_name(active)).c_str(), active_isa_reason().c_str());
    std::printf("kernels:       %s\n", std::string(kernel_id(active)).c_str());
    for (Precision p : precisions()) {
        const auto id = kernel_id(active, p);
        std::printf("  %-12s %s\n", (std::string(precision_name(p)) + ":").c_str(),
                    id ? std::string(*id).c_str() : "(no kernels in this build)");
    }
    if (weights) {
        const MyAttn attn(Parameters::load(*weights, *query_size), active);
        std::printf("module:        %s\n", attn.dims().to_string().c_str());
        std::printf("plan:          %s\n", attn.plan().c_str());
    }
    return 0;
}

} // namespace myattn::cli
