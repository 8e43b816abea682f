// Keras LocallyConnected1D/2D and ConvLSTM1D/2D configs and weights that do not fit: typed errors
// naming the layer and the field (the fixtures locally_connected1d/2d and conv_lstm2d with their
// config edited; the weights stay).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "frontend/keras/h5_file.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_keras_wild_layers {

using namespace graft_test;
using Catch::Matchers::Contains;

namespace {

/// Loads fixture `name` with the first occurrence of `from` in its model_config replaced by `to`.
void load_edited(const std::string& name, const std::string& from, const std::string& to) {
    TempDir dir;
    const fs::path h5 = fixture() / name / "model.h5";
    std::string cfg = graft::h5::File::open(h5.string()).string_attribute("/", "model_config").value();
    const auto at = cfg.find(from);
    REQUIRE(at != std::string::npos);
    cfg.replace(at, from.size(), to);
    const fs::path json = dir.path() / "config.json";
    std::ofstream(json) << cfg;
    graft::LoadOptions o;
    o.weights_path = h5.string();
    graft::load(json.string(), o);
}

}  // namespace

TEST_CASE("keras LocallyConnected: same padding with implementation 1 is refused as Keras refuses it", "[keras][local]") {
    // lc1d_impl1_relu is the first layer with a padding
    CHECK_THROWS_WITH(load_edited("locally_connected1d", "\"padding\": \"valid\"", "\"padding\": \"same\""),
                      Contains("'lc1d_impl1_relu' (LocallyConnected1D)") && Contains("implementation 1"));
}

TEST_CASE("keras LocallyConnected: an implementation Keras does not have is unsupported", "[keras][local]") {
    CHECK_THROWS_AS(load_edited("locally_connected2d", "\"implementation\": 1", "\"implementation\": 4"),
                    graft::UnsupportedError);
    CHECK_THROWS_WITH(load_edited("locally_connected2d", "\"implementation\": 1", "\"implementation\": 4"),
                      Contains("'lc2d_impl1_relu' (LocallyConnected2D)") && Contains("implementation 4"));
}

TEST_CASE("keras LocallyConnected: a kernel of another implementation's layout is a shape error naming the weight",
          "[keras][local]") {
    // lc2d_impl2_same_s2 stores a dense kernel; read as implementation 3 it has the wrong shape
    CHECK_THROWS_AS(load_edited("locally_connected2d", "\"implementation\": 2", "\"implementation\": 3"),
                    graft::ShapeError);
    CHECK_THROWS_WITH(load_edited("locally_connected2d", "\"implementation\": 2", "\"implementation\": 3"),
                      Contains("'lc2d_impl2_same_s2' (LocallyConnected2D)") && Contains("kernel") &&
                          Contains("implementation 3"));
    // a kernel size the weights do not fit
    CHECK_THROWS_AS(load_edited("locally_connected1d", "\"kernel_size\": [3]", "\"kernel_size\": [4]"), graft::ShapeError);
}

TEST_CASE("keras LocallyConnected: a window larger than the input is a shape error", "[keras][local]") {
    CHECK_THROWS_WITH(load_edited("locally_connected1d", "\"kernel_size\": [3]", "\"kernel_size\": [11]"),
                      Contains("'lc1d_impl1_relu' (LocallyConnected1D)") && Contains("smaller than the kernel size"));
}

TEST_CASE("keras ConvLSTM: stateful is refused by name", "[keras][conv_lstm]") {
    CHECK_THROWS_AS(load_edited("conv_lstm2d", "\"stateful\": false", "\"stateful\": true"), graft::UnsupportedError);
    CHECK_THROWS_WITH(load_edited("conv_lstm2d", "\"stateful\": false", "\"stateful\": true"),
                      Contains("'clstm_seq_same' (ConvLSTM2D)") && Contains("stateful"));
}

TEST_CASE("keras ConvLSTM: kernels that do not fit the config are shape errors naming the weight", "[keras][conv_lstm]") {
    // clstm_seq_same has 3 filters: its (3, 3, 2, 12) kernel does not fit 4 filters
    CHECK_THROWS_AS(load_edited("conv_lstm2d", "\"filters\": 3", "\"filters\": 4"), graft::ShapeError);
    CHECK_THROWS_WITH(load_edited("conv_lstm2d", "\"filters\": 3", "\"filters\": 4"),
                      Contains("'clstm_seq_same' (ConvLSTM2D)") && Contains("kernel"));
    CHECK_THROWS_AS(load_edited("conv_lstm2d", "\"kernel_size\": [3, 3]", "\"kernel_size\": [3, 2]"), graft::ShapeError);
    CHECK_THROWS_AS(load_edited("conv_lstm2d", "\"padding\": \"same\"", "\"padding\": \"causal\""),
                    graft::UnsupportedError);
}

}  // namespace graft_test_keras_wild_layers
