// The int8 kernels of every kernel set this CPU runs (an ISA's fallback ones too) against the
// scalar int8 reference (reference.hpp): integer sums are exact and the dequantization is one
// fixed chain of roundings (kernels/quantize.hpp), so the results must be the same bits. The
// dense sweep is tagged [sweep], as the float ones (tests/test_kernels.cpp): the emulated runs
// leave it to the native ones, which run every kernel set, fallbacks included.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "dispatch.hpp"
#include "reference.hpp"
#include "support/isas.hpp"
#include "support/packed.hpp"
#include "support/random.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

using namespace myattn;
using namespace myattn::test;

namespace {

constexpr float sentinel = 12345.0f;
constexpr Precision int8_only[] = {Precision::int8};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// The reference's y for rows [0, rows) of x: W [out, n1 + n2] quantized once, each row's parts
/// quantized with `levels` steps.
std::vector<float> reference(const std::vector<float>& W, const std::vector<float>& b, std::size_t out,
                             const detail::SplitRows& x, std::size_t rows, int levels) {
    const std::size_t n = x.n1 + x.n2;
    std::vector<std::int8_t> w(out * n);
    std::vector<float> scale(out);
    std::vector<std::int32_t> sum1(out), sum2(out);
    detail::quantize_linear(W.data(), out, x.n1, x.n2, w.data(), scale.data(), sum1.data(), sum2.data());
    std::vector<std::uint8_t> bytes(detail::round_up_group(x.n1) + detail::round_up_group(x.n2));
    std::vector<float> y(rows * out);
    for (std::size_t r = 0; r < rows; ++r)
        detail::reference_int8_linear({w.data(), scale.data(), sum1.data(), sum2.data()}, b.data(), out,
                                      x.x1 + r * x.ld1, x.n1, x.x2 + r * x.ld2, x.n2, levels, bytes.data(),
                                      y.data() + r * out);
    return y;
}

struct Linear {
    std::size_t out, n1, n2;
    std::vector<float> W, b;
    detail::LinearLayout l;
    std::vector<float> packed;
    Linear(const detail::KernelTable& t, std::size_t out_, std::size_t n1_, std::size_t n2_, std::mt19937_64& rng)
        : out(out_), n1(n1_), n2(n2_), W(normal(rng, out * (n1 + n2))), b(normal(rng, out)),
          l(t.linear_layout(out, n1, n2)), packed(l.size) {
        t.pack_linear(l, W.data(), b.data(), packed.data());
    }
};

/// y = W [x1; x2] + b over `rows` rows of contiguous parts, by t's Linear (packed by t) and by
/// the reference.
struct Run {
    std::vector<float> y, want;
};
Run run_and_reference(const detail::KernelTable& t, const std::vector<float>& W, const std::vector<float>& b,
                      std::size_t out, const std::vector<float>& x1, std::size_t n1, const std::vector<float>& x2,
                      std::size_t n2, std::size_t rows) {
    const detail::LinearLayout l = t.linear_layout(out, n1, n2);
    std::vector<float> packed(l.size);
    t.pack_linear(l, W.data(), b.data(), packed.data());
    const detail::SplitRows x{.x1 = x1.data(), .ld1 = n1, .n1 = n1, .x2 = x2.data(), .ld2 = n2, .n2 = n2};
    Run r{std::vector<float>(rows * out), reference(W, b, out, x, rows, t.quant_levels)};
    t.linear(l, packed.data(), x, rows, {0, out}, r.y.data(), out);
    return r;
}

/// Every output finite and the reference's bits.
void require_finite_reference_bits(const Run& r) {
    for (std::size_t i = 0; i < r.y.size(); ++i) {
        CAPTURE(i, r.y[i], r.want[i]);
        REQUIRE(same_bits(r.y[i], r.want[i]));
        REQUIRE(std::isfinite(r.y[i]));
    }
}

} // namespace

TEST_CASE("int8: every kernel set's Linear is the reference's bits, every edge tile, split or blocked",
          "[int8][sweep][each_isa]") {
    FOR_EACH_KERNELS(t, int8_only) {
        REQUIRE((t.quant_levels == 255 || t.quant_levels == 127));
        const std::size_t mr = t.mr, nr = t.nr;
        struct Parts {
            std::size_t n1, n2;
        };
        // Whole groups of four and not, on either side of the split.
        // 263 and 525: 4 and 8 whole blocks of 64 (the fewest the AMX tiles take, and more),
        // then a partial one.
        const Parts parts[] = {{1, 1}, {3, 13}, {32, 32}, {61, 263}, {8, 5}, {525, 3}};
        for (std::size_t out : {std::size_t{1}, nr - 1, nr + 1, 2 * nr + 3, std::size_t{70}})
            for (std::size_t rows : {std::size_t{1}, mr - 1, mr + 1, 2 * mr + 1})
                for (const Parts& in : parts)
                    for (bool shared_x2 : {false, true}) {
                        if (rows == 0 || out == 0) continue;
                        CAPTURE(out, rows, in.n1, in.n2, shared_x2);
                        std::mt19937_64 rng(out * 1000 + rows * 10 + in.n1 + in.n2);
                        const Linear lin(t, out, in.n1, in.n2, rng);
                        const std::size_t ld1 = in.n1 + 3, ld2 = shared_x2 ? 0 : in.n2 + 1, ldy = out + 2;
                        const std::vector<float> x1 = normal(rng, rows * ld1, 2.0f),
                                                 x2 = normal(rng, rows * (in.n2 + 1), 0.1f);
                        const detail::SplitRows x{
                            .x1 = x1.data(), .ld1 = ld1, .n1 = in.n1, .x2 = x2.data(), .ld2 = ld2, .n2 = in.n2};
                        const std::vector<float> want = reference(lin.W, lin.b, out, x, rows, t.quant_levels);
                        std::vector<float> y(rows * ldy, sentinel), tail(rows * ldy, sentinel),
                            blocked(rows * ldy, sentinel);
                        t.linear(lin.l, lin.packed.data(), x, rows, {0, out}, y.data(), ldy);
                        const std::size_t from = std::min(out, lin.l.panel);
                        t.linear(lin.l, lin.packed.data(), x, rows, {from, out}, tail.data(), ldy);
                        t.linear_blocked(lin.l, lin.packed.data(), x, rows, {0, out}, {.kc = 7, .nc = nr},
                                         blocked.data(), ldy);
                        for (std::size_t r = 0; r < rows; ++r)
                            for (std::size_t j = 0; j < ldy; ++j) {
                                const float w = j < out ? want[r * out + j] : sentinel;
                                CAPTURE(r, j, y[r * ldy + j], w);
                                REQUIRE(same_bits(y[r * ldy + j], w));
                                REQUIRE(same_bits(blocked[r * ldy + j], w));
                                REQUIRE(same_bits(tail[r * ldy + j], j < from ? sentinel : w));
                            }
                    }
    }
}

TEST_CASE("int8: the extreme bytes of the scheme, no saturation, NaN where an input is not finite",
          "[int8][each_isa]") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    FOR_EACH_KERNELS(t, int8_only) {
        // Weights of one magnitude (every int8 weight +-127) against activations at the top
        // step (x1 >= 0: zero point 0) and at the bottom (x2 <= 0: zero point `levels`): the
        // largest products the scheme makes, which a wrong step count would saturate.
        // x1 past 8 blocks of 64 inputs: whole blocks for the AMX tiles, the rest for VNNI.
        const std::size_t out = 2 * t.nr + 1, n1 = 549, n2 = 22, rows = t.mr + 3, n = n1 + n2;
        std::vector<float> W(out * n), b(out, 0.5f);
        for (std::size_t j = 0; j < out; ++j)
            for (std::size_t i = 0; i < n; ++i) W[j * n + i] = (i + j) % 3 == 0 ? -3.0f : 3.0f;
        std::vector<float> x1(rows * n1, 1.0f), x2(rows * n2, -2.0f);
        x1[0] = 0.0f; // a zero keeps the range [0, 1]
        x1[n1 + 5] = nan;
        x2[2 * n2 + 1] = inf;
        x2[3 * n2] = -inf;
        // Input 28 is in the second vector of a pair the range reads at once, at every width.
        if (rows > 4) x1[4 * n1 + 28] = nan;
        const auto [y, want] = run_and_reference(t, W, b, out, x1, n1, x2, n2, rows);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t j = 0; j < out; ++j) {
                CAPTURE(r, j, y[r * out + j], want[r * out + j]);
                REQUIRE(same_bits(y[r * out + j], want[r * out + j]));
                REQUIRE(std::isnan(y[r * out + j]) == (r >= 1 && r <= 4));
            }
        // Far from float (|W x| up to 3 * 571 * 2): the reference is the scheme, not a float sum.
        double exact = 0.5;
        for (std::size_t i = 0; i < n; ++i) exact += W[i] * double(i < n1 ? x1[i] : x2[i - n1]);
        CHECK(std::fabs(y[0] - exact) <= 1e-2 * std::fabs(exact));
    }
}

TEST_CASE("int8: the fused forward is its steps through the table, bit for bit, in any tile",
          "[int8][forward][each_isa]") {
    FOR_EACH_KERNELS(t, int8_only) {
        // The third: parts of 4 whole 64-byte blocks and a remainder, which the AMX kernels sum
        // on their tiles, 16 rows at once in full groups, then finish in registers.
        for (const Dims& d : {Dims{5, 7, 19, 13, 3}, Dims{16, 9, 3, 33, 40}, Dims{300, 261, 11, 270, 70}}) {
            CAPTURE(d.to_string());
            const Parameters p = Parameters::random(d, 3);
            const auto [packed, layout] = pack_weights(t, p);
            const std::size_t B = 2 * t.mr + 3, q = d.query_size, L = d.value_size1, D = d.value_size2,
                              o = d.output_size;
            for (bool shared : {false, true}) {
                CAPTURE(shared);
                const Inputs x = random_inputs(d, B, shared, shared, 4);
                const std::size_t ks = shared ? 0 : d.key_size, vs = shared ? 0 : L * D;
                std::vector<float> out(B * o), w(B * L), scratch(t.scratch_size(d, B));
                t.forward(d, layout, packed.data(),
                          {B, x.Q.data(), x.K.data(), x.V.data(), ks, vs, out.data(), w.data()}, {0, B}, {},
                          scratch.data());
                // The steps: scores, softmax, weighted sum, combine, each through the table.
                std::vector<float> s(B * L), a(B * D), y(B * o);
                t.linear(layout.scores, packed.data(),
                         {.x1 = x.Q.data(), .ld1 = q, .n1 = q, .x2 = x.K.data(), .ld2 = ks, .n2 = d.key_size}, B,
                         {0, L}, s.data(), L);
                for (std::size_t r = 0; r < B; ++r) t.softmax(s.data() + r * L, L);
                for (std::size_t r = 0; r < B; ++r)
                    t.weighted_sum({.rows = 1,
                                    .w = s.data() + r * L,
                                    .ldw = L,
                                    .V = x.V.data() + r * vs,
                                    .v_stride = 0,
                                    .L = L,
                                    .d = D,
                                    .a = a.data() + r * D,
                                    .lda = D},
                                   {0, D});
                t.linear(layout.combine, packed.data(),
                         {.x1 = x.Q.data(), .ld1 = q, .n1 = q, .x2 = a.data(), .ld2 = D, .n2 = D}, B, {0, o}, y.data(),
                         o);
                for (std::size_t i = 0; i < w.size(); ++i) REQUIRE(same_bits(w[i], s[i]));
                for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(same_bits(out[i], y[i]));
                // A sample's bits do not depend on its tile: tiles of 1, 2, 3, ...
                std::vector<float> out_one(out.size()), w_one(w.size());
                for (std::size_t begin = 0, size = 1; begin < B; begin += size, ++size) {
                    const std::size_t end = std::min(B, begin + size);
                    std::vector<float> sc(t.scratch_size(d, end - begin));
                    t.forward(d, layout, packed.data(),
                              {B, x.Q.data(), x.K.data(), x.V.data(), ks, vs, out_one.data(), w_one.data()},
                              {begin, end}, {}, sc.data());
                }
                for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(same_bits(out[i], out_one[i]));
                for (std::size_t i = 0; i < w.size(); ++i) REQUIRE(same_bits(w[i], w_one[i]));
            }
        }
    }
}

TEST_CASE("int8: a part of tiny inputs, whose 1 / scale would overflow, is the reference's bits and finite",
          "[int8][each_isa]") {
    FOR_EACH_KERNELS(t, int8_only) {
        // Ranges of 1e-37 and less: (hi - lo) / levels is below the smallest normal float, so
        // row_quant raises the scale to it; denormals and zeros among them.
        const std::size_t out = t.nr + 3, n1 = 21, n2 = 9, rows = t.mr + 1, n = n1 + n2;
        std::mt19937_64 rng(7);
        const std::vector<float> W = normal(rng, out * n), b = normal(rng, out);
        std::vector<float> x1 = normal(rng, rows * n1), x2 = normal(rng, rows * n2);
        for (std::size_t i = 0; i < x1.size(); ++i)
            x1[i] *= i % 7 == 0 ? 0.0f : i % 3 == 0 ? 1e-40f : i % 3 == 1 ? 3e-38f : 1e-38f;
        require_finite_reference_bits(run_and_reference(t, W, b, out, x1, n1, x2, n2, rows));
    }
}

TEST_CASE("int8: a row of tiny subnormal weights gets the smallest normal scale and the reference's bits",
          "[int8][each_isa]") {
    // max |w| / 127 of these rounds to 0; a zero scale would leave 0 / 0 to convert to a byte.
    const float tiny[] = {1e-45f, -3e-45f, 0.0f, 1e-45f};
    REQUIRE(detail::weight_scale(tiny, 4) == std::numeric_limits<float>::min());
    FOR_EACH_KERNELS(t, int8_only) {
        const std::size_t out = t.nr + 3, n1 = 13, n2 = 7, rows = t.mr + 1, n = n1 + n2;
        std::mt19937_64 rng(11);
        std::vector<float> W = normal(rng, out * n);
        const std::vector<float> b = normal(rng, out), x1 = normal(rng, rows * n1), x2 = normal(rng, rows * n2);
        for (std::size_t j = 0; j < out; j += 3) // every third feature's row
            for (std::size_t i = 0; i < n; ++i) W[j * n + i] = tiny[i % 4];
        require_finite_reference_bits(run_and_reference(t, W, b, out, x1, n1, x2, n2, rows));
    }
}

#if defined(__x86_64__)
namespace {

/// XINUSE (xgetbv 1) bits 17 and 18: the tile configuration or tile data not in their initial
/// state, i.e. tiles still configured; nullopt where the CPU cannot say (CPUID 0xD.1 EAX bit 2).
std::optional<bool> tiles_in_use() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(0xD, 1, &eax, &ebx, &ecx, &edx) || ((eax >> 2) & 1u) == 0) return std::nullopt;
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    return (lo & 0x60000u) != 0;
}

} // namespace

TEST_CASE("int8: the AMX kernels leave no tile configured when a call returns", "[int8][each_isa]") {
    FOR_EACH_KERNELS(t, int8_only) {
        if (t.id != "i8-linear-16x32-avx512amx" || !tiles_in_use()) return;
        const Dims d{520, 70, 5, 130, 33}; // Q: 8 whole 64-byte blocks for the tiles, and a remainder
        const Parameters p = Parameters::random(d, 5);
        const auto [packed, layout] = pack_weights(t, p);
        const std::size_t B = t.mr + 2;
        const Inputs x = random_inputs(d, B, false, false, 6);
        std::vector<float> out(B * d.output_size), w(B * d.value_size1), scratch(t.scratch_size(d, B));
        t.forward(
            d, layout, packed.data(),
            {B, x.Q.data(), x.K.data(), x.V.data(), d.key_size, d.value_size1 * d.value_size2, out.data(), w.data()},
            {0, B}, {}, scratch.data());
        CHECK_FALSE(*tiles_in_use());
        const detail::SplitRows qk{.x1 = x.Q.data(),
                                   .ld1 = d.query_size,
                                   .n1 = d.query_size,
                                   .x2 = x.K.data(),
                                   .ld2 = d.key_size,
                                   .n2 = d.key_size};
        t.linear(layout.scores, packed.data(), qk, B, {0, d.value_size1}, w.data(), d.value_size1);
        CHECK_FALSE(*tiles_in_use());
        t.linear_blocked(layout.scores, packed.data(), qk, B, {0, d.value_size1}, {.kc = 0, .nc = 0}, w.data(),
                         d.value_size1);
        CHECK_FALSE(*tiles_in_use());
    }
}
#endif
