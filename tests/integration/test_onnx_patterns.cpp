// Exporter patterns fused back (lib/frontend/onnx/patterns.cpp) on models PyTorch exported
// (tests/fixtures/onnx/make_torch_patterns.py; references are torch's forward): the fused model
// matches torch, the chains became single ops, and a chain that only looks like LayerNorm is
// left alone and still matches. PyTorch's self-attention (fixtures of make_torch.py, which
// test_onnx_torch.cpp runs at every batch size): one Attention op per layer, batch_first or not,
// in the generated C++ too, and a graph shaped like it that is not, converted node by node.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "graft/backend/cpp.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/optimize/passes.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_onnx_patterns {

namespace fs = std::filesystem;
using graft_test::load_npy;
using graft_test::TempDir;

namespace {

const fs::path kFx = graft_test::source_path("tests/fixtures/onnx/patterns");
const fs::path kTorch = graft_test::source_path("tests/fixtures/onnx/torch");

void check_close(const graft::Tensor& got, const graft::Tensor& want) {
    const auto c = graft_test::compare(got, want, 1e-4, 1e-4);
    INFO("max abs error " << c.max_abs_err << ", " << c.num_off << " values off, the first at " << c.first_off);
    CHECK(c.ok());
}

/// The converted graph's ops, counted by type, and Activations by function ("Activation:gelu").
/// `optimized`: after the native -O2 pipeline (nodes a fusion left in place that nothing reads
/// any more are gone).
std::map<std::string, int> op_counts(const std::string& model, const fs::path& dir = kFx, bool optimized = false) {
    auto g = graft::onnx::convert((dir / model).string(), graft::default_registry());
    if (optimized) graft::optimize::pipeline_for(2, "native").run(g, graft::default_registry());
    std::map<std::string, int> n;
    for (const auto* op : g.operators()) {
        ++n[op->type()];
        if (op->type() == "Activation") ++n["Activation:" + op->attr<std::string>("activation")];
        if (op->type() == "Attention" && op->attr_or<bool>("packed", false)) ++n["Attention:packed"];
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

TEST_CASE("onnx patterns: PyTorch's self-attention becomes one Attention op per layer", "[onnx]") {
    struct Want {
        const char* model;
        int attention;  // packed Attention ops
        int batch_matmul;
    };
    for (const Want w : {Want{"vit", 2, 0}, Want{"vit_seq_first", 2, 0}, Want{"attention_by_hand", 1, 0},
                         Want{"attention_other_keys", 0, 2}}) {  // keys from the values' third: node by node
        for (const char* variant : {"_op13_static", "_op13_dynamic", "_op17_static", "_op17_dynamic"}) {
            const std::string file = std::string(w.model) + variant + ".onnx";
            INFO(file);
            auto n = op_counts(file, kTorch, true);
            CHECK(n["Attention:packed"] == w.attention);
            CHECK(n["Attention"] == w.attention);
            CHECK(n["BatchMatMul"] == w.batch_matmul);
        }
    }
    // The heads split over two threads (test_onnx_torch.cpp runs them on one).
    for (const char* name : {"vit", "vit_seq_first", "attention_by_hand"}) {
        INFO(name);
        graft::LoadOptions o;
        o.threads = 2;
        auto model = graft::load((kTorch / (std::string(name) + "_op17_dynamic.onnx")).string(), o);
        check_close(model.run({load_npy(kTorch / (std::string(name) + "_x_b3.npy"))})[0], load_npy(kTorch / (std::string(name) + "_y_b3.npy")));
    }
}

TEST_CASE("cpp backend: the generated C++ of PyTorch's self-attention matches torch", "[cpp_backend][onnx][integration]") {
    const auto& reg = graft::default_registry();
    for (const char* name : {"vit", "vit_seq_first"}) {  // Attention packed, from x and from the projection
        INFO(name);
        TempDir tmp;
        graft::cpp::Options o;
        o.name = "model";
        o.ns = "model";
        o.batch = 3;
        graft::cpp::generate(graft::onnx::convert((kTorch / (std::string(name) + "_op13_dynamic.onnx")).string(), reg), reg, o,
                             tmp.path().string());
        CHECK(graft_test::read_text(tmp / "model.cpp").find("true,  // packed") != std::string::npos);
        using graft_test::cstr;
        const std::string x = (kTorch / (std::string(name) + "_x_b3.npy")).string();
        std::ofstream(tmp / "main.cpp") << "#include \"driver.hpp\"\n#include " << cstr((tmp / "model.cpp").string()) << "\n"
                                        << "int main() { return graft_driver::run_model<model::Session>(\"model\", model::kInputs, "
                                           "model::kOutputs, {"
                                        << cstr(x) << "}, " << cstr(tmp.path().string()) << ", "
                                        << cstr((tmp / "model.weights").string()) << "); }\n";
        const bool compiled = graft_test::sh(graft_test::compile_cmd(graft_test::cxx(), "-O1", tmp / "main.cpp", tmp / "main"), tmp / "log");
        INFO(graft_test::read_text(tmp / "log"));
        REQUIRE(compiled);
        REQUIRE(graft_test::sh(graft_test::shell_quote((tmp / "main").string()), tmp / "run.log"));
        check_close(load_npy(tmp / "0.npy"), load_npy(kTorch / (std::string(name) + "_y_b3.npy")));
    }
}

}  // namespace graft_test_onnx_patterns
