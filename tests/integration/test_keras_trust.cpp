// The Keras frontend's trust features and file forms beyond the fixtures' outputs: the pre-flight
// check (every refused layer or option at once), refused recurrent options, graft::verify and the
// CLI's verify / run --verify / inspect --check / --config, and .keras archives (limits, broken
// archives, no temporary file left behind).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "frontend/keras/h5_file.hpp"
#include "frontend/keras/keras_zip.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/graft.hpp"
#include "graft/verify.hpp"
#include "support.hpp"

namespace graft_test_keras_trust {

using namespace graft_test;

namespace {

const fs::path kFx = fixture();

/// The model_config of a fixture's model.h5 with the first `n` occurrences of `from` replaced,
/// written as a model.to_json() file (the .h5 then serves as the weights file).
fs::path edited_config(const TempDir& dir, const std::string& fixture, const std::string& from, const std::string& to, int n) {
    auto file = graft::h5::File::open((kFx / fixture / "model.h5").string());
    std::string cfg = file.string_attribute("/", "model_config").value();
    for (int i = 0; i < n; ++i) {
        auto at = cfg.find(from);
        REQUIRE(at != std::string::npos);
        cfg.replace(at, from.size(), to);
    }
    const fs::path out = dir / "config.json";
    std::ofstream(out) << cfg;
    return out;
}

/// A fixture whose config is edited as edited_config does, weights from its model.h5.
struct EditedFixture {
    TempDir dir;
    fs::path config;
    graft::keras::Options options;

    EditedFixture(const std::string& fixture, const std::string& from, const std::string& to, int n)
        : config(edited_config(dir, fixture, from, to, n)) {
        options.weights_path = (kFx / fixture / "model.h5").string();
    }
    /// The pre-flight check of the edited model.
    graft::keras::CheckReport check() const {
        return graft::keras::check_model(config.string(), graft::default_registry(), options);
    }
};

std::map<std::string, graft::Tensor> npys(const fs::path& dir, std::initializer_list<std::pair<const char*, const char*>> files) {
    std::map<std::string, graft::Tensor> m;
    for (auto& [name, file] : files) m[name] = load_npy(dir / file);
    return m;
}

}  // namespace

TEST_CASE("keras: stateful recurrent layers are refused, all of them at once, with their names", "[keras][check]") {
    // rnn_lstm: lstm_1 and lstm_2 read the input directly, lstm_5 reads lstm_1.
    const EditedFixture fx("rnn_lstm", "\"stateful\": false", "\"stateful\": true", 2);
    const auto r = fx.check();
    REQUIRE(r.findings.size() == 2);
    CHECK(r.findings[0].layer == "lstm_1");
    CHECK(r.findings[1].layer == "lstm_2");
    CHECK(r.findings[0].message.find("stateful") != std::string::npos);
    CHECK(r.unchecked.size() == 2);  // lstm_5 after lstm_1; lstm2_y_h_c after lstm_2
    graft::LoadOptions lo;
    lo.weights_path = fx.options.weights_path;
    REQUIRE_THROWS_AS(graft::load(fx.config.string(), lo), graft::UnsupportedError);
    REQUIRE_THROWS_WITH(graft::load(fx.config.string(), lo),
                        Catch::Contains("2 layers cannot be converted") && Catch::Contains("'lstm_1' (LSTM)") &&
                            Catch::Contains("'lstm_2' (LSTM)") && Catch::Contains("stateful"));
}

TEST_CASE("keras: unsupported wrapped layers and options inside nested models are named by path", "[keras][check]") {
    // nested_models: the BatchNormalization inside sequential_1 becomes an unknown class.
    const auto r = EditedFixture("nested_models", "\"BatchNormalization\"", "\"FancyNorm\"", 1).check();
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].layer == "sequential_1/batch_normalization_1");
    CHECK(r.findings[0].class_name == "FancyNorm");

    // time_distributed: a wrapped layer whose class has no handler.
    const auto r2 = EditedFixture("time_distributed", "\"class_name\": \"Conv2D\"", "\"class_name\": \"FancyConv\"", 1).check();
    REQUIRE(r2.findings.size() == 1);
    CHECK(r2.findings[0].layer == "time_distributed_2");
    CHECK(r2.findings[0].message.find("FancyConv") != std::string::npos);
}

TEST_CASE("keras: a supported model passes the pre-flight check", "[keras][check]") {
    const auto r = graft::keras::check_model((kFx / "nested_models" / "model.h5").string(), graft::default_registry());
    CHECK(r.findings.empty());
    CHECK(r.unchecked.empty());
    CHECK(r.layers == 11);  // 4 outer (2 of them models) + 3 in sequential_1 + 4 in model_2 (sequential_2, its 2, dense_5)
}

TEST_CASE("verify: the model reproduces its reference pair, and a wrong pair is reported", "[verify]") {
    const fs::path dir = kFx / "rnn_sigmoid_stack";
    const auto model = graft::load((dir / "model.h5").string());
    const auto in = npys(dir, {{"input_1", "input_input_1.npy"}});
    auto expected = npys(dir, {{"lstm_1", "output_lstm_1.npy"}, {"time_distributed_1", "output_time_distributed_1.npy"}});
    auto r = graft::verify(model, in, expected);
    REQUIRE(r.ok);
    REQUIRE(r.outputs.size() == 2);
    CHECK(r.outputs[0].max_abs_err < 1e-5);

    expected["lstm_1"].data()[3] += 1e-3f;
    r = graft::verify(model, in, expected);
    REQUIRE_FALSE(r.ok);
    CHECK(r.outputs[0].num_off == 1);
    CHECK(r.outputs[0].first_off == 3);
    CHECK(r.outputs[1].ok);
    CHECK(r.str().find("lstm_1 [3, 2]: 1 of 6 values off") != std::string::npos);

    r = graft::verify(model, in, {{"no_such_output", expected["lstm_1"]}});
    REQUIRE_FALSE(r.ok);
    CHECK(r.outputs[0].problem.find("no output of this name") != std::string::npos);
    CHECK_FALSE(graft::verify(model, in, {}).ok);  // nothing checked is no pass
}

TEST_CASE("cli: verify, run --verify, inspect --check and --config", "[cli][verify]") {
    const fs::path dir = kFx / "rnn_sigmoid_stack";
    auto ok = run_cli({"verify", (dir / "model.h5").string(), "--manifest", (dir / "manifest.json").string()});
    CHECK(ok.exit_code == 0);
    CHECK(ok.out.find("verify: OK, 2 outputs match") != std::string::npos);

    // A manifest whose expected lstm_1 is another model's output of the same shape.
    TempDir t;
    std::ofstream(t / "manifest.json") << R"({"inputs": [{"name": "input_1", "file": ")" << (dir / "input_input_1.npy").string()
                                       << R"("}], "outputs": [{"name": "lstm_1", "file": ")"
                                       << (kFx / "bidirectional_merge_modes" / "output_subtract_1.npy").string() << R"("}]})";
    auto bad = run_cli({"verify", (dir / "model.h5").string(), "--manifest", (t / "manifest.json").string()});
    CHECK(bad.exit_code == 1);
    CHECK(bad.out.find("lstm_1 [3, 2]: ") != std::string::npos);
    CHECK(bad.err.find("does not reproduce the reference outputs") != std::string::npos);
    auto run = run_cli({"run", (dir / "model.h5").string(), "--verify", (t / "manifest.json").string(), "--input",
                        (dir / "input_input_1.npy").string(), "--output-dir", (t / "out").string()});
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("fails its check") != std::string::npos);
    CHECK_FALSE(fs::exists(t / "out"));
    auto run_ok = run_cli({"run", (dir / "model.h5").string(), "--verify", (dir / "manifest.json").string(), "--input",
                           (dir / "input_input_1.npy").string(), "--output-dir", (t / "out2").string()});
    CHECK(run_ok.exit_code == 0);
    CHECK(fs::exists(t / "out2" / "lstm_1.npy"));

    auto check_bad = run_cli({"inspect", "--check", source_path("tests/fixtures/bad/unknown_layer.h5").string()});
    CHECK(check_bad.exit_code == 1);
    CHECK(check_bad.out.find("unsupported: layer 'fancy_layer_1' (FancyLayer)") != std::string::npos);
    CHECK(check_bad.out.find("unsupported: layer 'other_layer_1' (OtherLayer)") != std::string::npos);
    auto check_ok = run_cli({"inspect", "--check", (kFx / "gen_dotkeras_nested" / "model.keras").string()});
    CHECK(check_ok.exit_code == 0);
    CHECK(check_ok.out.find("can be converted") != std::string::npos);

    const fs::path w = kFx / "file_weights_only";
    auto cfg = run_cli({"run", "--config", (w / "config.json").string(), "--weights", (w / "model_weights.h5").string(),
                        "--input", (w / "input_input_1.npy").string(), "--print"});
    CHECK(cfg.exit_code == 0);
    auto positional = run_cli({"run", (w / "config.json").string(), "--weights", (w / "model_weights.h5").string(), "--input",
                               (w / "input_input_1.npy").string(), "--print"});
    CHECK(positional.exit_code == 0);
    CHECK(positional.out == cfg.out);
    auto no_weights = run_cli({"run", "--config", (w / "config.json").string(), "--print"});
    CHECK(no_weights.exit_code == 1);
    CHECK(no_weights.err.find("needs --weights") != std::string::npos);
}

TEST_CASE("keras zip: limits, broken archives, and no temporary file left behind", "[keras][zip]") {
    const fs::path good = kFx / "gen_dotkeras_wrappers" / "model.keras";
    REQUIRE(graft::keras::is_zip_file(good.string()));
    REQUIRE_FALSE(graft::keras::is_zip_file((kFx / "rnn_lstm" / "model.h5").string()));

    graft::keras::ZipLimits small;
    small.max_weights = 1000;  // the declared size is checked before anything is extracted
    REQUIRE_THROWS_WITH(graft::keras::read_keras_archive(good.string(), small),
                        Catch::Contains("model.weights.h5 declares") && Catch::Contains("more than the limit of 1000"));
    small = {};
    small.max_json = 10;
    REQUIRE_THROWS_WITH(graft::keras::read_keras_archive(good.string(), small), Catch::Contains("config.json declares"));

    TempDir t;
    {  // a truncated archive (the central directory is gone)
        std::ifstream in(good, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(t / "cut.keras", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    }
    REQUIRE_THROWS_AS(graft::load((t / "cut.keras").string()), graft::FormatError);

    // Loading extracts model.weights.h5 to TMPDIR and removes it at once.
    TempDir tmp;
    const char* old = std::getenv("TMPDIR");
    const std::string saved = old ? old : "";
    setenv("TMPDIR", tmp.path().c_str(), 1);
    auto model = graft::load(good.string());
    if (old) setenv("TMPDIR", saved.c_str(), 1);
    else unsetenv("TMPDIR");
    CHECK(fs::is_empty(tmp.path()));
    CHECK(model.num_outputs() == 2);
}

}  // namespace graft_test_keras_trust
