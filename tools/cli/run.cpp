// myattn run: weights and inputs from safetensors files, outputs to one.
#include <cstdio>
#include <optional>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "myattn/myattn.hpp"

namespace myattn::cli {
namespace {

const safetensors::Tensor& input(const safetensors::TensorMap& map, const std::string& file, const char* name) {
    const auto it = map.find(name);
    if (it == map.end()) throw FileError(file + ": missing tensor " + safetensors::in_quotes(name));
    return it->second;
}

} // namespace

int run(std::span<char* const> args) {
    const Args opts("run", args, {"weights", "inputs", "output", "isa", "precision", "threads", "prefix"});
    if (opts.help()) {
        std::printf("usage: myattn run --weights W.safetensors --inputs I.safetensors --output O.safetensors\n"
                    "                  [--isa %s] [--precision f32|int8|bf16] [--threads N] [--prefix P]\n\n",
                    to_string(compiled_isas(), "|").c_str());
        std::puts("W holds the PyTorch state_dict tensors attn.weight [L, q+k], attn.bias [L],\n"
                  "attn_combine.weight [o, q+d], attn_combine.bias [o] (F32, F64, F16 or BF16),\n"
                  "each named with the prefix P if given (e.g. --prefix decoder.attn.).\n"
                  "q is the file's metadata myattn.<P>query_size if it has one, else Q's width.\n"
                  "I holds Q [B, 1, q], K [B, 1, k] or [1, 1, k], V [B, L, d] or [1, L, d],\n"
                  "or the module's own layout Q [1, B, q], K [1, B, k] or [1, 1, k], V [1, L, d].\n"
                  "O receives output [B, 1, o] (or [1, B, o]) and attn_weights [B, L] as F32; it is\n"
                  "written to a temporary file and renamed, so an error never leaves a partial file.\n"
                  "--precision: how the Linears compute (f32, the default; int8: dynamically quantized;\n"
                  "bf16: bfloat16 weights); inputs and outputs are F32 either way. `myattn info` lists\n"
                  "the kernels of each precision on this CPU; docs/accuracy.md what each costs.");
        return 0;
    }
    const std::string weights_file = opts.require("weights"), inputs_file = opts.require("inputs"),
                      output_file = opts.require("output");
    const auto forced = opts.isa();
    const Precision precision = opts.precision();
    const auto threads = opts.count("threads");

    const safetensors::TensorMap inputs = safetensors::read(inputs_file);
    const auto& Q = input(inputs, inputs_file, "Q");
    const auto& K = input(inputs, inputs_file, "K");
    const auto& V = input(inputs, inputs_file, "V");
    if (Q.shape.size() != 3)
        throw ShapeError("Q: expected shape [B, 1, q] or [1, B, q], got " + Q.view_shape().to_string());
    // A file with the sizes in its metadata is loaded as it says, so a Q of the wrong width is
    // reported by forward as a shape error on Q; otherwise Q's width is q.
    const std::string prefix = opts.get("prefix").value_or("");
    const bool states_q =
        safetensors::read_contents(weights_file).metadata.contains(Parameters::metadata_key(prefix, "query_size"));
    const auto q = states_q ? std::nullopt : std::optional<std::size_t>(Q.shape[2]);
    const MyAttn attn(Parameters::load(weights_file, q, prefix), forced ? *forced : active_isa(), precision);

    ForwardResult r;
    with_threads(threads, [&] { r = attn.forward(Q.view(), K.view(), V.view()); });
    const safetensors::NamedTensor out[] = {{"output", {r.output.data(), r.output_shape}},
                                            {"attn_weights", {r.attn_weights.data(), r.attn_weights_shape}}};
    safetensors::write(output_file, out);
    std::printf("%s: output %s, attn_weights %s (isa %s, %s)\n", output_file.c_str(),
                r.output_shape.to_string().c_str(), r.attn_weights_shape.to_string().c_str(),
                std::string(isa_name(attn.isa())).c_str(), std::string(attn.kernel_id()).c_str());
    return 0;
}

} // namespace myattn::cli
