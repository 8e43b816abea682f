// Inputs the libFuzzer targets (tests/fuzz/, docs/security.md "Fuzzing") found to crash graft or
// trip a sanitizer, kept in tests/fixtures/bad/: each now gives one typed error naming the file
// and what is wrong with it.
#include <catch2/catch.hpp>

#include <string>

#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_fuzz_regressions {

using namespace graft_test;

TEST_CASE("fuzz regressions: .npy inputs give one clean error", "[errors][hostile][fuzz]") {
    const DenseFixture dense;
    TempDir tmp;
    auto run_with = [&](const std::string& input) {
        return run_cli({"run", dense.model, "--input", "dense_1_input=" + input, "--output", (tmp / "y.npy").string()});
    };
    SECTION("a bool array holding the byte 255 (was a load of an invalid bool: undefined behaviour)") {
        const auto input = bad_fixture("npy_bool_255.npy");
        check_cli_error(run_with(input), {input, "bool element 1 is the byte 255, expected 0 or 1"});
    }
}

TEST_CASE("fuzz regressions: descriptors give one typed error", "[errors][hostile][fuzz]") {
    SECTION("a graph.json whose number 0E88 sent RapidJSON's parser through clz(0) (UBSan, third-party, ignore-listed)") {
        const auto path = source_path("tests/fixtures/bad/descriptor_number_0e88").string();
        REQUIRE_THROWS_AS(graft::load_graph(path), graft::FormatError);
        REQUIRE_THROWS_WITH(graft::load_graph(path), Catch::Contains("descriptor_number_0e88/graph.json") && Catch::Contains("not valid JSON"));
    }
}

TEST_CASE("fuzz regressions: ONNX models give one typed error, promptly", "[errors][hostile][fuzz][onnx]") {
    SECTION("the fuzzed model (a Tile of a runtime value repeated about 2^30 times took minutes)") {
        // Other mutations in the same file are now refused first; what matters is a prompt typed error.
        const auto path = bad_fixture("onnx_tile_repeats_huge.onnx");
        REQUIRE_THROWS_AS(graft::load_graph(path), graft::Error);
        REQUIRE_THROWS_WITH(graft::load_graph(path), Catch::Contains("onnx_tile_repeats_huge.onnx"));
    }
    SECTION("an Expand to a shape of a huge number of dimensions (an order of that many axes took minutes)") {
        const auto path = bad_fixture("onnx_expand_rank_huge.onnx");
        REQUIRE_THROWS_AS(graft::load_graph(path), graft::UnsupportedError);
        REQUIRE_THROWS_WITH(graft::load_graph(path), Catch::Contains("onnx_expand_rank_huge.onnx") &&
                                                         Catch::Contains("dimensions; graft takes at most 32"));
    }
    SECTION("an initializer declaring 1.3e9 values and holding 72 (5 GB were allocated before the comparison)") {
        const auto path = bad_fixture("onnx_initializer_shape_huge.onnx");
        REQUIRE_THROWS_AS(graft::load_graph(path), graft::FormatError);
        REQUIRE_THROWS_WITH(graft::load_graph(path), Catch::Contains("onnx_initializer_shape_huge.onnx") &&
                                                         Catch::Contains("initializer 'onnx::GRU_191': raw_data holds 288 bytes, expected 5259063288"));
    }
    SECTION("an Expand of a known value to 3.7e7 elements (computed while converting, it took minutes under ASan)") {
        const auto path = bad_fixture("onnx_expand_known_huge.onnx");
        REQUIRE_THROWS_AS(graft::load_graph(path), graft::Error);
        REQUIRE_THROWS_WITH(graft::load_graph(path), Catch::Contains("onnx_expand_known_huge.onnx") && Catch::Contains("1048578"));
    }
    SECTION("an Expand of a known value to a shape holding -1 (a vector sized by a negative count: std::length_error)") {
        const auto path = bad_fixture("onnx_expand_negative_dim.onnx");
        REQUIRE_THROWS_AS(graft::load_graph(path), graft::ShapeError);
        REQUIRE_THROWS_WITH(graft::load_graph(path), Catch::Contains("onnx_expand_negative_dim.onnx") && Catch::Contains("/Expand_2") &&
                                                         Catch::Contains("negative dimension -1"));
    }
    SECTION("the same refusal isolated: 5000 copies of a runtime value (tests/fixtures/onnx/make_onnx.py)") {
        const auto path = source_path("tests/fixtures/onnx/bad_tile_copies.onnx").string();
        REQUIRE_THROWS_AS(graft::load_graph(path), graft::UnsupportedError);
        REQUIRE_THROWS_WITH(graft::load_graph(path), Catch::Contains("bad_tile_copies.onnx") && Catch::Contains("Tile_1") &&
                                                         Catch::Contains("on a value computed when the model runs") &&
                                                         Catch::Contains("at most 4096"));
    }
}

}  // namespace graft_test_fuzz_regressions
