// The case lists tools/make_reference.py writes (cases.txt): one case a line, '#' comments.
// The parity cases read their columns themselves; the accuracy suite's have a reader here.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace myattn::test {

/// The case lines of the file at `path`, each as a stream of its whitespace-separated columns.
inline std::vector<std::istringstream> case_lines(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::vector<std::istringstream> out;
    std::string line;
    while (std::getline(in, line))
        if (!line.empty() && line[0] != '#') out.emplace_back(line);
    return out;
}

/// PyTorch's errors on a case, against the float64 truth: max |got - truth| / max |truth|.
struct TorchError {
    double output = 0, attn_weights = 0;
};

/// One line of tests/data/accuracy/cases.txt (tools/accuracy_cases.py says what each means).
struct AccuracyCase {
    std::string name, regime;
    std::size_t q = 0, k = 0, L = 0, d = 0, o = 0, B = 0;
    bool shared_k = false, shared_v = false;
    std::string weight_dtype;
    /// bf16 autocast; quantize_dynamic's int8 Linears; float32 with the Linears' weights
    /// rounded to bf16 (bf16w), and V too (bf16wv); float32 with the weights and the Linears'
    /// inputs rounded (bf16wx), and V too (bf16wxv).
    TorchError torch_bf16, torch_int8, torch_bf16w, torch_bf16wv, torch_bf16wx, torch_bf16wxv;
};

/// The cases of the accuracy suite's cases.txt at `path`.
inline std::vector<AccuracyCase> accuracy_cases(const std::string& path) {
    std::vector<AccuracyCase> out;
    for (std::istringstream& s : case_lines(path)) {
        AccuracyCase c;
        std::size_t seed;
        int sk, sv;
        s >> c.name >> c.regime >> c.q >> c.k >> c.L >> c.d >> c.o >> c.B >> sk >> sv >> seed >> c.weight_dtype;
        for (TorchError* e :
             {&c.torch_bf16, &c.torch_int8, &c.torch_bf16w, &c.torch_bf16wv, &c.torch_bf16wx, &c.torch_bf16wxv})
            s >> e->output >> e->attn_weights;
        INFO(path << ": " << c.name);
        REQUIRE(!s.fail());
        c.shared_k = sk, c.shared_v = sv;
        out.push_back(c);
    }
    return out;
}

} // namespace myattn::test
