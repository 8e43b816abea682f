// The generated C++ backend (graft/backend/cpp.hpp): every Keras fixture is generated as C++,
// compiled with the system compiler (-Wall -Wextra -Werror), run on the fixture's inputs and
// compared with the fixture's reference outputs (tfjs / numpy, never graft's own). Models are
// compiled in batches, several per translation unit (each in its own namespace), to keep the
// suite fast. Also: no warnings at -O2 under g++ and clang++, the weights file checks, embedded
// weights, the error for an op without an emitter, and `graft convert --backend cpp`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "graft/backend/cpp.hpp"
#include "graft/backend/cpp_emit.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_cpp_backend {

using namespace graft_test;

namespace {

constexpr std::size_t kModelsPerUnit = 10;

/// One fixture, generated.
struct Case {
    std::string name, ns;
    fs::path dir, out;                                   // fixture directory, generated files
    std::vector<std::string> input_files;                // .npy per model input, model order
    std::vector<std::string> output_names;               // model order
    std::map<std::string, std::string> reference;        // output name -> reference .npy
    double atol = 1e-5, rtol = 1e-5;
    std::string error;                                    // generation failed
};

/// Converts and generates every fixture into `root`/<case>/ (namespace m_<case>, fixed to the
/// shapes of the fixture's inputs).
std::vector<Case> generate_fixtures(const fs::path& root, const graft::Registry& reg, int opt_level = 2) {
    std::vector<Case> cases;
    for (const auto& dir : fixture_dirs()) {
        const auto man = read_manifest(dir);
        Case c;
        c.name = dir.filename().string();
        c.ns = "m_" + graft::cpp::identifier(c.name);
        c.dir = dir;
        c.out = root / c.name;
        c.atol = man["atol"].GetDouble();
        c.rtol = man["rtol"].GetDouble();
        try {
            graft::keras::Options ko;
            fs::path model = dir / man["model"].GetString();
            if (man.HasMember("config")) {
                ko.weights_path = model.string();
                model = dir / man["config"].GetString();
            }
            graft::Graph g = graft::keras::convert(model.string(), reg, ko);
            std::map<std::string, std::string> files;
            std::map<std::string, graft::Shape> shapes;  // the fixture's input shapes (free sizes fixed to them)
            for (const auto& in : man["inputs"].GetArray()) {
                files[in["name"].GetString()] = (dir / in["file"].GetString()).string();
                shapes[in["name"].GetString()] = load_npy(dir / in["file"].GetString()).shape();
            }
            for (std::size_t i = 0; i < g.inputs().size(); ++i) c.input_files.push_back(files.at(g.input_name(i)));
            for (std::size_t i = 0; i < g.outputs().size(); ++i) c.output_names.push_back(g.output_name(i));
            for (const auto& out : man["outputs"].GetArray())
                c.reference[out["name"].GetString()] = (dir / out["file"].GetString()).string();
            graft::cpp::Options o;
            o.name = "model";
            o.ns = c.ns;
            o.input_shapes = shapes;
            o.opt_level = opt_level;
            o.source = "tests/fixtures/keras/" + c.name;
            graft::cpp::generate(std::move(g), reg, o, c.out.string());
        } catch (const std::exception& e) {
            c.error = e.what();
        }
        cases.push_back(std::move(c));
    }
    return cases;
}

/// A test program running the given cases; outputs go to <case out>/run/<i>.npy.
std::string driver_source(const std::vector<const Case*>& cases) {
    std::string src = "#include \"driver.hpp\"\n";
    for (const Case* c : cases) src += "#include " + cstr((c->out / "model.cpp").string()) + "\n";
    src += "\nint main() {\n    int failures = 0;\n";
    for (const Case* c : cases) {
        std::string files;
        for (const auto& f : c->input_files) files += (files.empty() ? "" : ", ") + cstr(f);
        src += fmt::format("    failures += graft_driver::run_model<{0}::Session>({1}, {0}::kInputs, {0}::kOutputs, {{{2}}}, {3}, {4});\n",
                           c->ns, cstr(c->name), files, cstr((c->out / "run").string()), cstr((c->out / "model.weights").string()));
    }
    return src + "    return failures;\n}\n";
}

/// Compiles (two at a time) and runs one program per batch of cases.
void compile_and_run(const fs::path& root, const std::vector<const Case*>& cases, const std::string& flags) {
    std::vector<std::vector<const Case*>> units;
    for (std::size_t i = 0; i < cases.size(); i += kModelsPerUnit)
        units.emplace_back(cases.begin() + static_cast<std::ptrdiff_t>(i),
                           cases.begin() + static_cast<std::ptrdiff_t>(std::min(cases.size(), i + kModelsPerUnit)));
    std::vector<std::future<bool>> jobs;
    for (std::size_t u = 0; u < units.size(); ++u) {
        for (const Case* c : units[u]) fs::create_directories(c->out / "run");
        const fs::path src = root / fmt::format("unit{}.cpp", u), exe = root / fmt::format("unit{}", u);
        std::ofstream(src) << driver_source(units[u]);
        if (jobs.size() == 2) {  // two cores: two compilers at a time
            jobs.front().get();
            jobs.erase(jobs.begin());
        }
        jobs.push_back(std::async(std::launch::async, [=] {
            return sh(compile_cmd(cxx(), flags, src, exe), root / fmt::format("unit{}.compile.log", u)) &&
                   sh(shell_quote(exe.string()), root / fmt::format("unit{}.run.log", u));
        }));
    }
    for (auto& j : jobs) j.get();
    for (std::size_t u = 0; u < units.size(); ++u) {
        const auto clog = read_text(root / fmt::format("unit{}.compile.log", u));
        INFO("unit " << u << " (" << units[u].front()->name << " ...): compiler output:\n" << clog.substr(0, 4000));
        CHECK(fs::exists(root / fmt::format("unit{}", u)));
        const auto rlog = read_text(root / fmt::format("unit{}.run.log", u));
        INFO("run output:\n" << rlog.substr(0, 4000));
        CHECK(rlog.empty());
    }
}

/// Every graft_rt function and struct a generated model.cpp defines.
std::set<std::string> support_names(const fs::path& cpp) {
    std::set<std::string> names;
    static const std::regex def(R"(^(?:inline \S+ |struct |enum class )(\w+))");
    std::istringstream in(read_text(cpp));
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, def)) names.insert(m[1]);
    }
    return names;
}

/// One translation unit that includes fixtures covering every support section, for the -O2
/// warning checks.
fs::path coverage_unit(const fs::path& root, const std::vector<Case>& cases) {
    std::set<std::string> all, covered;
    std::map<const Case*, std::set<std::string>> names;
    for (const auto& c : cases)
        if (c.error.empty()) {
            names[&c] = support_names(c.out / "model.cpp");
            all.insert(names[&c].begin(), names[&c].end());
        }
    std::string src;
    while (covered.size() < all.size()) {  // greedy: the case adding most names first
        const Case* best = nullptr;
        std::size_t gain = 0;
        for (const auto& [c, n] : names) {
            std::size_t g = 0;
            for (const auto& s : n) g += !covered.count(s);
            if (g > gain) best = c, gain = g;
        }
        if (!best) break;
        covered.insert(names[best].begin(), names[best].end());
        src += "#include " + cstr((best->out / "model.cpp").string()) + "\n";
    }
    const fs::path unit = root / "coverage.cpp";
    std::ofstream(unit) << src;
    return unit;
}

}  // namespace

namespace {

/// Generates every fixture at optimization level `opt_level`, compiles, runs and compares.
void check_fixtures(int opt_level) {
    TempDir tmp;
    auto reg = registry_with_plugins();
    const auto cases = generate_fixtures(tmp.path(), *reg, opt_level);
    REQUIRE(cases.size() >= 70);
    std::vector<const Case*> ok;
    for (const auto& c : cases) {
        INFO("fixture " << c.name << ": " << c.error);
        CHECK(c.error.empty());
        if (c.error.empty()) ok.push_back(&c);
    }
    compile_and_run(tmp.path(), ok, "-O1");
    std::size_t compared = 0;
    for (const Case* c : ok) {
        for (std::size_t i = 0; i < c->output_names.size(); ++i) {
            const auto& name = c->output_names[i];
            if (!c->reference.count(name)) continue;
            INFO("fixture " << c->name << ", output " << name);
            const fs::path got_file = c->out / "run" / fmt::format("{}.npy", i);
            REQUIRE(fs::exists(got_file));
            const auto got = load_npy(got_file);
            const auto ref = load_npy(c->reference.at(name));
            const auto cmp = compare(got, ref, c->atol, c->rtol);
            INFO("shape " << graft::shape_str(got.shape()) << ", reference " << graft::shape_str(ref.shape()) << "; "
                          << cmp.num_off << " values off, first at " << cmp.first_off << ", max abs err " << cmp.max_abs_err);
            CHECK(cmp.ok());
            ++compared;
        }
    }
    fmt::print("cpp backend -O{}: {} fixtures generated, compiled and run; {} outputs compared\n", opt_level, ok.size(), compared);
    CHECK(compared >= ok.size());
}

/// Every fixture's generated code compiles at -O2 under `compiler` without a warning; skipped,
/// saying `missing`, where the compiler is not installed.
void check_no_warnings(const std::string& compiler, const std::string& missing) {
    if (!have(compiler)) {
        WARN(missing);
        return;
    }
    TempDir tmp;
    auto reg = registry_with_plugins();
    const auto unit = coverage_unit(tmp.path(), generate_fixtures(tmp.path(), *reg));
    const auto cmd = compile_cmd(compiler, "-O2 -march=native -c", unit, tmp / "coverage.o");
    INFO(cmd << "\n" << (sh(cmd, tmp / "log") ? "" : read_text(tmp / "log").substr(0, 4000)));
    CHECK(read_text(tmp / "log").empty());
    CHECK(fs::exists(tmp / "coverage.o"));
}

}  // namespace

TEST_CASE("cpp backend: every fixture, generated and compiled, matches its reference", "[cpp_backend][integration]") {
    check_fixtures(2);  // the optimized graph: fused activations, folded batch norms, packed weights
}

TEST_CASE("cpp backend: every fixture matches its reference at -O0 too", "[cpp_backend][integration]") {
    check_fixtures(0);  // every op as converted: Identity, BatchNormalization, Activation, more Transposes
}

TEST_CASE("cpp backend: generated code has no warnings at -O2 under g++", "[cpp_backend][integration]") {
    check_no_warnings("g++", "g++ not found: skipped");
}

TEST_CASE("cpp backend: generated code has no warnings at -O2 under clang++", "[cpp_backend][integration]") {
    check_no_warnings("clang++", "clang++ not found (apt-get install clang): the clang compile of the generated code is skipped");
}

TEST_CASE("cpp backend: weights file checks, embedded weights and the run() entry point", "[cpp_backend][integration]") {
    TempDir tmp;
    auto reg = graft::make_builtin_registry();
    const auto model = source_path("samples/models/iris/model.h5").string();
    const auto input = source_path("samples/models/iris/input.npy").string();
    const auto expected = load_npy(source_path("samples/models/iris/expected.npy"));  // tfjs' output
    const auto batch = expected.shape().at(0);
    for (bool embed : {false, true}) {
        graft::cpp::Options o;
        o.name = "iris";
        o.ns = embed ? "iris_embed" : "iris_file";
        o.batch = batch;
        o.embed_weights = embed;
        const auto r = graft::cpp::generate(graft::keras::convert(model, *reg), *reg, o, (tmp / o.ns).string());
        CHECK(r.ops >= 3);
        CHECK(fs::exists(tmp / o.ns / (embed ? "iris_weights.cpp" : "iris.weights")));
        CHECK_FALSE(fs::exists(tmp / o.ns / (embed ? "iris.weights" : "iris_weights.cpp")));
        const auto header = read_text(tmp / o.ns / "iris.hpp");
        CHECK(header.find(fmt::format("Batch size: {}, fixed when this code was generated", batch)) != std::string::npos);
    }
    // Broken copies of the weights file.
    const fs::path good = tmp / "iris_file" / "iris.weights";
    std::string bytes = read_text(good);
    REQUIRE(bytes.size() > 64);
    std::ofstream(tmp / "truncated.weights", std::ios::binary) << bytes.substr(0, bytes.size() - 4);
    std::string flipped = bytes;
    flipped[bytes.size() - 3] = static_cast<char>(flipped[bytes.size() - 3] ^ 0x40);
    std::ofstream(tmp / "flipped.weights", std::ios::binary) << flipped;
    std::string other = bytes;
    other[16] = static_cast<char>(other[16] ^ 1);  // the header's checksum: another model's file
    std::ofstream(tmp / "other.weights", std::ios::binary) << other;

    const std::string src = "#include \"driver.hpp\"\n#include " + cstr((tmp / "iris_file/iris.cpp").string()) +
                            "\n#include " + cstr((tmp / "iris_embed/iris.cpp").string()) + "\n#include " +
                            cstr((tmp / "iris_embed/iris_weights.cpp").string()) + "\n" + R"(
int main(int argc, char** argv) {
    if (argc < 4) return 2;
    const std::string out = argv[1];
    int f = graft_driver::run_model<iris_file::Session>("file", iris_file::kInputs, iris_file::kOutputs, {argv[2]}, out + "/file", argv[3]);
    f += graft_driver::run_model<iris_embed::Session>("embedded", iris_embed::kInputs, iris_embed::kOutputs, {argv[2]}, out + "/embed");
    for (int i = 4; i < argc; ++i) {
        try {
            iris_file::Session s(argv[i]);
            std::printf("accepted %s\n", argv[i]);
        } catch (const std::runtime_error& e) {
            std::printf("refused: %s\n", e.what());
        }
    }
    return f;
}
)";
    std::ofstream(tmp / "checks.cpp") << src;
    const auto cmd = compile_cmd(cxx(), "-O1", tmp / "checks.cpp", tmp / "checks");
    INFO(cmd);
    REQUIRE(sh(cmd, tmp / "compile.log"));
    fs::create_directories(tmp / "file");
    fs::create_directories(tmp / "embed");
    std::string run = shell_quote((tmp / "checks").string());
    for (const auto& a : {tmp.path().string(), input, good.string(), (tmp / "truncated.weights").string(),
                          (tmp / "flipped.weights").string(), (tmp / "other.weights").string(), (tmp / "missing.weights").string()})
        run += " " + shell_quote(a);
    const bool ran = sh(run, tmp / "run.log");
    const auto log = read_text(tmp / "run.log");
    INFO(log);
    CHECK(ran);
    for (const char* dir : {"file", "embed"}) {
        const auto got = load_npy(tmp / dir / "0.npy");
        const auto cmp = compare(got, expected, 1e-5, 1e-5);
        INFO(dir << ": max abs err " << cmp.max_abs_err);
        CHECK(cmp.ok());
    }
    CHECK(log.find("accepted") == std::string::npos);
    CHECK(log.find("truncated.weights': it has " + std::to_string(bytes.size() - 4) + " bytes, expected " + std::to_string(bytes.size())) !=
          std::string::npos);
    CHECK(log.find("flipped.weights': its contents have checksum") != std::string::npos);
    CHECK(log.find("other.weights': its header checksum is") != std::string::npos);
    CHECK(log.find("missing.weights': cannot open it") != std::string::npos);
}

TEST_CASE("cpp backend: an op without an emitter is an error at generation time", "[cpp_backend]") {
    graft::Registry reg;
    graft::OpSchema s;
    s.type = "Mystery";
    s.inputs = {"x"};
    s.infer = [](const graft::Operator& op) {
        const auto* x = op.input("x");
        return std::vector<std::pair<std::string, graft::TensorType>>{{"y", {x->order(), x->shape()}}};
    };
    reg.add_op(s);
    graft::Graph g;
    auto* x = g.add_variable("x", graft::DType::float32, graft::OrderNC, {graft::kDynamic, 4});
    g.add_input(x);
    g.add_output(graft::add_op(g, reg, "Mystery", "mystery_1", {{"x", x}})->output("y"));
    TempDir tmp;
    try {
        graft::cpp::generate(std::move(g), reg, graft::cpp::Options{}, (tmp / "out").string());
        FAIL("generated code for an op without an emitter");
    } catch (const graft::UnsupportedError& e) {
        const std::string m = e.what();
        INFO(m);
        CHECK(m.find("no C++ emitter for op type Mystery") != std::string::npos);
        CHECK(m.find("add_generator<graft::cpp::Backend>") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(tmp / "out"));
}

TEST_CASE("cpp backend: graft convert --backend cpp", "[cpp_backend][cli]") {
    TempDir tmp;
    const auto model = source_path("samples/models/iris/model.h5").string();
    auto r = run_cli({"convert", model, "--backend", "cpp", "--batch", "3", "--namespace", "flowers", "--name", "iris", "-o",
                                  (tmp / "gen").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    for (const char* f : {"iris.hpp", "iris.cpp", "iris.weights"}) CHECK(fs::exists(tmp / "gen" / f));
    const auto header = read_text(tmp / "gen" / "iris.hpp");
    CHECK(header.find("Batch size: 3,") != std::string::npos);
    CHECK(header.find("namespace flowers {") != std::string::npos);
    CHECK(header.find("void infer(const float* measurements, float* species);") != std::string::npos);

    r = run_cli({"convert", model, "--backend", "cpp", "--embed-weights", "-o", (tmp / "emb").string()});
    REQUIRE(r.exit_code == 0);
    CHECK(fs::exists(tmp / "emb" / "model_weights.cpp"));
    CHECK_FALSE(fs::exists(tmp / "emb" / "model.weights"));

    r = run_cli({"convert", model, "--backend", "wasm", "-o", (tmp / "x").string()});
    CHECK(r.exit_code == 2);
    CHECK_FALSE(fs::exists(tmp / "x"));
}

TEST_CASE("cpp backend: samples/generated builds with graft_generate_model and classifies", "[cpp_backend][cli]") {
    if (!have("cmake")) {
        WARN("cmake not found: skipped");
        return;
    }
    TempDir tmp;
    const auto q = [](const fs::path& p) { return shell_quote(p.string()); };
    const bool configured = sh(fmt::format("cmake -S {} -B {} -DGRAFT_EXECUTABLE={} -DCMAKE_BUILD_TYPE=Release", q(source_path("samples/generated")),
                                           q(tmp / "build"), q(GRAFT_CLI)),
                               tmp / "configure.log");
    INFO(read_text(tmp / "configure.log"));
    REQUIRE(configured);
    const bool built = sh("cmake --build " + q(tmp / "build"), tmp / "build.log");
    INFO(read_text(tmp / "build.log"));
    REQUIRE(built);
    REQUIRE(sh(q(tmp / "build" / "classify_iris") + " 6.5 3.0 5.8 2.2", tmp / "run.log"));
    const auto out = read_text(tmp / "run.log");
    INFO(out);
    CHECK(out.find("-> virginica") != std::string::npos);  // Iris row 105, held out (samples/models/iris/README.md)
}

TEST_CASE("cpp backend: every op type with a native generator has a C++ emitter", "[cpp_backend]") {
    auto reg = registry_with_plugins();
    std::size_t n = 0;
    for (const auto& [type, entry] : reg->generators().at("native").entries()) {
        INFO("op type " << type << " (registered by " << entry.owner.name << ")");
        CHECK(reg->find_generator<graft::cpp::Backend>(type));
        ++n;
    }
    CHECK(n >= 37);
}

}  // namespace graft_test_cpp_backend
