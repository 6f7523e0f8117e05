// Precisions: their names, and which kernels each (ISA, precision) gets.
#include <catch2/catch.hpp>
#include <string>

#include "dispatch.hpp"
#include "myattn/myattn.hpp"

using namespace myattn;
using Catch::Matchers::Contains;

TEST_CASE("precision: names round-trip, unknown names are refused with the valid ones", "[precision]") {
    REQUIRE(precisions().size() == 3);
    CHECK(precisions().front() == Precision::f32);
    for (Precision p : precisions()) CHECK(parse_precision(precision_name(p)) == p);
    CHECK(precision_name(Precision::int8) == "int8");
    CHECK_THROWS_AS(parse_precision("INT8"), ArgumentError);
    CHECK_THROWS_WITH(parse_precision("fp16"), "unknown precision \"fp16\" (expected one of f32, int8, bf16)");
    CHECK_THROWS_WITH(parse_precision(""), Contains("unknown precision \"\""));
}

TEST_CASE("precision: a MyAttn is f32 unless asked, and says which kernels it runs", "[precision][each_isa]") {
    const Parameters p = Parameters::random({2, 3, 4, 5, 6}, 1);
    const MyAttn plain(p);
    CHECK(plain.precision() == Precision::f32);
    CHECK(plain.kernel_id() == kernel_id(plain.isa()));
    for (Isa isa : runnable_isas())
        for (Precision prec : precisions()) {
            CAPTURE(isa_name(isa), precision_name(prec));
            const auto id = kernel_id(isa, prec);
            if (!id) {
                // No silent f32 (or another ISA) instead: a clear error naming both.
                CHECK_THROWS_WITH(MyAttn(p, isa, prec), Contains("precision " + std::string(precision_name(prec))) &&
                                                            Contains(std::string(isa_name(isa))));
                continue;
            }
            const MyAttn attn(p, isa, prec);
            CHECK(attn.isa() == isa);
            CHECK(attn.precision() == prec);
            CHECK(attn.kernel_id() == *id);
        }
    CHECK(kernel_id(runnable_isas().front(), Precision::f32) == kernel_id(runnable_isas().front()));
}

TEST_CASE("precision: int8 refuses parts whose int32 sums could overflow, naming the size", "[precision][int8]") {
    const Parameters p = Parameters::random({70000, 1, 1, 1, 1}, 1);
    CHECK_THROWS_AS(MyAttn(p, Isa::scalar, Precision::int8), ArgumentError);
    CHECK_THROWS_WITH(MyAttn(p, Isa::scalar, Precision::int8), Contains("query_size = 70000"));
    CHECK(MyAttn(p, Isa::scalar).precision() == Precision::f32);
}
