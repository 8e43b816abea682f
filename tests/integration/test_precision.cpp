// LoadOptions::precision = int8 and bf16 (cpu/gemm/qgemm.hpp) on whole models, against the
// independent references (tfjs, for the Keras fixtures and the shared bench kit's MLP and CNN):
// every fixture stays within a few percent of its outputs' range (bf16: one percent), the
// classifiers keep their top-1, and the answers are not fp32's where a layer certainly ran the
// reduced path. On a CPU
// without the instructions (AVX2 for int8, AVX-512 BF16 for bf16) the model must say it runs
// fp32, and match the references as tightly as ever.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "cpu/gemm/qgemm.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_precision {

using namespace graft_test;

namespace {

struct Outcome {
    double err = 0, range = 0;  // largest |int8 - reference|, largest |reference|
    bool differs = false;       // some output is not bit-identical to fp32's
};

/// Runs the fixture in `dir` at fp32 and at `lowp` on the manifest's inputs.
Outcome run_fixture(const fs::path& dir, const rapidjson::Document& man, graft::Precision lowp) {
    auto str = [](const rapidjson::Value& v, const char* key) { return std::string(v[key].GetString()); };
    graft::LoadOptions options;
    fs::path model = dir / str(man, "model");
    if (man.HasMember("config")) {
        options.weights_path = model.string();
        model = dir / str(man, "config");
    }
    const auto fp32 = graft::load(model.string(), options);
    options.precision = lowp;
    const auto reduced = graft::load(model.string(), options);
    CHECK(reduced.precision() == (graft::cpu::gemm::qgemm_fast(lowp) ? lowp : graft::Precision::fp32));
    std::map<std::string, graft::Tensor> inputs;
    for (const auto& in : man["inputs"].GetArray()) inputs[str(in, "name")] = load_npy(dir / str(in, "file"));
    const auto a = fp32.run(inputs), q = reduced.run(inputs);
    Outcome o;
    for (const auto& out : man["outputs"].GetArray()) {
        const auto name = str(out, "name");
        const auto ref = load_npy(dir / str(out, "file"));
        const auto& got = q.at(name);
        REQUIRE(got.shape() == ref.shape());
        for (std::size_t i = 0; i < ref.size(); ++i) {
            o.err = std::max(o.err, static_cast<double>(std::fabs(got.data()[i] - ref.data()[i])));
            o.range = std::max(o.range, static_cast<double>(std::fabs(ref.data()[i])));
            o.differs = o.differs || got.data()[i] != a.at(name).data()[i];
        }
    }
    return o;
}

/// Which fixtures the reduced precision reaches: `reached` when some layer may run it (Dense,
/// a recurrent layer, a convolution), `must_change` when one certainly does. A convolution runs
/// it only with patches of 32 taps or more (cpu/gemm/conv_kernel.cpp); most fixtures' are
/// smaller, so of the convolution-only fixtures conv2d_wide_patches (72 taps, no Dense) is the
/// one whose outputs must change.
struct Reach {
    bool reached = false, must_change = false;
};
Reach reach(const fs::path& dir, const rapidjson::Document& man) {
    if (man.HasMember("needs_plugin") && man["needs_plugin"].IsString()) return {};
    const std::string layers = read_text(dir / "manifest.json");
    auto has = [&](const char* layer) { return layers.find(layer) != std::string::npos; };
    for (const char* layer : {"\"Dense\"", "\"LSTM\"", "\"GRU\"", "\"SimpleRNN\""})
        if (has(layer)) return {true, true};
    if (has("\"Conv1D\"") || has("\"Conv2D\"")) return {true, dir.filename() == "conv2d_wide_patches"};
    return {};
}

void check_fixtures(graft::Precision lowp, double tolerance) {
    std::size_t n = 0;
    const bool fast = graft::cpu::gemm::qgemm_fast(lowp);
    for (const auto& dir : fixture_dirs()) {
        const auto man = read_manifest(dir);
        const Reach r = reach(dir, man);
        if (!r.reached) continue;
        DYNAMIC_SECTION(dir.filename().string()) {
            const Outcome o = run_fixture(dir, man, lowp);
            fmt::print("precision: {} {:<34} max_abs_err={:.3g} of range {:.3g}{}\n", graft::precision_name(lowp),
                       dir.filename().string(), o.err, o.range, fast ? "" : " (ran fp32)");
            if (fast) {
                CHECK(o.err <= tolerance * o.range + 1e-4);
                if (r.must_change) CHECK(o.differs);
            } else {
                CHECK(o.err <= 1e-4 * (1 + o.range));
            }
        }
        ++n;
    }
    CHECK(n >= 12);
}

/// A bench model of the shared kit (its references from tfjs) on 32 rows: every top-1 kept, max
/// error within `tolerance`.
void check_bench(const char* name, graft::Precision lowp, double tolerance) {
    const fs::path dir = fs::path(GRAFT_SHARED_DIR) / "bench/models" / name;
    if (!fs::exists(dir / "model.h5")) {
        WARN("skipped: " << dir << " is absent (the workplace's shared bench models)");
        return;
    }
    graft::LoadOptions options;
    options.precision = lowp;
    const auto model = graft::load((dir / "model.h5").string(), options);
    const auto got = model.run(std::vector<graft::Tensor>{load_npy(dir / "input_b32.npy")})[0];
    const auto ref = load_npy(dir / "output_b32.npy");
    REQUIRE(got.shape() == ref.shape());
    const std::size_t width = static_cast<std::size_t>(ref.shape().back()), rows = ref.size() / width;
    std::size_t agree = 0;
    double err = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        const float* g = got.data() + r * width;
        const float* f = ref.data() + r * width;
        agree += std::max_element(g, g + width) - g == std::max_element(f, f + width) - f;
        for (std::size_t j = 0; j < width; ++j) err = std::max(err, static_cast<double>(std::fabs(g[j] - f[j])));
    }
    fmt::print("precision: {} bench {}: top-1 agrees on {} of {} rows, max_abs_err={:.3g}\n",
               graft::precision_name(model.precision()), name, agree, rows, err);
    CHECK(agree == rows);
    CHECK(err <= tolerance);
}

}  // namespace

TEST_CASE("precision: int8 Keras fixtures with Dense, recurrent or convolution layers stay within 3% of their tfjs outputs' range", "[precision][integration]") {
    check_fixtures(graft::Precision::int8, 0.03);
}

TEST_CASE("precision: bf16 Keras fixtures with Dense, recurrent or convolution layers stay within 1% of their tfjs outputs' range", "[precision][integration]") {
    check_fixtures(graft::Precision::bf16, 0.01);
}

TEST_CASE("precision: the int8 bench MLP and CNN keep the reference's top-1 on 32 rows", "[precision][integration]") {
    check_bench("mlp", graft::Precision::int8, 0.05);
    check_bench("smallcnn", graft::Precision::int8, 0.05);
}

TEST_CASE("precision: the bf16 bench MLP and CNN keep the reference's top-1 on 32 rows", "[precision][integration]") {
    check_bench("mlp", graft::Precision::bf16, 0.02);
    check_bench("smallcnn", graft::Precision::bf16, 0.02);
}

TEST_CASE("precision: the CLI takes --precision fp32|int8|bf16 for run and bench, and refuses others", "[precision][cli]") {
    const fs::path dir = fixture("dense_sequential_input_layer");
    TempDir tmp;
    const std::string in = (dir / "input_input_1.npy").string(), model = (dir / "model.h5").string();
    const auto ok = run_cli({"run", model, "--input", in, "--output", (tmp.path() / "y.npy").string(), "--precision", "int8"});
    INFO(ok.err);
    CHECK(ok.exit_code == 0);
    CHECK(fs::exists(tmp.path() / "y.npy"));
    const auto bench = run_cli({"bench", model, "--input", in, "--iters", "2", "--json", "--precision", "int8"});
    CHECK(bench.exit_code == 0);
    rapidjson::Document j;
    j.Parse(bench.out.c_str());
    REQUIRE(!j.HasParseError());
    REQUIRE(j.HasMember("precision"));
    CHECK(std::string(j["precision"].GetString()) == (graft::cpu::gemm::qgemm_fast() ? "int8" : "fp32"));
    const auto bf = run_cli({"bench", model, "--input", in, "--iters", "2", "--json", "--precision", "bf16"});
    CHECK(bf.exit_code == 0);
    rapidjson::Document jb;
    jb.Parse(bf.out.c_str());
    REQUIRE(!jb.HasParseError());
    CHECK(std::string(jb["precision"].GetString()) == (graft::cpu::gemm::qgemm_fast(graft::Precision::bf16) ? "bf16" : "fp32"));
    const auto bad = run_cli({"run", model, "--input", in, "--print", "--precision", "fp16"});
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--precision") != std::string::npos);
}

}  // namespace graft_test_precision
