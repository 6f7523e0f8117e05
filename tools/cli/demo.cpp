// The article's example: MyAttn(32, 32, 32, 64, 32) on one random query.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "myattn/myattn.hpp"

namespace myattn::cli {
namespace {

std::vector<float> randn(std::mt19937& rng, std::size_t n) {
    std::normal_distribution<float> dist;
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

void print_head(const char* name, const std::vector<float>& v, std::size_t n) {
    std::printf("%s", name);
    for (std::size_t i = 0; i < n && i < v.size(); ++i) std::printf(" %+.6f", static_cast<double>(v[i]));
    std::printf(" ...\n");
}

} // namespace

int demo(std::span<char* const> args) {
    const Args opts("demo", args, {"isa", "threads", "seed"});
    if (opts.help()) {
        std::printf("usage: myattn demo [--isa %s] [--threads N] [--seed N]\n\n",
                    to_string(compiled_isas(), "|").c_str());
        std::puts("Runs the article's example, MyAttn(32, 32, 32, 64, 32) with nn.Linear-style random\n"
                  "weights on random Q [1, 1, 32], K [1, 1, 32], V [1, 32, 64], and prints the shapes\n"
                  "and first values of output and attn_weights.");
        return 0;
    }
    const auto forced = opts.isa();
    const auto threads = opts.count("threads");
    const std::size_t seed = opts.integer("seed", 0).value_or(2024);

    const Dims dims{32, 32, 32, 64, 32};
    const MyAttn attn(Parameters::random(dims, seed), forced ? *forced : active_isa());
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    const std::vector<float> Q = randn(rng, 32), K = randn(rng, 32), V = randn(rng, 32 * 64);
    ForwardResult r;
    with_threads(threads, [&] {
        r = attn.forward({Q.data(), {1, 1, 32}}, {K.data(), {1, 1, 32}}, {V.data(), {1, 32, 64}});
    });

    double sum = 0;
    for (float w : r.attn_weights) sum += w;
    std::printf("MyAttn(query_size=32, key_size=32, value_size1=32, value_size2=64, output_size=32), isa %s\n",
                std::string(isa_name(attn.isa())).c_str());
    std::printf("output shape: %s\n", r.output_shape.to_string().c_str());
    std::printf("attn_weights shape: %s\n", r.attn_weights_shape.to_string().c_str());
    print_head("output[0, 0, :6]:", r.output, 6);
    print_head("attn_weights[0, :6]:", r.attn_weights, 6);
    std::printf("sum of attn_weights: %.6f\n", sum);
    return 0;
}

} // namespace myattn::cli
