// PyTorch-exported models through the ONNX frontend, with torch's forward pass as the reference
// (tests/fixtures/onnx/make_torch.py writes the files: small ResNet, MobileNet v2 / v3,
// SqueezeNet, ShuffleNet v2, EfficientNet, RegNet, ViT (batch or sequence first) and UNet built
// from torchvision's blocks, a model of shape patterns (Split, Tile, Expand, Resize) and
// self-attention written out op by op, each exported at opsets 13 and 17
// with a static and with a dynamic batch). Every file of tests/fixtures/onnx/torch/manifest.json
// runs at each of its batch sizes; three (convolutions, shape arithmetic on the batch, attention)
// also after a descriptor round trip; the models with inverted-residual blocks also with every
// block fused into one kernel (ops/conv/block.hpp), in bands of 1, 2 and 3 rows and automatic ones.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "graft/backend/descriptor.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_onnx_torch {

namespace fs = std::filesystem;
using graft_test::compare;
using graft_test::load_npy;
using graft_test::read_manifest;
using graft_test::source_path;
using graft_test::TempDir;

namespace {

const fs::path kDir = source_path("tests/fixtures/onnx/torch");
constexpr double kTol = 1e-4;  // atol and rtol

/// Runs `model` on <name>_x_b<B>.npy for each batch B and compares with torch's <name>_y_b<B>.npy.
void check_batches(const graft::Model& model, const std::string& name, const rapidjson::Value& batches, const std::string& label) {
    auto session = model.session();
    double worst = 0;
    for (const auto& b : batches.GetArray()) {
        const std::string suffix = "_b" + std::to_string(b.GetInt()) + ".npy";
        const auto x = load_npy(kDir / (name + "_x" + suffix)), want = load_npy(kDir / (name + "_y" + suffix));
        const auto got = session.run({x});
        REQUIRE(got.size() == 1);
        const auto c = compare(got[0], want, kTol, kTol);
        INFO("batch " << b.GetInt() << ": shape " << graft::shape_str(got[0].shape()) << ", torch " << graft::shape_str(want.shape()));
        INFO(c.num_off << " values off, first at flat index " << c.first_off << ", max abs err " << c.max_abs_err);
        CHECK(c.ok());
        worst = std::max(worst, c.max_abs_err);
    }
    fmt::print("onnx/torch {:<34} max_abs_err={:.3g}\n", label, worst);
}

}  // namespace

TEST_CASE("onnx/torch: exported torchvision-style models match torch's forward", "[onnx][onnx_torch]") {
    const auto doc = read_manifest(kDir);
    const auto& models = doc["models"];
    REQUIRE(models.Size() > 0);
    for (const auto& m : models.GetArray()) {
        const std::string file = m["file"].GetString();
        SECTION(file) {
            auto model = graft::load((kDir / file).string());
            if (m["dynamic"].GetBool()) CHECK(model.input_shape(0)[0] == graft::kDynamic);
            else CHECK(model.input_shape(0)[0] != graft::kDynamic);
            check_batches(model, m["model"].GetString(), m["batches"], file);
        }
    }
}

TEST_CASE("onnx/torch: exported models survive the descriptor round trip", "[onnx][onnx_torch][descriptor]") {
    const auto& reg = graft::default_registry();
    const auto doc = read_manifest(kDir);
    // Convolutions with a dynamic batch, shape arithmetic on the batch, attention.
    for (const std::string name : {"resnet", "shufflenet_v2", "vit"}) {
        SECTION(name) {
            const std::string file = name + "_op17_dynamic.onnx";
            const rapidjson::Value* batches = nullptr;
            for (const auto& m : doc["models"].GetArray())
                if (m["file"].GetString() == file) batches = &m["batches"];
            REQUIRE(batches);
            TempDir dir;
            graft::descriptor::write(graft::onnx::convert((kDir / file).string(), reg), reg, (dir / "d").string());
            check_batches(graft::load((dir / "d").string()), name, *batches, file + " (descriptor)");
        }
    }
}

TEST_CASE("onnx/torch: a batch run in slices gives torch's results", "[onnx][onnx_torch][batch_slice]") {
    // Batch 3 in slices of 2 (a full slice and a remainder) where batch_mixing finds the graph
    // keeps samples apart; every convolutional model must be found so, or the check is empty.
    const std::vector<std::string> convolutional{"resnet", "mobilenet_v2", "mobilenet_v3", "squeezenet", "shufflenet_v2",
                                                 "efficientnet", "regnet", "unet"};
    const auto doc = read_manifest(kDir);
    for (const auto& m : doc["models"].GetArray()) {
        const std::string file = m["file"].GetString(), name = m["model"].GetString();
        if (!m["dynamic"].GetBool()) continue;
        SECTION(file) {
            graft::LoadOptions options;
            options.batch_slice = 2;
            auto model = graft::load((kDir / file).string(), options);
            auto session = model.session();
            const auto x = load_npy(kDir / (name + "_x_b3.npy")), want = load_npy(kDir / (name + "_y_b3.npy"));
            const graft::BatchPlan plan = session.batch_plan({x});
            INFO(file << ": " << (plan.mixing.empty() ? "keeps samples apart" : plan.mixing));
            CHECK(plan.batch == 3);
            if (std::find(convolutional.begin(), convolutional.end(), name) != convolutional.end()) CHECK(plan.mixing.empty());
            CHECK(plan.slice == (plan.mixing.empty() ? 2 : 3));
            const auto got = session.run({x});
            REQUIRE(got.size() == 1);
            const auto c = compare(got[0], want, kTol, kTol);
            INFO(c.num_off << " values off, first at flat index " << c.first_off << ", max abs err " << c.max_abs_err);
            CHECK(c.ok());
            // The other slice sizes' programs came in addition: a slice of 2 and one of 1.
            if (plan.mixing.empty()) CHECK(session.arena_bytes() > 0);
            fmt::print("onnx/torch sliced {:<27} {}\n", file, plan.mixing.empty() ? "slices of 2" : "whole: " + plan.mixing);
        }
    }
}

TEST_CASE("onnx/torch: inverted-residual blocks fused into one kernel give torch's results", "[onnx][onnx_torch][fusion]") {
    // GRAFT_FUSE_BLOCKS=all fuses every expand -> depthwise -> project chain whatever its size;
    // rows=R also forces bands of R output rows, so the rows shared between bands (strides 1 and
    // 2, padding at the top and bottom, residuals, several images split over threads) are covered
    // on these small models. Blocks with squeeze-excitation (MobileNet v3, EfficientNet) stay unfused;
    // MobileNet v3's plain blocks have hard-swish activations.
    const graft_test::ScopedEnv env("GRAFT_FUSE_BLOCKS", "auto");
    const auto doc = read_manifest(kDir);
    for (const std::string mode : {"all", "rows=1", "rows=2", "rows=3", "0"}) {
        for (const std::string name : {"mobilenet_v2", "mobilenet_v3", "efficientnet"}) {
            const std::string file = name + "_op17_dynamic.onnx";
            SECTION(mode + " " + file) {
                env.set(mode);
                const rapidjson::Value* batches = nullptr;
                for (const auto& m : doc["models"].GetArray())
                    if (m["file"].GetString() == file) batches = &m["batches"];
                REQUIRE(batches);
                auto model = graft::load((kDir / file).string());
                auto session = model.session();
                session.set_profiling(true);
                for (const auto& b : batches->GetArray()) {
                    const std::string suffix = "_b" + std::to_string(b.GetInt()) + ".npy";
                    const auto x = load_npy(kDir / (name + "_x" + suffix)), want = load_npy(kDir / (name + "_y" + suffix));
                    const auto got = session.run({x});
                    REQUIRE(got.size() == 1);
                    const auto c = compare(got[0], want, kTol, kTol);
                    INFO(mode << " batch " << b.GetInt() << ": " << c.num_off << " values off, max abs err " << c.max_abs_err);
                    CHECK(c.ok());
                }
                std::size_t blocks = 0;
                for (const auto& op : session.profile()) blocks += op.type == "ConvBlock";
                fmt::print("onnx/torch fused {:<8} {:<30} {} blocks\n", mode, file, blocks);
                if (mode == "0") CHECK(blocks == 0);
                else if (name != "efficientnet") CHECK(blocks > 0);  // EfficientNet's blocks all have SE
            }
        }
    }
}

}  // namespace graft_test_onnx_torch
