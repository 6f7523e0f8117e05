// safetensors reading and writing. The reader treats every file as hostile: each length, offset
// and shape is checked against the bytes actually present before anything is allocated or read,
// and data are copied with memcpy because the format promises no alignment.
#include "myattn/safetensors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "io/float_convert.hpp"
#include "myattn/errors.hpp"

namespace myattn::safetensors {

// The format stores little-endian data, copied here byte for byte; every target (x86-64, AArch64)
// is little-endian, and a big-endian port would need byte swaps in decode_as/encode_as.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");
static_assert(sizeof(std::size_t) == sizeof(std::uint64_t), "offsets and shapes are 64-bit in the format");

namespace {

using Json = nlohmann::json;

constexpr std::uint64_t max_header_length = 100'000'000; // the official reader's limit
constexpr int max_json_depth = 16; // a valid header nests 3 deep; the margin allows for unknown fields
// Values in an array that is an entry's field ("shape", "data_offsets"): far more dimensions than
// any real tensor has (myattn's have at most 3), and what keeps a header's tree within a small
// multiple of the header's size (a JSON value takes 16 bytes for the 2 of "1,").
constexpr std::size_t max_array_values = 64;
constexpr std::size_t max_quoted_chars = 100;

std::string shortened(std::string text) {
    if (text.size() > 2 * max_quoted_chars) text = text.substr(0, 2 * max_quoted_chars) + "...";
    return text;
}

std::string shape_string(std::span<const std::size_t> shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return shortened(s + "]");
}

std::string range_string(std::uint64_t begin, std::uint64_t end) {
    return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

/// Where a parse error happened: the source and, once known, the tensor.
struct Context {
    std::string_view what;
    std::string_view tensor;

    [[noreturn]] void fail(const std::string& message) const {
        std::string full(what);
        full += ": ";
        if (!tensor.empty()) full += "tensor " + in_quotes(tensor) + ": ";
        throw FileError(full + message);
    }
};

std::size_t dtype_size(Dtype dtype) {
    switch (dtype) {
    case Dtype::F32:
        return 4;
    case Dtype::F64:
        return 8;
    case Dtype::F16:
    case Dtype::BF16:
        return 2;
    }
    throw ArgumentError("safetensors: invalid Dtype value " + std::to_string(static_cast<int>(dtype)));
}

// The format's other dtypes: reported as unsupported, so that a typo reads differently.
constexpr std::string_view unsupported_dtypes[] = {"BOOL", "U8",      "I8",      "I16",     "U16",     "I32",
                                                   "U32",  "I64",     "U64",     "F8_E5M2", "F8_E4M3", "F8_E8M0",
                                                   "F4",   "F6_E2M3", "F6_E3M2", "C64"};

Dtype read_dtype(const Json& json, const Context& ctx) {
    if (!json.is_string()) ctx.fail("\"dtype\" must be a string, got " + std::string(json.type_name()));
    const auto& name = json.get_ref<const std::string&>();
    for (Dtype dtype : {Dtype::F32, Dtype::F64, Dtype::F16, Dtype::BF16})
        if (name == dtype_name(dtype)) return dtype;
    if (std::find(std::begin(unsupported_dtypes), std::end(unsupported_dtypes), name) != std::end(unsupported_dtypes))
        ctx.fail("dtype " + in_quotes(name) + " is not supported (F32, F64, F16 and BF16 are)");
    ctx.fail("unknown dtype " + in_quotes(name));
}

/// A shape extent or an offset: a JSON integer >= 0.
std::size_t read_index(const Json& json, const char* field, const Context& ctx) {
    if (json.is_number_unsigned()) return json.get<std::uint64_t>();
    if (json.is_number_integer() && json.get<std::int64_t>() == 0) return 0; // "-0"
    ctx.fail(std::string("\"") + field + "\" must hold non-negative integers, got " + shortened(json.dump()));
}

const Json& member(const Json& entry, const char* key, const Context& ctx) {
    const auto it = entry.find(key);
    if (it == entry.end()) ctx.fail(std::string("missing \"") + key + "\"");
    return *it;
}

std::vector<std::size_t> read_shape(const Json& json, const Context& ctx) {
    if (!json.is_array()) ctx.fail("\"shape\" must be an array, got " + std::string(json.type_name()));
    std::vector<std::size_t> shape;
    shape.reserve(json.size());
    for (const Json& extent : json) shape.push_back(read_index(extent, "shape", ctx));
    return shape;
}

/// Bytes the tensor needs. Like the official reader, any partial product that overflows is an
/// error, even when a later zero extent would bring the total back to zero.
std::size_t byte_size(std::span<const std::size_t> shape, Dtype dtype, const Context& ctx) {
    constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
    std::size_t bytes = dtype_size(dtype);
    for (std::size_t extent : shape) {
        if (extent != 0 && bytes > max / extent)
            ctx.fail("shape " + shape_string(shape) + " of " + std::string(dtype_name(dtype)) +
                     " needs more bytes than size_t holds");
        bytes *= extent;
    }
    return bytes;
}

/// One tensor's header entry, validated on its own; how entries fit together is checked later.
struct Entry {
    std::string_view name;
    Dtype dtype;
    std::vector<std::size_t> shape;
    std::uint64_t begin, end;
};

Entry read_entry(std::string_view name, const Json& json, std::uint64_t data_size, const Context& ctx) {
    if (!json.is_object()) ctx.fail("entry must be a JSON object, got " + std::string(json.type_name()));
    Entry entry{name, read_dtype(member(json, "dtype", ctx), ctx), read_shape(member(json, "shape", ctx), ctx), 0, 0};
    const Json& offsets = member(json, "data_offsets", ctx);
    if (!offsets.is_array() || offsets.size() != 2)
        ctx.fail("\"data_offsets\" must be an array [begin, end], got " + shortened(offsets.dump()));
    entry.begin = read_index(offsets[0], "data_offsets", ctx);
    entry.end = read_index(offsets[1], "data_offsets", ctx);
    const std::string range = "data_offsets " + range_string(entry.begin, entry.end);
    if (entry.begin > entry.end) ctx.fail(range + " end before they begin");
    if (entry.end > data_size)
        ctx.fail(range + " reach beyond the data block of " + std::to_string(data_size) + " bytes");
    const std::size_t bytes = byte_size(entry.shape, entry.dtype, ctx);
    if (bytes != entry.end - entry.begin)
        ctx.fail("shape " + shape_string(entry.shape) + " of " + std::string(dtype_name(entry.dtype)) + " needs " +
                 std::to_string(bytes) + " bytes but " + range + " hold " + std::to_string(entry.end - entry.begin));
    return entry;
}

/// HeaderBuilder already checked and dropped the values of a "__metadata__" object, which the
/// tree keeps empty; what is left to check is that it is an object at all.
void check_metadata(const Json& json, const Context& ctx) {
    if (!json.is_object())
        ctx.fail("\"__metadata__\" must be an object of strings, got " + std::string(json.type_name()));
}

/// Builds the header's JSON tree from nlohmann's SAX events, checking as it goes what the tree
/// would hide or what would make it large:
/// - repeated keys, which nlohmann would silently merge, are refused;
/// - nesting is bounded (each level costs memory), and so are the arrays of an entry;
/// - what is never used is checked but not kept: unknown fields of an entry (parsed, dropped,
///   as the official reader ignores them) and the values of "__metadata__" (which must be
///   strings), so the tree is only what read_entries needs; of the metadata only the entries
///   under metadata_prefix are kept, aside.
/// It is also linear: nlohmann's parser_callback_t parser rescans an object's members every time
/// one of its members ends, quadratic in the tensor count (minutes for a header of a few MB).
class HeaderBuilder {
  public:
    explicit HeaderBuilder(const Context& ctx) : ctx_(ctx) {}
    Json root;
    Metadata metadata; // the "__metadata__" entries under metadata_prefix

    bool null() { return value(Json(nullptr)); }
    bool boolean(bool b) { return value(Json(b)); }
    bool number_integer(Json::number_integer_t n) { return value(Json(n)); }
    bool number_unsigned(Json::number_unsigned_t n) { return value(Json(n)); }
    bool number_float(Json::number_float_t n, const Json::string_t& /*text*/) { return value(Json(n)); }
    bool string(Json::string_t& text) {
        const Frame* f = stack_.empty() ? nullptr : &stack_.back();
        if (f != nullptr && f->drop_values && f->key.starts_with(metadata_prefix)) metadata.emplace(f->key, text);
        return value(Json(std::move(text)));
    }
    bool binary(Json::binary_t& bytes) { return value(Json::binary(std::move(bytes))); } // not in JSON text
    bool start_object(std::size_t /*unknown*/) { return open(Json::value_t::object); }
    bool start_array(std::size_t /*unknown*/) { return open(Json::value_t::array); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(Json::string_t& name) {
        Frame& f = stack_.back();
        const bool top = stack_.size() == 1;
        if (top) tensor_ = name;
        if (f.skip) return true; // inside dropped data nothing is kept, so repeats do not matter
        // A kept object's own map finds repeats; the keys of one whose values are dropped
        // ("__metadata__") are kept in a set for that.
        const bool repeated = f.drop_values ? !f.keys.insert(name).second : f.node->contains(name);
        if (repeated)
            ctx_.fail(top ? "duplicate tensor name " + in_quotes(name)
                          : "duplicate key " + in_quotes(name) + " in the entry of " + in_quotes(tensor_));
        f.key = std::move(name);
        f.drop_next = f.drop_values || (stack_.size() == 2 && !is_known_field(f.key));
        return true;
    }

    bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const Json::exception& e) {
        ctx_.fail("header is not valid JSON: " + shortened(e.what()));
    }

  private:
    struct Frame {
        Json* node = nullptr;        // the container being filled; null inside dropped data
        bool skip = false;           // inside dropped data
        bool drop_values = false;    // "__metadata__": keys checked, string values checked, neither kept
        bool drop_next = false;      // the value of `key` is dropped
        const char* field = nullptr; // an array that is an entry's field: at most max_array_values
        std::string key;             // the key whose value comes next
        std::set<std::string, std::less<>> keys;
    };

    static bool is_known_field(std::string_view key) {
        return key == "dtype" || key == "shape" || key == "data_offsets";
    }

    /// Where the next value goes: null if it is dropped. Checks "__metadata__" values.
    Json* slot(Json::value_t type) {
        if (stack_.empty()) return &root;
        Frame& f = stack_.back();
        if (f.skip) return nullptr;
        if (f.node->is_array()) {
            if (f.field != nullptr && f.node->size() == max_array_values)
                Context{ctx_.what, tensor_}.fail("\"" + std::string(f.field) + "\" holds more than " +
                                                 std::to_string(max_array_values) + " values");
            return &f.node->emplace_back();
        }
        if (f.drop_values && type != Json::value_t::string)
            ctx_.fail("\"__metadata__\" must be an object of strings, but " + in_quotes(f.key) + " holds " +
                      std::string(Json(type).type_name()));
        if (f.drop_next) return nullptr;
        return &(*f.node)[f.key];
    }

    bool value(Json&& v) {
        if (Json* target = slot(v.type())) *target = std::move(v);
        return true;
    }

    bool open(Json::value_t type) {
        if (stack_.size() >= static_cast<std::size_t>(max_json_depth))
            ctx_.fail("header JSON nests deeper than " + std::to_string(max_json_depth));
        if (stack_.empty() && type != Json::value_t::object) // refused before its elements are read
            ctx_.fail("header must be a JSON object, got " + std::string(Json(type).type_name()));
        Json* target = slot(type);
        if (target != nullptr) *target = Json(type);
        Frame f;
        f.node = target;
        f.skip = target == nullptr;
        f.drop_values = !f.skip && type == Json::value_t::object && stack_.size() == 1 && tensor_ == "__metadata__";
        if (!f.skip && type == Json::value_t::array && stack_.size() == 2 && stack_.back().node->is_object())
            for (const char* field : {"dtype", "shape", "data_offsets"}) // the only fields kept
                if (stack_.back().key == field) f.field = field;
        stack_.push_back(std::move(f));
        return true;
    }

    bool close() {
        stack_.pop_back();
        return true;
    }

    const Context& ctx_;
    std::vector<Frame> stack_;
    std::string tensor_; // the last top-level key, to say where a repeated inner key is
};

/// Parses the header JSON (see HeaderBuilder).
Json parse_header(std::string_view text, const Context& ctx, Metadata& metadata) {
    // nlohmann stops at a NUL as if the input ended there, which would hide whatever follows.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos)
        ctx.fail("header contains a NUL byte at offset " + std::to_string(nul));
    HeaderBuilder builder(ctx);
    try {
        Json::sax_parse(text.begin(), text.end(), &builder);
    } catch (const Json::exception& e) {
        ctx.fail("header is not valid JSON: " + shortened(e.what()));
    }
    if (!builder.root.is_object())
        ctx.fail("header must be a JSON object, got " + std::string(builder.root.type_name()));
    metadata = std::move(builder.metadata);
    return std::move(builder.root);
}

/// Every tensor but "__metadata__", each entry checked on its own.
std::vector<Entry> read_entries(const Json& header, std::uint64_t data_size, std::string_view what) {
    std::vector<Entry> entries;
    for (const auto& [name, json] : header.get_ref<const Json::object_t&>()) {
        if (name == "__metadata__")
            check_metadata(json, Context{what, {}});
        else
            entries.push_back(read_entry(name, json, data_size, Context{what, name}));
    }
    return entries;
}

/// The official format requires the tensors to tile the data block exactly: no overlaps (two
/// tensors sharing bytes), no holes, and nothing after the last tensor.
void check_coverage(std::vector<Entry>& entries, std::uint64_t data_size, std::string_view what) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
    const std::string rule = "; safetensors requires the tensors to cover the data block contiguously";
    std::uint64_t covered = 0;
    std::string_view last_owner; // the last tensor holding bytes, the one an overlap runs into
    for (const Entry& entry : entries) {
        const Context ctx{what, entry.name};
        const std::string range = "data_offsets " + range_string(entry.begin, entry.end);
        if (entry.begin < covered)
            ctx.fail(range + " overlap tensor " + in_quotes(last_owner) + ", which ends at " + std::to_string(covered));
        if (entry.begin > covered)
            ctx.fail(range + " leave data bytes " + range_string(covered, entry.begin) + " to no tensor" + rule);
        covered = entry.end;
        if (entry.end > entry.begin) last_owner = entry.name;
    }
    if (covered != data_size)
        Context{what, {}}.fail("data bytes " + range_string(covered, data_size) +
                               " after the last tensor belong to no tensor (MetadataIncompleteBuffer)" + rule);
}

template <class Stored, class Convert>
std::vector<float> decode_as(std::span<const std::byte> raw, Convert convert) {
    std::vector<float> out(raw.size() / sizeof(Stored));
    for (std::size_t i = 0; i < out.size(); ++i) {
        Stored stored;
        std::memcpy(&stored, raw.data() + i * sizeof(Stored), sizeof(Stored));
        out[i] = convert(stored);
    }
    return out;
}

std::vector<float> decode(std::span<const std::byte> raw, Dtype dtype) {
    switch (dtype) {
    case Dtype::F32:
        return decode_as<float>(raw, [](float f) { return f; });
    case Dtype::F64:
        return decode_as<double>(raw, detail::double_to_float);
    case Dtype::F16:
        return decode_as<std::uint16_t>(raw, detail::half_to_float);
    case Dtype::BF16:
        return decode_as<std::uint16_t>(raw, detail::bf16_to_float);
    }
    throw ArgumentError("safetensors: invalid Dtype value " + std::to_string(static_cast<int>(dtype)));
}

template <class Stored, class Convert>
void encode_as(std::span<const float> values, std::byte* out, Convert convert) {
    for (std::size_t i = 0; i < values.size(); ++i) {
        const Stored stored = convert(values[i]);
        std::memcpy(out + i * sizeof(Stored), &stored, sizeof(Stored));
    }
}

void encode(std::span<const float> values, Dtype dtype, std::byte* out) {
    switch (dtype) {
    case Dtype::F32:
        return encode_as<float>(values, out, [](float f) { return f; });
    case Dtype::F64:
        return encode_as<double>(values, out, detail::float_to_double);
    case Dtype::F16:
        return encode_as<std::uint16_t>(values, out, detail::float_to_half);
    case Dtype::BF16:
        return encode_as<std::uint16_t>(values, out, detail::float_to_bf16);
    }
}

std::uint64_t load_u64(std::span<const std::byte> bytes) {
    std::uint64_t value;
    std::memcpy(&value, bytes.data(), sizeof value);
    return value;
}

void check_header_length(std::uint64_t length, std::uint64_t available, const Context& ctx) {
    if (length > max_header_length)
        ctx.fail("header length " + std::to_string(length) + " exceeds the limit of " +
                 std::to_string(max_header_length) + " bytes");
    if (length > available)
        ctx.fail("header length " + std::to_string(length) + " exceeds the " + std::to_string(available) +
                 " bytes that follow it");
}

// ---- Writing -------------------------------------------------------------------------------

/// Checks names (non-empty, unique, not the reserved "__metadata__", UTF-8 so that the JSON can
/// hold them) and returns the tensors in name order, the order of the header and the data.
std::vector<const NamedTensor*> sorted_by_name(std::span<const NamedTensor> tensors) {
    std::vector<const NamedTensor*> sorted;
    for (const NamedTensor& t : tensors) {
        if (t.name.empty()) throw ArgumentError("safetensors: a tensor has an empty name");
        if (t.name == "__metadata__")
            throw ArgumentError("safetensors: \"__metadata__\" is reserved, not a tensor name");
        try {
            (void)Json(t.name).dump();
        } catch (const Json::type_error&) {
            throw ArgumentError("safetensors: tensor name " + in_quotes(t.name) + " is not valid UTF-8");
        }
        sorted.push_back(&t);
    }
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name < b->name; });
    const auto repeat =
        std::adjacent_find(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->name == b->name; });
    if (repeat != sorted.end()) throw ArgumentError("safetensors: duplicate tensor name " + in_quotes((*repeat)->name));
    return sorted;
}

/// Bytes one tensor takes when stored as `dtype`; rejects shapes too large and views without data.
std::size_t stored_bytes(const NamedTensor& t, Dtype dtype) {
    const std::size_t n = t.tensor.shape.numel(t.name); // throws ShapeError on overflow
    if (n > std::numeric_limits<std::size_t>::max() / dtype_size(dtype))
        throw ShapeError(t.name + ": shape " + t.tensor.shape.to_string() + " of " + std::string(dtype_name(dtype)) +
                         " needs more bytes than size_t holds");
    if (n != 0 && t.tensor.data == nullptr)
        throw ArgumentError("safetensors: tensor " + in_quotes(t.name) + " of shape " + t.tensor.shape.to_string() +
                            " has no data (null pointer)");
    return n * dtype_size(dtype);
}

std::string errno_text() { return std::error_code(errno, std::generic_category()).message(); }

/// An open file descriptor, closed on destruction unless closed (and checked) explicitly.
class Descriptor {
  public:
    explicit Descriptor(int fd) noexcept : fd_(fd) {}
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    ~Descriptor() {
        if (fd_ >= 0) ::close(fd_);
    }
    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] bool close() noexcept { return ::close(std::exchange(fd_, -1)) == 0; }

  private:
    int fd_;
};

/// Fills `dest` from `offset`, retrying short reads and EINTR.
void read_exactly(const Descriptor& fd, std::span<std::byte> dest, std::uint64_t offset, const Context& ctx) {
    for (std::size_t done = 0; done < dest.size();) {
        const ssize_t got =
            ::pread(fd.get(), dest.data() + done, dest.size() - done, static_cast<off_t>(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) ctx.fail("read failed: " + errno_text());
        if (got == 0)
            ctx.fail("file ended after " + std::to_string(offset + done) + " bytes, expected " +
                     std::to_string(offset + dest.size()) + " (did it change while being read?)");
        done += static_cast<std::size_t>(got);
    }
}

void write_all(const Descriptor& fd, std::span<const std::byte> bytes, const Context& ctx) {
    for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t put = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) ctx.fail("write failed: " + errno_text());
        done += static_cast<std::size_t>(put);
    }
}

/// A new file ".<name>.tmp.<pid>.<counter>" beside `target`, removed on destruction unless it
/// was renamed over the target: a failed write leaves nothing behind and the target as it was.
class TempFile {
  public:
    TempFile(const std::filesystem::path& target, const Context& ctx) : fd_(create(target, ctx)) {}
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (!renamed_) {
            std::error_code ignored; // already failing; the first error is the one to report
            std::filesystem::remove(path_, ignored);
        }
    }

    void write(std::span<const std::byte> bytes, const Context& ctx) const { write_all(fd_, bytes, ctx); }

    /// Flushes to disk, so that a crash after the rename cannot leave an empty target, then renames.
    void commit(const std::filesystem::path& target, const Context& ctx) {
        if (::fsync(fd_.get()) != 0) ctx.fail("fsync failed: " + errno_text());
        if (!fd_.close()) ctx.fail("close failed: " + errno_text());
        std::error_code ec;
        std::filesystem::rename(path_, target, ec);
        if (ec) ctx.fail("cannot rename the temporary file over it: " + ec.message());
        renamed_ = true;
    }

  private:
    int create(const std::filesystem::path& target, const Context& ctx) {
        static std::atomic<unsigned> counter{0};
        constexpr int attempts = 16; // O_EXCL refuses a stale file left by a crashed process with our pid
        for (int i = 0;; ++i) {
            path_ = target.parent_path() / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) +
                                            "." + std::to_string(counter++));
            const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd >= 0) return fd;
            if (errno != EEXIST || i + 1 == attempts)
                ctx.fail("cannot create a temporary file in its directory: " + errno_text());
        }
    }

    std::filesystem::path path_;
    Descriptor fd_;
    bool renamed_ = false;
};

} // namespace

std::string in_quotes(std::string_view text) {
    const bool long_text = text.size() > max_quoted_chars;
    const Json json = std::string(text.substr(0, max_quoted_chars));
    return json.dump(-1, ' ', true, Json::error_handler_t::replace) + (long_text ? "..." : "");
}

std::string_view dtype_name(Dtype dtype) noexcept {
    switch (dtype) {
    case Dtype::F32:
        return "F32";
    case Dtype::F64:
        return "F64";
    case Dtype::F16:
        return "F16";
    case Dtype::BF16:
        return "BF16";
    }
    return "invalid";
}

TensorMap parse(std::span<const std::byte> bytes, std::string_view what) { return parse_contents(bytes, what).tensors; }

Contents parse_contents(std::span<const std::byte> bytes, std::string_view what) {
    const Context ctx{what, {}};
    if (bytes.size() < 8)
        ctx.fail("file of " + std::to_string(bytes.size()) + " bytes is shorter than the 8-byte header length");
    const std::uint64_t length = load_u64(bytes);
    check_header_length(length, bytes.size() - 8, ctx);
    const auto header_bytes = bytes.subspan(8, length);
    const auto data = bytes.subspan(8 + length);
    Contents contents;
    const Json header =
        parse_header({reinterpret_cast<const char*>(header_bytes.data()), header_bytes.size()}, ctx, contents.metadata);
    std::vector<Entry> entries = read_entries(header, data.size(), what);
    check_coverage(entries, data.size(), what);
    for (Entry& e : entries)
        contents.tensors.emplace(
            e.name, Tensor{std::move(e.shape), decode(data.subspan(e.begin, e.end - e.begin), e.dtype), e.dtype});
    return contents;
}

TensorMap read(const std::filesystem::path& file) { return read_contents(file).tensors; }

Contents read_contents(const std::filesystem::path& file) {
    const std::string what = file.string();
    const Context ctx{what, {}};
    const Descriptor fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) ctx.fail("cannot open: " + errno_text());
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0) ctx.fail("cannot stat: " + errno_text());
    if (!S_ISREG(info.st_mode)) ctx.fail("not a regular file");
    const auto size = static_cast<std::uint64_t>(info.st_size);
    // Read the length first: a hostile header length must be refused before sizing any buffer.
    const std::size_t prefix = std::min<std::uint64_t>(size, 8);
    std::vector<std::byte> bytes(prefix);
    read_exactly(fd, bytes, 0, ctx);
    if (prefix == 8) check_header_length(load_u64(bytes), size - 8, ctx);
    bytes.resize(size);
    read_exactly(fd, std::span(bytes).subspan(prefix), prefix, ctx);
    return parse_contents(bytes, what);
}

std::vector<std::byte> serialize(std::span<const NamedTensor> tensors, Dtype dtype, const Metadata& metadata) {
    const std::size_t element_size = dtype_size(dtype);
    const std::vector<const NamedTensor*> sorted = sorted_by_name(tensors);
    Json header = Json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::size_t data_size = 0;
    for (const NamedTensor* t : sorted) {
        const std::size_t bytes = stored_bytes(*t, dtype);
        if (bytes > std::numeric_limits<std::size_t>::max() - data_size)
            throw ShapeError("safetensors: the tensors together need more bytes than size_t holds");
        const auto extents = t->tensor.shape.extents();
        header[t->name] = {{"dtype", std::string(dtype_name(dtype))},
                           {"shape", std::vector<std::size_t>(extents.begin(), extents.end())},
                           {"data_offsets", {data_size, data_size + bytes}}};
        data_size += bytes;
    }
    std::string text = header.dump();            // keys come out sorted: nlohmann::json keeps objects in a std::map
    text.append((8 - text.size() % 8) % 8, ' '); // the official writer pads so the data start 8-aligned
    std::vector<std::byte> out(8 + text.size() + data_size);
    const std::uint64_t length = text.size();
    std::memcpy(out.data(), &length, sizeof length);
    std::memcpy(out.data() + 8, text.data(), text.size());
    std::byte* cursor = out.data() + 8 + text.size();
    for (const NamedTensor* t : sorted) {
        const std::size_t n = t->tensor.shape.numel(t->name);
        encode({t->tensor.data, n}, dtype, cursor);
        cursor += n * element_size;
    }
    return out;
}

void write(const std::filesystem::path& file, std::span<const NamedTensor> tensors, Dtype dtype,
           const Metadata& metadata) {
    const std::vector<std::byte> bytes = serialize(tensors, dtype, metadata); // bad input fails before any file exists
    const std::string what = file.string();
    const Context ctx{what, {}};
    TempFile temp(file, ctx);
    temp.write(bytes, ctx);
    temp.commit(file, ctx);
}

} // namespace myattn::safetensors
