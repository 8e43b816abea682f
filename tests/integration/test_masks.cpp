// Keras masks and call keywords at the model level: a mask reaching a layer that cannot honour it
// is refused with a message naming the layer; masked recurrent models and MultiHeadAttention's
// keyword inputs are covered by the fixtures (embedding_mask_zero_rnn, masking_lstm,
// mask_bidirectional_time_distributed, multi_head_attention) that test_fixtures.cpp runs.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "frontend/keras/h5_file.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_masks {

using Catch::Matchers::Contains;
using graft_test::load_npy;
using graft_test::source_path;

TEST_CASE("masks: Embedding mask_zero into Flatten is refused, naming the consumer", "[masks]") {
    const auto path = source_path("tests/fixtures/unsupported/embedding_mask_into_flatten/model.h5").string();
    CHECK_THROWS_AS(graft::load(path), graft::UnsupportedError);
    CHECK_THROWS_WITH(graft::load(path), Contains("'flatten_1' (Flatten)") && Contains("Keras mask") &&
                                             Contains("mask-aware consumers are SimpleRNN, LSTM and GRU"));
}

namespace {

/// Row i of a batch must not depend on the other rows: runs the 3-row fixture input of `fixture`
/// one row at a time and compares `output` with the reference rows.
void check_row_by_row(const std::string& fixture, const std::string& output) {
    const auto dir = source_path("tests/fixtures/keras/" + fixture);
    graft::Model model = graft::load((dir / "model.h5").string());
    const graft::Tensor x = load_npy(dir / "input_input_1.npy");
    const graft::Tensor ref = load_npy(dir / ("output_" + output + ".npy"));
    const std::size_t row = x.size() / 3, out_row = ref.size() / 3;
    for (std::size_t i = 0; i < 3; ++i) {
        graft::Tensor t({1, static_cast<std::int64_t>(row)}, x.data() + i * row, row);
        auto outs = model.run({{model.input_name(0), t}});
        const auto& y = outs.at(output);
        REQUIRE(y.size() == out_row);
        for (std::size_t j = 0; j < out_row; ++j) CHECK(y.data()[j] == Approx(ref.data()[i * out_row + j]).margin(1e-5));
    }
}

/// Loads fixture `name` with the first occurrence of `from` in its model_config replaced by `to`.
void load_edited(const std::string& name, const std::string& from, const std::string& to) {
    graft_test::TempDir dir;
    const auto h5 = source_path("tests/fixtures/keras/" + name + "/model.h5");
    std::string cfg = graft::h5::File::open(h5.string()).string_attribute("/", "model_config").value();
    const auto at = cfg.find(from);
    REQUIRE(at != std::string::npos);
    cfg.replace(at, from.size(), to);
    const auto json = dir.path() / "config.json";
    std::ofstream(json) << cfg;
    graft::LoadOptions o;
    o.weights_path = h5.string();
    graft::load(json.string(), o);
}

}  // namespace

TEST_CASE("masks: masked recurrent models run at any batch size with the reference on each row", "[masks]") {
    check_row_by_row("embedding_mask_zero_rnn", "gru_1");
}

TEST_CASE("masks: masks through Bidirectional and TimeDistributed give the reference on each row", "[masks]") {
    for (const char* out : {"bidi_lstm_concat", "bidi_gru_sum_last", "lstm_after_bidi", "gru_after_td"})
        check_row_by_row("mask_bidirectional_time_distributed", out);
}

TEST_CASE("masks: TimeDistributed refuses a mask Keras would flatten into a wrapped recurrent layer", "[masks]") {
    // Keras would hand the wrapped LSTM a (batch*time,) mask; graft names the layer instead.
    const std::string from = "\"layer\": {\"class_name\": \"Dense\"";
    const std::string to = "\"layer\": {\"class_name\": \"LSTM\"";
    CHECK_THROWS_AS(load_edited("mask_bidirectional_time_distributed", from, to), graft::UnsupportedError);
    CHECK_THROWS_WITH(load_edited("mask_bidirectional_time_distributed", from, to),
                      Contains("'td_dense' (TimeDistributed)") && Contains("Keras mask") && Contains("wrapped LSTM"));
}

}  // namespace graft_test_masks
