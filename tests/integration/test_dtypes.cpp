// Integer and bool inputs (issue 15): graft::Tensor's dtypes, Keras Inputs of integer dtypes
// (tests/fixtures/gen/write_int_inputs.py: numpy references), the exactness rule at the boundary,
// the descriptor keeping an input's dtype and the CLI reading integer .npy.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "graft/backend/descriptor.hpp"
#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_dtypes {

namespace fs = std::filesystem;
using graft::DType;
using graft::Tensor;
using graft_test::load_npy;
using graft_test::source_path;
using graft_test::TempDir;

namespace {

const fs::path kKeras = source_path("tests/fixtures/keras");

void check_close(const Tensor& got, const Tensor& want, double tol = 1e-5) {
    const auto c = graft_test::compare(got, want, tol, tol);
    INFO("max abs error " << c.max_abs_err << ", " << c.num_off << " values off, the first at " << c.first_off);
    CHECK(c.ok());
}

/// A tensor of `want`'s shape and values, as float32 (exact: small integers).
Tensor as_float(const Tensor& t) {
    std::vector<float> v(t.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(t.at_double(i));
    return Tensor(t.shape(), v);
}

}  // namespace

TEST_CASE("dtypes: a tensor holds one dtype and refuses to be read as another", "[dtypes][api]") {
    const Tensor f({2}, std::vector<float>{1.f, 2.f});
    CHECK(f.dtype() == DType::float32);
    CHECK(f.data()[1] == 2.f);
    const std::vector<std::int64_t> ids = {3, -1, 7};
    const Tensor i(graft::Shape{3}, ids);
    CHECK(i.dtype() == DType::int64);
    CHECK(i.values<std::int64_t>() == ids);
    CHECK(i.at_double(1) == -1.0);
    CHECK_THROWS_AS(i.data(), graft::DTypeError);
    CHECK_THROWS_AS(i.data<std::int32_t>(), graft::DTypeError);
    CHECK_THROWS_AS(f.data<std::int64_t>(), graft::DTypeError);
    const bool flags[] = {true, false};
    const Tensor b(graft::Shape{2}, flags, 2);
    CHECK(b.dtype() == DType::boolean);
    CHECK(b.data<bool>()[0]);
    CHECK_THROWS_AS(Tensor(graft::Shape{2}, ids), graft::ShapeError);
}

TEST_CASE("dtypes: Keras Inputs of int32 and uint8 feed Embedding; uint8 pixels feed a CNN", "[dtypes][keras]") {
    for (const char* name : {"input_int32_embedding", "input_uint8_embedding", "input_uint8_image"}) {
        INFO(name);
        const fs::path dir = kKeras / name;
        auto model = graft::load((dir / "model.h5").string());
        const DType want = std::string(name) == "input_int32_embedding" ? DType::int32 : DType::uint8;
        CHECK(model.input_dtype(0) == want);
        CHECK(model.output_dtype(0) == DType::float32);
        fs::path in, out;
        for (const auto& e : fs::directory_iterator(dir)) {
            const auto f = e.path().filename().string();
            if (f.rfind("input_", 0) == 0) in = e.path();
            if (f.rfind("output_", 0) == 0) out = e.path();
        }
        const Tensor x = load_npy(in);
        REQUIRE(x.dtype() == want);
        check_close(model.run({x})[0], load_npy(out));
        // float32 values that are exactly the integers are taken too
        check_close(model.run({as_float(x)})[0], load_npy(out));
        // a lossy float is refused, naming the input and both dtypes
        Tensor bad = as_float(x);
        bad.data()[1] = 3.5f;
        try {
            model.run({bad});
            FAIL("3.5 was taken for an integer input");
        } catch (const graft::DTypeError& e) {
            const std::string msg = e.what();
            CHECK_THAT(msg, Catch::Contains(std::string("input '") + model.input_name(0) + "'") &&
                                Catch::Contains(graft::name_of(want)) && Catch::Contains("float32") && Catch::Contains("3.5"));
        }
        // the descriptor keeps the input's dtype
        TempDir tmp;
        graft::descriptor::write(model.graph(), model.registry(), (tmp / "d").string());
        auto back = graft::load((tmp / "d").string());
        CHECK(back.input_dtype(0) == want);
        check_close(back.run({x})[0], load_npy(out));
    }
}

TEST_CASE("dtypes: integer values outside what the input's dtype or float32 holds are refused", "[dtypes][api]") {
    auto model = graft::load((kKeras / "input_uint8_embedding" / "model.h5").string());
    const Tensor x = load_npy(kKeras / "input_uint8_embedding" / "input_bytes.npy");
    std::vector<std::int64_t> wide(x.size());
    for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<std::int64_t>(x.at_double(i));
    // int64 values that are bytes: taken
    check_close(model.run({Tensor(x.shape(), wide)})[0], load_npy(kKeras / "input_uint8_embedding" / "output_dense.npy"));
    wide[2] = 256;  // no uint8
    CHECK_THROWS_WITH(model.run({Tensor(x.shape(), wide)}), Catch::Contains("256") && Catch::Contains("uint8"));
    auto ids = graft::load((kKeras / "input_int32_embedding" / "model.h5").string());
    std::vector<std::int32_t> big(6 * 3, 1);
    big[0] = (1 << 24) + 1;  // an int32, but not exact in graft's float32 words
    CHECK_THROWS_WITH(ids.run({Tensor(graft::Shape{3, 6}, big)}), Catch::Contains("2^24"));
}

TEST_CASE("dtypes: graft run reads integer .npy by its dtype and refuses a lossy one", "[dtypes][cli]") {
    TempDir tmp;
    const fs::path dir = kKeras / "input_int32_embedding";
    const auto ok = graft_test::run_cli({"run", (dir / "model.h5").string(), "--input", (dir / "input_token_ids.npy").string(), "--output-dir",
                                         (tmp / "o").string()});
    INFO(ok.err);
    REQUIRE(ok.exit_code == 0);
    check_close(load_npy(tmp / "o" / "dense.npy"), load_npy(dir / "output_dense.npy"));

    const auto inspect = graft_test::run_cli({"inspect", (dir / "model.h5").string()});
    CHECK_THAT(inspect.out, Catch::Contains("Input  token_ids: [?, 6] int32"));

    std::vector<float> frac(18, 1.f);
    frac[4] = 2.5f;
    xt::dump_npy((tmp / "frac.npy").string(), xt::adapt(frac, std::vector<std::size_t>{3, 6}));
    const auto bad = graft_test::run_cli({"run", (dir / "model.h5").string(), "--input", (tmp / "frac.npy").string(), "--print"});
    CHECK(bad.exit_code != 0);
    CHECK_THAT(bad.err, Catch::Contains("input 'token_ids'") && Catch::Contains("int32") && Catch::Contains("2.5"));
}

TEST_CASE("dtypes: an integer value reaching an op that takes float32 is refused by name", "[dtypes][api]") {
    const auto& reg = graft::default_registry();
    graft::Graph g;
    auto* x = g.add_variable("ids", DType::int64, graft::OrderNC, {graft::kDynamic, 3});
    g.add_input(x);
    graft::Attributes a;
    a.set("activation", std::string("relu"));
    auto* op = graft::add_op(g, reg, "Activation", "act", {{"x", x}}, a);
    g.add_output(op->output("y"));
    g.set_input_names({"ids"});
    g.set_output_names({"y"});
    CHECK_THROWS_WITH(graft::Model(g.clone(), reg), Catch::Contains("'act'") && Catch::Contains("holds int64 values") &&
                                                         Catch::Contains("Cast's x") && Catch::Contains("Gather's indices"));
}

}  // namespace graft_test_dtypes
