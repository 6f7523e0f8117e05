// The smallest consumer: built with pkg-config alone (see build.sh).
#include <myattn/myattn.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
    const myattn::MyAttn attn(myattn::Parameters::random({32, 32, 32, 64, 32}, 1));
    const std::vector<float> Q(32, 0.5f), K(32, 0.25f), V(32 * 64, 1.0f);
    const auto r = attn.forward({Q.data(), {1, 1, 32}}, {K.data(), {1, 1, 32}}, {V.data(), {1, 32, 64}});
    std::printf("myattn %s, isa %s: output %s, attn_weights %s\n", myattn::version_string,
                std::string(myattn::isa_name(attn.isa())).c_str(), r.output_shape.to_string().c_str(),
                r.attn_weights_shape.to_string().c_str());
    return 0;
}
