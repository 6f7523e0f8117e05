// myattn_bench: the module end to end, its kernels, its peers, and the machine's limits.
#include <string>

#include "bench.hpp"
#include "cache_info.hpp"
#include "peers/peer.hpp"

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

    // Recorded in the JSON context, for tools/bench-report.
    std::string peers;
    for (const myattn_bench::PeerInfo& p : myattn_bench::available_peers())
        peers += (peers.empty() ? "" : ",") + std::string(p.name);
    benchmark::AddCustomContext("myattn_version", myattn::version_string);
    benchmark::AddCustomContext("myattn_compiled_isas", myattn::to_string(myattn::compiled_isas(), ","));
    benchmark::AddCustomContext("myattn_runnable_isas", myattn::to_string(myattn::runnable_isas(), ","));
    for (myattn::Isa isa : myattn::runnable_isas()) {
        benchmark::AddCustomContext("myattn_kernels_" + std::string(myattn::isa_name(isa)),
                                    std::string(myattn::kernel_id(isa)));
        // The other precisions' kernels (forward/<isa>-<precision>/...): f32's are the line above.
        for (myattn::Precision p : myattn::precisions())
            if (const auto id = myattn::kernel_id(isa, p); id && p != myattn::Precision::f32)
                benchmark::AddCustomContext("myattn_kernels_" + std::string(myattn::isa_name(isa)) + "-" +
                                                std::string(myattn::precision_name(p)),
                                            std::string(*id));
    }
    benchmark::AddCustomContext("myattn_active_isa", std::string(myattn::isa_name(myattn::active_isa())));
    benchmark::AddCustomContext("cpu_features", myattn::to_string(myattn::cpu_features()));
    benchmark::AddCustomContext("peers", peers);
    // Not "caches": that is Google Benchmark's own list of the caches, which tools/bench-report reads.
    const myattn::detail::CacheSizes& caches = myattn::detail::cache_sizes();
    benchmark::AddCustomContext("myattn_caches", "l1d=" + std::to_string(caches.l1d) + " l2=" +
                                                     std::to_string(caches.l2) + " l3=" + std::to_string(caches.l3));
    for (const myattn_bench::NamedShape& s : myattn_bench::shapes) {
        benchmark::AddCustomContext(std::string("shape_") + s.name, s.dims.to_string());
        // The work counts tools/bench-report divides by: flops and bytes per sample, weight bytes.
        benchmark::AddCustomContext(std::string("work_") + s.name,
                                    "flops=" + std::to_string(myattn_bench::flops_per_sample(s.dims)) +
                                        " bytes=" + std::to_string(myattn_bench::bytes_per_sample(s.dims)) +
                                        " weights=" + std::to_string(myattn_bench::weight_bytes(s.dims)));
        // How the active ISA runs batches of this shape (src/forward_plan.hpp).
        benchmark::AddCustomContext(std::string("plan_") + s.name,
                                    myattn::MyAttn(myattn::Parameters::random(s.dims, 1)).plan());
    }

    using namespace myattn_bench;
    register_peak();
    // Grouped by inputs, so that the one cached workload serves a whole group.
    for (const NamedShape& s : shapes)
        for (std::size_t B : batches)
            if (!skipped(s, B)) {
                register_forward(s, B);
                register_kernels(s, B);
            }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
}
