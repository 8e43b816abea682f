// Exporter patterns fused back (lib/frontend/onnx/patterns.cpp) on models PyTorch exported
// (tests/fixtures/onnx/make_torch_patterns.py; references are torch's forward): the fused model
// matches torch, the chains became single ops, and a chain that only looks like LayerNorm is
// left alone and still matches.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

#include "graft/backend/descriptor.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_onnx_patterns {

namespace fs = std::filesystem;
using graft_test::load_npy;
using graft_test::TempDir;

namespace {

const fs::path kFx = graft_test::source_path("tests/fixtures/onnx/patterns");

void check_close(const graft::Tensor& got, const graft::Tensor& want) {
    const auto c = graft_test::compare(got, want, 1e-4, 1e-4);
    INFO("max abs error " << c.max_abs_err << ", " << c.num_off << " values off, the first at " << c.first_off);
    CHECK(c.ok());
}

/// The converted graph's ops, counted by type, and Activations by function ("Activation:gelu").
std::map<std::string, int> op_counts(const std::string& model) {
    const auto g = graft::onnx::convert((kFx / model).string(), graft::default_registry());
    std::map<std::string, int> n;
    for (const auto* op : g.operators()) {
        ++n[op->type()];
        if (op->type() == "Activation") ++n["Activation:" + op->attr<std::string>("activation")];
    }
    return n;
}

void check_against_torch(const std::string& name) {
    INFO(name);
    const auto x = load_npy(kFx / (name + "_x.npy")), y = load_npy(kFx / (name + "_y.npy"));
    auto model = graft::load((kFx / (name + ".onnx")).string());
    check_close(model.run({x})[0], y);
}

}  // namespace

TEST_CASE("onnx patterns: PyTorch's decomposed LayerNorm, GELU, SiLU and Hardswish fuse and match torch", "[onnx]") {
    for (const char* name : {"block_op13", "block_op17", "near_miss_op13"}) check_against_torch(name);

    auto n = op_counts("block_op13.onnx");
    CHECK(n["LayerNorm"] == 2);  // one with gamma and beta, one without
    CHECK(n["Reduce"] == 0);
    CHECK(n["Activation:gelu"] == 2);  // torch's GELU and the written-out one (0.5 first)
    CHECK(n["Activation:swish"] == 1);
    CHECK(n["Activation:hard_swish"] == 1);
    CHECK(n["Activation:erf"] == 0);
    CHECK(n["Activation:sigmoid"] == 0);
    CHECK(n["Activation:hard_sigmoid_keras3"] == 0);

    n = op_counts("block_op17.onnx");
    CHECK(n["LayerNorm"] == 2);
    CHECK(n["Activation:gelu"] == 2);
    CHECK(n["Activation:swish"] == 1);

    n = op_counts("near_miss_op13.onnx");  // normalizes over axis 1 of [N, T, C]: not a LayerNorm
    CHECK(n["LayerNorm"] == 0);
    CHECK(n["Reduce"] == 2);
}

TEST_CASE("onnx patterns: a fused model survives the descriptor round trip", "[onnx]") {
    const auto& reg = graft::default_registry();
    TempDir dir;
    graft::descriptor::write(graft::onnx::convert((kFx / "block_op13.onnx").string(), reg), reg, (dir / "d").string());
    auto model = graft::load((dir / "d").string());
    check_close(model.run({load_npy(kFx / "block_op13_x.npy")})[0], load_npy(kFx / "block_op13_y.npy"));
}

}  // namespace graft_test_onnx_patterns
