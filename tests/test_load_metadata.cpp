// Loading weights: the sizes stated in the file's metadata (q no longer has to be given),
// tensors under a prefix, and what a missing tensor's error lists; `myattn run --prefix`.
#include <catch2/catch.hpp>

#include "myattn/myattn.hpp"
#include "support/cli.hpp"

using namespace myattn;
using namespace myattn::test;
using Catch::Matchers::Contains;

namespace {

const Dims dims{3, 5, 7, 9, 11};

// The four tensors of `p`, each named `prefix` + its state_dict key, plus `extra` tensors.
void write_weights(const std::filesystem::path& file, const Parameters& p, const std::string& prefix,
                   const safetensors::Metadata& metadata, std::size_t extra = 0) {
    const Dims& d = p.dims();
    const std::vector<float> filler(extra, 1.0f);
    std::vector<safetensors::NamedTensor> tensors = {
        {prefix + Parameters::attn_weight_name, {p.attn_weight().data(), {d.value_size1, d.query_size + d.key_size}}},
        {prefix + Parameters::attn_bias_name, {p.attn_bias().data(), {d.value_size1}}},
        {prefix + Parameters::combine_weight_name,
         {p.combine_weight().data(), {d.output_size, d.query_size + d.value_size2}}},
        {prefix + Parameters::combine_bias_name, {p.combine_bias().data(), {d.output_size}}},
    };
    for (std::size_t i = 0; i < extra; ++i) tensors.push_back({"extra" + std::to_string(i), {filler.data(), {1}}});
    safetensors::write(file, tensors, safetensors::Dtype::F32, metadata);
}

bool same(const Parameters& a, const Parameters& b) {
    const auto eq = [](std::span<const float> x, std::span<const float> y) { return std::ranges::equal(x, y); };
    return a.dims() == b.dims() && eq(a.attn_weight(), b.attn_weight()) && eq(a.attn_bias(), b.attn_bias()) &&
           eq(a.combine_weight(), b.combine_weight()) && eq(a.combine_bias(), b.combine_bias());
}

} // namespace

TEST_CASE("load: save states the sizes, so load needs no q", "[load]") {
    TempDir tmp;
    const Parameters p = Parameters::random(dims, 5);
    p.save(tmp / "w.safetensors");
    const auto contents = safetensors::read_contents(tmp / "w.safetensors");
    CHECK(contents.metadata == safetensors::Metadata{{"myattn.query_size", "3"},
                                                     {"myattn.key_size", "5"},
                                                     {"myattn.value_size1", "7"},
                                                     {"myattn.value_size2", "9"},
                                                     {"myattn.output_size", "11"}});
    CHECK(same(Parameters::load(tmp / "w.safetensors"), p));
    CHECK(same(Parameters::load(tmp / "w.safetensors", 3), p)); // an agreeing q is fine
    CHECK_THROWS_AS(Parameters::load(tmp / "w.safetensors", 4), FileError);
    CHECK_THROWS_WITH(Parameters::load(tmp / "w.safetensors", 4),
                      Contains("w.safetensors: query_size 4 was given, but the file's \"myattn.query_size\" is 3"));
}

TEST_CASE("load: without the metadata q must be given", "[load]") {
    TempDir tmp;
    const Parameters p = Parameters::random(dims, 6);
    write_weights(tmp / "w.safetensors", p, "", {});
    CHECK_THROWS_AS(Parameters::load(tmp / "w.safetensors"), FileError);
    CHECK_THROWS_WITH(Parameters::load(tmp / "w.safetensors"),
                      Contains("w.safetensors: the file does not state q (no metadata \"myattn.query_size\")"));
    CHECK(same(Parameters::load(tmp / "w.safetensors", 3), p));
}

TEST_CASE("load: metadata that contradicts the shapes, or is not a size, is refused", "[load][errors]") {
    TempDir tmp;
    const Parameters p = Parameters::random(dims, 7);
    write_weights(tmp / "w.safetensors", p, "", {{"myattn.query_size", "3"}, {"myattn.value_size2", "8"}});
    CHECK_THROWS_WITH(Parameters::load(tmp / "w.safetensors"),
                      Contains("metadata \"myattn.value_size2\" is 8, but the tensors' shapes give 9"));
    for (const char* bad : {"", "-3", "3x", "0", "99999999999999999999"}) {
        CAPTURE(bad);
        write_weights(tmp / "w.safetensors", p, "", {{"myattn.query_size", bad}});
        CHECK_THROWS_AS(Parameters::load(tmp / "w.safetensors"), FileError);
        CHECK_THROWS_WITH(Parameters::load(tmp / "w.safetensors"),
                          Contains("metadata \"myattn.query_size\" must be a positive decimal integer"));
    }
    // Other metadata is checked by the reader but not kept; it does not disturb the sizes.
    write_weights(tmp / "w.safetensors", p, "", {{"format", "pt"}, {"myattn.query_size", "3"}});
    CHECK(safetensors::read_contents(tmp / "w.safetensors").metadata.size() == 1);
    CHECK(same(Parameters::load(tmp / "w.safetensors"), p));
}

TEST_CASE("load: a prefix selects a module nested in a model's state_dict", "[load]") {
    TempDir tmp;
    const Parameters p = Parameters::random(dims, 8);
    write_weights(tmp / "w.safetensors", p, "decoder.attn.", {{"myattn.decoder.attn.query_size", "3"}});
    CHECK(same(Parameters::load(tmp / "w.safetensors", std::nullopt, "decoder.attn."), p));
    CHECK(same(Parameters::load(tmp / "w.safetensors", 3, "decoder.attn."), p));
    // The metadata of another prefix is not this module's.
    CHECK_THROWS_WITH(Parameters::load(tmp / "w.safetensors", std::nullopt, "encoder.attn."),
                      Contains("missing tensor \"encoder.attn.attn.weight\""));
}

TEST_CASE("load: a missing tensor's error lists what the file holds", "[load][errors]") {
    TempDir tmp;
    const Parameters p = Parameters::random(dims, 9);
    write_weights(tmp / "few.safetensors", p, "decoder.attn.", {});
    CHECK_THROWS_AS(Parameters::load(tmp / "few.safetensors", 3), FileError);
    CHECK_THROWS_WITH(Parameters::load(tmp / "few.safetensors", 3),
                      Contains("few.safetensors: missing tensor \"attn.weight\"; the file holds 4 tensors: "
                               "\"decoder.attn.attn.bias\", \"decoder.attn.attn.weight\", "
                               "\"decoder.attn.attn_combine.bias\", \"decoder.attn.attn_combine.weight\""));
    write_weights(tmp / "many.safetensors", p, "m.", {}, 3);
    CHECK_THROWS_WITH(Parameters::load(tmp / "many.safetensors", 3),
                      Contains("the file holds 7 tensors: \"extra0\", \"extra1\", \"extra2\", \"m.attn.bias\", "
                               "\"m.attn.weight\", ...") &&
                          !Contains("attn_combine"));
    safetensors::write(tmp / "empty.safetensors", {});
    CHECK_THROWS_WITH(Parameters::load(tmp / "empty.safetensors", 3), Contains("; the file holds no tensors"));
}

TEST_CASE("cli: run takes q from the weights' metadata, and --prefix", "[cli][load]") {
    TempDir tmp;
    const Parameters p = Parameters::random(dims, 10);
    write_weights(tmp / "w.safetensors", p, "m.", {{"myattn.m.query_size", "3"}});
    const std::size_t B = 2;
    const std::vector<float> Q(B * 3, 0.5f), K(B * 5, -0.25f), V(7 * 9, 1.5f);
    const safetensors::NamedTensor in[] = {
        {"Q", {Q.data(), {1, B, 3}}}, {"K", {K.data(), {1, B, 5}}}, {"V", {V.data(), {1, 7, 9}}}};
    safetensors::write(tmp / "in.safetensors", in);
    const CliResult r =
        run_cli("run --weights " + (tmp / "w.safetensors").string() + " --inputs " + (tmp / "in.safetensors").string() +
                " --output " + (tmp / "out.safetensors").string() + " --prefix m.");
    CAPTURE(r.out, r.err);
    REQUIRE(r.status == 0);
    const auto out = safetensors::read(tmp / "out.safetensors");
    CHECK(out.at("output").shape == std::vector<std::size_t>{1, B, 11});
    const ForwardResult want = MyAttn(p).forward({Q.data(), {1, B, 3}}, {K.data(), {1, B, 5}}, {V.data(), {1, 7, 9}});
    CHECK(out.at("output").data == want.output);
    CHECK(out.at("attn_weights").data == want.attn_weights);

    const CliResult wrong =
        run_cli("run --weights " + (tmp / "w.safetensors").string() + " --inputs " + (tmp / "in.safetensors").string() +
                " --output " + (tmp / "out2.safetensors").string());
    CHECK(wrong.status == 2);
    CHECK_THAT(wrong.err, Contains("missing tensor \"attn.weight\"; the file holds 4 tensors: \"m.attn.bias\""));
}
