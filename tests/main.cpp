// The Catch2 main, compiled once and linked into every test binary. When MYATTN_ISA names an ISA
// this CPU cannot run, the whole binary reports "skipped" (exit 77, ctest's SKIP_RETURN_CODE)
// instead of failing: ctest registers one run per compiled ISA, and not every CPU runs all of them.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "myattn/myattn.hpp"

int main(int argc, char** argv) {
    if (const char* forced = std::getenv("MYATTN_ISA")) {
        const auto isa = myattn::parse_isa(forced);
        if (isa && !myattn::cpu_runs(*isa, myattn::cpu_features())) {
            std::printf("MYATTN_ISA=%s: this CPU cannot run it; skipping\n", forced);
            return 77;
        }
        std::printf("testing with MYATTN_ISA=%s\n", forced);
    }
    return Catch::Session().run(argc, argv);
}
