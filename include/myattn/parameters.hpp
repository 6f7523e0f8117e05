// The module's sizes and its four parameter tensors, in PyTorch state_dict layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "myattn/export.hpp"
#include "myattn/tensor.hpp"

namespace myattn {

/// The article's five sizes.
struct MYATTN_EXPORT Dims {
    std::size_t query_size = 0;  // q: width of Q
    std::size_t key_size = 0;    // k: width of K
    std::size_t value_size1 = 0; // L: rows of V (one score per row)
    std::size_t value_size2 = 0; // d: width of a V row
    std::size_t output_size = 0; // o: width of the output

    friend bool operator==(const Dims&, const Dims&) = default;
    /// "q=32 k=32 L=32 d=64 o=32".
    [[nodiscard]] std::string to_string() const;
};

/// Owns W1 = attn.weight [L, q+k], b1 = attn.bias [L], W2 = attn_combine.weight [o, q+d],
/// b2 = attn_combine.bias [o]; row-major [out_features, in_features] as nn.Linear stores them.
class MYATTN_EXPORT Parameters {
  public:
    /// The state_dict key of each tensor.
    static constexpr const char* attn_weight_name = "attn.weight";
    static constexpr const char* attn_bias_name = "attn.bias";
    static constexpr const char* combine_weight_name = "attn_combine.weight";
    static constexpr const char* combine_bias_name = "attn_combine.bias";

    /// Copies the four tensors; throws ShapeError if a span's size does not match `dims`.
    Parameters(const Dims& dims, std::span<const float> attn_weight, std::span<const float> attn_bias,
               std::span<const float> combine_weight, std::span<const float> combine_bias);

    /// nn.Linear's default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and
    /// biases alike, from a deterministic generator seeded with `seed` (not PyTorch's stream).
    static Parameters random(const Dims& dims, std::uint64_t seed);

    /// Reads a safetensors file holding the four state_dict tensors, each named `prefix` +
    /// its state_dict key (prefix "decoder.attn." for a module nested in a model's state_dict).
    /// The shapes give k, L, d and o once q is known. q comes from the file's metadata entry
    /// metadata_key(prefix, "query_size") (written by save and by Python's myattn.save) or from
    /// `query_size`; given both, they must agree, and every size the metadata states must
    /// match the shapes. Any problem with the file is a FileError whose message names the file
    /// and the tensor.
    static Parameters load(const std::filesystem::path& file, std::optional<std::size_t> query_size = std::nullopt,
                           std::string_view prefix = {});

    /// The "__metadata__" key of one of Dims' sizes ("query_size"...): "myattn." + prefix + size.
    [[nodiscard]] static std::string metadata_key(std::string_view prefix, std::string_view size);

    /// Writes the four tensors as F32 safetensors, with the five sizes as metadata (to a
    /// temporary file, then renamed).
    void save(const std::filesystem::path& file) const;

    [[nodiscard]] const Dims& dims() const noexcept { return dims_; }
    [[nodiscard]] std::span<const float> attn_weight() const noexcept { return attn_weight_; }
    [[nodiscard]] std::span<const float> attn_bias() const noexcept { return attn_bias_; }
    [[nodiscard]] std::span<const float> combine_weight() const noexcept { return combine_weight_; }
    [[nodiscard]] std::span<const float> combine_bias() const noexcept { return combine_bias_; }

  private:
    Parameters() = default;
    Dims dims_;
    std::vector<float> attn_weight_, attn_bias_, combine_weight_, combine_bias_;
};

/// Throws ShapeError unless every size is > 0 and every tensor size fits in size_t.
MYATTN_EXPORT void validate(const Dims& dims);

} // namespace myattn
