// The graft tool on good input: run (named and positional inputs, --output-dir, --output, --print),
// inspect (summary and DOT), convert (IR JSON) and --version.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "graft/version.hpp"
#include "support.hpp"

namespace graft_test_cli {

using namespace graft_test;

namespace {

const DenseFixture kDense;

std::vector<std::string> file_names(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

void check_matches_reference(const fs::path& got, const fs::path& ref) {
    INFO(got << " against " << ref);
    const auto c = compare(load_npy(got), load_npy(ref), 1e-5, 1e-5);
    INFO(c.num_off << " values off, max abs err " << c.max_abs_err);
    CHECK(c.ok());
}

}  // namespace

TEST_CASE("cli: --version prints the library version", "[cli]") {
    const auto r = run_cli({"--version"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == std::string("graft ") + graft::version_string() + "\n");
}

TEST_CASE("cli: run writes one .npy per output, atomically", "[cli]") {
    TempDir tmp;
    SECTION("named input, --output-dir (created)") {
        const auto r =
            run_cli({"run", kDense.model, "--input", "dense_1_input=" + kDense.input, "--output-dir", (tmp / "out/a").string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(file_names(tmp / "out/a") == std::vector<std::string>{"dense_5.npy"});
        check_matches_reference(tmp / "out/a/dense_5.npy", kDense.dir / "output_dense_5.npy");
    }
    SECTION("positional input, --output FILE") {
        const auto r = run_cli({"run", kDense.model, "--input", kDense.input, "--output", (tmp / "y.npy").string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(file_names(tmp.path()) == std::vector<std::string>{"y.npy"});
        check_matches_reference(tmp / "y.npy", kDense.dir / "output_dense_5.npy");
    }
    SECTION("two inputs and two outputs") {
        const auto dir = fixture("functional_shared_layer");
        const auto r = run_cli(
            {"run", (dir / "model.h5").string(), "--input", "input_b=" + (dir / "input_input_b.npy").string(),
             "--input", "input_a=" + (dir / "input_input_a.npy").string(), "--output-dir", tmp.path().string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(file_names(tmp.path()) == std::vector<std::string>{"out_a.npy", "out_b.npy"});
        check_matches_reference(tmp / "out_a.npy", dir / "output_out_a.npy");
        check_matches_reference(tmp / "out_b.npy", dir / "output_out_b.npy");
    }
    SECTION("--print alone prints the outputs and writes nothing") {
        const auto r = run_cli({"run", kDense.model, "--input", kDense.input, "--print"});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::StartsWith("dense_5 [3, 3]\n"));
        CHECK_THAT(r.out, Catch::Contains("top-3: "));
        CHECK(fs::is_empty(tmp.path()));
    }
}

TEST_CASE("cli: inspect prints a per-layer summary and writes DOT", "[cli]") {
    TempDir tmp;
    const auto r = run_cli({"inspect", kDense.model, "--dot", (tmp / "g.dot").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    for (const char* layer :
         {"dense_1 ", "dense_5 ", "Layers: 5 ", "Input  dense_1_input: [?, 5]", "Output dense_5: [?, 3]"})
        CHECK_THAT(r.out, Catch::Contains(layer));
    CHECK_THAT(read_text(tmp / "g.dot"), Catch::StartsWith("digraph graft {") && Catch::EndsWith("}\n"));
}

TEST_CASE("cli: convert writes a descriptor: the IR as JSON, weights apart", "[cli]") {
    TempDir tmp;
    const auto r = run_cli({"convert", kDense.model, "-o", (tmp / "ir/").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    rapidjson::Document doc;
    doc.Parse(read_text(tmp / "ir/graph.json").c_str());
    REQUIRE_FALSE(doc.HasParseError());
    CHECK(std::string(doc["graft_version"].GetString()) == graft::version_string());
    CHECK(std::string(doc["inputs"][0]["name"].GetString()) == "dense_1_input");
    CHECK(std::string(doc["outputs"][0]["name"].GetString()) == "dense_5");
    CHECK(doc["operators"].Size() >= 5);
    for (const auto& v : doc["variables"].GetArray()) {
        CHECK(v.HasMember("shape"));
        CHECK_FALSE(v.HasMember("data"));
    }
    CHECK(file_names(tmp / "ir") == std::vector<std::string>{"graph.json", "weights.bin"});
}

TEST_CASE("cli: bench --profile names the operators and the time per type", "[cli][profile]") {
    const auto text = run_cli({"bench", kDense.model, "--input", kDense.input, "--iters", "3", "--profile", "2"});
    INFO(text.err);
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("per operator:") != std::string::npos);
    CHECK(text.out.find("the 2 slowest") != std::string::npos);
    CHECK(text.out.find("per operator type:") != std::string::npos);
    CHECK(text.out.find("Linear") != std::string::npos);

    const auto json = run_cli({"bench", kDense.model, "--input", kDense.input, "--iters", "3", "--profile", "1", "--json"});
    REQUIRE(json.exit_code == 0);
    rapidjson::Document d;
    d.Parse(json.out.c_str());
    REQUIRE(!d.HasParseError());
    REQUIRE(d.HasMember("profile"));
    REQUIRE(d["profile"].IsArray());
    REQUIRE(d["profile"].Size() >= 1);  // every operator, whatever N
    for (const auto& op : d["profile"].GetArray()) {
        CHECK(op["type"].IsString());
        CHECK(op["name"].IsString());
        CHECK(op["ms"].GetDouble() >= 0);
    }
    CHECK(run_cli({"bench", kDense.model, "--input", kDense.input, "--profile", "-1"}).exit_code == 2);
}

TEST_CASE("cli: bench --profile times an operator per run when the batch runs in slices", "[cli][profile][batch_slice]") {
    // One slice per sample: every operator runs once per slice, and its time per run is the sum
    // over the slices (it was one slice's, so the types' shares of the run summed to 1 / slices).
    const auto text = run_cli({"bench", kDense.model, "--input", kDense.input, "--iters", "3", "--batch-slice", "1",
                               "--profile", "50"});
    INFO(text.out << text.err);
    REQUIRE(text.exit_code == 0);
    REQUIRE(text.out.find("in slices of 1") != std::string::npos);
    const std::size_t types = text.out.find("per operator type:");
    REQUIRE(types != std::string::npos);
    std::istringstream lines(text.out.substr(types));
    std::string line;
    std::getline(lines, line);
    double shares = 0;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        double ms = 0, share = 0;
        fields >> ms >> share;
        shares += share;
    }
    CHECK(shares == Approx(100.0).margin(1.0));
}

TEST_CASE("cli: bench --json counts a recurrent matrix once per time step in the weights a run reads", "[cli]") {
    // The fixture's five LSTMs (tests/fixtures/gen/cases/recurrent.js) run 5 steps with 3, 4, 2, 3
    // and 2 units: recurrent matrices of u x 4u floats, 168 in all, read 4 times more than once.
    const fs::path dir = fixture("rnn_lstm");
    const auto r = run_cli({"bench", (dir / "model.h5").string(), "--input", (dir / "input_input_1.npy").string(),
                            "--iters", "1", "--json"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    REQUIRE(!d.HasParseError());
    const double extra = (d["weight_read_mb"].GetDouble() - d["weight_mb"].GetDouble()) * 1048576.0;
    CHECK(extra == Approx(4 * 168 * 4.0).epsilon(1e-6));
    // A model without recurrent layers reads its weights once.
    const auto dense = run_cli({"bench", kDense.model, "--input", kDense.input, "--iters", "1", "--json"});
    REQUIRE(dense.exit_code == 0);
    d.Parse(dense.out.c_str());
    REQUIRE(!d.HasParseError());
    CHECK(d["weight_read_mb"].GetDouble() == d["weight_mb"].GetDouble());
}

TEST_CASE("cli: --no-huge-pages keeps the weights on ordinary pages, with the same results", "[cli]") {
    TempDir tmp;
    const auto r = run_cli({"run", kDense.model, "--input", kDense.input, "--no-huge-pages", "--output", (tmp / "y.npy").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    check_matches_reference(tmp / "y.npy", kDense.dir / "output_dense_5.npy");
    CHECK(run_cli({"bench", kDense.model, "--input", kDense.input, "--iters", "2", "--no-huge-pages"}).exit_code == 0);
}

TEST_CASE("cli: --batch-slice runs a batch a slice at a time, with the same results", "[cli][batch_slice]") {
    TempDir tmp;
    // Three samples in slices of 2: a full slice and the rest, against Keras' predictions.
    const auto r = run_cli({"run", kDense.model, "--input", kDense.input, "--batch-slice", "2", "--output", (tmp / "y.npy").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    check_matches_reference(tmp / "y.npy", kDense.dir / "output_dense_5.npy");
    const auto bench = run_cli({"bench", kDense.model, "--input", kDense.input, "--iters", "2", "--batch-slice", "1"});
    INFO(bench.err);
    REQUIRE(bench.exit_code == 0);
    CHECK_THAT(bench.out, Catch::Contains("runs the batch in slices of 1"));
    const auto whole = run_cli({"bench", kDense.model, "--input", kDense.input, "--iters", "2", "--batch-slice", "-1", "--json"});
    REQUIRE(whole.exit_code == 0);
    CHECK_THAT(whole.out, Catch::Contains("\"slice\":3"));
    CHECK(run_cli({"bench", kDense.model, "--input", kDense.input, "--batch-slice", "-2"}).exit_code == 2);
}

}  // namespace graft_test_cli
