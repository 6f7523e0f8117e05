// PyTorch parity: the cases written by tools/make_reference.py, through the library and
// through `myattn run`. PyTorch's float32 result and ours are each within the oracle's bound of
// the exact result, so they are within twice the bound of each other; our float64 oracle and
// PyTorch's float64 run agree to the same bound scaled to double precision.
#include <catch2/catch.hpp>
#include <sstream>

#include "support/cases.hpp"
#include "support/check.hpp"
#include "support/cli.hpp"

using namespace myattn;
using namespace myattn::test;

namespace {

struct Case {
    std::string name;
    std::size_t q = 0, B = 0;
    bool shared_k = false, shared_v = false;
};

std::vector<Case> cases() {
    std::vector<Case> out;
    for (std::istringstream& s : case_lines(std::string(MYATTN_TEST_DATA) + "/cases.txt")) {
        Case c;
        std::size_t k, L, d, o, seed;
        int sk, sv;
        s >> c.name >> c.q >> k >> L >> d >> o >> c.B >> sk >> sv >> seed;
        REQUIRE(!s.fail());
        c.shared_k = sk, c.shared_v = sv;
        out.push_back(c);
    }
    REQUIRE(out.size() >= 10);
    return out;
}

std::string data_file(const Case& c, const char* kind) {
    return std::string(MYATTN_TEST_DATA) + "/" + c.name + "." + kind + ".safetensors";
}

std::vector<double> scaled(std::vector<double> v, double factor) {
    for (double& x : v) x *= factor;
    return v;
}

std::vector<double> as_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

} // namespace

TEST_CASE("parity: every PyTorch case, through the library and through `myattn run`", "[parity]") {
    for (const Case& c : cases()) {
        CAPTURE(c.name);
        const Parameters p = Parameters::load(data_file(c, "weights"), c.q);
        const auto in = safetensors::read(data_file(c, "inputs"));
        const auto expected = safetensors::read(data_file(c, "expected"));
        Inputs x;
        x.B = c.B, x.shared_k = c.shared_k, x.shared_v = c.shared_v;
        x.Q = in.at("Q").data, x.K = in.at("K").data, x.V = in.at("V").data;

        const OracleResult want = oracle(p, x);
        // Our oracle computes the same function as PyTorch in float64.
        const auto& torch_out64 = expected.at("output_f64").data;
        const auto& torch_w64 = expected.at("attn_weights_f64").data;
        // The files hold float64 results converted to float on read: allow that rounding too.
        auto within_f64 = [](std::vector<double> bound, const std::vector<double>& ref) {
            for (std::size_t i = 0; i < bound.size(); ++i) bound[i] = bound[i] * 0x1p-29 + std::fabs(ref[i]) * 0x1p-24;
            return bound;
        };
        check_within("torch f64 attn_weights", torch_w64, want.attn_weights,
                     within_f64(want.attn_weights_bound, want.attn_weights));
        check_within("torch f64 output", torch_out64, want.output, within_f64(want.output_bound, want.output));

        const MyAttn attn(p);
        const ForwardResult got = attn.forward(x.q(p.dims()), x.k(p.dims()), x.v(p.dims()));
        check_within("attn_weights vs oracle", got.attn_weights, want.attn_weights, want.attn_weights_bound);
        check_within("output vs oracle", got.output, want.output, want.output_bound);
        check_within("attn_weights vs torch f32", got.attn_weights, as_double(expected.at("attn_weights").data),
                     scaled(want.attn_weights_bound, 2));
        check_within("output vs torch f32", got.output, as_double(expected.at("output").data),
                     scaled(want.output_bound, 2));

        // The CLI gives bitwise the library's result on the same ISA.
        TempDir tmp;
        const std::string out = (tmp / "out.safetensors").string();
        const CliResult r = run_cli("run --weights " + data_file(c, "weights") + " --inputs " + data_file(c, "inputs") +
                                    " --output " + out + " --isa " + std::string(isa_name(attn.isa())));
        INFO(r.err);
        REQUIRE(r.status == 0);
        const auto cli = safetensors::read(out);
        CHECK(cli.at("output").data == got.output);
        CHECK(cli.at("attn_weights").data == got.attn_weights);
        CHECK(cli.at("output").view_shape() == got.output_shape);
        CHECK(cli.at("attn_weights").view_shape() == got.attn_weights_shape);
    }
}
