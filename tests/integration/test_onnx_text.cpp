// ONNX models over integer and bool inputs (issue 13): a torch-exported text model over int64
// token ids and a bool attention mask (tests/fixtures/onnx/make_torch_text.py: torch's forward is
// the reference) through the API and the CLI.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_onnx_text {

namespace fs = std::filesystem;
using graft::DType;
using graft::Tensor;
using graft_test::load_npy;
using graft_test::TempDir;

namespace {

const fs::path kText = graft_test::source_path("tests/fixtures/onnx/text");

void check_close(const Tensor& got, const Tensor& want, double tol = 1e-4) {
    const auto c = graft_test::compare(got, want, tol, tol);
    INFO("max abs error " << c.max_abs_err << ", " << c.num_off << " values off, the first at " << c.first_off);
    CHECK(c.ok());
}

}  // namespace

TEST_CASE("onnx text: a torch text model over int64 ids and a bool mask matches torch", "[onnx][dtypes]") {
    const Tensor ids = load_npy(kText / "tiny_text_ids.npy"), mask = load_npy(kText / "tiny_text_mask.npy");
    REQUIRE(ids.dtype() == DType::int64);
    REQUIRE(mask.dtype() == DType::boolean);
    for (const char* file : {"tiny_text_op13.onnx", "tiny_text_op17.onnx"}) {
        INFO(file);
        auto model = graft::load((kText / file).string());
        CHECK(model.input_dtype(0) == DType::int64);
        CHECK(model.input_dtype(1) == DType::boolean);
        const auto out = model.run({{"ids", ids}, {"mask", mask}});
        check_close(out.at("logits"), load_npy(kText / "tiny_text_logits.npy"));
        check_close(out.at("attention"), load_npy(kText / "tiny_text_attention.npy"));
        // the same at batch 1 (the dynamic batch): the first row
        std::vector<std::int64_t> id1(ids.data<std::int64_t>(), ids.data<std::int64_t>() + 7);
        const Tensor one = model.run({{"ids", Tensor(graft::Shape{1, 7}, id1)}, {"mask", Tensor(graft::Shape{1, 7}, mask.data<bool>(), 7)}})
                               .at("logits");
        const auto ref = load_npy(kText / "tiny_text_logits.npy").values();
        check_close(one, Tensor(graft::Shape{1, 3}, std::vector<float>(ref.begin(), ref.begin() + 3)));
    }
}

TEST_CASE("onnx text: graft run reads int64 and bool .npy by their dtype and refuses a lossy one", "[onnx][dtypes][cli]") {
    TempDir tmp;
    const auto ok = graft_test::run_cli({"run", (kText / "tiny_text_op13.onnx").string(), "--input",
                                         "ids=" + (kText / "tiny_text_ids.npy").string(), "--input",
                                         "mask=" + (kText / "tiny_text_mask.npy").string(), "--output-dir", (tmp / "o").string()});
    INFO(ok.err);
    REQUIRE(ok.exit_code == 0);
    check_close(load_npy(tmp / "o" / "logits.npy"), load_npy(kText / "tiny_text_logits.npy"));

    const auto inspect = graft_test::run_cli({"inspect", (kText / "tiny_text_op13.onnx").string()});
    CHECK_THAT(inspect.out, Catch::Contains("Input  ids: [?, 7] int64") && Catch::Contains("Input  mask: [?, 7] bool"));

    std::vector<float> frac(21, 1.f);
    frac[4] = 2.5f;
    xt::dump_npy((tmp / "frac.npy").string(), xt::adapt(frac, std::vector<std::size_t>{3, 7}));
    const auto bad = graft_test::run_cli({"run", (kText / "tiny_text_op13.onnx").string(), "--input", "ids=" + (tmp / "frac.npy").string(),
                                          "--input", "mask=" + (kText / "tiny_text_mask.npy").string(), "--print"});
    CHECK(bad.exit_code != 0);
    CHECK_THAT(bad.err, Catch::Contains("input 'ids'") && Catch::Contains("int64") && Catch::Contains("2.5"));
}

}  // namespace graft_test_onnx_text
