// Every Keras fixture in tests/fixtures/keras/<case>/ (made with tfjs and h5py by
// tests/fixtures/regenerate.sh) loads with graft::load, runs, and matches tfjs' outputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_fixtures {

using namespace graft_test;

namespace {

std::string str(const rapidjson::Value& v, const char* key) { return v[key].GetString(); }

/// Runs `loaded` on one run's inputs (a manifest's, or one of its more_runs) and compares every
/// output; returns the largest absolute error.
double check_run(const graft::Model& loaded, const fs::path& dir, const rapidjson::Value& run, double atol, double rtol) {
    std::map<std::string, graft::Tensor> inputs;
    for (const auto& in : run["inputs"].GetArray())
        inputs[str(in, "name")] = load_npy(dir / str(in, "file"));
    const auto outputs = loaded.run(inputs);
    double worst = 0;
    for (const auto& out : run["outputs"].GetArray()) {
        const auto name = str(out, "name");
        INFO("output " << name << " (" << str(out, "file") << ")");
        REQUIRE(outputs.count(name) == 1);
        const auto& got = outputs.at(name);
        const auto ref = load_npy(dir / str(out, "file"));
        const auto c = compare(got, ref, atol, rtol);
        INFO("shape " << graft::shape_str(got.shape()) << ", reference " << graft::shape_str(ref.shape()));
        INFO(c.num_off << " values off, first at flat index " << c.first_off << ", max abs err " << c.max_abs_err);
        CHECK(c.ok());
        worst = std::max(worst, c.max_abs_err);
    }
    return worst;
}

void check_case(const fs::path& dir, const rapidjson::Document& man, int opt_level) {
    // A model.to_json() + save_weights() pair names the JSON as "config" and the weights as "model".
    graft::LoadOptions options;
    options.opt_level = opt_level;
    fs::path model = dir / str(man, "model");
    if (man.HasMember("config")) {
        options.weights_path = model.string();
        model = dir / str(man, "config");
    }
    const auto loaded = graft::load(model.string(), options);

    const double atol = man["atol"].GetDouble(), rtol = man["rtol"].GetDouble();
    double worst = check_run(loaded, dir, man, atol, rtol);
    // A model with free sizes: the same loaded model at other input sizes, then the first again
    // (its program compiled before the others must still be the one used for that shape).
    if (man.HasMember("more_runs")) {
        for (const auto& run : man["more_runs"].GetArray()) worst = std::max(worst, check_run(loaded, dir, run, atol, rtol));
        worst = std::max(worst, check_run(loaded, dir, man, atol, rtol));
    }
    fmt::print("fixture {:<34} -O{} max_abs_err={:.3g}\n", dir.filename().string(), opt_level, worst);
}

}  // namespace

TEST_CASE("fixtures: every Keras fixture matches its tfjs reference", "[fixtures][integration]") {
    const auto cases = fixture_dirs();
    // The fixtures are committed: none found means a broken checkout or a wrong path.
    REQUIRE_FALSE(cases.empty());
    for (const auto& dir : cases) {
        DYNAMIC_SECTION(dir.filename().string()) {
            const auto man = read_manifest(dir);
            if (man.HasMember("needs_plugin") && man["needs_plugin"].IsString())
                WARN("skipped " << dir.filename().string() << ": needs plugin " << man["needs_plugin"].GetString());
            else
                for (int level : {0, 2}) {  // unoptimized and fully optimized must both match
                    INFO("-O" << level);
                    check_case(dir, man, level);
                }
        }
    }
}

}  // namespace graft_test_fixtures
