// The CLI contract: exit 0 on success; on any error exit 2, exactly one stderr line starting
// "myattn:", and no output file (an existing one is left as it was).
#include <catch2/catch.hpp>
#include <fstream>

#include "myattn/myattn.hpp"
#include "support/cli.hpp"

using namespace myattn::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const std::string data = MYATTN_TEST_DATA;
const std::string weights = data + "/article.weights.safetensors";
const std::string inputs = data + "/article.inputs.safetensors";

std::string other_isa() {
    return myattn::cpu_features().neon ? "avx2" : "neon"; // compiled or not, this CPU cannot run it
}

void write_file(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
}

// Runs `run ... --output <tmp>/out.safetensors` and checks the error contract.
void expect_run_error(const std::string& args, const std::string& needle, const std::string& env = "") {
    TempDir tmp;
    const auto out = tmp / "out.safetensors";
    const CliResult r = run_cli("run " + args + " --output " + out.string(), env);
    CAPTURE(args, r.out, r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, StartsWith("myattn: ") && Contains(needle));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(out));
    CHECK(std::distance(std::filesystem::directory_iterator(tmp.path), {}) == 0); // no temporary left
}

void expect_error(const std::string& args, const std::string& needle, const std::string& env = "") {
    const CliResult r = run_cli(args, env);
    CAPTURE(args, r.out, r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, StartsWith("myattn: ") && Contains(needle));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

} // namespace

TEST_CASE("cli: help for each command", "[cli]") {
    for (const char* args : {"--help", "info --help", "demo --help", "run --help"}) {
        const CliResult r = run_cli(args);
        CAPTURE(args);
        CHECK(r.status == 0);
        CHECK_THAT(r.out, Contains("usage: myattn"));
        CHECK(r.err.empty());
    }
}

TEST_CASE("cli: info and demo", "[cli]") {
    const CliResult info = run_cli("info");
    CHECK(info.status == 0);
    CHECK_THAT(info.out, Contains("compiled isas:") && Contains("runnable isas:") && Contains("active isa:"));
    const CliResult demo = run_cli("demo");
    CHECK(demo.status == 0);
    CHECK_THAT(demo.out, Contains("output shape: [1, 1, 32]") && Contains("attn_weights shape: [1, 32]"));
    const CliResult scalar = run_cli("demo --isa scalar --threads 1");
    CHECK(scalar.status == 0);
    CHECK_THAT(scalar.out, Contains("isa scalar"));
}

TEST_CASE("cli: usage errors", "[cli]") {
    expect_error("", "no command");
    expect_error("frobnicate", "unknown command 'frobnicate'");
    expect_error("demo --bogus 1", "unknown argument '--bogus'");
    expect_error("demo --isa", "--isa needs a value");
    expect_error("demo --isa sse9", "unknown ISA");
    expect_error("demo --isa " + other_isa(), other_isa());
    expect_error("demo --threads 0", "positive integer");
    expect_error("demo --threads x", "positive integer");
    expect_error("info", "MYATTN_ISA=bogus", "MYATTN_ISA=bogus");
}

TEST_CASE("cli: run errors leave no output file", "[cli]") {
    expect_run_error("--inputs " + inputs, "--weights is required");
    expect_run_error("--weights " + weights, "--inputs is required");
    expect_run_error("--weights /nonexistent/w.safetensors --inputs " + inputs, "/nonexistent/w.safetensors");
    // Weights of one case with the inputs of another: sizes disagree.
    expect_run_error("--weights " + data + "/primes.weights.safetensors --inputs " + inputs, "attn.weight");
    expect_run_error("--weights " + inputs + " --inputs " + inputs, "missing tensor 'attn.weight'");
    expect_run_error("--weights " + weights + " --inputs " + weights, "missing tensor 'Q'");
    TempDir tmp;
    write_file(tmp / "garbage.safetensors", "this is not a safetensors file");
    expect_run_error("--weights " + weights + " --inputs " + (tmp / "garbage.safetensors").string(), "garbage");
    expect_run_error("--weights " + weights + " --inputs " + inputs + " --isa nope", "unknown ISA");
}

TEST_CASE("cli: an error leaves an existing output file untouched", "[cli]") {
    TempDir tmp;
    const auto out = tmp / "out.safetensors";
    write_file(out, "precious");
    const CliResult r = run_cli("run --weights " + data + "/primes.weights.safetensors --inputs " + inputs +
                                " --output " + out.string());
    CHECK(r.status == 2);
    CHECK(slurp(out) == "precious");
}

TEST_CASE("cli: run writes output and attn_weights", "[cli]") {
    TempDir tmp;
    const auto out = tmp / "out.safetensors";
    const CliResult r = run_cli("run --weights " + weights + " --inputs " + inputs + " --output " + out.string() +
                                " --threads 2");
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto t = myattn::safetensors::read(out);
    CHECK(t.at("output").view_shape().to_string() == "[1, 1, 32]");
    CHECK(t.at("attn_weights").view_shape().to_string() == "[1, 32]");
}
