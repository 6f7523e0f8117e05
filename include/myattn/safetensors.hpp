// Reading and writing safetensors files: an 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}} (optional "__metadata__"), then raw little-endian data.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "myattn/export.hpp"
#include "myattn/tensor.hpp"

namespace myattn::safetensors {

enum class Dtype { F32, F64, F16, BF16 };

/// "F32", "F64", "F16", "BF16".
[[nodiscard]] MYATTN_EXPORT std::string_view dtype_name(Dtype dtype) noexcept;

/// A tensor name or metadata key/value as every myattn error message quotes it: JSON-quoted, so
/// it stays on one line and in ASCII, and shortened, since a hostile file may hold a name of
/// megabytes. E.g. `"attn.weight"`.
[[nodiscard]] MYATTN_EXPORT std::string in_quotes(std::string_view text);

/// A tensor read from a file, converted to float.
struct Tensor {
    std::vector<std::size_t> shape;
    std::vector<float> data;
    Dtype stored_as = Dtype::F32; // the dtype in the file
    [[nodiscard]] Shape view_shape() const { return Shape(std::span<const std::size_t>(shape)); }
    [[nodiscard]] ConstTensor view() const { return {data.data(), view_shape()}; }
};

using TensorMap = std::map<std::string, Tensor, std::less<>>;

/// Entries of "__metadata__" (string to string). A reader keeps only those whose key starts
/// with metadata_prefix, the ones myattn uses: the others are checked, then dropped.
using Metadata = std::map<std::string, std::string, std::less<>>;
inline constexpr std::string_view metadata_prefix = "myattn.";

/// A whole file: its tensors and its kept metadata.
struct Contents {
    TensorMap tensors;
    Metadata metadata;
};

/// Parses a whole file image. `what` names the source in error messages. Throws FileError on
/// anything malformed; never reads outside `bytes`.
[[nodiscard]] MYATTN_EXPORT TensorMap parse(std::span<const std::byte> bytes, std::string_view what);
/// As parse, with the metadata.
[[nodiscard]] MYATTN_EXPORT Contents parse_contents(std::span<const std::byte> bytes, std::string_view what);

/// Reads and parses a file. Throws FileError.
[[nodiscard]] MYATTN_EXPORT TensorMap read(const std::filesystem::path& file);
/// As read, with the metadata.
[[nodiscard]] MYATTN_EXPORT Contents read_contents(const std::filesystem::path& file);

/// One tensor to write.
struct NamedTensor {
    std::string name;
    ConstTensor tensor;
};

/// Serialises tensors (stored as `dtype`, converted from float with round-to-nearest-even) and,
/// if not empty, `metadata` as "__metadata__".
[[nodiscard]] MYATTN_EXPORT std::vector<std::byte> serialize(std::span<const NamedTensor> tensors,
                                                             Dtype dtype = Dtype::F32, const Metadata& metadata = {});

/// Writes to a temporary file in the same directory, then renames it over `file`: on error
/// `file` is untouched and no temporary is left behind. Throws FileError.
MYATTN_EXPORT void write(const std::filesystem::path& file, std::span<const NamedTensor> tensors,
                         Dtype dtype = Dtype::F32, const Metadata& metadata = {});

} // namespace myattn::safetensors
