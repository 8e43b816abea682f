// ONNX's Einsum, CumSum, TopK and OneHot through the ONNX frontend, against an independent
// reference: torch's forward for the models torch exports (torch.einsum, torch.cumsum,
// torch.topk), numpy for those written with onnx.helper (CumSum exclusive / reverse, OneHot,
// TopK-1). tests/fixtures/onnx/make_torch_ops.py writes the files; manifest.json lists them.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_onnx_ops {

namespace fs = std::filesystem;
using graft_test::compare;
using graft_test::load_npy;
using graft_test::read_manifest;
using graft_test::source_path;

namespace {

const fs::path kDir = source_path("tests/fixtures/onnx/ops");

}  // namespace

TEST_CASE("onnx/ops: Einsum, CumSum, TopK and OneHot match torch / numpy", "[onnx][onnx_ops]") {
    const auto doc = read_manifest(kDir);
    const auto& models = doc["models"];
    REQUIRE(models.Size() > 0);
    for (const auto& m : models.GetArray()) {
        const std::string file = m["file"].GetString();
        const std::string label = file + " on " + m["inputs"][0].GetString();  // a model may run on several inputs
        SECTION(label) {
            auto model = graft::load((kDir / file).string());
            std::vector<graft::Tensor> inputs;
            for (const auto& f : m["inputs"].GetArray()) inputs.push_back(load_npy(kDir / f.GetString()));
            const auto got = model.run(inputs);
            REQUIRE(got.size() == m["outputs"].Size());
            double worst = 0;
            for (std::size_t i = 0; i < got.size(); ++i) {
                const auto want = load_npy(kDir / m["outputs"][static_cast<rapidjson::SizeType>(i)].GetString());
                INFO("output " << i << ": shape " << graft::shape_str(got[i].shape()) << ", reference " << graft::shape_str(want.shape()));
                CHECK(got[i].dtype() == want.dtype());
                const auto c = compare(got[i], want, 1e-5, 1e-4);
                INFO(c.num_off << " values off, first at flat index " << c.first_off << ", max abs err " << c.max_abs_err);
                CHECK(c.ok());
                worst = std::max(worst, c.max_abs_err);
            }
            fmt::print("onnx/ops {:<60} max_abs_err={:.3g}\n", label, worst);
        }
    }
}

TEST_CASE("onnx/ops: what graft does not take is refused by a typed error naming the node", "[onnx][onnx_ops]") {
    // An Einsum diagonal, three operands or broadcasting; a bad equation; k, axis or depth out of
    // range.
    const auto doc = read_manifest(kDir);
    REQUIRE(doc["refused"].Size() > 0);
    for (const auto& r : doc["refused"].GetArray()) {
        const std::string file = r["file"].GetString();
        INFO(file);
        try {
            graft::load((kDir / file).string());
            FAIL("converted");
        } catch (const graft::Error& e) {
            const std::string msg = e.what();
            INFO(msg);
            CHECK(std::string(e.kind()) == r["kind"].GetString());
            for (const auto& s : r["says"].GetArray()) CHECK(msg.find(s.GetString()) != std::string::npos);
        }
    }
}

TEST_CASE("onnx/ops: a k or depth fed that differs from the declared output shape gives NaN, not a wrong shape", "[onnx][onnx_ops]") {
    SECTION("TopK") {
        auto model = graft::load((kDir / "topk_runtime_k.onnx").string());
        const auto x = load_npy(kDir / "topk_runtime_k_in0.npy");
        const auto got = model.run(std::vector<graft::Tensor>{x, graft::Tensor(graft::Shape{1}, std::vector<std::int64_t>{2})});  // declared: k = 3
        REQUIRE(got.size() == 2);
        CHECK(got[0].shape() == graft::Shape{2, 3});
        for (std::size_t i = 0; i < got[0].size(); ++i) CHECK(std::isnan(got[0].at_double(i)));
    }
    SECTION("OneHot") {
        auto model = graft::load((kDir / "onehot_runtime_depth.onnx").string());
        const auto got = model.run(std::vector<graft::Tensor>{load_npy(kDir / "onehot_runtime_depth_in0.npy"), graft::Tensor(graft::Shape{}, std::vector<std::int64_t>{5}),
                                    load_npy(kDir / "onehot_runtime_depth_in2.npy")});  // declared: depth 4
        REQUIRE(got.size() == 1);
        CHECK(got[0].shape() == graft::Shape{3, 4});
        for (std::size_t i = 0; i < got[0].size(); ++i) CHECK(std::isnan(got[0].at_double(i)));
    }
}

}  // namespace graft_test_onnx_ops
