// Plugins: the samples (plugins/bias_layer, plugins/channel_swish) against the tfjs references of
// their fixtures, the CLI's --plugin / GRAFT_PLUGIN_PATH / `graft plugins`, every load error with
// deliberately broken plugins (tests/plugins/), registries' independence, idempotent loading and
// the rule that a library stays loaded exactly as long as something can still call into it.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graft/backend/native_kernel.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_plugins {

namespace fs = std::filesystem;
using graft_test::source_path;
using graft_test::TempDir;

namespace {

std::string plugin(const std::string& name) { return (fs::path(GRAFT_PLUGIN_DIR) / ("libgraft_" + name + ".so")).string(); }
std::string test_plugin(const std::string& name) { return (fs::path(GRAFT_TEST_PLUGIN_DIR) / ("lib" + name + ".so")).string(); }

const fs::path kBiasCase = source_path("tests/fixtures/keras/custom_bias_layer");
const fs::path kSwishCase = source_path("tests/fixtures/keras/custom_channel_swish");

/// Whether the dynamic loader has `path` loaded in this process (RTLD_NOLOAD never loads it).
bool is_loaded(const std::string& path) {
    void* h = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (h) dlclose(h);
    return h != nullptr;
}

/// Sets an environment variable for one scope, restoring the previous value after.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (old_) ::setenv(name_, old_->c_str(), 1);
        else ::unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

graft::Model load_with(const fs::path& model, const graft::Registry& reg) {
    graft::LoadOptions o;
    o.registry = &reg;
    return graft::load(model.string(), o);
}

/// Runs `model` on the fixture's inputs and checks every output against its reference.
void check_against_reference(const graft::Model& model, const fs::path& dir, const std::vector<std::string>& outputs,
                             const std::string& input_name, const std::string& input_file) {
    const auto got = model.run({{input_name, graft_test::load_npy(dir / input_file)}});
    for (const auto& out : outputs) {
        INFO("output " << out);
        REQUIRE(got.count(out) == 1);
        const auto ref = graft_test::load_npy(dir / ("output_" + out + ".npy"));
        const auto c = graft_test::compare(got.at(out), ref, 1e-5, 1e-5);
        INFO(c.num_off << " values off, max abs err " << c.max_abs_err);
        CHECK(c.ok());
    }
}

/// The PluginError (or RegistryError) message of load_plugin(path), checking the type.
template <class E>
std::string load_error(const std::string& path, graft::Registry& reg) {
    try {
        graft::load_plugin(path, reg);
    } catch (const E& e) {
        return e.what();
    }
    FAIL("loading " << path << " did not throw the expected error type");
    return {};
}

}  // namespace

TEST_CASE("plugins: BiasLayer converts only with its plugin, then matches the reference", "[plugins][integration]") {
    auto reg = graft::make_builtin_registry();
    try {
        load_with(kBiasCase / "model.h5", *reg);
        FAIL("a BiasLayer model converted without the plugin");
    } catch (const graft::UnsupportedError& e) {
        CHECK_THAT(e.what(), Catch::Contains("BiasLayer") && Catch::Contains("bias_layer_1") && Catch::Contains("--plugin"));
    }

    const auto rec = graft::load_plugin(plugin("bias_layer"), *reg);
    CHECK(rec.name == "bias_layer");
    CHECK(rec.version == "1.0.0");
    CHECK(rec.graft_version == graft::version_string());
    const auto model = load_with(kBiasCase / "model.h5", *reg);
    check_against_reference(model, kBiasCase, {"dense_2"}, "dense_1_input", "input_dense_1_input.npy");

    // The layer became the built-in BiasAdd, its weight a constant in OrderC.
    int bias_adds = 0;
    for (const auto& op : model.graph().operators()) {
        if (op->type() != "BiasAdd") continue;
        ++bias_adds;
        CHECK(op->layer() == "bias_layer_1");
        const graft::Variable* b = op->input("b");
        CHECK(b->is_constant());
        CHECK(b->order() == graft::OrderC);
        CHECK(b->shape() == graft::Shape{5});
    }
    CHECK(bias_adds == 1);
}

TEST_CASE("plugins: ChannelSwish brings its op, schema and kernel", "[plugins][integration]") {
    auto reg = graft::make_builtin_registry();
    CHECK(reg->find_op("ChannelSwish") == nullptr);
    graft::load_plugin(plugin("channel_swish"), *reg);
    REQUIRE(reg->find_op("ChannelSwish") != nullptr);
    REQUIRE(reg->find_generator<graft::native::Backend>("ChannelSwish"));
    CHECK(reg->find_generator<graft::native::Backend>("ChannelSwish").owner->name.find("channel_swish") != std::string::npos);

    const auto model = load_with(kSwishCase / "model.h5", *reg);
    check_against_reference(model, kSwishCase, {"channel_swish_1", "dense_1"}, "input_1", "input_input_1.npy");

    // Another batch size compiles again with the plugin's schema and kernel: sample 1 alone.
    const auto x = graft_test::load_npy(kSwishCase / "input_input_1.npy");
    const auto ref = graft_test::load_npy(kSwishCase / "output_channel_swish_1.npy");
    REQUIRE(x.shape().size() == 4);
    const std::size_t in_per = x.size() / static_cast<std::size_t>(x.shape()[0]);
    const std::size_t out_per = ref.size() / static_cast<std::size_t>(ref.shape()[0]);
    graft::Shape one = x.shape();
    one[0] = 1;
    graft::Tensor x1(one, std::vector<float>(x.data() + in_per, x.data() + 2 * in_per));
    const auto got = model.run(std::vector<graft::Tensor>{x1});
    REQUIRE(got.at(0).size() == out_per);
    double worst = 0;
    for (std::size_t i = 0; i < out_per; ++i) worst = std::max(worst, std::fabs(double(got.at(0).data()[i]) - ref.data()[out_per + i]));
    CHECK(worst <= 1e-5);
}

TEST_CASE("plugins: BiasAdd adds along a named axis in any memory order", "[plugins][ops]") {
    // x NCHW [N, 3, 2, 2] + b[c] along C (not the last axis), against an index-by-index loop.
    auto reg = graft::make_builtin_registry();
    graft::Graph g;
    auto* x = g.add_variable("x", graft::DType::float32, graft::OrderNCHW, {graft::kDynamic, 3, 2, 2});
    g.add_input(x);
    auto* b = g.add_constant("b", graft::OrderC, {3}, std::make_shared<const std::vector<float>>(std::vector<float>{0.5f, -2.f, 10.f}));
    graft::Attributes a;
    a.set("axis", graft::Axis::C);
    auto* op = graft::add_op(g, *reg, "BiasAdd", "bias", {{"x", x}, {"b", b}}, a);
    g.add_output(op->output("y"));
    graft::Model m(std::move(g), *reg);

    std::vector<float> in(2 * 3 * 2 * 2);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = 0.25f * static_cast<float>(i) - 3.f;
    const auto out = m.run(std::vector<graft::Tensor>{graft::Tensor({2, 3, 2, 2}, in)});
    const float bias[3] = {0.5f, -2.f, 10.f};
    for (std::size_t n = 0; n < 2; ++n)
        for (std::size_t c = 0; c < 3; ++c)
            for (std::size_t hw = 0; hw < 4; ++hw) {
                const std::size_t i = (n * 3 + c) * 4 + hw;
                CHECK(out.at(0).data()[i] == in[i] + bias[c]);
            }

    // A bias of the wrong length is a ShapeError naming the op.
    graft::Graph g2;
    auto* x2 = g2.add_variable("x", graft::DType::float32, graft::OrderNC, {graft::kDynamic, 4});
    auto* b2 = g2.add_constant("b", graft::OrderC, {3}, std::make_shared<const std::vector<float>>(3, 0.f));
    graft::Attributes a2;
    a2.set("axis", graft::Axis::C);
    CHECK_THROWS_WITH(graft::add_op(g2, *reg, "BiasAdd", "bias", {{"x", x2}, {"b", b2}}, a2),
                      Catch::Contains("BiasAdd 'bias'") && Catch::Contains("[4]"));
}

TEST_CASE("plugins: each broken plugin is a typed error naming the file, and changes nothing", "[plugins][errors]") {
    auto reg = graft::make_builtin_registry();
    const std::size_t ops = reg->ops().entries().size(), converters = reg->converters().entries().size();
    auto unchanged = [&] {
        CHECK(reg->plugins().empty());
        CHECK(reg->ops().entries().size() == ops);
        CHECK(reg->converters().entries().size() == converters);
    };
    TempDir tmp;

    SECTION("no such file") {
        CHECK_THAT(load_error<graft::PluginError>((tmp / "missing.so").string(), *reg),
                   Catch::Contains("missing.so") && Catch::Contains("no such file"));
    }
    SECTION("a directory") {
        CHECK_THAT(load_error<graft::PluginError>(tmp.path().string(), *reg), Catch::Contains("directory"));
    }
    SECTION("a text file named .so") {
        std::ofstream(tmp / "fake.so") << "this is not a shared object\n";
        CHECK_THAT(load_error<graft::PluginError>((tmp / "fake.so").string(), *reg),
                   Catch::Contains("fake.so") && Catch::Contains("not a loadable shared object") && Catch::Contains("not an ELF file"));
    }
    SECTION("a truncated shared object: the loader's own reason") {
        const auto real = graft_test::read_text(plugin("bias_layer"));
        std::ofstream(tmp / "truncated.so", std::ios::binary) << real.substr(0, 200);
        const auto msg = load_error<graft::PluginError>((tmp / "truncated.so").string(), *reg);
        CHECK_THAT(msg, Catch::Contains("truncated.so") && Catch::Contains("not a loadable shared object"));
        CHECK_THAT(msg, !Catch::Contains("not an ELF file"));  // it is one: dlopen says what is wrong
    }
    SECTION("no entry point") {
        CHECK_THAT(load_error<graft::PluginError>(test_plugin("test_no_entry"), *reg),
                   Catch::Contains("libtest_no_entry.so") && Catch::Contains("graft_plugin_entry") && Catch::Contains("GRAFT_PLUGIN"));
    }
    SECTION("ABI mismatch: found and expected; registration never runs (it would abort)") {
        const auto msg = load_error<graft::PluginError>(test_plugin("test_abi_mismatch"), *reg);
        CHECK_THAT(msg, Catch::Contains("libtest_abi_mismatch.so") && Catch::Contains("ABI version mismatch"));
        CHECK_THAT(msg, Catch::Contains("ABI version " + std::to_string(GRAFT_PLUGIN_ABI_VERSION + 1)) &&
                            Catch::Contains("expects " + std::to_string(GRAFT_PLUGIN_ABI_VERSION)));
    }
    SECTION("the right ABI version with headers of another layout") {
        CHECK_THAT(load_error<graft::PluginError>(test_plugin("test_bad_layout"), *reg),
                   Catch::Contains("libtest_bad_layout.so") && Catch::Contains("layout") && Catch::Contains("rebuild"));
    }
    SECTION("not graft's magic number") {
        CHECK_THAT(load_error<graft::PluginError>(test_plugin("test_bad_magic"), *reg),
                   Catch::Contains("libtest_bad_magic.so") && Catch::Contains("0x12345678") && Catch::Contains("0x47524654"));
    }
    SECTION("a converter key another plugin holds: RegistryError naming both, rolled back") {
        graft::load_plugin(plugin("bias_layer"), *reg);
        const auto msg = load_error<graft::RegistryError>(test_plugin("test_clash"), *reg);
        CHECK_THAT(msg, Catch::Contains("libtest_clash.so") && Catch::Contains("keras:BiasLayer") &&
                            Catch::Contains("already registered by plugin 'bias_layer'") && Catch::Contains("libgraft_bias_layer.so"));
        CHECK(reg->find_op("ClashOp") == nullptr);  // the op it added before failing is gone
        REQUIRE(reg->plugins().size() == 1);
        CHECK(reg->plugins()[0].name == "bias_layer");
        // bias_layer's handler is still the one in place, and still works.
        check_against_reference(load_with(kBiasCase / "model.h5", *reg), kBiasCase, {"dense_2"}, "dense_1_input",
                                "input_dense_1_input.npy");
    }
    SECTION("the same plugin without bias_layer loaded registers fine") {
        graft::load_plugin(test_plugin("test_clash"), *reg);
        CHECK(reg->find_op("ClashOp") != nullptr);
    }
    SECTION("a key graft holds") {
        const auto msg = load_error<graft::RegistryError>(test_plugin("test_builtin_clash"), *reg);
        CHECK_THAT(msg, Catch::Contains("libtest_builtin_clash.so") && Catch::Contains("keras:Dense") &&
                            Catch::Contains("already registered by graft"));
        unchanged();
    }
    SECTION("an exception in registration") {
        const auto msg = load_error<graft::PluginError>(test_plugin("test_throws"), *reg);
        CHECK_THAT(msg, Catch::Contains("libtest_throws.so") && Catch::Contains("deliberate failure in registration"));
        CHECK(reg->find_op("ThrowOp") == nullptr);
        unchanged();
    }
    SECTION("a non-std exception in registration") {
        CHECK_THAT(load_error<graft::PluginError>(test_plugin("test_throws_int"), *reg),
                   Catch::Contains("libtest_throws_int.so") && Catch::Contains("not a std::exception"));
        unchanged();
    }
    SECTION("another version of a loaded plugin") {
        graft::load_plugin(plugin("bias_layer"), *reg);
        CHECK_THAT(load_error<graft::PluginError>(test_plugin("test_bias_v2"), *reg),
                   Catch::Contains("libtest_bias_v2.so") && Catch::Contains("2.0.0") && Catch::Contains("1.0.0"));
        CHECK(reg->plugins().size() == 1);
    }
    if (reg->plugins().empty()) unchanged();
}

TEST_CASE("plugins: loading twice is harmless; registries are independent", "[plugins]") {
    auto a = graft::make_builtin_registry();
    auto b = graft::make_builtin_registry();
    graft::load_plugin(plugin("bias_layer"), *a);
    graft::load_plugin(plugin("bias_layer"), *a);  // the same file again
    TempDir tmp;
    fs::copy_file(plugin("bias_layer"), tmp / "copy_of_bias.so");
    const auto again = graft::load_plugin((tmp / "copy_of_bias.so").string(), *a);  // a copy: same name and version
    CHECK(a->plugins().size() == 1);
    CHECK(again.file == a->plugins()[0].file);  // the record of the first load

    CHECK(a->find_converter("keras", "BiasLayer") != nullptr);
    CHECK(b->find_converter("keras", "BiasLayer") == nullptr);
    CHECK(b->plugins().empty());
    CHECK_THROWS_AS(load_with(kBiasCase / "model.h5", *b), graft::UnsupportedError);
    check_against_reference(load_with(kBiasCase / "model.h5", *a), kBiasCase, {"dense_2"}, "dense_1_input", "input_dense_1_input.npy");

    // Both hold it; dropping one leaves the other working.
    graft::load_plugin(plugin("bias_layer"), *b);
    a.reset();
    check_against_reference(load_with(kBiasCase / "model.h5", *b), kBiasCase, {"dense_2"}, "dense_1_input", "input_dense_1_input.npy");
}

TEST_CASE("plugins: a library stays loaded while something can call into it, no longer", "[plugins]") {
    // A private copy, so that nothing else in this process holds the same library.
    TempDir tmp;
    const std::string so = (tmp / "libgraft_bias_private.so").string();
    fs::copy_file(plugin("bias_layer"), so);
    REQUIRE_FALSE(is_loaded(so));

    SECTION("the registry holds it; a copied handler entry holds it") {
        auto reg = graft::make_builtin_registry();
        graft::load_plugin(so, *reg);
        CHECK(is_loaded(so));
        auto entry = std::make_unique<graft::HandlerTable<graft::ConverterFn>::Entry>(
            reg->converters().entries().at("keras:BiasLayer"));
        reg.reset();
        CHECK(is_loaded(so));  // the copied handler can still be called
        entry.reset();
        CHECK_FALSE(is_loaded(so));
    }
    SECTION("a model holds it (its graph and kernels hold plugin code)") {
        auto reg = graft::make_builtin_registry();
        graft::load_plugin(so, *reg);
        auto model = std::make_unique<graft::Model>(load_with(kBiasCase / "model.h5", *reg));
        check_against_reference(*model, kBiasCase, {"dense_2"}, "dense_1_input", "input_dense_1_input.npy");
        reg.reset();  // allowed: the model is only destroyed from here on (graft.hpp)
        CHECK(is_loaded(so));
        model.reset();
        CHECK_FALSE(is_loaded(so));
    }
    SECTION("a failed load leaves nothing loaded") {
        auto reg = graft::make_builtin_registry();
        const std::string clash = (tmp / "libclash_private.so").string();
        fs::copy_file(test_plugin("test_throws"), clash);
        CHECK_THROWS_AS(graft::load_plugin(clash, *reg), graft::PluginError);
        CHECK_FALSE(is_loaded(clash));
    }
}

TEST_CASE("plugins: GRAFT_PLUGIN_PATH loads every .so of its directories", "[plugins]") {
    auto reg = graft::make_builtin_registry();
    {
        ScopedEnv env("GRAFT_PLUGIN_PATH", std::string("::") + GRAFT_PLUGIN_DIR + ":");  // empty entries are ignored
        const auto loaded = graft::load_plugins_from_env(*reg);
        std::vector<std::string> names;
        for (const auto& p : loaded) names.push_back(p.name);
        CHECK_THAT(names, Catch::VectorContains(std::string("bias_layer")) && Catch::VectorContains(std::string("channel_swish")));
        CHECK(reg->find_converter("keras", "BiasLayer") != nullptr);
        CHECK(reg->find_op("ChannelSwish") != nullptr);
        graft::load_plugins_from_env(*reg);  // again: nothing new, no error
        CHECK(reg->plugins().size() == loaded.size());
    }
    {
        ScopedEnv env("GRAFT_PLUGIN_PATH", "/nonexistent/graft/plugins");
        CHECK_THROWS_WITH(graft::load_plugins_from_env(*reg),
                          Catch::Contains("GRAFT_PLUGIN_PATH") && Catch::Contains("/nonexistent/graft/plugins"));
    }
    {
        ::unsetenv("GRAFT_PLUGIN_PATH");
        auto fresh = graft::make_builtin_registry();
        CHECK(graft::load_plugins_from_env(*fresh).empty());
    }
}

TEST_CASE("plugins: the graft tool with --plugin, GRAFT_PLUGIN_PATH and `graft plugins`", "[plugins][cli]") {
    const std::string model = (kBiasCase / "model.h5").string();
    const std::string input = "dense_1_input=" + (kBiasCase / "input_dense_1_input.npy").string();

    SECTION("run without the plugin: the pre-flight message") {
        const auto r = graft_test::run_cli({"run", model, "--input", input, "--output-dir", TempDir().path().string()});
        CHECK(r.exit_code == 1);
        REQUIRE(r.err_lines().size() == 1);
        CHECK_THAT(r.err, Catch::StartsWith("graft: error: ") && Catch::Contains("BiasLayer") && Catch::Contains("--plugin"));
    }
    SECTION("run with --plugin matches the reference") {
        TempDir out;
        const auto r = graft_test::run_cli({"run", model, "--plugin", plugin("bias_layer"), "--input", input, "--output-dir", out.path().string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const auto c = graft_test::compare(graft_test::load_npy(out / "dense_2.npy"),
                                           graft_test::load_npy(kBiasCase / "output_dense_2.npy"), 1e-5, 1e-5);
        CHECK(c.ok());
    }
    SECTION("run with GRAFT_PLUGIN_PATH") {
        ScopedEnv env("GRAFT_PLUGIN_PATH", GRAFT_PLUGIN_DIR);
        TempDir out;
        const auto r = graft_test::run_cli({"run", model, "--input", input, "--output-dir", out.path().string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(graft_test::compare(graft_test::load_npy(out / "dense_2.npy"), graft_test::load_npy(kBiasCase / "output_dense_2.npy"), 1e-5, 1e-5).ok());
    }
    SECTION("inspect takes --plugin too") {
        const auto r = graft_test::run_cli({"inspect", model, "--plugin", plugin("bias_layer")});
        INFO(r.err);
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::Contains("bias_layer_1") && Catch::Contains("BiasAdd"));
    }
    SECTION("a custom op survives convert to a descriptor and runs from it with its plugin") {
        TempDir out;
        const std::string desc = (out / "desc").string(), swish = plugin("channel_swish");
        const auto c = graft_test::run_cli({"convert", (kSwishCase / "model.h5").string(), "--plugin", swish, "-o", desc});
        INFO(c.err);
        REQUIRE(c.exit_code == 0);
        CHECK_THAT(graft_test::read_text(out / "desc" / "graph.json"), Catch::Contains("ChannelSwish"));
        const std::string in = "input_1=" + (kSwishCase / "input_input_1.npy").string();
        const auto without = graft_test::run_cli({"run", desc, "--input", in, "--output-dir", (out / "x").string()});
        CHECK(without.exit_code == 1);
        CHECK_THAT(without.err, Catch::Contains("ChannelSwish") && Catch::Contains("--plugin"));
        const auto r = graft_test::run_cli({"run", desc, "--plugin", swish, "--input", in, "--output-dir", (out / "y").string()});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        for (const std::string o : {"channel_swish_1", "dense_1"})
            CHECK(graft_test::compare(graft_test::load_npy(out / "y" / (o + ".npy")), graft_test::load_npy(kSwishCase / ("output_" + o + ".npy")),
                                      1e-5, 1e-5).ok());
    }
    SECTION("a broken plugin: one error line naming it, nothing written") {
        TempDir out;
        const auto r = graft_test::run_cli({"run", model, "--plugin", test_plugin("test_abi_mismatch"), "--input", input,
                                            "--output-dir", out.path().string()});
        CHECK(r.exit_code == 1);
        REQUIRE(r.err_lines().size() == 1);
        CHECK_THAT(r.err, Catch::Contains("libtest_abi_mismatch.so") && Catch::Contains("ABI version mismatch"));
        CHECK(fs::is_empty(out.path()));
    }
    SECTION("graft plugins lists what each plugin registers") {
        const auto r = graft_test::run_cli({"plugins", plugin("bias_layer"), "--plugin", plugin("channel_swish")});
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::Contains("bias_layer 1.0.0") && Catch::Contains("converter         keras:BiasLayer"));
        CHECK_THAT(r.out, Catch::Contains("channel_swish 1.0.0") && Catch::Contains("op type           ChannelSwish") &&
                              Catch::Contains("native generator  ChannelSwish") && Catch::Contains("keras:ChannelSwish"));
        CHECK_THAT(r.out, !Catch::Contains("keras:Dense"));  // built-ins are not listed
    }
    SECTION("graft plugins DIR, and with nothing to list") {
        const auto r = graft_test::run_cli({"plugins", GRAFT_PLUGIN_DIR});
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.out, Catch::Contains("bias_layer") && Catch::Contains("channel_swish"));
        ScopedEnv env("GRAFT_PLUGIN_PATH", "");
        const auto none = graft_test::run_cli({"plugins"});
        CHECK(none.exit_code == 0);
        CHECK_THAT(none.out, Catch::Contains("no plugins loaded"));
    }
}

extern "C" const graft_plugin_info* graft_test_static_bias_layer(void);
extern "C" const graft_plugin_info* graft_test_static_bad_layout(void);

TEST_CASE("plugins: a plugin compiled into the program registers statically, with the same checks", "[plugins]") {
    auto reg = graft::make_builtin_registry();
    const auto rec = graft::register_static_plugin(&graft_test_static_bias_layer, *reg);
    CHECK(rec.name == "bias_layer");
    CHECK(rec.file == "static");
    REQUIRE(reg->find_plugin("bias_layer") != nullptr);
    check_against_reference(load_with(kBiasCase / "model.h5", *reg), kBiasCase, {"dense_2"}, "dense_1_input",
                            "input_dense_1_input.npy");
    // The same plugin again is no change; another registry is independent.
    CHECK(graft::register_static_plugin(&graft_test_static_bias_layer, *reg).file == "static");
    CHECK(graft::make_builtin_registry()->find_plugin("bias_layer") == nullptr);

    // Headers of another layout are refused before registration runs (it would abort), by name.
    try {
        graft::register_static_plugin(&graft_test_static_bad_layout, *reg);
        FAIL("a plugin of another layout registered");
    } catch (const graft::PluginError& e) {
        CHECK_THAT(e.what(), Catch::Contains("static plugin 'bad_layout'") && Catch::Contains("layout"));
    }
    CHECK(reg->find_plugin("bad_layout") == nullptr);
    CHECK_THROWS_AS(graft::register_static_plugin(nullptr, *reg), graft::PluginError);
}

}  // namespace graft_test_plugins
