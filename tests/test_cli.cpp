// The CLI contract: exit 0 on success; on any error exit 2, exactly one stderr line starting
// "myattn:", and no output file (an existing one is left as it was).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>

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
    const std::string article = std::string(MYATTN_TEST_DATA) + "/article.weights.safetensors";
    const CliResult plan = run_cli("info --weights " + article + " --query-size 32");
    CHECK(plan.status == 0);
    CHECK_THAT(plan.out, Contains("module:        q=32 k=32 ") && Contains("plan:          fused"));
    expect_error("info --weights " + article, "--weights and --query-size go together");
    const CliResult demo = run_cli("demo");
    CHECK(demo.status == 0);
    CHECK_THAT(demo.out, Contains("output shape: [1, 1, 32]") && Contains("attn_weights shape: [1, 32]"));
    const CliResult scalar = run_cli("demo --isa scalar --threads 1");
    CHECK(scalar.status == 0);
    CHECK_THAT(scalar.out, Contains("isa scalar"));
}

TEST_CASE("cli: usage errors", "[cli]") {
    expect_error("", "no command");
    expect_error("frobnicate", "unknown command \"frobnicate\"");
    expect_error("demo --bogus 1", "unknown argument \"--bogus\"");
    expect_error("demo --isa", "--isa needs a value");
    expect_error("demo --isa sse9", "unknown ISA");
    expect_error("demo --isa " + other_isa(), other_isa());
    expect_error("demo --threads 0", "positive integer");
    expect_error("demo --threads x", "positive integer");
    expect_error("demo --seed -1", "non-negative integer");
}

TEST_CASE("cli: info shows what it knows, then names an unusable MYATTN_ISA", "[cli]") {
    const CliResult r = run_cli("info", "MYATTN_ISA=bogus");
    CAPTURE(r.out, r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.out, Contains("cpu features:") && Contains("compiled isas:") && Contains("runnable isas:"));
    CHECK_THAT(r.err, StartsWith("myattn: ") && Contains("MYATTN_ISA=bogus"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("cli: demo takes any seed, 0 included", "[cli]") {
    const CliResult zero = run_cli("demo --seed 0"), one = run_cli("demo --seed 1");
    CHECK(zero.status == 0);
    CHECK(one.status == 0);
    CHECK(zero.err.empty());
    CHECK(zero.out != one.out);
}

#ifdef MYATTN_WITH_TBB
TEST_CASE("cli: --threads beyond what TBB allows is clamped, with one line", "[cli]") {
    const CliResult r = run_cli("demo --threads 100000");
    CAPTURE(r.err);
    CHECK(r.status == 0);
    CHECK_THAT(r.err, StartsWith("myattn: --threads 100000: TBB runs at most "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.out, Contains("output shape: [1, 1, 32]"));
}
#endif

TEST_CASE("cli: run errors leave no output file", "[cli]") {
    expect_run_error("--inputs " + inputs, "--weights is required");
    expect_run_error("--weights " + weights, "--inputs is required");
    expect_run_error("--weights /nonexistent/w.safetensors --inputs " + inputs, "/nonexistent/w.safetensors");
    // Weights of one case with the inputs of another: sizes disagree.
    expect_run_error("--weights " + data + "/primes.weights.safetensors --inputs " + inputs, "attn.weight");
    expect_run_error("--weights " + inputs + " --inputs " + inputs, "missing tensor \"attn.weight\"");
    expect_run_error("--weights " + weights + " --inputs " + weights, "missing tensor \"Q\"");
    TempDir tmp;
    write_file(tmp / "garbage.safetensors", "this is not a safetensors file");
    expect_run_error("--weights " + weights + " --inputs " + (tmp / "garbage.safetensors").string(), "garbage");
    expect_run_error("--weights " + weights + " --inputs " + inputs + " --isa nope", "unknown ISA");
    expect_run_error("--weights " + weights + " --inputs " + inputs + " --precision fp8",
                     "--precision: unknown precision \"fp8\" (expected one of f32, int8, bf16)");
}

TEST_CASE("cli: info lists each precision's kernels", "[cli]") {
    const CliResult r = run_cli("info");
    CAPTURE(r.out, r.err);
    CHECK(r.status == 0);
    for (myattn::Precision p : myattn::precisions()) {
        const auto id = myattn::kernel_id(myattn::active_isa(), p);
        CHECK_THAT(r.out, Contains(std::string(myattn::precision_name(p)) + ":") &&
                              Contains(id ? std::string(*id) : "(no kernels in this build)"));
    }
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
#ifdef MYATTN_WITH_TBB
    const std::string threads = " --threads 2";
#else
    const std::string threads = " --threads 1"; // a build without TBB runs on the calling thread only
    expect_error("demo --threads 2", "no TBB");
#endif
    const CliResult r =
        run_cli("run --weights " + weights + " --inputs " + inputs + " --output " + out.string() + threads);
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto t = myattn::safetensors::read(out);
    CHECK(t.at("output").view_shape().to_string() == "[1, 1, 32]");
    CHECK(t.at("attn_weights").view_shape().to_string() == "[1, 32]");
    // The same at int8: its kernels named, results within int8's error of float32's.
    const auto out8 = tmp / "out8.safetensors";
    const CliResult r8 = run_cli("run --weights " + weights + " --inputs " + inputs + " --output " + out8.string() +
                                 " --precision int8");
    INFO(r8.err);
    REQUIRE(r8.status == 0);
    const auto id = myattn::kernel_id(myattn::active_isa(), myattn::Precision::int8);
    REQUIRE(id.has_value());
    CHECK_THAT(r8.out, Contains(std::string(*id)));
    const auto t8 = myattn::safetensors::read(out8);
    const auto& a = t.at("output").data;
    const auto& b = t8.at("output").data;
    REQUIRE(a.size() == b.size());
    float scale = 0, diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        scale = std::max(scale, std::fabs(a[i]));
        diff = std::max(diff, std::fabs(a[i] - b[i]));
    }
    CHECK(diff > 0.0f);           // it did run int8
    CHECK(diff <= 0.05f * scale); // measured: about 1 % (docs/accuracy.md)
}

// ---- Hostile files at the CLI: the bad-input contract of docs/contract.md ----------------------

namespace {

/// A safetensors image: the 8-byte little-endian header length, the header, then `data`.
std::string st_file(const std::string& header, const std::string& payload) {
    std::string out(8, '\0');
    std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i, n >>= 8) out[static_cast<std::size_t>(i)] = static_cast<char>(n & 0xff);
    return out + header + payload;
}

std::string f32(const std::string& name, const std::string& shape, std::size_t begin, std::size_t end,
                const std::string& dtype = "F32") {
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
           std::to_string(begin) + "," + std::to_string(end) + "]}";
}

/// Inputs for the `ones` case (q = k = L = d = o = 1) with B = 3: Q, K, V of [3, 1, 1].
std::string ones_inputs(const std::string& q_entry, const std::string& payload = std::string(36, '\0')) {
    return st_file("{" + f32("K", "[3,1,1]", 0, 12) + "," + q_entry + "," + f32("V", "[3,1,1]", 24, 36) + "}", payload);
}

const std::string good_q = f32("Q", "[3,1,1]", 12, 24);
const std::string ones_weights = data + "/ones.weights.safetensors";

} // namespace

TEST_CASE("cli: every class of hostile file is refused, as --inputs and as --weights", "[cli][errors]") {
    TempDir tmp;
    const std::string good_inputs = ones_inputs(good_q);
    struct Bad {
        const char* what;
        std::string bytes, needle;
    };
    const Bad bad[] = {
        {"empty", "", "shorter than the 8-byte header length"},
        {"truncated in the length", good_inputs.substr(0, 5), "shorter than the 8-byte header length"},
        {"truncated in the header", good_inputs.substr(0, 40), "exceeds the 32 bytes that follow it"},
        {"truncated in the data", good_inputs.substr(0, good_inputs.size() - 5), "reach beyond the data block"},
        {"header length past the end", st_file("{}", "").replace(0, 8, std::string("\x40\x42\x0f\0\0\0\0\0", 8)),
         "header length 1000000 exceeds the 2 bytes that follow it"},
        {"trailing bytes", good_inputs + "xyz", "belong to no tensor"},
        {"not JSON", st_file("{Q: [1, 2]}", ""), "header is not valid JSON"},
        {"not an object", st_file("[1, 2]", ""), "header must be a JSON object"},
        {"NUL in the header", st_file(std::string("{}\0x", 4), ""), "NUL byte"},
        {"overlapping offsets", ones_inputs(f32("Q", "[3,1,1]", 8, 20)), "overlap tensor"},
        {"out-of-range offsets", ones_inputs(f32("Q", "[3,1,1]", 12, 24), std::string(30, '\0')),
         "reach beyond the data block of 30 bytes"},
        {"tensor larger than the file", ones_inputs(f32("Q", "[1000000000,1,1]", 12, 24)),
         "needs 4000000000 bytes but data_offsets [12, 24] hold 12"},
        {"shape overflowing size_t", ones_inputs(f32("Q", "[4294967296,4294967296,1]", 12, 24)),
         "more bytes than size_t holds"},
        {"unknown dtype", ones_inputs(f32("Q", "[3,1,1]", 12, 24, "F31")), "unknown dtype \"F31\""},
        {"unsupported dtype", ones_inputs(f32("Q", "[3,1,1]", 12, 24, "I32")), "dtype \"I32\" is not supported"},
        {"duplicate names", ones_inputs(good_q + "," + f32("Q", "[3,1,1]", 12, 24)), "duplicate tensor name \"Q\""},
    };
    for (const Bad& b : bad) {
        CAPTURE(b.what);
        const auto file = tmp / "bad.safetensors";
        write_file(file, b.bytes);
        expect_run_error("--weights " + ones_weights + " --inputs " + file.string(), b.needle);
        expect_run_error("--weights " + file.string() + " --inputs " + inputs, b.needle);
        // The message names the file at fault.
        expect_run_error("--weights " + ones_weights + " --inputs " + file.string(), file.string());
    }
}

TEST_CASE("cli: a header length over the 100 MB cap is refused before reading it", "[cli][errors]") {
    TempDir tmp;
    const auto file = tmp / "huge.safetensors";
    // A sparse file of 100 000 016 bytes whose header length says 100 000 008: the bytes are
    // there, but the cap applies first (and nothing of that size is allocated).
    write_file(file, st_file("", "").replace(0, 8, std::string("\x08\xe1\xf5\x05\0\0\0\0", 8)));
    std::filesystem::resize_file(file, 100'000'016);
    expect_run_error("--weights " + ones_weights + " --inputs " + file.string(), "exceeds the limit of 100000000");
}

TEST_CASE("cli: files that parse but do not fit the model are refused", "[cli][errors]") {
    TempDir tmp;
    const auto file = tmp / "in.safetensors";
    SECTION("mismatched batch between Q and K") {
        write_file(file, st_file("{" + f32("K", "[2,1,1]", 0, 8) + "," + f32("Q", "[3,1,1]", 8, 20) + "," +
                                     f32("V", "[3,1,1]", 20, 32) + "}",
                                 std::string(32, '\0')));
        expect_run_error("--weights " + ones_weights + " --inputs " + file.string(),
                         "K: expected shape [3, 1, 1] or [1, 1, 1], got [2, 1, 1]");
    }
    SECTION("mismatched batch between Q and V") {
        write_file(file,
                   st_file("{" + f32("K", "[3,1,1]", 0, 12) + "," + good_q + "," + f32("V", "[2,1,1]", 24, 32) + "}",
                           std::string(32, '\0')));
        expect_run_error("--weights " + ones_weights + " --inputs " + file.string(), "V: expected shape [3, 1, 1]");
    }
    SECTION("Q of the wrong rank") {
        write_file(file, st_file("{" + f32("K", "[3,1,1]", 0, 12) + "," + f32("Q", "[3,1]", 12, 24) + "," +
                                     f32("V", "[3,1,1]", 24, 36) + "}",
                                 std::string(36, '\0')));
        expect_run_error("--weights " + ones_weights + " --inputs " + file.string(), "Q: expected shape [B, 1, q]");
    }
    SECTION("zero d in V") {
        write_file(file,
                   st_file("{" + f32("K", "[3,1,1]", 0, 12) + "," + good_q + "," + f32("V", "[3,1,0]", 24, 24) + "}",
                           std::string(24, '\0')));
        expect_run_error("--weights " + ones_weights + " --inputs " + file.string(), "V: expected shape [3, 1, 1]");
    }
    SECTION("weights with zero L") {
        write_file(file, st_file("{" + f32("attn.bias", "[0]", 0, 0) + "," + f32("attn.weight", "[0,2]", 0, 0) + "," +
                                     f32("attn_combine.bias", "[1]", 0, 4) + "," +
                                     f32("attn_combine.weight", "[1,2]", 4, 12) + "}",
                                 std::string(12, '\0')));
        expect_run_error("--weights " + file.string() + " --inputs " + data + "/ones.inputs.safetensors",
                         file.string() + ": attn.weight: expected no extent of 0, got shape [0, 2]");
    }
    SECTION("weights with zero d") {
        write_file(file, st_file("{" + f32("attn.bias", "[1]", 0, 4) + "," + f32("attn.weight", "[1,2]", 4, 12) + "," +
                                     f32("attn_combine.bias", "[1]", 12, 16) + "," +
                                     f32("attn_combine.weight", "[1,1]", 16, 20) + "}",
                                 std::string(20, '\0')));
        expect_run_error("--weights " + file.string() + " --inputs " + data + "/ones.inputs.safetensors",
                         "attn_combine.weight: expected [o, q+d] with q=1 and d >= 1, got [1, 1]");
    }
}

TEST_CASE("cli: NaN and inf inputs are not errors; they propagate as in PyTorch", "[cli][nonfinite]") {
    TempDir tmp;
    const auto in = tmp / "in.safetensors", out = tmp / "out.safetensors";
    constexpr float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    // The `ones` weights (every size 1), B = 3: K = 1; Q = [NaN, 1, inf]; V = [1, -inf, 2].
    const float values[] = {1, 1, 1, nan, 1, inf, 1, -inf, 2};
    write_file(in, ones_inputs(good_q, std::string(reinterpret_cast<const char*>(values), sizeof values)));
    const CliResult r =
        run_cli("run --weights " + ones_weights + " --inputs " + in.string() + " --output " + out.string());
    INFO(r.err);
    REQUIRE(r.status == 0);
    const auto t = myattn::safetensors::read(out);
    const std::vector<float>& y = t.at("output").data;
    const std::vector<float>& w = t.at("attn_weights").data;
    REQUIRE(y.size() == 3);
    REQUIRE(w.size() == 3);
    CHECK(std::isnan(w[0])); // NaN query: NaN score, weight and output
    CHECK(std::isnan(y[0]));
    CHECK(w[1] == 1.0f); // one finite score softmaxes to 1; the -inf in V reaches the output
    CHECK_FALSE(std::isfinite(y[1]));
    // Element for element what the library gives for the same inputs (NaN where it has NaN).
    const myattn::MyAttn attn(myattn::Parameters::load(ones_weights, 1));
    const myattn::ForwardResult want =
        attn.forward({values + 3, {3, 1, 1}}, {values, {3, 1, 1}}, {values + 6, {3, 1, 1}});
    for (std::size_t i = 0; i < 3; ++i) {
        CAPTURE(i, y[i], want.output[i], w[i], want.attn_weights[i]);
        CHECK(std::memcmp(&y[i], &want.output[i], sizeof(float)) == 0);
        CHECK(std::memcmp(&w[i], &want.attn_weights[i], sizeof(float)) == 0);
    }
}
