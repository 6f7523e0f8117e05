// Uses an installed myattn: the article's example, then one batched forward.
#include <myattn/myattn.hpp>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

std::vector<float> randn(std::mt19937& rng, std::size_t n) {
    std::normal_distribution<float> dist;
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

std::string isa_list(const std::vector<myattn::Isa>& isas) {
    std::string s;
    for (myattn::Isa isa : isas) s += (s.empty() ? "" : " ") + std::string(myattn::isa_name(isa));
    return s;
}

} // namespace

int main() try {
    std::printf("myattn %s\n", myattn::version_string);
    std::printf("compiled ISAs: %s\n", isa_list(myattn::compiled_isas()).c_str());
    std::printf("runnable ISAs: %s\n", isa_list(myattn::runnable_isas()).c_str());
    std::printf("active ISA: %s (%s)\n", std::string(myattn::isa_name(myattn::active_isa())).c_str(),
                myattn::active_isa_reason().c_str());

    // The article: MyAttn(query_size=32, key_size=32, value_size1=32, value_size2=64, output_size=32).
    const myattn::Dims dims{32, 32, 32, 64, 32};
    const myattn::MyAttn attn(myattn::Parameters::random(dims, 2024));
    std::mt19937 rng(2024);
    const std::vector<float> Q = randn(rng, 32), K = randn(rng, 32), V = randn(rng, 32 * 64);
    const myattn::ForwardResult r =
        attn.forward({Q.data(), {1, 1, 32}}, {K.data(), {1, 1, 32}}, {V.data(), {1, 32, 64}});
    std::printf("output shape: %s\n", r.output_shape.to_string().c_str());
    std::printf("attn_weights shape: %s\n", r.attn_weights_shape.to_string().c_str());

    // A batch of 8 queries against one shared K and V, into the caller's buffers.
    const std::size_t B = 8;
    const std::vector<float> Qb = randn(rng, B * 32);
    std::vector<float> out(B * 32), w(B * 32);
    attn.forward({Qb.data(), {B, 1, 32}}, {K.data(), {1, 1, 32}}, {V.data(), {1, 32, 64}}, {out.data(), {B, 1, 32}},
                 {w.data(), {B, 32}});
    std::printf("batched: output [%zu, 1, 32], attn_weights [%zu, 32]\n", B, B);

    // Each row of the batch is what a forward of that query alone gives, and its weights sum to 1.
    for (std::size_t b = 0; b < B; ++b) {
        const auto one =
            attn.forward({Qb.data() + b * 32, {1, 1, 32}}, {K.data(), {1, 1, 32}}, {V.data(), {1, 32, 64}});
        double sum = 0;
        for (std::size_t j = 0; j < 32; ++j) sum += w[b * 32 + j];
        bool same = std::fabs(sum - 1.0) < 1e-4;
        for (std::size_t j = 0; j < 32; ++j)
            same = same && std::fabs(one.output[j] - out[b * 32 + j]) <= 1e-4f * (1 + std::fabs(one.output[j]));
        if (!same) {
            std::fprintf(stderr, "sample %zu: batched and single forwards disagree\n", b);
            return 1;
        }
    }
    std::printf("batched rows match single forwards\n");

    // Errors are exceptions of the library's own types, and they can be caught here.
    try {
        (void)attn.forward({Q.data(), {1, 1, 16}}, {K.data(), {1, 1, 32}}, {V.data(), {1, 32, 64}});
        std::fprintf(stderr, "a wrong Q shape was accepted\n");
        return 1;
    } catch (const myattn::ShapeError& e) {
        std::printf("caught ShapeError: %s\n", e.what());
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "myattn_consumer: %s\n", e.what());
    return 1;
}
