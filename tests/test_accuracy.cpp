// The accuracy contract (docs/accuracy.md): on every case of tests/data/accuracy, written by
// tools/make_reference.py, myattn's error against PyTorch's float64 result is at most 1.5 times
// PyTorch float32's own error on the same inputs, or a few float32 ulps where PyTorch happens to
// be nearly exact. Error = max |got - truth| / max |truth| over a tensor. Each case prints one
// line (ISA, case, regime, both errors and their ratio per tensor): the table in the docs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "myattn/myattn.hpp"
#include "support/cases.hpp"
#include "support/isas.hpp"

using namespace myattn;

namespace {

constexpr double allowed_ratio = 1.5;
// The floor, in ulps of the largest |truth| element: the result's own rounding (1/2), softmax's
// exp (2, kernels/softmax.hpp) and its reciprocal or division (1/2), and the bias-last add (1/2)
// come to 3.5 ulps that no float32 path avoids, whatever PyTorch scored on the case.
constexpr double floor_ulps = 4;

using Case = test::AccuracyCase;

std::string dir() { return std::string(MYATTN_TEST_DATA) + "/accuracy/"; }

std::vector<Case> cases() {
    std::vector<Case> out = test::accuracy_cases(dir() + "cases.txt");
    REQUIRE(out.size() >= 20);
    return out;
}

std::string file(const Case& c, const char* kind) { return dir() + c.name + "." + kind + ".safetensors"; }

/// max |got - truth| / max |truth|.
double rel_error(const std::vector<float>& got, const std::vector<double>& truth) {
    REQUIRE(got.size() == truth.size());
    double err = 0, mag = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        err = std::max(err, std::fabs(double(got[i]) - truth[i]));
        mag = std::max(mag, std::fabs(truth[i]));
    }
    REQUIRE(mag > 0);
    return err / mag;
}

/// floor_ulps ulps of the largest |truth|, relative to it.
double floor_of(const std::vector<double>& truth) {
    double mag = 0;
    for (double t : truth) mag = std::max(mag, std::fabs(t));
    return floor_ulps * std::ldexp(1.0, std::ilogb(mag) - 23) / mag;
}

struct Measure {
    double mine, torch, allowed;
};

Measure measure(const std::vector<float>& got, const std::vector<float>& torch_f32, const std::vector<double>& truth) {
    const double torch = rel_error(torch_f32, truth);
    return {rel_error(got, truth), torch, std::max(allowed_ratio * torch, floor_of(truth))};
}

} // namespace

TEST_CASE("accuracy: within 1.5x PyTorch float32's error against float64, every regime", "[accuracy][each_isa]") {
    FOR_EACH_ISA(isa) {
        for (const Case& c : cases()) {
            CAPTURE(c.name);
            const Parameters p = Parameters::load(file(c, "weights"), c.q);
            const auto in = safetensors::read(file(c, "inputs"));
            const auto ex = safetensors::read(file(c, "expected"));
            const Dims& d = p.dims();
            const MyAttn attn(p, isa);
            const ForwardResult got =
                attn.forward({in.at("Q").data.data(), {c.B, 1, d.query_size}},
                             {in.at("K").data.data(), {c.shared_k ? 1 : c.B, 1, d.key_size}},
                             {in.at("V").data.data(), {c.shared_v ? 1 : c.B, d.value_size1, d.value_size2}});
            auto truth = [&](const std::string& name) {
                const auto& hi = ex.at(name + "_f64_hi").data;
                const auto& lo = ex.at(name + "_f64_lo").data;
                std::vector<double> t(hi.size());
                for (std::size_t i = 0; i < t.size(); ++i) t[i] = double(hi[i]) + double(lo[i]);
                return t;
            };
            const Measure out = measure(got.output, ex.at("output").data, truth("output"));
            const Measure w = measure(got.attn_weights, ex.at("attn_weights").data, truth("attn_weights"));
            std::printf("accuracy %-7s %-18s %-10s output %.2e torch %.2e ratio %5.2f | attn_weights %.2e torch %.2e "
                        "ratio %5.2f\n",
                        std::string(isa_name(isa)).c_str(), c.name.c_str(), c.regime.c_str(), out.mine, out.torch,
                        out.mine / out.torch, w.mine, w.torch, w.mine / w.torch);
            CHECK(out.mine <= out.allowed);
            CHECK(w.mine <= w.allowed);
        }
    }
}
