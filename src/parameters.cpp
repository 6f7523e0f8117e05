#include "myattn/parameters.hpp"

#include <cmath>
#include <iterator>
#include <limits>
#include <optional>

#include "myattn/errors.hpp"
#include "myattn/safetensors.hpp"

namespace myattn {
namespace {

std::size_t checked_add(std::size_t a, std::size_t b, const char* what) {
    if (a > std::numeric_limits<std::size_t>::max() - b)
        throw ShapeError(std::string(what) + ": size overflows size_t");
    return a + b;
}

void expect_size(const char* name, std::span<const float> got, const Shape& want) {
    const std::size_t n = want.numel(name);
    if (got.size() != n)
        throw ShapeError(std::string(name) + ": expected " + std::to_string(n) + " elements (shape " +
                         want.to_string() + "), got " + std::to_string(got.size()));
}

// splitmix64: tiny, fast, and the same stream on every platform (std distributions are not).
struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // Uniform in [-bound, bound): 24 random bits, exactly representable in float.
    float uniform(float bound) {
        const float u = static_cast<float>(next() >> 40) * 0x1p-24f;
        return bound * (2.0f * u - 1.0f);
    }
};

std::vector<float> uniform_vector(SplitMix64& rng, std::size_t n, float bound) {
    std::vector<float> v(n);
    for (float& x : v) x = rng.uniform(bound);
    return v;
}

// "the file holds 7 tensors: "a", "b", "c", "d", "e", ...": enough to spot a prefix.
std::string held_tensors(const safetensors::TensorMap& map) {
    constexpr std::size_t listed = 5;
    if (map.empty()) return "the file holds no tensors";
    std::string s = "the file holds " + std::to_string(map.size()) + (map.size() == 1 ? " tensor: " : " tensors: ");
    std::size_t i = 0;
    for (const auto& entry : map) {
        if (i == listed) return s + ", ...";
        s += (i++ ? ", " : "") + safetensors::in_quotes(entry.first);
    }
    return s;
}

/// A problem with a tensor of a weights file: the file, then the tensor, then what is wrong.
FileError bad_tensor(const std::filesystem::path& file, const std::string& name, const std::string& what) {
    return FileError(file.string() + ": " + name + ": " + what);
}

const safetensors::Tensor& require(const safetensors::TensorMap& map, const std::filesystem::path& file,
                                   const std::string& name, std::size_t rank) {
    const auto it = map.find(name);
    if (it == map.end())
        throw FileError(file.string() + ": missing tensor " + safetensors::in_quotes(name) + "; " + held_tensors(map));
    const safetensors::Tensor& t = it->second;
    if (t.shape.size() != rank)
        throw bad_tensor(file, name,
                         "expected a tensor of rank " + std::to_string(rank) + ", got shape " +
                             t.view_shape().to_string());
    if (t.view_shape().numel(name) == 0)
        throw bad_tensor(file, name, "expected no extent of 0, got shape " + t.view_shape().to_string());
    return t;
}

constexpr const char* size_names[] = {"query_size", "key_size", "value_size1", "value_size2", "output_size"};

// A size from the metadata: nullopt if absent; decimal digits > 0, else FileError.
std::optional<std::size_t> metadata_size(const safetensors::Metadata& metadata, const std::filesystem::path& file,
                                         const std::string& key) {
    const auto it = metadata.find(key);
    if (it == metadata.end()) return std::nullopt;
    const std::string& text = it->second;
    std::size_t value = 0;
    bool ok = !text.empty() && text.size() <= 19;
    for (char c : text) {
        ok = ok && c >= '0' && c <= '9';
        value = value * 10 + static_cast<std::size_t>(c - '0');
    }
    if (!ok || value == 0)
        throw FileError(file.string() + ": metadata " + safetensors::in_quotes(key) +
                        " must be a positive decimal integer, got " + safetensors::in_quotes(text));
    return value;
}

} // namespace

std::string Dims::to_string() const {
    return "q=" + std::to_string(query_size) + " k=" + std::to_string(key_size) + " L=" + std::to_string(value_size1) +
           " d=" + std::to_string(value_size2) + " o=" + std::to_string(output_size);
}

void validate(const Dims& d) {
    const std::pair<const char*, std::size_t> sizes[] = {{"query_size", d.query_size},
                                                         {"key_size", d.key_size},
                                                         {"value_size1", d.value_size1},
                                                         {"value_size2", d.value_size2},
                                                         {"output_size", d.output_size}};
    for (auto [name, value] : sizes)
        if (value == 0) throw ShapeError(std::string("Dims: ") + name + " must be > 0, got 0 (" + d.to_string() + ")");
    const std::size_t qk = checked_add(d.query_size, d.key_size, "attn.weight (q+k)");
    const std::size_t qd = checked_add(d.query_size, d.value_size2, "attn_combine.weight (q+d)");
    (void)Shape{d.value_size1, qk + 1}.numel("attn.weight and attn.bias");
    (void)Shape{d.output_size, qd + 1}.numel("attn_combine.weight and attn_combine.bias");
    (void)Shape{d.value_size1, d.value_size2}.numel("V [L, d]");
}

Parameters::Parameters(const Dims& dims, std::span<const float> attn_weight, std::span<const float> attn_bias,
                       std::span<const float> combine_weight, std::span<const float> combine_bias)
    : dims_(dims) {
    validate(dims);
    const std::size_t L = dims.value_size1, o = dims.output_size;
    expect_size(attn_weight_name, attn_weight, {L, dims.query_size + dims.key_size});
    expect_size(attn_bias_name, attn_bias, {L});
    expect_size(combine_weight_name, combine_weight, {o, dims.query_size + dims.value_size2});
    expect_size(combine_bias_name, combine_bias, {o});
    attn_weight_.assign(attn_weight.begin(), attn_weight.end());
    attn_bias_.assign(attn_bias.begin(), attn_bias.end());
    combine_weight_.assign(combine_weight.begin(), combine_weight.end());
    combine_bias_.assign(combine_bias.begin(), combine_bias.end());
}

Parameters Parameters::random(const Dims& dims, std::uint64_t seed) {
    validate(dims);
    SplitMix64 rng{seed};
    const std::size_t in1 = dims.query_size + dims.key_size, in2 = dims.query_size + dims.value_size2;
    const float bound1 = 1.0f / std::sqrt(static_cast<float>(in1));
    const float bound2 = 1.0f / std::sqrt(static_cast<float>(in2));
    Parameters p;
    p.dims_ = dims;
    p.attn_weight_ = uniform_vector(rng, dims.value_size1 * in1, bound1);
    p.attn_bias_ = uniform_vector(rng, dims.value_size1, bound1);
    p.combine_weight_ = uniform_vector(rng, dims.output_size * in2, bound2);
    p.combine_bias_ = uniform_vector(rng, dims.output_size, bound2);
    return p;
}

std::string Parameters::metadata_key(std::string_view prefix, std::string_view size) {
    return std::string(safetensors::metadata_prefix).append(prefix).append(size);
}

Parameters Parameters::load(const std::filesystem::path& file, std::optional<std::size_t> query_size,
                            std::string_view prefix) {
    const safetensors::Contents contents = safetensors::read_contents(file);
    const safetensors::TensorMap& map = contents.tensors;
    const std::string p(prefix);
    const auto& w1 = require(map, file, p + attn_weight_name, 2);
    const auto& b1 = require(map, file, p + attn_bias_name, 1);
    const auto& w2 = require(map, file, p + combine_weight_name, 2);
    const auto& b2 = require(map, file, p + combine_bias_name, 1);
    std::optional<std::size_t> stored[std::size(size_names)];
    for (std::size_t i = 0; i < std::size(size_names); ++i)
        stored[i] = metadata_size(contents.metadata, file, metadata_key(prefix, size_names[i]));
    if (!stored[0] && !query_size)
        throw FileError(file.string() + ": the file does not state q (no metadata " +
                        safetensors::in_quotes(metadata_key(prefix, size_names[0])) +
                        "), so a query_size must be given");
    if (stored[0] && query_size && *stored[0] != *query_size)
        throw FileError(file.string() + ": query_size " + std::to_string(*query_size) + " was given, but the file's " +
                        safetensors::in_quotes(metadata_key(prefix, size_names[0])) + " is " +
                        std::to_string(*stored[0]));
    const std::size_t q = stored[0] ? *stored[0] : *query_size;
    if (w1.shape[1] <= q)
        throw bad_tensor(file, p + attn_weight_name,
                         "expected [L, q+k] with q=" + std::to_string(q) + " and k >= 1, got " +
                             w1.view_shape().to_string());
    if (w2.shape[1] <= q)
        throw bad_tensor(file, p + combine_weight_name,
                         "expected [o, q+d] with q=" + std::to_string(q) + " and d >= 1, got " +
                             w2.view_shape().to_string());
    const Dims dims{q, w1.shape[1] - q, w1.shape[0], w2.shape[1] - q, w2.shape[0]};
    if (b1.shape[0] != dims.value_size1)
        throw bad_tensor(file, p + attn_bias_name,
                         "expected [" + std::to_string(dims.value_size1) + "] (L from attn.weight " +
                             w1.view_shape().to_string() + "), got " + b1.view_shape().to_string());
    if (b2.shape[0] != dims.output_size)
        throw bad_tensor(file, p + combine_bias_name,
                         "expected [" + std::to_string(dims.output_size) + "] (o from attn_combine.weight " +
                             w2.view_shape().to_string() + "), got " + b2.view_shape().to_string());
    const std::size_t from_shapes[] = {q, dims.key_size, dims.value_size1, dims.value_size2, dims.output_size};
    for (std::size_t i = 1; i < std::size(size_names); ++i)
        if (stored[i] && *stored[i] != from_shapes[i])
            throw FileError(file.string() + ": metadata " +
                            safetensors::in_quotes(metadata_key(prefix, size_names[i])) + " is " +
                            std::to_string(*stored[i]) + ", but the tensors' shapes give " +
                            std::to_string(from_shapes[i]) + " (" + dims.to_string() + ")");
    return Parameters(dims, w1.data, b1.data, w2.data, b2.data);
}

void Parameters::save(const std::filesystem::path& file) const {
    const std::size_t L = dims_.value_size1, o = dims_.output_size;
    const safetensors::NamedTensor tensors[] = {
        {attn_weight_name, {attn_weight_.data(), {L, dims_.query_size + dims_.key_size}}},
        {attn_bias_name, {attn_bias_.data(), {L}}},
        {combine_weight_name, {combine_weight_.data(), {o, dims_.query_size + dims_.value_size2}}},
        {combine_bias_name, {combine_bias_.data(), {o}}},
    };
    const std::size_t sizes[] = {dims_.query_size, dims_.key_size, L, dims_.value_size2, o};
    safetensors::Metadata metadata;
    for (std::size_t i = 0; i < std::size(size_names); ++i)
        metadata.emplace(metadata_key({}, size_names[i]), std::to_string(sizes[i]));
    safetensors::write(file, tensors, safetensors::Dtype::F32, metadata);
}

} // namespace myattn
