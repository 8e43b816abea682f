// The host API: dynamic batch, concurrent sessions, and typed errors for bad model files.
#include <catch2/catch.hpp>

#include <set>
#include <thread>

#include "graft/frontend/keras.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_api {

using namespace graft_test;

namespace {

/// Rows [begin, end) of a tensor along its first (batch) dimension.
graft::Tensor rows(const graft::Tensor& t, std::int64_t begin, std::int64_t end) {
    graft::Shape s = t.shape();
    const auto per = static_cast<std::size_t>(t.size() / static_cast<std::size_t>(s[0]));
    s[0] = end - begin;
    return graft::Tensor(s, t.data() + per * static_cast<std::size_t>(begin), per * static_cast<std::size_t>(end - begin));
}

const fs::path kShared = source_path("tests/fixtures/keras/functional_shared_layer");

}  // namespace

TEST_CASE("api: the batch is free; every batch size matches the reference", "[api]") {
    auto model = graft::load((kShared / "model.h5").string());
    REQUIRE(model.num_inputs() == 2);
    REQUIRE(model.num_outputs() == 2);
    REQUIRE(model.input_shape(0)[0] == graft::kDynamic);
    std::vector<graft::Tensor> in, ref;
    for (std::size_t i = 0; i < model.num_inputs(); ++i) in.push_back(load_npy(kShared / ("input_" + model.input_name(i) + ".npy")));
    for (std::size_t i = 0; i < model.num_outputs(); ++i) ref.push_back(load_npy(kShared / ("output_" + model.output_name(i) + ".npy")));
    const std::int64_t n = in[0].shape()[0];
    REQUIRE(n >= 2);
    for (auto [b, e] : {std::pair<std::int64_t, std::int64_t>{0, n}, {0, 1}, {1, n}, {0, n}}) {
        auto out = model.run(std::vector<graft::Tensor>{rows(in[0], b, e), rows(in[1], b, e)});
        for (std::size_t i = 0; i < out.size(); ++i) {
            auto c = compare(out[i], rows(ref[i], b, e), 1e-5, 1e-5);
            INFO("rows " << b << ".." << e << " output " << model.output_name(i) << " max err " << c.max_abs_err);
            REQUIRE(c.ok());
        }
    }
}

TEST_CASE("api: sessions on one model run in parallel", "[api]") {
    auto model = graft::load((kShared / "model.h5").string());
    std::map<std::string, graft::Tensor> in;
    for (std::size_t i = 0; i < model.num_inputs(); ++i)
        in.emplace(model.input_name(i), load_npy(kShared / ("input_" + model.input_name(i) + ".npy")));
    const auto ref = load_npy(kShared / ("output_" + model.output_name(0) + ".npy"));
    std::vector<int> ok(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            auto session = model.session();
            bool all = true;
            for (int k = 0; k < 50; ++k) all = all && compare(session.run(in).at(model.output_name(0)), ref, 1e-5, 1e-5).ok();
            ok[static_cast<std::size_t>(t)] = all;
        });
    for (auto& th : threads) th.join();
    REQUIRE(ok == std::vector<int>(4, 1));
}

TEST_CASE("api: a profiling session times each operator and still computes the reference", "[api][profile]") {
    auto model = graft::load((kShared / "model.h5").string());
    std::map<std::string, graft::Tensor> in;
    for (std::size_t i = 0; i < model.num_inputs(); ++i)
        in.emplace(model.input_name(i), load_npy(kShared / ("input_" + model.input_name(i) + ".npy")));
    const auto ref = load_npy(kShared / ("output_" + model.output_name(0) + ".npy"));
    auto session = model.session();
    session.run(in);
    REQUIRE(session.profile().empty());  // off by default
    session.set_profiling(true);
    for (int k = 0; k < 3; ++k) REQUIRE(compare(session.run(in).at(model.output_name(0)), ref, 1e-5, 1e-5).ok());
    session.set_profiling(false);
    session.run(in);  // not counted
    const auto profile = session.profile();
    REQUIRE(!profile.empty());
    std::set<std::string> names;
    for (const auto& p : profile) {
        INFO(p.type << " " << p.name);
        REQUIRE(p.runs == 3);
        REQUIRE(p.seconds >= 0);
        REQUIRE(!p.type.empty());
        REQUIRE(names.insert(p.type + " " + p.name).second);  // one entry per operator
    }
    // Every operator of the optimized graph that does work is there (Reshape-like ones may be
    // elided views, so at least the Linear ones of the model's Dense layers).
    std::size_t linear = 0;
    for (const auto& p : profile) linear += p.type == "Linear";
    std::size_t graph_linear = 0;
    for (const auto* op : model.graph().operators()) graph_linear += op->type() == "Linear";
    REQUIRE(linear == graph_linear);
    REQUIRE(linear > 0);
    session.set_profiling(true);  // turning it on again starts afresh
    REQUIRE(session.profile().empty());
}

TEST_CASE("api: a batch run in slices gives Keras' predictions for every input and output", "[api][batch_slice]") {
    auto model = graft::load((kShared / "model.h5").string());
    std::vector<graft::Tensor> in, ref;
    for (std::size_t i = 0; i < model.num_inputs(); ++i) in.push_back(load_npy(kShared / ("input_" + model.input_name(i) + ".npy")));
    for (std::size_t i = 0; i < model.num_outputs(); ++i) ref.push_back(load_npy(kShared / ("output_" + model.output_name(i) + ".npy")));
    const std::int64_t n = in[0].shape()[0];
    REQUIRE(n >= 2);
    CHECK(model.batch_slice() == 0);
    CHECK_THROWS_AS(model.set_batch_slice(-2), graft::Error);
    // On 2 threads, slices of 1 run side by side (one per thread, an arena each); slices of n - 1
    // (one whole slice and the rest) one at a time.
    for (int threads : {1, 2})
    for (std::int64_t slice : {std::int64_t{1}, n - 1, std::int64_t{-1}}) {
        model.set_batch_slice(slice);
        model.set_threads(threads);
        auto session = model.session();
        const graft::BatchPlan plan = session.batch_plan(in);
        INFO("batch_slice " << slice << " on " << threads << " threads: " << plan.mixing);
        CHECK(plan.batch == n);
        CHECK(plan.mixing.empty());  // two Dense branches sharing a layer: per sample
        CHECK(plan.slice == (slice > 0 ? slice : n));
        const auto out = session.run(in);
        for (std::size_t i = 0; i < out.size(); ++i) {
            CHECK(out[i].shape() == ref[i].shape());
            CHECK(compare(out[i], ref[i], 1e-5, 1e-5).ok());
        }
    }
    model.set_batch_slice(0);
    model.set_threads(1);
    CHECK(model.session().batch_plan({rows(in[0], 0, 1), rows(in[1], 0, 1)}).slice == 1);  // batch 1: nothing to slice
}

TEST_CASE("api: weights kept off huge pages give Keras' predictions", "[api]") {
    graft::LoadOptions o;
    o.huge_pages = false;
    auto model = graft::load((kShared / "model.h5").string(), o);
    CHECK_FALSE(model.huge_pages());
    std::vector<graft::Tensor> in, ref;
    for (std::size_t i = 0; i < model.num_inputs(); ++i) in.push_back(load_npy(kShared / ("input_" + model.input_name(i) + ".npy")));
    for (std::size_t i = 0; i < model.num_outputs(); ++i) ref.push_back(load_npy(kShared / ("output_" + model.output_name(i) + ".npy")));
    const auto out = model.run(in);
    REQUIRE(out.size() == ref.size());
    for (std::size_t i = 0; i < out.size(); ++i) CHECK(compare(out[i], ref[i], 1e-5, 1e-5).ok());
    CHECK(graft::load((kShared / "model.h5").string()).huge_pages());  // the default
}

TEST_CASE("api: inputs are checked by name and shape", "[api][errors]") {
    auto model = graft::load((kShared / "model.h5").string());
    auto x = load_npy(kShared / ("input_" + model.input_name(0) + ".npy"));
    REQUIRE_THROWS_AS(model.run(std::vector<graft::Tensor>{x}), graft::ShapeError);
    REQUIRE_THROWS_WITH(model.run({{model.input_name(0), x}}), Catch::Contains("'" + model.input_name(1) + "' is missing"));
    REQUIRE_THROWS_WITH(model.run(std::vector<graft::Tensor>{x, graft::Tensor({1, 999})}),
                        Catch::Contains("has shape [1, 999], expected"));
}

TEST_CASE("api: bad model files raise typed errors naming the file", "[api][errors]") {
    const fs::path bad = source_path("tests/fixtures/bad");
    auto path = [&](const char* f) { return (bad / f).string(); };
    REQUIRE_THROWS_AS(graft::load(path("truncated.h5")), graft::FormatError);
    REQUIRE_THROWS_AS(graft::load(path("not_hdf5.h5")), graft::FormatError);
    REQUIRE_THROWS_WITH(graft::load(path("not_hdf5.h5")), Catch::Contains("not_hdf5.h5") && Catch::Contains("not an HDF5 file"));
    REQUIRE_THROWS_AS(graft::load(path("bad_json.h5")), graft::FormatError);
    REQUIRE_THROWS_WITH(graft::load(path("missing_weight.h5")), Catch::Contains("dense_1/bias:0") && Catch::Contains("dense_1"));
    REQUIRE_THROWS_AS(graft::load(path("wrong_shape.h5")), graft::ShapeError);
    REQUIRE_THROWS_WITH(graft::load(path("wrong_shape.h5")), Catch::Contains("[5, 4]") && Catch::Contains("expected [5, 6]"));
    REQUIRE_THROWS_AS(graft::load(path("unknown_layer.h5")), graft::UnsupportedError);
    REQUIRE_THROWS_WITH(graft::load(path("unknown_layer.h5")),
                        Catch::Contains("FancyLayer") && Catch::Contains("OtherLayer") && Catch::Contains("plugin"));
    REQUIRE_THROWS_AS(graft::load(path("no_such_file.h5")), graft::IOError);
}

TEST_CASE("api: the pre-flight check lists every unknown layer without converting", "[api]") {
    auto findings = graft::keras::check(source_path("tests/fixtures/bad/unknown_layer.h5").string(), graft::default_registry());
    REQUIRE(findings.size() == 2);
    REQUIRE(findings[0].class_name == "FancyLayer");
    REQUIRE(findings[1].class_name == "OtherLayer");
    REQUIRE(findings[1].layer == "other_layer_1");
}

TEST_CASE("api: a registry without the Keras converters refuses every layer", "[api][registry]") {
    graft::Registry empty;
    graft::LoadOptions o;
    o.registry = &empty;
    REQUIRE_THROWS_WITH(graft::load((kShared / "model.h5").string(), o), Catch::Contains("cannot be converted") && Catch::Contains("Dense"));
}

}  // namespace graft_test_api
