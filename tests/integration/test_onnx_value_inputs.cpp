// Models whose graph depends on the values of some inputs (issue 13: a Reshape's shape, a Slice's
// starts given as model inputs): graft::load makes a Model that converts and compiles once per
// distinct value, on first use. The references are ONNX's own node tests (../shared/corpus/onnx-node):
// one Reshape model is run with the inputs of three cases, each checked against that case's output.
#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_onnx_value_inputs {

using namespace graft_test;
namespace fs = std::filesystem;

namespace {

fs::path node_case(const std::string& name) { return fs::path(GRAFT_SHARED_DIR) / "corpus/onnx-node" / name; }

bool have_node_tests() {
    if (fs::exists(node_case("test_reshape_negative_dim") / "model.onnx")) return true;
    WARN("SKIP: ../shared/corpus/onnx-node not found (the shared corpus sits beside the repo in CI)");
    return false;
}

}  // namespace

TEST_CASE("ONNX: a Reshape whose shape is a model input runs for every shape given", "[onnx][value_inputs]") {
    if (!have_node_tests()) return;
    const std::string model_path = (node_case("test_reshape_negative_dim") / "model.onnx").string();
    const graft::Model model = graft::load(model_path);
    REQUIRE(model.value_inputs() == std::vector<std::string>{"shape"});
    REQUIRE(model.num_inputs() == 2);
    CHECK(model.input_dtype(1) == graft::DType::int64);
    CHECK(model.input_shape(1) == graft::Shape{3});

    // The same model file with the inputs of cases whose shape input has three entries too: each
    // value converts once; the first case runs again from the cache.
    auto session = model.session();
    for (const char* c : {"test_reshape_negative_dim", "test_reshape_reordered_all_dims", "test_reshape_reordered_last_dims",
                          "test_reshape_negative_dim"}) {
        INFO(c);
        const auto dir = node_case(c);
        const auto out = session.run(std::vector<graft::Tensor>{load_npy(dir / "input_0.npy"), load_npy(dir / "input_1.npy")});
        REQUIRE(out.size() == 1);
        const auto cmp = compare(out[0], load_npy(dir / "output_reshaped.npy"), 0.0, 0.0);
        CHECK(cmp.same_shape);
        CHECK(cmp.num_off == 0);
    }
    CHECK(session.arena_bytes() > 0);
}

TEST_CASE("ONNX: value inputs in the API, the limits and the refusals", "[onnx][value_inputs][errors]") {
    if (!have_node_tests()) return;
    const std::string model_path = (node_case("test_reshape_negative_dim") / "model.onnx").string();

    SECTION("load_graph cannot fix the graph: a typed error naming the node and the input") {
        REQUIRE_THROWS_AS(graft::load_graph(model_path), graft::onnx::InputValuesNeeded);
        REQUIRE_THROWS_WITH(graft::load_graph(model_path), Catch::Contains("test_reshape_negative_dim/model.onnx") &&
                                                               Catch::Contains("Reshape") && Catch::Contains("once per value of 'shape'"));
    }
    SECTION("graft inspect shows the signature and names the value inputs; --dot has no one graph to draw") {
        const auto r = run_cli({"inspect", model_path});
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("depends on the values of input 'shape'") != std::string::npos);
        CHECK(r.out.find("Input  shape: [3] int64") != std::string::npos);
        TempDir tmp;
        const auto dot = run_cli({"inspect", model_path, "--dot", (tmp / "g.dot").string()});
        CHECK(dot.exit_code != 0);
        CHECK(!fs::exists(tmp / "g.dot"));
    }
    SECTION("converting with the values given gives an ordinary graph") {
        graft::onnx::Options o;
        o.input_values.emplace("shape", graft::Tensor({3}, std::vector<std::int64_t>{4, 3, 2}));
        const graft::Graph g = graft::onnx::convert(model_path, graft::default_registry(), o);
        REQUIRE(g.inputs().size() == 2);
        graft::Model m(g.clone(), graft::default_registry());
        CHECK(m.value_inputs().empty());
    }
    SECTION("a value of the wrong shape is refused when converting") {
        graft::onnx::Options o;
        o.input_values.emplace("shape", graft::Tensor({2}, std::vector<std::int64_t>{4, 6}));
        REQUIRE_THROWS_AS(graft::onnx::convert(model_path, graft::default_registry(), o), graft::ShapeError);
    }
    SECTION("more distinct values than the cache keeps: each still right (the data, reshaped)") {
        const graft::Model model = graft::load(model_path);
        const graft::Tensor data = load_npy(node_case("test_reshape_negative_dim") / "input_0.npy");
        std::vector<std::vector<std::int64_t>> shapes;  // every [a, b, c] of 24 elements, and [a, b, -1]
        for (std::int64_t a : {1, 2, 3, 4, 6, 8, 12, 24})
            for (std::int64_t b : {1, 2, 3, 4, 6, 8, 12, 24})
                if (24 % (a * b) == 0) shapes.push_back({a, b, 24 / (a * b)});
        for (std::size_t k = 0, n = shapes.size(); k < n; ++k) shapes.push_back({shapes[k][0], shapes[k][1], -1});
        REQUIRE(shapes.size() > graft::Model::kMaxValuePrograms);
        auto session = model.session();
        for (std::size_t round = 0; round < 2; ++round)
            for (const auto& s : shapes) {
                const auto out = session.run(std::vector<graft::Tensor>{data, graft::Tensor({3}, s)});
                REQUIRE(out[0].shape() == graft::Shape{s[0], s[1], 24 / (s[0] * s[1])});
                REQUIRE(out[0].values() == data.values());
            }
    }
    SECTION("a value the input's dtype does not hold is a DTypeError naming the input, before anything is compiled") {
        graft::onnx::Options o;
        o.input_values.emplace("shape", graft::Tensor({3}, std::vector<float>{2.5f, 1e30f, 1.f}));
        REQUIRE_THROWS_AS(graft::onnx::convert(model_path, graft::default_registry(), o), graft::DTypeError);
        REQUIRE_THROWS_WITH(graft::onnx::convert(model_path, graft::default_registry(), o),
                            Catch::Contains("input 'shape'") && Catch::Contains("expected int64 values"));
        const graft::Model model = graft::load(model_path);
        const graft::Tensor data = load_npy(node_case("test_reshape_negative_dim") / "input_0.npy");
        REQUIRE_THROWS_AS(model.run(std::vector<graft::Tensor>{data, graft::Tensor({3}, std::vector<float>{1e30f, 1.f, 1.f})}),
                          graft::DTypeError);
    }
    SECTION("a value the node refuses is a typed error when the model runs") {
        const graft::Model model = graft::load(model_path);
        const graft::Tensor data = load_npy(node_case("test_reshape_negative_dim") / "input_0.npy");
        REQUIRE_THROWS_AS(model.run(std::vector<graft::Tensor>{data, graft::Tensor({3}, std::vector<std::int64_t>{5, 5, 5})}), graft::Error);
        REQUIRE_THROWS_WITH(model.run(std::vector<graft::Tensor>{data, graft::Tensor({3}, std::vector<std::int64_t>{5, 5, 5})}),
                            Catch::Contains("test_reshape_negative_dim/model.onnx"));
        // and the model still runs afterwards
        const auto out = model.run(std::vector<graft::Tensor>{data, graft::Tensor({3}, std::vector<std::int64_t>{2, 12, 1})});
        CHECK(out[0].shape() == graft::Shape{2, 12, 1});
    }
}

}  // namespace graft_test_onnx_value_inputs
