// The generated C++ of a FusedElementwise op: a channels-first chain (a bias broadcast over H*W,
// per-element PReLU weights, merges, activations) optimized at -O2 for the cpp backend becomes
// one fused op; the generated code compiles without warnings and matches a naive double
// reference. (Every fixture, some of them fused, goes through test_cpp_backend.cpp as well.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>

#include "../cpp_backend/driver.hpp"
#include "../unit/test_passes_support.hpp"
#include "graft/backend/cpp.hpp"
#include "support.hpp"

namespace graft_test_cpp_fused {

namespace fs = std::filesystem;
using namespace graft;

TEST_CASE("cpp backend: a fused elementwise chain with broadcasts matches a naive reference", "[cpp_backend][fusion][integration]") {
    constexpr std::int64_t N = 2, C = 3, H = 2, W = 5, S = H * W, E = N * C * S;
    graft_test::Net n;
    auto* x = n.input("x", OrderNCHW, {kDynamic, C, H, W});
    auto* z = n.input("z", OrderNCHW, {kDynamic, C, H, W});
    auto* bias = n.constant("bias", OrderC, {C});
    auto* alpha = n.constant("alpha", Order{Axis::C, Axis::H, Axis::W}, {C, H, W});
    using graft_test::attrs;
    using namespace std::string_literals;
    auto* b = n.y(n.op("BiasAdd", "bias_add", {{"x", x}, {"b", bias}}, attrs({{"axis", "C"s}})));
    auto* r = n.y(n.op("Activation", "leaky", {{"x", b}}, attrs({{"activation", "leaky_relu"s}, {"alpha", 0.3}})));
    auto* m = n.y(n.op("Merge", "mul", {{"x0", r}, {"x1", z}}, attrs({{"op", "mul"s}})));
    auto* av = n.y(n.op("Merge", "avg", {{"x0", m}, {"x1", x}}, attrs({{"op", "avg"s}})));
    auto* p = n.y(n.op("PReLU", "prelu", {{"x", av}, {"alpha", alpha}}, attrs({{"batch_axis", "N"s}})));
    auto* mx = n.y(n.op("Merge", "max", {{"x0", p}, {"x1", z}}, attrs({{"op", "max"s}})));
    n.output(n.y(n.op("Activation", "tanh", {{"x", mx}}, attrs({{"activation", "tanh"s}}))));

    const auto in = graft_test::random_inputs(n.g, N);
    std::vector<double> want(static_cast<std::size_t>(E));
    const auto& bd = bias->data();
    const auto& ad = alpha->data();
    for (std::int64_t i = 0; i < E; ++i) {
        const auto u = static_cast<std::size_t>(i);
        const double xv = in[0].data()[u], zv = in[1].data()[u];
        double v = xv + bd[static_cast<std::size_t>((i / S) % C)];
        v = v < 0 ? 0.3 * v : v;
        v = (v * zv + xv) / 2;
        const double al = ad[static_cast<std::size_t>(i % (C * S))];
        v = v < 0 ? al * v : v;
        want[u] = std::tanh(std::max(v, zv));
    }

    graft_test::TempDir tmp;
    cpp::Options o;
    o.name = "fused";
    o.ns = "fused";
    o.batch = N;
    o.opt_level = 2;
    const auto info = cpp::generate(n.g.clone(), *n.reg, o, tmp.path().string());
    CHECK(info.ops == 1);
    const auto src = graft_test::read_text(tmp / "fused.cpp");
    CHECK(src.find("FusedElementwise") != std::string::npos);
    CHECK(src.find("graft_rt::fused_elementwise(") != std::string::npos);

    std::vector<std::string> files;
    for (std::size_t i = 0; i < in.size(); ++i) {
        files.push_back((tmp / ("in" + std::to_string(i) + ".npy")).string());
        graft_driver::write_npy(files.back(), in[i].data(), static_cast<int>(in[i].shape().size()), in[i].shape().data());
    }
    std::ofstream(tmp / "main.cpp") << "#include \"driver.hpp\"\n#include \"" << (tmp / "fused.cpp").string() << "\"\n"
                                    << "int main() { return graft_driver::run_model<fused::Session>(\"fused\", fused::kInputs, "
                                       "fused::kOutputs, {\""
                                    << files[0] << "\", \"" << files[1] << "\"}, \"" << tmp.path().string() << "\", \""
                                    << (tmp / "fused.weights").string() << "\"); }\n";
    const char* env = std::getenv("GRAFT_TEST_CXX");
    const std::string cxx = env && *env ? env : "c++";
    const std::string cmd = cxx + " -std=c++17 -O1 -Wall -Wextra -Werror -I" +
                            graft_test::shell_quote(graft_test::source_path("tests/cpp_backend").string()) + " " +
                            graft_test::shell_quote((tmp / "main.cpp").string()) + " -o " + graft_test::shell_quote((tmp / "main").string()) +
                            " >" + graft_test::shell_quote((tmp / "log").string()) + " 2>&1";
    const bool compiled = std::system(cmd.c_str()) == 0;
    INFO(graft_test::read_text(tmp / "log"));
    REQUIRE(compiled);
    REQUIRE(std::system((graft_test::shell_quote((tmp / "main").string()) + " >>" + graft_test::shell_quote((tmp / "log").string()) + " 2>&1").c_str()) == 0);
    const auto got = graft_test::load_npy(tmp / "0.npy");
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got.data()[i] - want[i]));
    CHECK(worst <= 1e-5);
}

}  // namespace graft_test_cpp_fused
