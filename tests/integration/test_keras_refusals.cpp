// Keras files from the wild that graft refuses by name in the pre-flight check (fixtures from
// tests/fixtures/gen/write_wild.py, laid out as the Keras that writes them): TensorFlow ops
// recorded as layers, quantization layers, stateful RNNs. Never a config-parse error. Also a
// file form that must keep working: a .keras name on an HDF5 file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "graft/frontend/keras.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_keras_refusals {

using Catch::Matchers::Contains;
using graft_test::source_path;

namespace {

std::string unsupported(const std::string& c) { return source_path("tests/fixtures/unsupported/" + c + "/model.h5").string(); }

/// (layer, class) of every finding of the pre-flight check.
std::vector<std::pair<std::string, std::string>> findings(const std::string& path) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& f : graft::keras::check(path, graft::default_registry())) out.emplace_back(f.layer, f.class_name);
    return out;
}

using Found = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("keras refusals: tf.keras 2.15 TFOpLambda / SlicingOpLambda layers are named, never a parse error", "[keras][check]") {
    const auto path = unsupported("tfop_lambda");
    CHECK(findings(path) == Found{{"tf.math.multiply", "TFOpLambda"},
                                  {"tf.__operators__.getitem", "SlicingOpLambda"},
                                  {"tf.math.subtract", "TFOpLambda"},
                                  {"tf.concat", "TFOpLambda"}});
    CHECK_THROWS_AS(graft::load(path), graft::UnsupportedError);
    CHECK_THROWS_WITH(graft::load(path), Contains("'tf.math.multiply' (TFOpLambda)") && Contains("tf.math.multiply") &&
                                             Contains("'tf.__operators__.getitem' (SlicingOpLambda)") &&
                                             Contains("TensorFlow ops") && Contains("plugin"));
    auto report = graft::keras::check_model(path, graft::default_registry());
    CHECK(report.unchecked == std::vector<std::string>{"dense_1"});
}

TEST_CASE("keras refusals: TensorFlowOpLayer names its TensorFlow op", "[keras][check]") {
    const auto path = unsupported("tensorflow_op_layer");
    CHECK(findings(path) == Found{{"tf_op_layer_Mul", "TensorFlowOpLayer"}});
    CHECK_THROWS_WITH(graft::load(path), Contains("'tf_op_layer_Mul' (TensorFlowOpLayer)") && Contains("op 'Mul'") &&
                                             Contains("plugin"));
}

TEST_CASE("keras refusals: QKeras and HGQ quantization layers say so", "[keras][check]") {
    const auto q = unsupported("quantized_qkeras");
    CHECK(findings(q) == Found{{"fc1", "QDense"}, {"relu1", "QActivation"}, {"fc2", "QDense"}});
    CHECK_THROWS_WITH(graft::load(q), Contains("quantization layer (QKeras)") && Contains("plugin"));
    const auto h = unsupported("quantized_hgq");
    CHECK(findings(h) == Found{{"h_quantize", "HQuantize"}, {"h_dense", "HDense"}});
    CHECK_THROWS_WITH(graft::load(h), Contains("quantization layer (HGQ)") && Contains("plugin"));
}

TEST_CASE("keras refusals: a stateful RNN says stateful", "[keras][check]") {
    const auto path = unsupported("stateful_lstm");
    CHECK(findings(path) == Found{{"lstm", "LSTM"}});
    CHECK_THROWS_AS(graft::load(path), graft::UnsupportedError);
    CHECK_THROWS_WITH(graft::load(path), Contains("'lstm' (LSTM)") && Contains("stateful"));
}

TEST_CASE("keras refusals: the CLI check lists the layers", "[keras][check][cli]") {
    auto r = graft_test::run_cli({"inspect", "--check", unsupported("tfop_lambda")});
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("unsupported: layer 'tf.concat' (TFOpLambda)") != std::string::npos);
    CHECK(r.err.find("model_config") == std::string::npos);
}

TEST_CASE("keras files from the wild: a .keras file that is really HDF5 reads as .h5", "[keras][zip]") {
    graft_test::TempDir tmp;
    const auto dir = source_path("tests/fixtures/keras/rnn_initial_states");
    const auto renamed = tmp.path() / "model.keras";
    std::filesystem::copy_file(dir / "model.h5", renamed);
    auto r = graft_test::run_cli({"verify", renamed.string(), "--manifest", (dir / "manifest.json").string()});
    INFO(r.out + r.err);
    CHECK(r.exit_code == 0);
}

TEST_CASE("keras refusals: Attention and AdditiveAttention over rank-2 inputs are refused, saying why", "[keras][check]") {
    // Keras 2 scores (batch, features) inputs across the batch; the fixture's outputs are that
    // numpy reference (gen/numpy_attention.py), kept for when graft can express it.
    const auto path = unsupported("attention_rank2");
    CHECK(findings(path) == Found{{"attention_rank2", "Attention"}, {"additive_rank2", "AdditiveAttention"}});
    CHECK_THROWS_AS(graft::load(path), graft::UnsupportedError);
    CHECK_THROWS_WITH(graft::load(path), Contains("'attention_rank2' (Attention)") && Contains("rank 2") &&
                                             Contains("(batch, batch) scores"));
}

}  // namespace graft_test_keras_refusals
