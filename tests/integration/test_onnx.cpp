// The ONNX frontend on fixtures of its own (tests/fixtures/onnx/make_onnx.py; references computed
// there by numpy, not by graft): a small CNN with initializers and a symbolic batch, run at two
// batch sizes and through the descriptor; outputs that are constants of the model; and untrusted files refused with typed errors that name
// the file, the node or value, what was found and what was expected.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "graft/backend/descriptor.hpp"
#include "graft/frontend/layer.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_onnx {

namespace fs = std::filesystem;
using graft_test::load_npy;
using graft_test::source_path;
using graft_test::TempDir;

namespace {

const fs::path kFx = source_path("tests/fixtures/onnx");

void check_close(const graft::Tensor& got, const graft::Tensor& want, float tol) {
    REQUIRE(got.shape() == want.shape());
    for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(std::abs(got.data()[i] - want.data()[i]) <= tol);
}

/// Rows [lo, hi) of a batch-first tensor.
graft::Tensor rows(const graft::Tensor& t, std::int64_t lo, std::int64_t hi) {
    graft::Shape s = t.shape();
    const std::size_t row = t.size() / static_cast<std::size_t>(s[0]);
    s[0] = hi - lo;
    return graft::Tensor(s, std::vector<float>(t.data() + lo * static_cast<std::ptrdiff_t>(row), t.data() + hi * static_cast<std::ptrdiff_t>(row)));
}

std::string error_of(const std::string& file, const graft::Registry& reg) {
    try {
        graft::onnx::convert((kFx / file).string(), reg);
    } catch (const graft::Error& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("onnx: a small CNN matches numpy at any batch size", "[onnx]") {
    const auto x = load_npy(kFx / "small_cnn_x.npy"), y = load_npy(kFx / "small_cnn_y.npy");
    auto model = graft::load((kFx / "small_cnn.onnx").string());
    CHECK(model.input_shape(0) == graft::Shape{graft::kDynamic, 3, 9, 9});
    check_close(model.run({x})[0], y, 1e-5f);
    check_close(model.run({rows(x, 1, 2)})[0], rows(y, 1, 2), 1e-5f);  // a batch of one, compiled anew
}

TEST_CASE("onnx: a converted model survives the descriptor round trip", "[onnx]") {
    const auto& reg = graft::default_registry();
    TempDir dir;
    graft::descriptor::write(graft::onnx::convert((kFx / "small_cnn.onnx").string(), reg), reg, (dir / "d").string());
    auto model = graft::load((dir / "d").string());
    check_close(model.run({load_npy(kFx / "small_cnn_x.npy")})[0], load_npy(kFx / "small_cnn_y.npy"), 1e-5f);
}

TEST_CASE("onnx: outputs computed from constants only are written like computed ones", "[onnx]") {
    // Shape of the fixed dimensions (int64) and a Constant, beside a Relu; natively at two batch
    // sizes and through the descriptor.
    const auto x = load_npy(kFx / "constant_outputs_x.npy");
    const auto dims = load_npy(kFx / "constant_outputs_dims.npy"), table = load_npy(kFx / "constant_outputs_table.npy");
    const auto& reg = graft::default_registry();
    TempDir dir;
    graft::descriptor::write(graft::onnx::convert((kFx / "constant_outputs.onnx").string(), reg), reg, (dir / "d").string());
    for (const auto& path : {(kFx / "constant_outputs.onnx").string(), (dir / "d").string()}) {
        INFO(path);
        auto model = graft::load(path);
        REQUIRE(model.output_dtype(0) == graft::DType::int64);
        for (const auto& in : {x, rows(x, 1, 2)}) {
            const auto out = model.run({in});
            REQUIRE(out.size() == 3);
            CHECK(out[0].values<std::int64_t>() == dims.values<std::int64_t>());
            check_close(out[1], table, 0.0f);
            check_close(out[2], in.shape()[0] == 2 ? load_npy(kFx / "constant_outputs_r.npy")
                                                   : rows(load_npy(kFx / "constant_outputs_r.npy"), 1, 2), 0.0f);
        }
    }
}

TEST_CASE("onnx: untrusted files get typed errors naming what is wrong", "[onnx]") {
    const auto& reg = graft::default_registry();
    SECTION("not a protobuf") {
        CHECK_THROWS_AS(graft::onnx::convert((kFx / "bad_not_onnx.onnx").string(), reg), graft::FormatError);
        CHECK_THAT(error_of("bad_not_onnx.onnx", reg), Catch::Contains("bad_not_onnx.onnx") && Catch::Contains("not an ONNX model"));
    }
    SECTION("raw_data shorter than the shape") {
        CHECK_THROWS_AS(graft::onnx::convert((kFx / "bad_raw_size.onnx").string(), reg), graft::FormatError);
        CHECK_THAT(error_of("bad_raw_size.onnx", reg), Catch::Contains("initializer 'w'") && Catch::Contains("20 bytes") &&
                                                           Catch::Contains("expected 48"));
    }
    SECTION("external data outside the model's folder") {
        CHECK_THROWS_AS(graft::onnx::convert((kFx / "bad_external_path.onnx").string(), reg), graft::FormatError);
        CHECK_THAT(error_of("bad_external_path.onnx", reg), Catch::Contains("outside.bin"));
    }
    SECTION("every unsupported op at once, with the plugin hint") {
        CHECK_THROWS_AS(graft::onnx::convert((kFx / "bad_unknown_ops.onnx").string(), reg), graft::UnsupportedError);
        const auto msg = error_of("bad_unknown_ops.onnx", reg);
        CHECK_THAT(msg, Catch::Contains("2 nodes cannot be converted") && Catch::Contains("com.example:FancyOp") &&
                            Catch::Contains("Unique (opset 13)") && Catch::Contains("--plugin"));
        const auto report = graft::onnx::check_model((kFx / "bad_unknown_ops.onnx").string(), reg);
        REQUIRE(report.findings.size() == 2);
        CHECK(report.findings[0].class_name == "com.example:FancyOp (opset 1)");
    }
    SECTION("a missing file") {
        CHECK_THROWS_AS(graft::onnx::convert((kFx / "no_such.onnx").string(), reg), graft::IOError);
    }
}

TEST_CASE("onnx: a plugin-style converter for a custom domain is found by key", "[onnx]") {
    auto reg = graft::make_builtin_registry();
    reg->add_converter(graft::onnx::kFrontend, graft::onnx::converter_key("com.example", "FancyOp"), [](graft::LayerContext& ctx) {
        CHECK(ctx.opset() == 1);
        const auto& x = ctx.input(0);
        graft::Attributes a;
        a.set("activation", std::string("relu"));
        ctx.set_outputs({graft::Value{ctx.op("Activation", {{"x", x.var}}, std::move(a))->output("y"), x.logical}});
    });
    const auto report = graft::onnx::check_model((kFx / "bad_unknown_ops.onnx").string(), *reg);
    REQUIRE(report.findings.size() == 1);  // FancyOp converts now; Unique still has no converter
    CHECK(report.findings[0].layer == "Unique_1");
}

}  // namespace graft_test_onnx
