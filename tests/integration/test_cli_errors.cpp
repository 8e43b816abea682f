// The graft tool on bad input (tests/fixtures/bad/, see its README.md): a non-zero exit, exactly one
// line "graft: error: ..." on stderr naming the file and the key fact, and no output left behind.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xnpy.hpp>

#include "support.hpp"

namespace graft_test_cli_errors {

using namespace graft_test;

namespace {

const DenseFixture kDense;

}  // namespace

TEST_CASE("cli: bad model files fail with one clear line", "[cli][errors]") {
    struct Case {
        std::string file;
        std::vector<std::string> facts;
    };
    const std::vector<Case> cases = {
        {"truncated.h5", {"HDF5"}},
        {"not_hdf5.h5", {"not an HDF5 file"}},
        {"bad_json.h5", {"model_config", "JSON"}},
        {"missing_weight.h5", {"dense_1/bias:0"}},
        {"wrong_shape.h5", {"dense_1", "kernel", "expected", "5, 6", "5, 4"}},
        {"unknown_layer.h5", {"FancyLayer", "OtherLayer", "plugin"}},
    };
    for (const auto& c : cases) {
        DYNAMIC_SECTION(c.file) {
            auto facts = c.facts;
            facts.push_back(c.file);
            const auto model = bad_fixture(c.file);
            TempDir tmp;

            check_cli_error(run_cli({"run", model, "--input", kDense.input, "--output-dir", (tmp / "out").string()}), facts);
            CHECK_FALSE(fs::exists(tmp / "out"));

            check_cli_error(run_cli({"inspect", model, "--dot", (tmp / "graph.dot").string()}), facts);
            check_cli_error(run_cli({"convert", model, "-o", (tmp / "graph.json").string()}), facts);
            CHECK(fs::is_empty(tmp.path()));
        }
    }
}

TEST_CASE("cli: an input of the wrong shape names the input, the file and both shapes", "[cli][errors]") {
    const auto input = bad_fixture("input_wrong_shape.npy");
    TempDir tmp;
    check_cli_error(run_cli({"run", kDense.model, "--input", "dense_1_input=" + input, "--output", (tmp / "y.npy").string()}),
                {"input 'dense_1_input' from " + input + " has shape [3, 7], expected [?, 5]"});
    CHECK(fs::is_empty(tmp.path()));
}

TEST_CASE("cli: bad command lines and inputs fail with one clear line", "[cli][errors]") {
    TempDir tmp;
    const auto out_dir = (tmp / "out").string();

    SECTION("no subcommand") { check_cli_error(run_cli({}), {"subcommand"}); }
    SECTION("missing input file") {
        const auto missing = (tmp / "missing.npy").string();
        check_cli_error(run_cli({"run", kDense.model, "--input", missing, "--output-dir", out_dir}), {missing});
    }
    SECTION("unknown input name") {
        check_cli_error(run_cli({"run", kDense.model, "--input", "nope=" + kDense.input, "--output-dir", out_dir}),
                    {"'nope'", "dense_1_input"});
    }
    SECTION("no input for a model input") {
        check_cli_error(run_cli({"run", kDense.model, "--output-dir", out_dir}), {"dense_1_input", "[?, 5]"});
    }
    SECTION("integer .npy input whose values float32 does not hold exactly") {
        const auto ints = (tmp / "ints.npy").string();
        xt::xarray<std::int64_t> a = xt::xarray<std::int64_t>::from_shape({3, 5});
        a.fill((std::int64_t{1} << 25) + 1);
        xt::dump_npy(ints, a);
        check_cli_error(run_cli({"run", kDense.model, "--input", ints, "--output-dir", out_dir}), {ints, "int64", "float32", "33554433"});
    }
    SECTION("a .npy of a dtype graft has no type for") {
        const auto u4 = (tmp / "u4.npy").string();
        xt::dump_npy(u4, xt::xarray<std::uint32_t>::from_shape({3, 5}));
        check_cli_error(run_cli({"run", kDense.model, "--input", u4, "--output-dir", out_dir}), {u4, "uint32", "float32"});
    }
    SECTION("not a .npy file") {
        check_cli_error(run_cli({"run", kDense.model, "--input", kDense.model, "--output-dir", out_dir}), {kDense.model, ".npy"});
    }
    SECTION("--output with a multi-output model") {
        const auto dir = fixture("functional_shared_layer");
        check_cli_error(run_cli({"run", (dir / "model.h5").string(), "--input", (dir / "input_input_a.npy").string(),
                             "--input", (dir / "input_input_b.npy").string(), "--output", (tmp / "y.npy").string()}),
                    {"2 outputs", "--output-dir"});
    }
    SECTION("plugins") {
        check_cli_error(run_cli({"inspect", kDense.model, "--plugin", "libbias_layer.so"}), {"libbias_layer.so", "plugin"});
    }
    SECTION("output directory cannot be created") {
        check_cli_error(run_cli({"run", kDense.model, "--input", kDense.input, "--output-dir", kDense.model + "/out"}),
                    {kDense.model});
    }
    CHECK_FALSE(fs::exists(out_dir));
    CHECK_FALSE(fs::exists(tmp / "y.npy"));
}

}  // namespace graft_test_cli_errors
