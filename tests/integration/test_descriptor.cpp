// The graft descriptor (graph.json + weights.bin): a round trip runs exactly like the original
// .h5 and rewrites byte-identical files; custom op types round-trip through the registry; every
// kind of damage is refused with its typed error; writing is atomic.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "graft/backend/descriptor.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_descriptor {

namespace fs = std::filesystem;
using namespace graft;
using graft_test::TempDir;

namespace {

/// A fixture's model.h5, loaded with `reg` (which the test then writes and reads descriptors with).
Model load_fixture(const std::string& name, const Registry& reg) {
    LoadOptions o;
    o.registry = &reg;
    return load((graft_test::fixture(name) / "model.h5").string(), o);
}

std::vector<fs::path> models() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(graft_test::fixture()))
        if (fs::exists(e.path() / "model.h5")) out.push_back(e.path() / "model.h5");
    for (const char* m : {"mlp", "smallcnn", "lstm"}) {
        fs::path p = fs::path(GRAFT_SHARED_DIR) / "bench/models" / m / "model.h5";
        if (fs::exists(p)) out.push_back(p);
    }
    for (const char* c : {"keras2c_example", "conv1d_k3_s2_d1_cf_same", "simple_lstm_th_keras_1"}) {
        fs::path p = fs::path(GRAFT_SHARED_DIR) / "corpus/keras-real" / c / "model.h5";
        if (fs::exists(p)) out.push_back(p);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<Tensor> random_inputs(const Model& m, std::int64_t batch) {
    std::vector<Tensor> in;
    unsigned s = 11;
    for (std::size_t i = 0; i < m.num_inputs(); ++i) {
        Shape sh = m.input_shape(i);
        for (std::size_t k = 0; k < sh.size(); ++k)
            if (sh[k] == kDynamic) sh[k] = k == 0 ? batch : 9;  // other free sizes (a sequence's length): 9
        Tensor t(sh);
        const graft::DType dt = m.input_dtype(i);  // integer inputs: small integers (as exact floats), bool: 0 / 1
        for (std::size_t k = 0; k < t.size(); ++k) {
            const unsigned r = (s = s * 1103515245u + 12345u) >> 16 & 0xff;
            t.data()[k] = dt == graft::DType::float32 ? float(r) / 64.f - 2.f : float(r % (dt == graft::DType::boolean ? 2 : 8));
        }
        in.push_back(std::move(t));
    }
    return in;
}

std::string bytes_of(const fs::path& p) { return graft_test::read_text(p); }

/// Rewrites dir/graph.json through `edit`.
void edit_json(const fs::path& dir, const std::function<void(rapidjson::Document&)>& edit) {
    rapidjson::Document d;
    d.Parse(bytes_of(dir / "graph.json").c_str());
    REQUIRE_FALSE(d.HasParseError());
    edit(d);
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    d.Accept(w);
    std::ofstream(dir / "graph.json", std::ios::binary | std::ios::trunc) << b.GetString();
}

rapidjson::Value& first_constant(rapidjson::Document& d) {
    for (auto& v : d["variables"].GetArray())
        if (v.HasMember("offset")) return v;
    FAIL("no constant");
    throw;
}

}  // namespace

TEST_CASE("descriptor: h5 -> descriptor -> load runs exactly like the h5, and rewrites identical bytes", "[descriptor][integration]") {
    auto reg = make_builtin_registry();
    LoadOptions o;
    o.registry = reg.get();
    std::size_t n = 0;
    for (const auto& path : models()) {
        std::unique_ptr<Model> h5;
        try {
            h5 = std::make_unique<Model>(load(path.string(), o));
        } catch (const UnsupportedError&) {
            continue;  // needs a plugin
        }
        INFO(path.string());
        TempDir tmp;
        descriptor::write(h5->graph(), *reg, (tmp / "a").string());
        REQUIRE(descriptor::is_descriptor((tmp / "a").string()));
        const Model back = load((tmp / "a").string(), o);
        const auto in = random_inputs(*h5, 2);
        const auto want = h5->run(in);
        const auto got = back.run(in);
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            REQUIRE(got[i].shape() == want[i].shape());
            CHECK(std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)) == 0);
        }
        for (std::size_t i = 0; i < back.num_inputs(); ++i) CHECK(back.input_name(i) == h5->input_name(i));
        for (std::size_t i = 0; i < back.num_outputs(); ++i) CHECK(back.output_name(i) == h5->output_name(i));
        descriptor::write(back.graph(), *reg, (tmp / "b").string());
        CHECK(bytes_of(tmp / "a/graph.json") == bytes_of(tmp / "b/graph.json"));
        CHECK(bytes_of(tmp / "a/weights.bin") == bytes_of(tmp / "b/weights.bin"));
        ++n;
    }
    CHECK(n >= 10);
}

TEST_CASE("descriptor: graph.json records versions, plan, ports and aligned weights", "[descriptor]") {
    auto reg = make_builtin_registry();
    const Model m = load_fixture("batchnorm_conv", *reg);
    TempDir tmp;
    descriptor::write(m.graph(), *reg, (tmp / "d").string());
    rapidjson::Document d;
    d.Parse(bytes_of(tmp / "d/graph.json").c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(d["format_version"].GetInt() == descriptor::kFormatVersion);
    CHECK(std::string(d["graft_version"].GetString()) == version_string());
    CHECK(d["memory_plan"]["arena_bytes"].GetUint64() > 0);
    CHECK(d["memory_plan"]["arena_bytes"].GetUint64() <= d["memory_plan"]["naive_bytes"].GetUint64());
    CHECK(d["plugins"].Size() == 0);
    CHECK(std::string(d["inputs"][0]["name"].GetString()) == m.input_name(0));
    bool dynamic = false;
    for (const auto& v : d["variables"].GetArray()) {
        if (v.HasMember("offset")) CHECK(v["offset"].GetUint64() % 64 == 0);
        for (const auto& s : v["shape"].GetArray()) dynamic = dynamic || (s.IsString() && std::string(s.GetString()) == "?");
    }
    CHECK(dynamic);
    CHECK(fs::file_size(tmp / "d/weights.bin") == d["weights"]["bytes"].GetUint64());
}

TEST_CASE("descriptor: attributes of every type round-trip exactly, non-finite floats too", "[descriptor]") {
    auto reg = make_builtin_registry();
    {
        Registry::OwnerScope scope(*reg, HandlerOwner{"libattrs_plugin.so", nullptr});
        OpSchema s;
        s.type = "AttrProbe";
        s.inputs = {"x"};
        s.infer = infer_like_x;
        reg->add_op(std::move(s));
    }
    Graph g;
    auto* x = g.add_variable("x", DType::float32, OrderNC, {kDynamic, 3});
    g.add_input(x);
    Attributes a;
    a.set("b", true);
    a.set("i", std::int64_t{-1234567890123});
    a.set("f", 0.1);
    a.set("tiny", 4.9406564584124654e-324);
    a.set("big", 1.7976931348623157e308);
    a.set("nan", std::nan(""));
    a.set("inf", -INFINITY);
    a.set("s", std::string("quote \" and \\ and \xc3\xa9"));
    a.set("ints", std::vector<std::int64_t>{});
    a.set("floats", std::vector<double>{1.0 / 3, -0.0, 2.5e-10});
    a.set("strings", std::vector<std::string>{"a", ""});
    add_op(g, *reg, "AttrProbe", "probe", {{"x", x}}, a);
    g.add_output(g.operators().front()->output("y"));
    TempDir tmp;
    descriptor::write(g, *reg, (tmp / "d").string());
    rapidjson::Document d;
    d.Parse<rapidjson::kParseNanAndInfFlag>(bytes_of(tmp / "d/graph.json").c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(std::string(d["plugins"][0]["name"].GetString()) == "libattrs_plugin.so");
    CHECK(std::string(d["plugins"][0]["op_types"][0].GetString()) == "AttrProbe");
    Graph back = descriptor::read((tmp / "d").string(), *reg);
    const Attributes& b = back.operators().front()->attrs();
    for (const auto& [k, v] : a.all()) {
        INFO(k);
        REQUIRE(b.has(k));
        if (k == "nan") CHECK(std::isnan(b.get<double>(k)));
        else CHECK(b.all().at(k) == v);
    }
    CHECK(std::signbit(b.get<std::vector<double>>("floats")[1]));

    // Without the plugin that defines AttrProbe: the error names it.
    auto plain = make_builtin_registry();
    try {
        descriptor::read((tmp / "d").string(), *plain);
        FAIL("read a graph with an unknown op type");
    } catch (const descriptor::UnknownOpError& e) {
        CHECK(e.op_type() == "AttrProbe");
        CHECK(e.plugin() == "libattrs_plugin.so");
        CHECK_THAT(e.what(), Catch::Contains("libattrs_plugin.so"));
    }
}

TEST_CASE("descriptor: a missing plugin is named once, with its file", "[descriptor][errors]") {
    auto reg = make_builtin_registry();
    graft::load_plugin((fs::path(GRAFT_PLUGIN_DIR) / "libgraft_channel_swish.so").string(), *reg);
    const Model m = load_fixture("custom_channel_swish", *reg);
    TempDir tmp;
    descriptor::write(m.graph(), *reg, (tmp / "d").string());
    auto plain = make_builtin_registry();
    auto message = [&](const fs::path& dir) -> std::string {
        try {
            descriptor::read(dir.string(), *plain);
        } catch (const descriptor::UnknownOpError& e) {
            CHECK(e.op_type() == "ChannelSwish");
            return e.plugin() + " | " + e.what();
        }
        FAIL("read a graph with an unknown op type");
        return "";
    };
    const std::string loaded = message(tmp / "d");
    CHECK_THAT(loaded, Catch::StartsWith("channel_swish | ") &&
                           Catch::Contains("it comes from plugin 'channel_swish' (libgraft_channel_swish.so): load it (--plugin)"));
    // A registry filled without the plugin loader records the owner's name, which already says
    // "plugin '...'": it is not wrapped again.
    edit_json(tmp / "d", [](auto& d) {
        d["plugins"][0]["name"].SetString("plugin 'channel_swish' (/x/libgraft_channel_swish.so)", d.GetAllocator());
        d["plugins"][0].RemoveMember("file");
    });
    const std::string owner = message(tmp / "d");
    CHECK_THAT(owner, Catch::Contains("it comes from plugin 'channel_swish' (/x/libgraft_channel_swish.so): load it"));
    CHECK_THAT(loaded + owner, !Catch::Contains("plugin 'plugin"));
}

TEST_CASE("descriptor: damage is refused with a typed error", "[descriptor][errors]") {
    auto reg = make_builtin_registry();
    const Model m = load_fixture("batchnorm_dense", *reg);
    TempDir tmp;
    const auto dir = tmp / "d";
    auto fresh = [&] {
        fs::remove_all(dir);
        descriptor::write(m.graph(), *reg, dir.string());
    };
    auto read = [&] { return descriptor::read(dir.string(), *reg); };

    fresh();
    REQUIRE_NOTHROW(read());

    SECTION("unknown format version") {
        edit_json(dir, [](auto& d) { d["format_version"].SetInt(99); });
        CHECK_THROWS_AS(read(), descriptor::VersionError);
        CHECK_THROWS_WITH(read(), Catch::Contains("format version 99"));
    }
    SECTION("a flipped byte in weights.bin") {
        std::string w = bytes_of(dir / "weights.bin");
        w[w.size() / 2] ^= 0x40;
        std::ofstream(dir / "weights.bin", std::ios::binary | std::ios::trunc) << w;
        CHECK_THROWS_AS(read(), descriptor::ChecksumError);
    }
    SECTION("a truncated weights.bin") {
        fs::resize_file(dir / "weights.bin", fs::file_size(dir / "weights.bin") - 8);
        CHECK_THROWS_AS(read(), descriptor::ChecksumError);
    }
    SECTION("an offset outside the file") {
        edit_json(dir, [](auto& d) { first_constant(d)["offset"].SetUint64(1u << 30); });
        CHECK_THROWS_AS(read(), descriptor::RangeError);
    }
    SECTION("a size that does not fit the shape") {
        edit_json(dir, [](auto& d) { first_constant(d)["bytes"].SetUint64(4); });
        CHECK_THROWS_AS(read(), descriptor::RangeError);
    }
    SECTION("a shape whose element count overflows") {
        edit_json(dir, [](auto& d) {
            auto& shape = first_constant(d)["shape"];
            shape.Clear();
            shape.PushBack(std::int64_t{1} << 40, d.GetAllocator()).PushBack(std::int64_t{1} << 40, d.GetAllocator());
        });
        CHECK_THROWS_WITH(read(), Catch::Contains("2^48"));
    }
    SECTION("an unknown op type") {
        edit_json(dir, [](auto& d) { d["operators"][0]["type"].SetString("FancyOp"); });
        try {
            read();
            FAIL("read an unknown op type");
        } catch (const descriptor::UnknownOpError& e) {
            CHECK(e.op_type() == "FancyOp");
            CHECK(e.plugin().empty());
        }
    }
    SECTION("a shape the op's schema disagrees with") {
        edit_json(dir, [](auto& d) {
            for (auto& v : d["variables"].GetArray())
                if (!v.HasMember("offset") && std::string(v["name"].GetString()) == d["operators"][0]["outputs"].MemberBegin()->value.GetString())
                    v["shape"][1].SetInt64(v["shape"][1].GetInt64() + 1);
        });
        CHECK_THROWS_AS(read(), ShapeError);
    }
    SECTION("malformed JSON and missing fields") {
        std::ofstream(dir / "graph.json", std::ios::binary | std::ios::trunc) << "{\"format\": ";
        CHECK_THROWS_AS(read(), FormatError);
        fresh();
        edit_json(dir, [](auto& d) { d.RemoveMember("operators"); });
        CHECK_THROWS_WITH(read(), Catch::Contains("operators"));
    }
    SECTION("graft::load reports the same errors") {
        edit_json(dir, [](auto& d) { d["format_version"].SetInt(2); });
        LoadOptions o;
        o.registry = reg.get();
        CHECK_THROWS_AS(load(dir.string(), o), descriptor::VersionError);
    }
}

TEST_CASE("descriptor: writing is atomic and never clobbers other directories", "[descriptor][errors]") {
    auto reg = make_builtin_registry();
    const Model m = load_fixture("batchnorm_dense", *reg);
    TempDir tmp;
    // a missing parent directory: IOError, nothing created
    CHECK_THROWS_AS(descriptor::write(m.graph(), *reg, (tmp / "no/such/dir").string()), IOError);
    CHECK(fs::is_empty(tmp.path()));
    // an existing directory that is not a descriptor stays untouched
    fs::create_directories(tmp / "other");
    std::ofstream(tmp / "other/keep.txt") << "mine";
    CHECK_THROWS_AS(descriptor::write(m.graph(), *reg, (tmp / "other").string()), IOError);
    CHECK(bytes_of(tmp / "other/keep.txt") == "mine");
    // an existing descriptor is replaced; no temporary is left beside it
    descriptor::write(m.graph(), *reg, (tmp / "d/").string());
    descriptor::write(m.graph(), *reg, (tmp / "d").string());
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(tmp.path())) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"d", "other"});
}

TEST_CASE("descriptor: graft convert -O2 then graft run gives the fixture's reference outputs", "[descriptor][cli]") {
    const auto fx = graft_test::source_path("tests/fixtures/keras/batchnorm_conv");
    rapidjson::Document man;
    man.Parse(bytes_of(fx / "manifest.json").c_str());
    TempDir tmp;
    auto r = graft_test::run_cli({"convert", (fx / "model.h5").string(), "-O2", "-o", (tmp / "desc").string()});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> args{"run", (tmp / "desc").string(), "--output-dir", (tmp / "out").string()};
    for (const auto& in : man["inputs"].GetArray())
        args.push_back("--input=" + std::string(in["name"].GetString()) + "=" + (fx / in["file"].GetString()).string());
    r = graft_test::run_cli(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    for (const auto& out : man["outputs"].GetArray()) {
        const auto got = graft_test::load_npy(tmp / "out" / (std::string(out["name"].GetString()) + ".npy"));
        const auto ref = graft_test::load_npy(fx / out["file"].GetString());
        CHECK(graft_test::compare(got, ref, 1e-5, 1e-5).ok());
    }
    // inspect --passes on the descriptor: a report per rule
    r = graft_test::run_cli({"inspect", (tmp / "desc").string(), "--passes"});
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("fold_batchnorm") && Catch::Contains("Arena bytes"));
}

TEST_CASE("descriptor: read_memory reads what read reads, and names its source in errors", "[descriptor][errors]") {
    auto reg = make_builtin_registry();
    const Model m = load_fixture("batchnorm_conv", *reg);
    TempDir tmp;
    descriptor::write(m.graph(), *reg, (tmp / "d").string());
    const std::string json = bytes_of(tmp / "d/graph.json"), weights = bytes_of(tmp / "d/weights.bin");
    REQUIRE_FALSE(weights.empty());

    const Graph g = descriptor::read_memory(json, weights.data(), weights.size(), *reg, "in-memory");
    descriptor::write(g, *reg, (tmp / "e").string());
    CHECK(bytes_of(tmp / "e/graph.json") == json);
    CHECK(bytes_of(tmp / "e/weights.bin") == weights);
    const Model back(g.clone(), *reg);
    const auto in = random_inputs(m, 2);
    const auto want = m.run(in), got = back.run(in);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i].values() == want[i].values());

    std::string bad = weights;
    bad[bad.size() / 2] ^= 0x55;
    CHECK_THROWS_WITH(descriptor::read_memory(json, bad.data(), bad.size(), *reg, "in-memory"),
                      Catch::Contains("in-memory/weights.bin") && Catch::Contains("CRC-32"));
    CHECK_THROWS_AS(descriptor::read_memory(json, bad.data(), bad.size(), *reg), descriptor::ChecksumError);
    CHECK_THROWS_WITH(descriptor::read_memory(json.substr(0, json.size() / 2), weights.data(), weights.size(), *reg, "x"),
                      Catch::Contains("x/graph.json") && Catch::Contains("not valid JSON"));
    CHECK_THROWS_AS(descriptor::read_memory(json, nullptr, weights.size(), *reg), FormatError);
}

}  // namespace graft_test_descriptor
