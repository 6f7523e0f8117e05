// The bf16 precision's kernels. Each ISA's own: weights stored as bf16 (and V passed as bf16)
// are converted on load and run the float32 chains, so every result must be bitwise the float32
// kernels' result on the bf16-rounded operands. That also proves the packing's vector rounding
// (to nearest even, NaN kept) equal to myattn::to_bfloat16, element by element. The kernels on
// the native bf16 dot product round the Linears' inputs too, in the CPU's instruction: they are
// held to the float32 kernels where every sum is exact here, to their own fused path in
// tests/test_layered.cpp, and to the accuracy contract in tests/test_accuracy.cpp.
#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dispatch.hpp"
#include "forward_plan.hpp"
#include "layered_forward.hpp"
#include "myattn/bfloat16.hpp"
#include "myattn/myattn.hpp"
#include "support/check.hpp"
#include "support/isas.hpp"
#include "support/packed.hpp"
#include "support/random.hpp"

#ifdef MYATTN_WITH_TBB
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#endif

using namespace myattn;
using namespace myattn::test;

namespace {

constexpr float sentinel = 12345.0f;

const detail::KernelTable& f32_kernels(Isa isa) { return detail::kernels_for(isa, Precision::f32); }

/// The ISA's bf16 kernels that convert on load (the ISA's own row, not the native dot product's).
const detail::KernelTable& bf16_kernels(Isa isa) { return detail::implementation(isa, Precision::bf16).kernels(); }

float rounded(float x) { return to_float(to_bfloat16(x)); }

std::vector<float> rounded(std::vector<float> v) {
    for (float& x : v) x = rounded(x);
    return v;
}

std::vector<bfloat16> as_bf16(const std::vector<float>& v) {
    std::vector<bfloat16> out(v.size());
    std::transform(v.begin(), v.end(), out.begin(), [](float x) { return to_bfloat16(x); });
    return out;
}

/// Weights that exercise the rounding: ties to even both ways, just off a tie, the largest
/// finite value that stays finite, subnormals; with `nonfinite`, also a value that rounds to
/// infinity, infinities and NaNs (a signalling one must stay a NaN). Then normal draws.
std::vector<float> weights_with_specials(std::mt19937_64& rng, std::size_t n, bool nonfinite) {
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> specials = {std::bit_cast<float>(0x3f808000u), std::bit_cast<float>(0x3f818000u),
                                   std::bit_cast<float>(0xbf808001u), std::bit_cast<float>(0x3f807fffu),
                                   std::bit_cast<float>(0x7f7f7fffu), std::bit_cast<float>(0x00018000u),
                                   std::bit_cast<float>(0x80008000u), std::numeric_limits<float>::denorm_min()};
    if (nonfinite)
        specials.insert(specials.end(), {std::numeric_limits<float>::max(), inf, -inf,
                                         std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7f800001u)});
    std::vector<float> w = normal(rng, n);
    for (std::size_t i = 0; i < n && i < specials.size(); ++i) w[i * 7 % n] = specials[i];
    return w;
}

/// t's linear of W, plain, blocked (small KC and NC) and from its second panel on, against f's
/// linear of Wf: the same bits, out features of `rows` rows of split inputs x1 (n1 each) and x2
/// (n2 each).
void check_linear_bits(const detail::KernelTable& t, const detail::KernelTable& f, const std::vector<float>& W,
                       const std::vector<float>& Wf, const std::vector<float>& b, const std::vector<float>& x1,
                       const std::vector<float>& x2, std::size_t n1, std::size_t n2, std::size_t rows,
                       std::size_t out) {
    const std::size_t ldy = out + 1;
    const detail::LinearLayout l = t.linear_layout(out, n1, n2), lf = f.linear_layout(out, n1, n2);
    REQUIRE(l.panel == lf.panel);
    std::vector<float> packed(l.size), packed_f(lf.size);
    t.pack_linear(l, W.data(), b.data(), packed.data());
    f.pack_linear(lf, Wf.data(), b.data(), packed_f.data());
    const detail::SplitRows x{.x1 = x1.data(), .ld1 = n1, .n1 = n1, .x2 = x2.data(), .ld2 = n2, .n2 = n2};
    std::vector<float> y(rows * ldy, sentinel), want(rows * ldy, sentinel);
    std::vector<float> blocked(rows * ldy, sentinel), tail(rows * ldy, sentinel);
    t.linear(l, packed.data(), x, rows, {0, out}, y.data(), ldy);
    f.linear(lf, packed_f.data(), x, rows, {0, out}, want.data(), ldy);
    t.linear_blocked(l, packed.data(), x, rows, {0, out}, {.kc = 5, .nc = t.nr}, blocked.data(), ldy);
    const std::size_t from = std::min(out, l.panel);
    t.linear(l, packed.data(), x, rows, {from, out}, tail.data(), ldy);
    check_same_bits("linear", y, want);
    check_same_bits("linear_blocked", blocked, want);
    for (std::size_t r = 0; r < rows; ++r) std::fill_n(want.begin() + r * ldy, from, sentinel); // before the split
    check_same_bits("linear from the second panel", tail, want);
}

} // namespace

TEST_CASE("bf16: to_bfloat16 rounds to nearest even, keeps NaN, and to_float is exact", "[bf16]") {
    // Every bf16 value with low halves below, at and above the tie; one assertion at the end.
    std::size_t checked = 0;
    std::uint32_t failed = 0;
    for (std::uint32_t hi = 0; hi < 0x10000u; ++hi)
        for (std::uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
            const std::uint32_t bits = hi << 16 | lo;
            const float x = std::bit_cast<float>(bits);
            const bfloat16 b = to_bfloat16(x);
            const float y = to_float(b);
            bool ok = std::bit_cast<std::uint32_t>(y) == std::uint32_t(b.bits) << 16;
            if (std::isnan(x)) {
                ok = ok && std::isnan(y) && (b.bits & 0x8000u) == (hi & 0x8000u);
            } else if (std::isinf(x)) {
                ok = ok && b.bits == hi;
            } else {
                // Truncated, or one bf16 further from zero (infinity past the largest): the
                // nearer, and on a tie the even one.
                const bool up = lo > 0x8000u || (lo == 0x8000u && (hi & 1u));
                ok = ok && b.bits == (up ? hi + 1 : hi);
                const double down_v = std::bit_cast<float>(hi << 16), up_v = std::bit_cast<float>((hi + 1) << 16);
                if (std::isfinite(up_v))
                    ok = ok && std::fabs(y - double(x)) <= std::fabs((up ? down_v : up_v) - double(x));
            }
            ++checked;
            if (!ok && failed == 0) failed = bits;
        }
    CAPTURE(checked, failed);
    REQUIRE(failed == 0);
}

TEST_CASE("bf16: linear is bitwise the f32 linear of the bf16-rounded weights, every edge tile",
          "[bf16][kernels][each_isa]") {
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = bf16_kernels(isa);
        const detail::KernelTable& f = f32_kernels(isa);
        REQUIRE(t.isa == isa);
        const std::size_t mr = t.mr, nr = t.nr;
        struct Inputs {
            std::size_t n1, n2;
        };
        // Past 512 inputs: a KC block ends inside x1 and on its boundary.
        const Inputs inputs[] = {{3, 13}, {512, 3}};
        for (std::size_t out : {std::size_t(1), nr - 1, nr + 1, 2 * nr + 3, 3 * nr})
            for (std::size_t rows : {std::size_t(1), mr, mr + 1})
                for (const Inputs& in : inputs) {
                    CAPTURE(out, rows, in.n1, in.n2);
                    const std::size_t n = in.n1 + in.n2;
                    std::mt19937_64 rng(out * 1000 + rows * 10 + n);
                    const std::vector<float> W = weights_with_specials(rng, out * n, false), b = normal(rng, out),
                                             x1 = normal(rng, rows * in.n1), x2 = normal(rng, rows * in.n2);
                    check_linear_bits(t, f, W, rounded(W), b, x1, x2, in.n1, in.n2, rows, out);
                }
        // One input of 1 and no bias: y = the stored weights themselves, NaNs and all (sums of
        // infinities and NaNs above would compare NaNs' signs, which no kernel promises).
        std::mt19937_64 rng(7);
        const std::size_t out = 3 * nr + 1;
        const std::vector<float> W = weights_with_specials(rng, out, true), zero(out, 0.0f), one{1.0f};
        const detail::LinearLayout l = t.linear_layout(out, 1, 0);
        std::vector<float> packed(l.size), y(out);
        t.pack_linear(l, W.data(), zero.data(), packed.data());
        t.linear(l, packed.data(), {.x1 = one.data(), .ld1 = 1, .n1 = 1, .x2 = nullptr, .ld2 = 0, .n2 = 0}, 1, {0, out},
                 y.data(), out);
        std::size_t wrong = 0;
        for (std::size_t j = 0; j < out; ++j)
            if (std::isnan(W[j]) ? !std::isnan(y[j]) : y[j] != rounded(W[j])) ++wrong;
        REQUIRE(wrong == 0);
    }
}

// Every bf16 kernel set, the native dot product's included, whose rounding of the inputs and
// order of the sums differ from float32's: with small integers every product and sum is exact,
// so any correct kernel gives the float32 kernels' bits, and a weight or input taken from the
// wrong place (a pair's halves swapped, an odd part's padding, a panel's edge) shows.
TEST_CASE("bf16: every kernel set's linear is the f32 linear where every sum is exact, every edge tile",
          "[bf16][kernels][each_isa]") {
    constexpr Precision bf16_only[] = {Precision::bf16};
    FOR_EACH_KERNELS(t, bf16_only) {
        const detail::KernelTable& f = f32_kernels(t.isa);
        const std::size_t mr = t.mr, nr = t.nr;
        auto integers = [](std::mt19937_64& rng, std::size_t n) {
            std::uniform_int_distribution<int> pick(-8, 8);
            std::vector<float> v(n);
            for (float& x : v) x = static_cast<float>(pick(rng));
            return v;
        };
        struct Inputs {
            std::size_t n1, n2;
        };
        const Inputs inputs[] = {{3, 13}, {4, 1}, {513, 2}};
        for (std::size_t out : {std::size_t(1), nr - 1, nr + 1, 2 * nr + 3, 3 * nr})
            for (std::size_t rows : {std::size_t(1), std::max<std::size_t>(mr - 1, 1), mr + 1})
                for (const Inputs& in : inputs) {
                    CAPTURE(out, rows, in.n1, in.n2);
                    const std::size_t n = in.n1 + in.n2;
                    std::mt19937_64 rng(out * 1000 + rows * 10 + n);
                    const std::vector<float> W = integers(rng, out * n), b = integers(rng, out),
                                             x1 = integers(rng, rows * in.n1), x2 = integers(rng, rows * in.n2);
                    check_linear_bits(t, f, W, W, b, x1, x2, in.n1, in.n2, rows, out);
                }
    }
}

TEST_CASE("bf16: weighted sum of a bf16 V is bitwise the f32 one of the same values, shared or not, any alignment",
          "[bf16][kernels][each_isa]") {
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = bf16_kernels(isa);
        const detail::KernelTable& f = f32_kernels(isa);
        REQUIRE(t.weighted_sum_bf16v != nullptr);
        REQUIRE(f.weighted_sum_bf16v == nullptr);
        // Tails of every width, windows of rows (1030 values: rows not whole lines; 300 values:
        // 40 rows span two windows, the second's sums resuming from the first's), and rows
        // streamed (1024 values and more, whole lines), stream_rows side by side (16 bf16 rows,
        // 8 on AVX2) and the rest one by one: the same chains as the float stream's 8 rows.
        constexpr std::pair<std::size_t, std::size_t> sizes[] = {{7, 1},    {33, 19},  {5, 64},    {130, 47}, {40, 300},
                                                                 {3, 1030}, {9, 1024}, {19, 1024}, {2, 2080}};
        for (auto [L, d] : sizes)
            for (std::size_t shift : {0, 3}) // bf16s past a 64-byte boundary
                for (std::size_t rows : {std::size_t(1), t.mr + 1}) {
                    CAPTURE(L, d, shift, rows);
                    std::mt19937_64 rng(L * 100 + d + shift + rows);
                    const std::size_t ldw = L + 1, lda = d + 2;
                    const std::vector<float> w = normal(rng, rows * ldw), V = rounded(normal(rng, rows * L * d));
                    const std::vector<bfloat16> Vb = as_bf16(V);
                    std::vector<bfloat16> buf(Vb.size() + 64);
                    bfloat16* base = buf.data();
                    while (reinterpret_cast<std::uintptr_t>(base) % 64 != 0) ++base;
                    std::copy(Vb.begin(), Vb.end(), base + shift);
                    for (std::size_t stride : {std::size_t(0), L * d}) {
                        std::vector<float> a(rows * lda, sentinel), want(rows * lda, sentinel);
                        t.weighted_sum_bf16v({.rows = rows,
                                              .w = w.data(),
                                              .ldw = ldw,
                                              .V = base + shift,
                                              .v_stride = stride,
                                              .L = L,
                                              .d = d,
                                              .a = a.data(),
                                              .lda = lda},
                                             {0, d});
                        f.weighted_sum({.rows = rows,
                                        .w = w.data(),
                                        .ldw = ldw,
                                        .V = V.data(),
                                        .v_stride = stride,
                                        .L = L,
                                        .d = d,
                                        .a = want.data(),
                                        .lda = lda},
                                       {0, d});
                        CAPTURE(stride);
                        check_same_bits("weighted sum", a, want);
                    }
                }
    }
}

TEST_CASE("bf16: forward is bitwise the f32 forward of the bf16-rounded weights, with V as f32 or bf16",
          "[bf16][kernels][forward][each_isa]") {
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = bf16_kernels(isa);
        const detail::KernelTable& f = f32_kernels(isa);
        REQUIRE(t.forward_bf16v != nullptr);
        for (const Dims& d : {Dims{5, 7, 19, 13, 3}, Dims{16, 16, 8, 1024, 17}}) {
            const Parameters p = Parameters::random(d, 3);
            const std::vector<float> W1 = rounded(std::vector<float>(p.attn_weight().begin(), p.attn_weight().end()));
            const std::vector<float> W2 =
                rounded(std::vector<float>(p.combine_weight().begin(), p.combine_weight().end()));
            std::vector<float> packed(t.layout(d).size), packed_f(f.layout(d).size);
            const detail::PackedLayout layout = t.pack(d,
                                                       {.attn_weight = p.attn_weight().data(),
                                                        .attn_bias = p.attn_bias().data(),
                                                        .combine_weight = p.combine_weight().data(),
                                                        .combine_bias = p.combine_bias().data()},
                                                       packed.data());
            const detail::PackedLayout layout_f = f.pack(d,
                                                         {.attn_weight = W1.data(),
                                                          .attn_bias = p.attn_bias().data(),
                                                          .combine_weight = W2.data(),
                                                          .combine_bias = p.combine_bias().data()},
                                                         packed_f.data());
            const std::size_t B = 2 * t.mr + 1;
            for (bool shared : {false, true}) {
                CAPTURE(d.value_size2, shared);
                const Inputs x = random_inputs(d, B, shared, shared, 4);
                const std::vector<float> Vr = rounded(x.V);
                const std::vector<bfloat16> Vb = as_bf16(x.V);
                const std::size_t ks = shared ? 0 : d.key_size, vs = shared ? 0 : d.value_size1 * d.value_size2;
                std::vector<float> scratch(t.scratch_size(d, B));
                auto run = [&](const detail::KernelTable& k, const detail::PackedLayout& lay, const float* pk,
                               const float* V, std::vector<float>& out, std::vector<float>& w) {
                    out.assign(B * d.output_size, sentinel);
                    w.assign(B * d.value_size1, sentinel);
                    k.forward(d, lay, pk, {B, x.Q.data(), x.K.data(), V, ks, vs, out.data(), w.data()}, {0, B}, {},
                              scratch.data());
                };
                std::vector<float> out, w, out_f, w_f, out_v, w_v;
                run(f, layout_f, packed_f.data(), x.V.data(), out_f, w_f);
                run(t, layout, packed.data(), x.V.data(), out, w);
                check_same_bits("output", out, out_f);
                check_same_bits("attn_weights", w, w_f);
                run(f, layout_f, packed_f.data(), Vr.data(), out_f, w_f);
                out_v.assign(out.size(), sentinel);
                w_v.assign(w.size(), sentinel);
                t.forward_bf16v(d, layout, packed.data(),
                                {B, x.Q.data(), x.K.data(), Vb.data(), ks, vs, out_v.data(), w_v.data()}, {0, B}, {},
                                scratch.data());
                check_same_bits("output, bf16 V", out_v, out_f);
                check_same_bits("attn_weights, bf16 V", w_v, w_f);
            }
        }
    }
}

TEST_CASE("bf16: a bf16 V gives the float V's bits through MyAttn and the layered driver, 1 or 2 threads",
          "[bf16][forward][each_isa]") {
#ifdef MYATTN_WITH_TBB
    const tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 2);
#endif
    FOR_EACH_ISA(isa) {
        const Dims d{13, 40, 71, 21, 35};
        const Parameters p = Parameters::random(d, 5);
        const MyAttn attn(p, isa, Precision::bf16);
        REQUIRE(attn.precision() == Precision::bf16);
        const detail::KernelTable& t = detail::kernels_for(isa, Precision::bf16); // the ones MyAttn runs
        REQUIRE(attn.kernel_id() == t.id);
        // Named references, not structured bindings: clang 14 cannot capture bindings in lambdas.
        const PackedWeights pw = pack_weights(t, p);
        const auto& packed = pw.data;
        const auto& layout = pw.layout;
        // Two blocks of 2 * MR + 3 samples: pipelined on 2 threads (MR > 1), each block's V as bf16.
        const detail::ForwardPlan plan{.layered = true, .kc = 16, .nc = 2 * t.nr, .mc = 2 * t.mr, .pipelined = true};
        for (std::size_t B : {std::size_t(1), 2 * t.mr + 3})
            for (bool shared : {false, true}) {
                CAPTURE(B, shared);
                const Inputs x = random_inputs(d, B, shared, shared, B);
                const std::vector<float> Vr = rounded(x.V);
                const std::vector<bfloat16> Vb = as_bf16(x.V);
                const Shape q{B, 1, d.query_size}, k{shared ? 1 : B, 1, d.key_size},
                    v{shared ? 1 : B, d.value_size1, d.value_size2};
                const ForwardResult want = attn.forward({x.Q.data(), q}, {x.K.data(), k}, {Vr.data(), v});
                const ForwardResult got =
                    attn.forward({x.Q.data(), q}, {x.K.data(), k}, TensorView<const bfloat16>{Vb.data(), v});
                check_same_bits("output", got.output, want.output);
                check_same_bits("attn_weights", got.attn_weights, want.attn_weights);
                const std::size_t ks = shared ? 0 : d.key_size, vs = shared ? 0 : d.value_size1 * d.value_size2;
                for (int threads : {1, 2}) {
                    CAPTURE(threads);
                    std::vector<float> o(want.output.size()), a(want.attn_weights.size());
                    std::vector<float> s(
                        detail::layered_scratch_size(d, plan, B, t.mr, static_cast<std::size_t>(threads)));
                    auto run = [&] {
                        detail::layered_forward(t, d, layout, packed.data(),
                                                {B, x.Q.data(), x.K.data(), Vb.data(), ks, vs, o.data(), a.data()},
                                                plan, static_cast<std::size_t>(threads), s.data());
                    };
#ifdef MYATTN_WITH_TBB
                    tbb::task_arena(threads).execute(run);
#else
                    run();
#endif
                    check_same_bits("layered output", o, want.output);
                    check_same_bits("layered attn_weights", a, want.attn_weights);
                }
            }
    }
}

TEST_CASE("bf16: only a MyAttn of precision bf16 takes a bf16 V, refused before anything is written", "[bf16]") {
    const Dims d{2, 3, 4, 5, 6};
    const Parameters p = Parameters::random(d, 1);
    const std::vector<float> Q(d.query_size), K(d.key_size);
    const std::vector<bfloat16> V(d.value_size1 * d.value_size2);
    std::vector<float> out(d.output_size, sentinel), w(d.value_size1, sentinel);
    for (Precision precision : {Precision::f32, Precision::int8}) {
        const MyAttn attn(p, Isa::scalar, precision);
        const TensorView<const bfloat16> v{V.data(), {1, d.value_size1, d.value_size2}};
        CHECK_THROWS_AS(attn.forward({Q.data(), {1, 1, d.query_size}}, {K.data(), {1, 1, d.key_size}}, v,
                                     {out.data(), {1, 1, d.output_size}}, {w.data(), {1, d.value_size1}}),
                        ArgumentError);
        CHECK_THROWS_WITH(attn.forward({Q.data(), {1, 1, d.query_size}}, {K.data(), {1, 1, d.key_size}}, v),
                          Catch::Contains("a bfloat16 V needs a MyAttn of precision bf16"));
    }
    CHECK(std::all_of(out.begin(), out.end(), [](float x) { return x == sentinel; }));
    CHECK(std::all_of(w.begin(), w.end(), [](float x) { return x == sentinel; }));
    // A shape error names V, with a bf16 V as with a float one.
    const MyAttn attn(p, Isa::scalar, Precision::bf16);
    CHECK_THROWS_WITH(attn.forward({Q.data(), {1, 1, d.query_size}}, {K.data(), {1, 1, d.key_size}},
                                   TensorView<const bfloat16>{V.data(), {1, d.value_size1 + 1, d.value_size2}}),
                      Catch::StartsWith("V: expected shape"));
}
