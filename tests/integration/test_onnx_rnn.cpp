// ONNX's RNN, GRU and LSTM on fixtures of their own, never against graft's output: PyTorch
// exports (tests/fixtures/onnx/make_torch_rnn.py; torch's forward outputs are the reference) and
// single nodes with what exporters rarely emit (make_onnx_rnn.py: peepholes, clip, input_forget,
// sequence_lens, reverse, layout 1, activations, weights and states fed as model inputs; numpy's
// recurrence is the reference), at -O0 and -O2, threaded, and through the descriptor; refusals
// name the node and the attribute.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>
#include <string>

#include "graft/backend/descriptor.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_onnx_rnn {

namespace fs = std::filesystem;
using graft_test::load_npy;
using graft_test::source_path;

namespace {

const fs::path kFx = source_path("tests/fixtures/onnx/rnn");

/// Runs `model` (a file or descriptor) on tests/fixtures/onnx/rnn/<data>_<input name>.npy for every
/// model input and compares each output with <data>_<output name>.npy (|error| <= 1e-4).
void check_fixture(const fs::path& model, const std::string& data, const graft::LoadOptions& o = {}) {
    const auto m = graft::load(model.string(), o);
    std::map<std::string, graft::Tensor> in;
    for (std::size_t i = 0; i < m.num_inputs(); ++i)
        in.emplace(m.input_name(i), load_npy(kFx / (data + "_" + m.input_name(i) + ".npy")));
    const auto out = m.run(in);
    for (std::size_t k = 0; k < m.num_outputs(); ++k) {
        const std::string& name = m.output_name(k);
        INFO(model.filename().string() << " -O" << o.opt_level << " threads " << o.threads << ": output " << name);
        const auto c = graft_test::compare(out.at(name), load_npy(kFx / (data + "_" + name + ".npy")), 1e-4, 0);
        CHECK(c.same_shape);
        CHECK(c.max_abs_err <= 1e-4);
    }
}

/// The entries `items` of `t` along `axis`, in that order.
graft::Tensor pick(const graft::Tensor& t, std::size_t axis, const std::vector<std::int64_t>& items) {
    graft::Shape s = t.shape();
    std::size_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<std::size_t>(s[d]);
    for (std::size_t d = axis + 1; d < s.size(); ++d) inner *= static_cast<std::size_t>(s[d]);
    const auto len = static_cast<std::size_t>(s[axis]);
    std::vector<float> v;
    for (std::size_t o = 0; o < outer; ++o)
        for (auto i : items) {
            const float* p = t.data() + (o * len + static_cast<std::size_t>(i)) * inner;
            v.insert(v.end(), p, p + inner);
        }
    s[axis] = static_cast<std::int64_t>(items.size());
    return graft::Tensor(s, std::move(v));
}

std::string error_of(const std::string& file) {
    try {
        graft::onnx::convert((kFx / file).string(), graft::default_registry());
    } catch (const graft::Error& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("onnx rnn: PyTorch's LSTM, GRU and RNN exports match torch", "[onnx][recurrent]") {
    for (const char* name : {"lstm2bi_bf", "gru", "gru_bi_bf", "rnn_relu2"})
        for (int opset : {13, 17}) {
            const fs::path model = kFx / ("torch_" + std::string(name) + "_op" + std::to_string(opset) + ".onnx");
            graft::LoadOptions o;
            for (int level : {0, 2}) {
                o.opt_level = level;
                check_fixture(model, "torch_" + std::string(name), o);
            }
            o.threads = 2;
            check_fixture(model, "torch_" + std::string(name), o);
        }
}

TEST_CASE("onnx rnn: single nodes with peepholes, clip, sequence_lens, layout 1 match numpy", "[onnx][recurrent]") {
    for (const char* name : {"rnn_lstm_peepholes_reverse", "rnn_lstm_bidirectional_layout1", "rnn_gru_bidirectional_acts",
                             "rnn_gru_reverse_lbr_layout1", "rnn_rnn_bidirectional_leaky"}) {
        graft::LoadOptions o;
        for (int level : {0, 2}) {
            o.opt_level = level;
            check_fixture(kFx / (std::string(name) + ".onnx"), name, o);
        }
    }
}

TEST_CASE("onnx rnn: a converted LSTM survives the descriptor round trip", "[onnx][recurrent]") {
    const auto& reg = graft::default_registry();
    graft_test::TempDir dir;
    graft::descriptor::write(graft::onnx::convert((kFx / "rnn_lstm_peepholes_reverse.onnx").string(), reg), reg,
                             (dir / "d").string());
    check_fixture(dir / "d", "rnn_lstm_peepholes_reverse");
}

TEST_CASE("onnx rnn: an infinity in R gives NaN from the first step, as ONNX computes it", "[onnx][recurrent]") {
    // With no initial state the first step's h . R is 0 . R: zero for a finite R, which graft then
    // skips; an infinity makes it NaN, and graft must compute it.
    for (const char* name : {"rnn_lstm_inf_recurrent", "rnn_lstm_inf_recurrent_b1"})
        for (int threads : {1, 2}) {
            graft::LoadOptions o;
            o.threads = threads;
            const auto m = graft::load((kFx / (std::string(name) + ".onnx")).string(), o);
            const auto out = m.run({{"X", load_npy(kFx / (std::string(name) + "_X.npy"))}});
            for (const char* output : {"Y", "Y_h"}) {
                const graft::Tensor ref = load_npy(kFx / (std::string(name) + "_" + output + ".npy"));
                const graft::Tensor& got = out.at(output);
                INFO(name << " threads " << threads << ": output " << output);
                REQUIRE(got.shape() == ref.shape());
                std::size_t nans = 0, off = 0;
                for (std::size_t i = 0; i < ref.size(); ++i) {
                    const double g = got.at_double(i), r = ref.at_double(i);
                    nans += std::isnan(r) ? 1 : 0;
                    if (std::isnan(g) != std::isnan(r) || (!std::isnan(r) && std::fabs(g - r) > 1e-4)) ++off;
                }
                CHECK(nans > 0);
                CHECK(off == 0);
            }
        }
}

TEST_CASE("onnx rnn: what graft refuses is named with the node and the attribute", "[onnx][recurrent]") {
    CHECK_THROWS_AS(graft::onnx::convert((kFx / "bad_rnn_affine.onnx").string(), graft::default_registry()), graft::UnsupportedError);
    CHECK_THAT(error_of("bad_rnn_affine.onnx"), Catch::Contains("'bad_rnn_affine' (RNN (opset 14))") &&
                                                    Catch::Contains("activation 'Affine'") && Catch::Contains("'activations'"));
    CHECK_THAT(error_of("bad_rnn_lstm_g_h.onnx"), Catch::Contains("'bad_rnn_lstm_g_h' (LSTM (opset 14))") &&
                                                      Catch::Contains("g = Tanh and h = Relu"));
}

TEST_CASE("onnx rnn: PyTorch's dynamic-batch LSTM export matches torch", "[onnx][recurrent]") {
    // The zero initial states are built from Shape(x) (shape arithmetic on the batch, an Expand
    // that follows it) and sliced per layer along their first axis.
    for (int opset : {13, 17}) {
        const fs::path model = kFx / ("torch_lstm2bi_bf_op" + std::to_string(opset) + "_dyn.onnx");
        graft::LoadOptions o;
        for (int level : {0, 2}) {
            o.opt_level = level;
            check_fixture(model, "torch_lstm2bi_bf", o);
        }
        // Batches 1 and 3 made of torch's batch items: y's rows, h's and c's columns follow.
        const auto m = graft::load(model.string());
        for (const std::vector<std::int64_t>& items : {std::vector<std::int64_t>{1}, std::vector<std::int64_t>{1, 0, 1}}) {
            const auto out = m.run({{"x", pick(load_npy(kFx / "torch_lstm2bi_bf_x.npy"), 0, items)}});
            for (const auto& [name, axis] : {std::pair<std::string, std::size_t>{"y", 0}, {"h", 1}, {"c", 1}}) {
                INFO(model.filename().string() << ", batch " << items.size() << ": output " << name);
                const auto c = graft_test::compare(out.at(name), pick(load_npy(kFx / ("torch_lstm2bi_bf_" + name + ".npy")), axis, items), 1e-4, 0);
                CHECK(c.ok());
            }
        }
    }
}

}  // namespace graft_test_onnx_rnn
