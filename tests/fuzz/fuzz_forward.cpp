// libFuzzer target: Parameters and MyAttn::forward on shapes, pointers and values decoded from
// the input. Sizes stay tiny; shapes may be anything (wrong rank, wrong extents, batch
// mismatches, zero, extents whose product overflows size_t), pointers may be null or alias.
//
// The target knows the contract and checks it both ways: forward must succeed exactly when
// the call is valid, and otherwise throw ShapeError or ArgumentError without writing to the
// outputs. Any other exception, a crash or a sanitizer report is a failure.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "myattn/myattn.hpp"

namespace {

using namespace myattn;

[[noreturn]] void violated(const char* what) {
    std::fprintf(stderr, "fuzz_forward: contract violated: %s\n", what);
    std::abort();
}

/// Consumes the input front to back; past the end it yields zeros.
struct Bytes {
    const std::uint8_t* p;
    std::size_t n;
    std::uint8_t u8() {
        if (n == 0) return 0;
        --n;
        return *p++;
    }
    std::uint32_t u32() {
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v = v << 8 | u8();
        return v;
    }
    float f32() {
        const std::uint32_t bits = u32();
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
};

constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();
constexpr std::size_t arena_floats = 1 << 13; // every buffer lives in one arena of this size

/// One extent: the right one, or (when `mess`, one time in four) a near miss, zero, or
/// something huge.
std::size_t extent(Bytes& in, std::size_t right, bool mess) {
    const std::uint8_t c = in.u8();
    if (!mess || c % 4 != 0) return right;
    switch (c / 4 % 8) {
    case 0:
        return right + 1;
    case 1:
        return right > 0 ? right - 1 : 0;
    case 2:
        return 0;
    case 3:
        return 1;
    case 4:
        return size_max;
    case 5:
        return size_max / 2 + 1;
    case 6:
        return std::size_t{1} << 32;
    default:
        return c; // some small value
    }
}

/// A shape: [a, b, c] (or [a, b]) as given, or when `mess` perhaps another rank or extents.
Shape shape(Bytes& in, std::initializer_list<std::size_t> right, bool mess) {
    std::size_t ext[4] = {};
    std::size_t rank = right.size();
    const std::uint8_t r = in.u8();
    if (mess && r % 8 == 0) rank = r / 8 % 5; // 0..4
    std::size_t i = 0;
    for (std::size_t e : right)
        if (i < 4) ext[i++] = e;
    for (std::size_t j = 0; j < rank; ++j) ext[j] = extent(in, ext[j], mess);
    return Shape(std::span<const std::size_t>(ext, rank));
}

/// Elements, or nullopt if the product overflows (the library must refuse such a shape).
std::optional<std::size_t> numel(const Shape& s) {
    std::size_t n = 1;
    for (std::size_t e : s.extents()) {
        if (e != 0 && n > size_max / e) return std::nullopt;
        n *= e;
    }
    return n;
}

struct Placed {
    float* data = nullptr;
    std::size_t floats = 0; // 0 when the shape overflows or the pointer is null
};

/// Where a tensor's data goes: null, or somewhere in the arena (overlaps are allowed: the
/// library must refuse those that matter). A shape too big for the arena gets a pointer to
/// the arena's start, which is fine only because such a call is never valid (checked below).
Placed place(Bytes& in, std::vector<float>& arena, std::size_t& cursor, const Shape& s) {
    const std::uint8_t how = in.u8();
    const std::optional<std::size_t> n = numel(s);
    if (how % 32 == 0) return {nullptr, 0};
    if (!n || *n > arena.size()) return {arena.data(), 0};
    std::size_t at = 0;
    if (how % 32 == 1)
        at = in.u32() % (arena.size() - *n + 1); // anywhere, maybe overlapping
    else {
        at = cursor + how / 32 * 2 + (how & 1); // next free spot, misaligned by 0..15 floats
        if (at + *n > arena.size()) at = 0;
        cursor = at + *n;
    }
    return {arena.data() + at, *n};
}

/// Whether a's first na bytes and b's first nb overlap.
bool overlap(const void* a, std::size_t na, const void* b, std::size_t nb) {
    const auto *x = static_cast<const char*>(a), *y = static_cast<const char*>(b);
    return na != 0 && nb != 0 && x < y + nb && y < x + na;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in{data, size};
    Dims d;
    d.query_size = in.u8() % 9; // 0 is refused, 1..8 are tiny models
    d.key_size = in.u8() % 9;
    d.value_size1 = in.u8() % 9;
    d.value_size2 = in.u8() % 9;
    d.output_size = in.u8() % 9;
    const bool dims_ok = d.query_size && d.key_size && d.value_size1 && d.value_size2 && d.output_size;

    // Parameters: random, or copied from spans whose sizes may be off by one.
    const std::uint8_t how = in.u8();
    std::optional<Parameters> params;
    try {
        if (how % 2 == 0) {
            params = Parameters::random(d, in.u8());
        } else {
            const std::size_t L = d.value_size1, o = d.output_size;
            const std::size_t sizes[] = {L * (d.query_size + d.key_size), L, o * (d.query_size + d.value_size2), o};
            std::vector<float> t[4];
            bool sizes_ok = true;
            for (int i = 0; i < 4; ++i) {
                const std::size_t off = in.u8() % 8 == 0 ? 1 : 0;
                sizes_ok = sizes_ok && off == 0;
                t[i].resize(sizes[i] + off);
                for (float& x : t[i]) x = in.u8() % 32 == 0 ? in.f32() : static_cast<float>(in.u8()) / 64 - 2;
            }
            params = Parameters(d, t[0], t[1], t[2], t[3]);
            if (!sizes_ok) violated("Parameters accepted spans of the wrong size");
        }
        if (!dims_ok) violated("Parameters accepted a zero size");
    } catch (const ShapeError&) {
        return 0;
    }

    // One byte picks the kernels: the ISA and the precision.
    const std::uint8_t kernels = in.u8();
    const std::vector<Isa> isas = runnable_isas();
    const Precision precision = precisions()[kernels / 16 % precisions().size()];
    const MyAttn attn(std::move(*params), isas[kernels % isas.size()], precision);

    const std::uint8_t b = in.u8();
    const std::size_t B = b % 32 == 31 ? 16 + in.u8() % 48 : b % 6; // now and then enough for several tiles
    const bool shared_k = in.u8() % 3 == 0;
    const std::uint8_t how_v = in.u8();
    const bool shared_v = how_v % 3 == 0;
    const bool bf16_v = how_v / 3 % 4 == 0; // whatever the precision: only bf16 takes one
    const std::size_t q = d.query_size, k = d.key_size, L = d.value_size1, dv = d.value_size2, o = d.output_size;
    const std::uint8_t how_shaped = in.u8();
    const bool mess = how_shaped % 2 == 0;        // half the calls get wrong shapes, half only bad pointers
    const bool article = how_shaped / 2 % 4 == 0; // one in four starts from the article's layout
    const std::size_t kb = shared_k ? 1 : B;
    const Shape sq = article ? shape(in, {1, B, q}, mess) : shape(in, {B, 1, q}, mess);
    const Shape sk = article ? shape(in, {1, kb, k}, mess) : shape(in, {kb, 1, k}, mess);
    const Shape sv = shape(in, {shared_v || article ? 1 : B, L, dv}, mess);
    const Shape so = article ? shape(in, {1, B, o}, mess) : shape(in, {B, 1, o}, mess);
    const Shape sw = shape(in, {B, L}, mess);

    // Values from a small generator seeded by the input, then a few chosen by it (NaN, inf...).
    std::vector<float> arena(arena_floats);
    std::uint32_t state = in.u32() | 1;
    for (float& x : arena) {
        state ^= state << 13, state ^= state >> 17, state ^= state << 5;
        x = static_cast<float>(state >> 8) * 0x1p-22f - 2.0f; // [-2, 2)
    }
    for (int i = 0, n = in.u8() % 16; i < n; ++i) arena[in.u32() % arena.size()] = in.f32();
    std::size_t cursor = 0;
    const Placed pq = place(in, arena, cursor, sq), pk = place(in, arena, cursor, sk),
                 pv = place(in, arena, cursor, sv), po = place(in, arena, cursor, so),
                 pw = place(in, arena, cursor, sw);
    // A bf16 V takes the first half of its place: its floats rounded to bf16, front to back (each
    // write lands at or before the float it comes from, which has been read).
    const auto* v16 = reinterpret_cast<const bfloat16*>(pv.data);
    for (std::size_t i = 0; bf16_v && i < pv.floats; ++i) {
        const bfloat16 h = to_bfloat16(pv.data[i]);
        std::memcpy(reinterpret_cast<char*>(pv.data) + i * sizeof h, &h, sizeof h);
    }

    // Is the call valid? Every rule of the contract, written out independently of the library.
    // Two layouts: batch first (Q [B,1,q]), and the article's (Q [1,B,q], V shared), which a Q
    // whose middle extent is not 1 selects.
    bool valid = sq.rank() == 3 && sk.rank() == 3 && sv.rank() == 3 && so.rank() == 3 && sw.rank() == 2;
    std::size_t batch = 0;
    if (valid && sq[1] != 1) {
        batch = sq[1];
        valid = sq[0] == 1 && sq[2] == q && sk[0] == 1 && (sk[1] == batch || sk[1] == 1) && sk[2] == k &&
                sv == Shape{1, L, dv} && so == Shape{1, batch, o} && sw == Shape{batch, L};
    } else if (valid) {
        batch = sq[0];
        valid = sq[2] == q && (sk[0] == batch || sk[0] == 1) && sk[1] == 1 && sk[2] == k &&
                (sv[0] == batch || sv[0] == 1) && sv[1] == L && sv[2] == dv && so == Shape{batch, 1, o} &&
                sw == Shape{batch, L};
    }
    if (bf16_v && precision != Precision::bf16) valid = false;
    const Shape* shapes[] = {&sq, &sk, &sv, &so, &sw};
    const Placed* placed[] = {&pq, &pk, &pv, &po, &pw};
    for (int i = 0; i < 5 && valid; ++i) {
        const std::optional<std::size_t> n = numel(*shapes[i]);
        if (!n)
            valid = false; // overflowing shapes are refused
        else if (*n != 0 && placed[i]->data == nullptr)
            valid = false; // null data with elements
        else if (*n != 0 && placed[i]->floats == 0)
            return 0; // valid but larger than the arena: cannot back it
    }
    // Outputs may not overlap any input or each other, byte for byte (a bf16 V is half as long).
    const auto bytes = [&](const Placed* t) {
        return t->floats * (t == &pv && bf16_v ? sizeof(bfloat16) : sizeof(float));
    };
    if (valid)
        for (const Placed* out : {&po, &pw})
            for (const Placed* other : {&pq, &pk, &pv, &pw})
                if (out != other && overlap(out->data, bytes(out), other->data, bytes(other))) valid = false;

    const std::vector<float> before = arena;
    const auto call = [&] {
        if (bf16_v)
            attn.forward({pq.data, sq}, {pk.data, sk}, TensorView<const bfloat16>{v16, sv}, {po.data, so},
                         {pw.data, sw});
        else
            attn.forward({pq.data, sq}, {pk.data, sk}, {pv.data, sv}, {po.data, so}, {pw.data, sw});
    };
    try {
        call();
        if (!valid) violated("forward accepted an invalid call");
    } catch (const ShapeError&) {
        if (valid) violated("forward refused a valid call (ShapeError)");
        if (std::memcmp(arena.data(), before.data(), arena.size() * sizeof(float)) != 0)
            violated("a refused call wrote to memory");
        return 0;
    } catch (const ArgumentError&) {
        if (valid) violated("forward refused a valid call (ArgumentError)");
        if (std::memcmp(arena.data(), before.data(), arena.size() * sizeof(float)) != 0)
            violated("a refused call wrote to memory");
        return 0;
    }

    // A valid call: only the outputs changed, and the weights are probabilities (or NaN).
    for (std::size_t i = 0; i < arena.size(); ++i) {
        const float* p = arena.data() + i;
        const bool in_out = (p >= po.data && p < po.data + po.floats) || (p >= pw.data && p < pw.data + pw.floats);
        if (!in_out && std::memcmp(p, &before[i], sizeof(float)) != 0) violated("forward wrote outside its outputs");
    }
    for (std::size_t i = 0; i < pw.floats; ++i)
        if (pw.data[i] < 0.0f || pw.data[i] > 1.0f + 1e-6f) violated("an attention weight outside [0, 1]");

    // The owning overload agrees bit for bit (only for batches it can allocate: it sizes its
    // results from Q's shape before validating; see docs/contract.md).
    if (batch <= 64) {
        const ForwardResult r = bf16_v ? attn.forward({pq.data, sq}, {pk.data, sk}, TensorView<const bfloat16>{v16, sv})
                                       : attn.forward({pq.data, sq}, {pk.data, sk}, {pv.data, sv});
        if (r.output.size() != po.floats || r.attn_weights.size() != pw.floats ||
            (po.floats && std::memcmp(r.output.data(), po.data, po.floats * sizeof(float)) != 0) ||
            (pw.floats && std::memcmp(r.attn_weights.data(), pw.data, pw.floats * sizeof(float)) != 0))
            violated("the owning overload differs");
    }
    return 0;
}
