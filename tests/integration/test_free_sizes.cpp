// Free sizes other than the batch (issue 15): Keras inputs saved with None in a sequence's length
// or an image's height and width. The numerical checks against tfjs at several sizes are in
// test_fixtures.cpp (the free_* fixtures' more_runs); here: the signature, one program per input
// shape (bounded), errors for sizes a model cannot take, the descriptor keeping the free sizes,
// and the layers that cannot take a free size refusing by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "backend/native/program.hpp"
#include "graft/backend/cpp.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_free_sizes {

namespace fs = std::filesystem;
using graft::kDynamic;
using graft::Shape;
using graft::Tensor;
using graft_test::fixture;
using graft_test::load_npy;
using graft_test::TempDir;

namespace {

Tensor filled(const Shape& s, float scale) {
    Tensor t(s);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = scale * static_cast<float>((i * 37) % 17) / 17.f - 0.5f;
    return t;
}

void check_fixture_run(const graft::Model& m, const std::string& name, const std::string& prefix) {
    const fs::path dir = fixture(name);
    const auto got = m.run({{"input_1", load_npy(dir / (prefix + "input_input_1.npy"))}});
    for (const auto& [out, t] : got) {
        const auto ref = load_npy(dir / (prefix + "output_" + out + ".npy"));
        const auto c = graft_test::compare(t, ref, 1e-5, 1e-5);
        INFO(name << " " << prefix << " output " << out << ": max abs error " << c.max_abs_err);
        CHECK(c.ok());
    }
}

/// A Keras JSON config (model.to_json()) of InputLayer(batch_shape) -> `layer`.
std::string one_layer_config(const std::string& batch_shape, const std::string& layer) {
    return R"({"class_name": "Model", "keras_version": "2.3.1", "backend": "tensorflow", "config": {"name": "m", "layers": [)"
           R"({"class_name": "InputLayer", "name": "input_1", "config": {"batch_input_shape": )" +
           batch_shape + R"(, "dtype": "float32", "name": "input_1"}, "inbound_nodes": []}, )" + layer +
           R"(], "input_layers": [["input_1", 0, 0]], "output_layers": [["l", 0, 0]]}})";
}

}  // namespace

TEST_CASE("free sizes: the signature keeps them, inspect-style", "[free_sizes]") {
    const auto m = graft::load(fixture("free_fcn_conv2d/model.h5").string());
    CHECK(m.input_shape(0) == Shape{kDynamic, kDynamic, kDynamic, 3});
    CHECK(graft::shape_str(m.input_shape(0)) == "[?, ?, ?, 3]");
    REQUIRE(m.num_outputs() == 4);
    CHECK(m.output_shape(0) == Shape{kDynamic, kDynamic, kDynamic, 5});  // the 1x1 conv's map follows the image
    CHECK(m.output_shape(1) == Shape{kDynamic, 2});                       // pooled: fixed but for the batch
    CHECK(m.output_shape(2) == Shape{kDynamic, kDynamic, kDynamic, 5});  // upsampled
    CHECK(m.output_shape(3) == Shape{kDynamic, kDynamic, kDynamic, 2});  // transposed convolution
    CHECK(graft::has_free_sizes(m.graph()));
    CHECK_FALSE(graft::has_free_sizes(graft::load(fixture("dense_sequential_input_layer/model.h5").string()).graph()));
}

TEST_CASE("free sizes: one program per input shape, at most kMaxValuePrograms kept, still right after eviction", "[free_sizes]") {
    const auto m = graft::load(fixture("free_seq_rnn/model.h5").string());
    auto session = m.session();
    std::size_t largest = 0;
    for (std::int64_t t = 1; t <= 40; ++t) {
        const auto out = session.run({filled({2, t, 4}, 1.f)});
        REQUIRE(out.size() == 2);
        CHECK(out[0].shape() == Shape{2, t, 5});
        CHECK(out[1].shape() == Shape{2, 2});
        largest = std::max(largest, session.arena_bytes());
        if (t <= static_cast<std::int64_t>(graft::Model::kMaxValuePrograms)) continue;
        // Past the bound, programs are dropped: the session's arenas stop growing in number.
        CHECK(session.arena_bytes() <= largest);
    }
    CHECK(session.arena_bytes() > 0);
    // Lengths 6, 3 and 11 were compiled, then evicted: recompiled, they give tfjs' answers again.
    for (const char* prefix : {"", "run1_", "run2_"}) check_fixture_run(m, "free_seq_rnn", prefix);
}

TEST_CASE("free sizes: a batch of sequences of one length, each row alone gives the same rows", "[free_sizes]") {
    const auto m = graft::load(fixture("free_seq_wrappers/model.h5").string());
    const Tensor x = filled({3, 7, 3}, 2.f);
    const auto all = m.run({x});
    for (std::int64_t r = 0; r < 3; ++r) {
        const Tensor row({1, 7, 3}, x.data() + r * 21, 21);
        const auto one = m.run({row});
        for (std::size_t o = 0; o < all.size(); ++o) {
            const std::size_t n = one[o].size();
            for (std::size_t k = 0; k < n; ++k) CHECK(one[o].data()[k] == Approx(all[o].data()[r * n + k]).margin(1e-6));
        }
    }
}

TEST_CASE("free sizes: sizes a model cannot take are refused, naming the layer and the sizes", "[free_sizes][errors]") {
    const auto m = graft::load(fixture("free_text_conv1d/model.h5").string());
    // Two steps: the 'same' stride-2 conv and the pooling leave 1, too few for conv1d_2's 'valid' kernel of 3.
    try {
        m.run({filled({1, 2}, 0.f)});
        FAIL("a 2-step sequence ran");
    } catch (const graft::ShapeError& e) {
        const std::string msg = e.what();
        INFO(msg);
        CHECK(msg.find("conv1d_2") != std::string::npos);
        CHECK(msg.find("'input_1' [1, 2]") != std::string::npos);
    }
    CHECK_THROWS_AS(m.run({filled({1, 0}, 0.f)}), graft::ShapeError);      // no steps at all
    CHECK_THROWS_AS(m.run({filled({1, 4, 1}, 0.f)}), graft::ShapeError);   // the wrong rank
    // The model still runs afterwards.
    CHECK(m.run({filled({2, 9}, 0.f)}).at(0).shape() == Shape{2, 3});
}

TEST_CASE("free sizes: a descriptor keeps them and runs every size like the .h5", "[free_sizes][descriptor]") {
    TempDir tmp;
    for (const char* name : {"free_seq_rnn", "free_text_conv1d", "free_fcn_conv2d", "free_seq_wrappers"}) {
        INFO(name);
        const auto h5 = graft::load(fixture(std::string(name) + "/model.h5").string());
        graft::descriptor::write(h5.graph(), h5.registry(), (tmp / name).string());
        const auto back = graft::load((tmp / name).string());
        CHECK(back.input_shape(0) == h5.input_shape(0));
        for (const char* prefix : {"", "run1_", "run2_"}) check_fixture_run(back, name, prefix);
    }
    // Two inputs, each with its own free sizes (numpy references): every run through the descriptor.
    for (const char* name : {"free_attention", "free_conv_lstm"}) {
        INFO(name);
        const auto h5 = graft::load(fixture(std::string(name) + "/model.h5").string());
        graft::descriptor::write(h5.graph(), h5.registry(), (tmp / name).string());
        const auto back = graft::load((tmp / name).string());
        const auto man = graft_test::read_manifest(fixture(name));
        std::vector<const rapidjson::Value*> runs{&man};
        for (const auto& r : man["more_runs"].GetArray()) runs.push_back(&r);
        for (const rapidjson::Value* run : runs) {
            std::map<std::string, Tensor> in;
            for (const auto& i : (*run)["inputs"].GetArray()) in[i["name"].GetString()] = load_npy(fixture(name) / i["file"].GetString());
            const auto got = back.run(in);
            for (const auto& o : (*run)["outputs"].GetArray()) {
                const auto c = graft_test::compare(got.at(o["name"].GetString()), load_npy(fixture(name) / o["file"].GetString()), 1e-5, 1e-5);
                INFO(o["file"].GetString() << ": max abs error " << c.max_abs_err);
                CHECK(c.ok());
            }
        }
    }
}

TEST_CASE("free sizes: generated C++ needs them fixed and says how", "[free_sizes][cpp][errors]") {
    const auto reg = graft::make_builtin_registry();
    const std::string h5 = fixture("free_seq_rnn/model.h5").string();
    graft::cpp::Options o;
    try {
        graft::cpp::generate_sources(graft::keras::convert(h5, *reg), *reg, o);
        FAIL("generated code with a free length");
    } catch (const graft::ShapeError& e) {
        const std::string msg = e.what();
        INFO(msg);
        CHECK(msg.find("'input_1' has a free size along T") != std::string::npos);
        CHECK(msg.find("--input-shape input_1=1x16x4") != std::string::npos);
    }
    o.input_shapes = {{"input_1", {3, 6, 4}}};
    const auto src = graft::cpp::generate_sources(graft::keras::convert(h5, *reg), *reg, o);
    bool found = false;
    for (const auto& [file, text] : src.files) found = found || text.find("{\"input_1\", 3, {3, 6, 4}, 72}") != std::string::npos;
    CHECK(found);
    o.input_shapes = {{"input_1", {3, 6, 5}}};  // a fixed size contradicted
    CHECK_THROWS_AS(graft::cpp::generate_sources(graft::keras::convert(h5, *reg), *reg, o), graft::ShapeError);
    o.input_shapes = {{"nope", {3, 6, 4}}};
    CHECK_THROWS_AS(graft::cpp::generate_sources(graft::keras::convert(h5, *reg), *reg, o), graft::ShapeError);
}

TEST_CASE("free sizes: layers that need fixed sizes refuse them by name", "[free_sizes][errors]") {
    TempDir tmp;
    struct Case {
        const char* shape;
        std::string layer, expect;
    };
    const std::vector<Case> cases = {
        {"[null, null, 4]", R"({"class_name": "Flatten", "name": "l", "config": {"name": "l"}, "inbound_nodes": [[["input_1", 0, 0, {}]]]})",
         "'l' (Flatten): flattening input 'input_1' NTC [?, ?, 4], whose size along T is free"},
        {"[null, null, 4]",
         R"({"class_name": "Reshape", "name": "l", "config": {"name": "l", "target_shape": [-1, 2]}, "inbound_nodes": [[["input_1", 0, 0, {}]]]})",
         "'l' (Reshape): reshaping input 'input_1' NTC [?, ?, 4], whose size along T is free"},
        {"[null, null, 5, 3]",
         R"({"class_name": "Softmax", "name": "l", "config": {"name": "l", "axis": [1, 2]}, "inbound_nodes": [[["input_1", 0, 0, {}]]]})",
         "a softmax over several axes, one of which"},
    };
    for (const auto& c : cases) {
        const fs::path p = tmp / "model.json";
        std::ofstream(p) << one_layer_config(c.shape, c.layer);
        graft::LoadOptions o;  // a model.to_json() file with a weights file (these layers read none)
        o.weights_path = fixture("free_seq_rnn/model.h5").string();
        try {
            graft::load(p.string(), o);
            FAIL("loaded " << c.layer);
        } catch (const graft::UnsupportedError& e) {
            const std::string msg = e.what();
            INFO(msg);
            CHECK(msg.find(c.expect) != std::string::npos);
        }
    }
}

TEST_CASE("free sizes: the programs of one model share their prepacked weights", "[free_sizes][memory]") {
    const auto m = graft::load(fixture("free_seq_rnn/model.h5").string());
    auto at = [&](std::int64_t n, std::int64_t t) {
        graft::Graph g = m.graph().clone();
        g.inputs()[0]->set_type(g.inputs()[0]->order(), {n, t, 4});
        graft::infer_shapes(g, m.registry());
        return g;
    };
    graft::native::PackCache packs;
    const auto p1 = graft::native::Program::compile(at(2, 6), m.registry(), &packs);
    const std::size_t blocks = packs.blocks();
    CHECK(blocks >= 3);  // LSTM W and R, GRU W and R, Dense W (some as panels, some as rows)
    // Other lengths: nothing new is packed. Batch 1 packs the single-row layouts once more.
    const auto p2 = graft::native::Program::compile(at(2, 11), m.registry(), &packs);
    const auto p3 = graft::native::Program::compile(at(2, 3), m.registry(), &packs);
    CHECK(packs.blocks() == blocks);
    const auto p4 = graft::native::Program::compile(at(1, 3), m.registry(), &packs);
    const std::size_t with_rows = packs.blocks();
    const auto p5 = graft::native::Program::compile(at(1, 9), m.registry(), &packs);
    CHECK(packs.blocks() == with_rows);
}

}  // namespace graft_test_free_sizes
