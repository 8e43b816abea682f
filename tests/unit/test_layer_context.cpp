// Tests for the Keras frontend's LayerContext (lib/frontend/keras/layer_context.cpp) as a wrapper
// (Bidirectional, TimeDistributed) makes it for the layer it wraps.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "frontend/keras/json_config.hpp"
#include "frontend/keras/layer_context.hpp"
#include "graft/error.hpp"
#include "graft/graft.hpp"

namespace graft_test_layer_context {

using Catch::Matchers::Equals;

namespace {

/// A wrapper layer's context with what a wrapped context takes from it.
class Outer final : public graft::LayerContext {
public:
    explicit Outer(const graft::Registry& r) : registry_(r) {}
    const std::string& frontend() const override { return frontend_; }
    const std::string& file() const override { return file_; }
    const std::string& layer_name() const override { return name_; }
    const std::string& class_name() const override { return class_; }
    const std::string& framework_version() const override { return version_; }
    const std::string& framework_backend() const override { return backend_; }
    const graft::Config& config() const override { return config_; }
    std::size_t num_inputs() const override { return 0; }
    const graft::Value& input(std::size_t) const override { fail_format("no inputs"); }
    void set_outputs(std::vector<graft::Value>) override {}
    std::size_t num_weights() const override { return 0; }
    const graft::WeightArray& weight(std::size_t) const override { fail_format("no weights"); }
    graft::Graph& graph() override { return graph_; }
    const graft::Registry& registry() const override { return registry_; }

private:
    const std::string frontend_ = "keras", file_ = "m.h5", name_ = "bidi", class_ = "Bidirectional", version_ = "2.3.1",
                      backend_ = "theano";
    graft::Config config_;
    graft::Graph graph_;
    const graft::Registry& registry_;
};

}  // namespace

TEST_CASE("A wrapped layer's context takes the wrapper's file and names it in errors") {
    const auto registry = graft::make_builtin_registry();
    Outer outer(*registry);
    rapidjson::Document d;
    d.Parse(R"({"units": "four", "name": "lstm"})");
    REQUIRE_FALSE(d.HasParseError());

    graft::keras::KerasLayerContext inner(outer, "bidi/forward_lstm", "LSTM", graft::keras::json_config(&d, "ignored"),
                                          {}, {});
    CHECK(inner.frontend() == "keras");
    CHECK(inner.file() == "m.h5");
    CHECK(inner.framework_version() == "2.3.1");
    CHECK(inner.framework_backend() == "theano");
    CHECK(inner.layer_name() == "bidi/forward_lstm");
    CHECK(inner.class_name() == "LSTM");
    CHECK(&inner.graph() == &outer.graph());
    CHECK(&inner.registry() == registry.get());
    CHECK_FALSE(inner.call_kwargs().has("mask"));
    CHECK(inner.config().get_string("name") == "lstm");
    CHECK_THROWS_WITH(inner.config().get_int("units"),
                      Equals("m.h5: layer 'bidi' (Bidirectional), wrapped layer (LSTM): config 'units' should be an "
                             "integer"));
    CHECK_THROWS_WITH(inner.input(0), Equals("m.h5: layer 'bidi/forward_lstm' (LSTM): asks for input 0 of 0"));
    CHECK_THROWS_WITH(inner.take_outputs(),
                      Equals("m.h5: layer 'bidi/forward_lstm' (LSTM): the converter handler produced no outputs"));
}

}  // namespace graft_test_layer_context
