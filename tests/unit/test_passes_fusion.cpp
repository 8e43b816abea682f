// Rule fuse_elementwise and the FusedElementwise op: chains, trees and DAGs of elementwise ops
// fuse into one op whose outputs equal the unfused graph's (native backend, 1e-5); the rule does
// not fire where an intermediate value is needed elsewhere, nor on an Activation that belongs in
// an epilogue; the block kernel and graft_rt's reference against a naive loop (broadcasts, block
// edges, threads, in place); malformed programs are refused; a fused graph round-trips through
// the descriptor byte for byte.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cpu/gemm/gemm.hpp"
#include "cpu/fused.hpp"
#include "cpu/threadpool.hpp"
#include "graft/backend/descriptor.hpp"
#include "test_passes_support.hpp"

namespace graft_test_passes_fusion {

using namespace graft;
using graft_test::attrs;
using graft_test::check_rule;
using graft_test::Net;
namespace fs = std::filesystem;

namespace {

constexpr double kTol = 1e-5;

Variable* act(Net& n, Variable* x, const std::string& fn, const std::string& name) {
    return n.y(n.op("Activation", name, {{"x", x}}, attrs({{"activation", fn}})));
}
Variable* merge(Net& n, const std::string& kind, NamedVars ins, const std::string& name) {
    return n.y(n.op("Merge", name, std::move(ins), attrs({{"op", kind}})));
}
Variable* bias(Net& n, Variable* x, const std::string& axis, std::int64_t len, const std::string& name) {
    return n.y(n.op("BiasAdd", name, {{"x", x}, {"b", n.constant(name + "/b", OrderC, {len})}}, attrs({{"axis", axis}})));
}

const Operator* only(const Net& n, const std::string& type) {
    const Operator* found = nullptr;
    for (const auto* op : n.g.operators())
        if (op->type() == type) {
            REQUIRE(found == nullptr);
            found = op;
        }
    REQUIRE(found != nullptr);
    return found;
}

std::size_t steps(const Operator* op) { return op->attr<std::vector<std::string>>("steps").size(); }

}  // namespace

TEST_CASE("fusion: a chain of BiasAdd, Activation and Merges becomes one op", "[passes][fusion]") {
    Net n;
    auto* x = n.input("x", OrderNHWC, {kDynamic, 3, 5, 4});
    auto* z = n.input("z", OrderNHWC, {kDynamic, 3, 5, 4});
    auto* a = act(n, bias(n, x, "C", 4, "bias"), "relu", "relu");
    auto* m = merge(n, "mul", {{"x0", a}, {"x1", z}}, "mul");
    auto* s = merge(n, "sub", {{"x0", m}, {"x1", x}}, "sub");
    n.output(act(n, s, "tanh", "tanh"));
    check_rule(n, "fuse_elementwise", true);
    CHECK(n.g.operators().size() == 1);
    const Operator* f = only(n, "FusedElementwise");
    CHECK(steps(f) == 5);
    CHECK(f->name() == "tanh");  // the last op's name and output
    CHECK(f->output("y") == n.g.outputs()[0]);
    CHECK(f->attr<std::vector<std::string>>("bcast") == std::vector<std::string>{"", "C", ""});  // x once, bias, z
    check_rule(n, "fuse_elementwise", false);  // a fixpoint
}

TEST_CASE("fusion: a value read twice inside the group (x * sigmoid(x)) and a tree of merges", "[passes][fusion]") {
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 37});
    auto* y = n.input("y", OrderNC, {kDynamic, 37});
    auto* w = n.input("w", OrderNC, {kDynamic, 37});
    auto* t = merge(n, "add", {{"x0", x}, {"x1", y}}, "t");
    auto* swish = merge(n, "mul", {{"x0", t}, {"x1", act(n, t, "sigmoid", "sig")}}, "swish");
    auto* avg = merge(n, "avg", {{"x0", swish}, {"x1", w}, {"x2", x}}, "avg");
    auto* mx = merge(n, "max", {{"x0", avg}, {"x1", act(n, w, "elu", "elu")}}, "max");
    n.output(merge(n, "min", {{"x0", mx}, {"x1", y}}, "min"));
    check_rule(n, "fuse_elementwise", true);
    CHECK(n.g.operators().size() == 1);
    CHECK(steps(only(n, "FusedElementwise")) == 9);  // add, sig, mul, add, add, div, elu, max, min
}

TEST_CASE("fusion: BatchNormalization, Affine, PReLU and a bias along a middle axis (channels first)", "[passes][fusion]") {
    Net n;
    auto* x = n.input("x", OrderNCHW, {kDynamic, 3, 4, 5});
    auto* b = bias(n, x, "C", 3, "bias");  // broadcast with inner = H*W
    auto* bn = n.y(n.op("BatchNormalization", "bn",
                        {{"x", b},
                         {"mean", n.constant("m", OrderC, {3})},
                         {"var", n.constant("v", OrderC, {3}, 0.2f, 2.f)},
                         {"gamma", n.constant("g", OrderC, {3})},
                         {"beta", n.constant("be", OrderC, {3})}},
                        attrs({{"axis", std::string("C")}, {"epsilon", 1e-3}})));
    Attributes af;
    af.set("axes", std::vector<std::string>{"H", "W"});
    auto* aff = n.y(n.op("Affine", "affine",
                         {{"x", bn}, {"scale", n.constant("sc", Order{Axis::H, Axis::W}, {4, 5})}, {"shift", n.constant("sh", Order{Axis::H, Axis::W}, {4, 5})}},
                         std::move(af)));
    Attributes pr;
    pr.set("batch_axis", "N");
    auto* p = n.y(n.op("PReLU", "prelu", {{"x", aff}, {"alpha", n.constant("alpha", Order{Axis::C, Axis::H, Axis::W}, {3, 4, 5})}}, std::move(pr)));
    Attributes sc;  // a scalar Affine (Rescaling)
    sc.set("axes", std::vector<std::string>{});
    n.output(n.y(n.op("Affine", "rescale", {{"x", p}, {"scale", n.constant("s1", OrderC, {1})}, {"shift", n.constant("s0", OrderC, {1})}},
                      std::move(sc))));
    check_rule(n, "fuse_elementwise", true);
    CHECK(n.g.operators().size() == 1);
    const Operator* f = only(n, "FusedElementwise");
    CHECK(steps(f) == 8);
    const auto bc = f->attr<std::vector<std::string>>("bcast");
    CHECK(std::count(bc.begin(), bc.end(), "C") == 3);  // bias, BN scale and shift
    CHECK(std::count(bc.begin(), bc.end(), "H,W") == 2);
    CHECK(std::count(bc.begin(), bc.end(), "C,H,W") == 1);
    CHECK(std::count(bc.begin(), bc.end(), "*") == 2);
}

TEST_CASE("fusion: does not fire where an intermediate is needed elsewhere", "[passes][fusion]") {
    SECTION("the intermediate has another consumer, or is a graph output") {
        for (bool graph_output : {false, true}) {
            INFO("graph output " << graph_output);
            Net n;
            auto* x = n.input("x", OrderNC, {kDynamic, 8});
            auto* y = n.input("y", OrderNC, {kDynamic, 8});
            auto* a = merge(n, "add", {{"x0", x}, {"x1", y}}, "add");
            n.output(act(n, a, "relu", "relu"));
            n.output(graph_output ? a : n.y(n.op("Softmax", "softmax", {{"x", a}}, attrs({{"axis", std::string("C")}}))));
            check_rule(n, "fuse_elementwise", false);
        }
    }
    SECTION("a single op alone") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 8});
        n.output(merge(n, "add", {{"x0", x}, {"x1", x}, {"x2", x}}, "add"));
        check_rule(n, "fuse_elementwise", false);
    }
    SECTION("the chain stops at the shared value; the rest fuses") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 8});
        auto* a = act(n, act(n, x, "relu", "r1"), "tanh", "t1");  // a: read twice below, by ops in different groups
        n.output(act(n, merge(n, "mul", {{"x0", a}, {"x1", x}}, "m"), "sigmoid", "s"));
        n.output(n.y(n.op("Softmax", "softmax", {{"x", a}}, attrs({{"axis", std::string("C")}}))));
        check_rule(n, "fuse_elementwise", true);
        CHECK(n.count("FusedElementwise") == 2);  // relu+tanh, mul+sigmoid
        CHECK(n.count("Activation") == 0);
    }
}

TEST_CASE("fusion: an Activation that fits its producer's epilogue is left to fuse_activation", "[passes][fusion]") {
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 4});
    auto* z = n.input("z", OrderNC, {kDynamic, 6});
    auto* d = n.y(n.op("Linear", "d", {{"x", x}, {"w", n.constant("w", OrderCN, {4, 6})}}, attrs({{"axis", std::string("C")}})));
    n.output(act(n, merge(n, "add", {{"x0", act(n, d, "relu", "relu")}, {"x1", z}}, "add"), "tanh", "tanh"));
    SECTION("the rule alone") {
        check_rule(n, "fuse_elementwise", true);
        CHECK(n.count("Activation") == 1);  // relu stays for the Linear
        CHECK(steps(only(n, "FusedElementwise")) == 2);
    }
    SECTION("the O2 pipeline") {
        const auto inputs = graft_test::random_inputs(n.g, 2);
        const auto before = graft_test::run_native(n.g, *n.reg, inputs);
        optimize::pipeline_for(2).run(n.g, *n.reg);
        CHECK(graft_test::max_diff(before, graft_test::run_native(n.g, *n.reg, inputs)) <= kTol);
        CHECK(only(n, "Linear")->attr<std::string>("activation") == "relu");
        CHECK(steps(only(n, "FusedElementwise")) == 2);
        CHECK(n.g.operators().size() == 2);
    }
}

TEST_CASE("fusion: only -O2 fuses, after every other rule, for every backend", "[passes][fusion]") {
    for (const char* backend : {"native", "graft", "cpp"}) {
        INFO(backend);
        auto names = [&](int level) {
            std::vector<std::string> n;
            const auto pipeline = optimize::pipeline_for(level, backend);
            for (const auto& g : pipeline.groups())
                for (const auto& r : g.passes) n.push_back(r->name());
            return n;
        };
        const auto o1 = names(1), o2 = names(2);
        CHECK(std::count(o1.begin(), o1.end(), "fuse_elementwise") == 0);
        REQUIRE(std::count(o2.begin(), o2.end(), "fuse_elementwise") == 1);
        CHECK(o2.back() == "fuse_elementwise");
    }
}

TEST_CASE("fusion: a fused op absorbs the ops added after it", "[passes][fusion]") {
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 300});
    n.output(act(n, merge(n, "add", {{"x0", x}, {"x1", x}}, "add"), "relu", "relu"));
    REQUIRE(n.apply("fuse_elementwise"));
    auto* f = n.g.operators().front();
    n.g.set_output(0, act(n, bias(n, f->output("y"), "C", 300, "bias"), "softsign", "soft"));
    check_rule(n, "fuse_elementwise", true);
    CHECK(n.g.operators().size() == 1);
    CHECK(steps(only(n, "FusedElementwise")) == 4);
}

TEST_CASE("fusion: the block kernel against a naive loop", "[passes][fusion][kernels]") {
    using namespace cpu;
    // y = tanh(relu(x0 + b[(i / inner) % len]) * x1) - x0 / 2, over n elements; the broadcast
    // pattern's period does not divide the block (gathered per block), or does (gathered once)
    const auto [len, inner] = GENERATE(std::pair<std::int64_t, std::int64_t>{3, 7}, std::pair<std::int64_t, std::int64_t>{4, 16},
                                       std::pair<std::int64_t, std::int64_t>{64, 1});
    INFO("len " << len << ", inner " << inner);
    FusedProgram p;
    p.add_input({false});
    p.add_input({false});
    p.add_input({true, len, inner});
    p.add_step({FusedCode::add, 0, 2});
    p.add_step({FusedCode::act, 3, -1, ActParams{Act::relu}});
    p.add_step({FusedCode::mul, 4, 1});
    p.add_step({FusedCode::act, 5, -1, ActParams{Act::tanh}});
    p.add_step({FusedCode::div, 0, -1, {}, 2.f});
    p.add_step({FusedCode::sub, 6, 7});
    REQUIRE(graft_rt::fused_allocate(p) <= kFusedMaxBuffers);
    CHECK(p.buffers <= 3);  // the bias block plus two values at a time
    for (std::int64_t n : {1, 511, 512, 513, 1000, 70000}) {
        INFO("n = " << n);
        std::vector<float> x0(static_cast<std::size_t>(n)), x1(x0.size()), b(static_cast<std::size_t>(len));
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.5f - 0.75f * static_cast<float>(i % 5);
        for (std::size_t i = 0; i < x0.size(); ++i) x0[i] = std::sin(0.37f * i) * 2.f, x1[i] = std::cos(0.11f * i);
        std::vector<double> want(x0.size());
        for (std::size_t i = 0; i < x0.size(); ++i)
            want[i] = std::tanh(std::max(0.0, double(x0[i]) + b[(i / static_cast<std::size_t>(inner)) % b.size()]) * x1[i]) - x0[i] / 2.0;
        const auto was = cpu::gemm::active_isa();
        for (auto isa : {cpu::gemm::Isa::generic, cpu::gemm::Isa::avx2, cpu::gemm::Isa::avx512})
        for (int threads : {1, 3}) {
            if (!cpu::gemm::set_isa(isa)) continue;  // the loops are compiled per instruction set
            INFO(cpu::gemm::isa_name(isa) << ", " << threads << " threads");
            cpu::ThreadPool pool(threads);
            std::vector<float> y = x0;  // in place over x0
            const float* xs[] = {y.data(), x1.data(), b.data()};
            const std::int64_t chunk = threads == 1 ? n : 4196;  // chunks start out of phase with the pattern
            cpu::parallel_for(&pool, (n + chunk - 1) / chunk, [&](std::int64_t t) {
                fused_eval(p, xs, y.data(), t * chunk, std::min(n, (t + 1) * chunk));
            });
            double worst = 0;
            for (std::size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::fabs(y[i] - want[i]));
            CHECK(worst <= 1e-5);
        }
        cpu::gemm::set_isa(was);
        std::vector<float> y = x0;  // the reference evaluation (generated code runs it), in place
        const float* xs[] = {y.data(), x1.data(), b.data()};
        graft_rt::fused_elementwise(p, xs, y.data(), 0, n);
        double worst = 0;
        for (std::size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::fabs(y[i] - want[i]));
        CHECK(worst <= 1e-5);
    }
}

TEST_CASE("fusion: malformed programs are refused", "[passes][fusion]") {
    Net n;
    auto* x = n.input("x", OrderNC, {2, 4});
    auto good = [] {
        Attributes a;
        a.set("bcast", std::vector<std::string>{""});
        a.set("steps", std::vector<std::string>{"act", "add"});
        a.set("args", std::vector<std::int64_t>{0, -1, 1, 0});
        a.set("fns", std::vector<std::string>{"relu", ""});
        a.set("params", std::vector<double>(6, 0.0));
        return a;
    };
    CHECK_NOTHROW(n.op("FusedElementwise", "ok", {{"x0", x}}, good()));
    auto a = good();
    a.set("args", std::vector<std::int64_t>{0, -1, 2, 0});  // step 1 reads itself
    CHECK_THROWS_AS(n.op("FusedElementwise", "self", {{"x0", x}}, a), GraphError);
    a = good();
    a.set("steps", std::vector<std::string>{"act", "pow"});
    CHECK_THROWS_AS(n.op("FusedElementwise", "pow", {{"x0", x}}, a), GraphError);
    a = good();
    a.set("fns", std::vector<std::string>{"nope", ""});
    CHECK_THROWS_AS(n.op("FusedElementwise", "fn", {{"x0", x}}, a), GraphError);
    a = good();
    a.set("bcast", std::vector<std::string>{"C"});  // no input at y's shape
    CHECK_THROWS_AS(n.op("FusedElementwise", "bc", {{"x0", x}}, a), ShapeError);
    a = good();
    a.set("bcast", std::vector<std::string>{"", "C"});  // the bias holds 3 values, C has 4
    CHECK_THROWS_AS(n.op("FusedElementwise", "len", {{"x0", x}, {"x1", n.constant("b3", OrderC, {3})}}, a), ShapeError);
    a.set("bcast", std::vector<std::string>{"", "N,H"});
    CHECK_THROWS_AS(n.op("FusedElementwise", "axes", {{"x0", x}, {"x1", n.constant("b2", OrderC, {2})}}, a), ShapeError);
}

TEST_CASE("fusion: a fused graph round-trips through the descriptor byte for byte", "[passes][fusion][descriptor]") {
    Net n;
    auto* x = n.input("x", OrderNHWC, {kDynamic, 2, 3, 4});
    auto* a = act(n, bias(n, x, "C", 4, "bias"), "leaky_relu", "lrelu");
    n.output(act(n, merge(n, "avg", {{"x0", a}, {"x1", x}}, "avg"), "hard_sigmoid", "hs"));
    optimize::pipeline_for(2, "graft").run(n.g, *n.reg);
    REQUIRE(n.count("FusedElementwise") == 1);
    const fs::path dir = fs::temp_directory_path() / ("graft_fusion_desc_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    descriptor::write(n.g, *n.reg, (dir / "a").string());
    Graph back = descriptor::read((dir / "a").string(), *n.reg);
    CHECK(back.operators().front()->attrs() == only(n, "FusedElementwise")->attrs());
    descriptor::write(back, *n.reg, (dir / "b").string());
    for (const char* f : {"graph.json", "weights.bin"}) {
        std::ifstream fa(dir / "a" / f, std::ios::binary), fb(dir / "b" / f, std::ios::binary);
        const std::string sa((std::istreambuf_iterator<char>(fa)), {}), sb((std::istreambuf_iterator<char>(fb)), {});
        CHECK(sa == sb);
    }
    const auto in = graft_test::random_inputs(n.g, 2);
    const auto want = graft_test::run_native(n.g, *n.reg, in), got = graft_test::run_native(back, *n.reg, in);
    REQUIRE(got.size() == 1);
    CHECK(std::memcmp(got[0].data(), want[0].data(), got[0].size() * sizeof(float)) == 0);
    fs::remove_all(dir);
}

TEST_CASE("fusion: Binary ops join a fused program where their inputs fit its broadcasts", "[passes][fusion]") {
    const Order NHWC = OrderNHWC;
    auto binary = [](Net& n, const std::string& op, Variable* a, Variable* b, const std::string& name) {
        Attributes at;
        at.set("op", op);
        at.set("order", OrderNHWC);
        return n.y(n.op("Binary", name, {{"a", a}, {"b", b}}, at));
    };
    {
        Net n;
        auto* x = n.input("x", NHWC, {kDynamic, 3, 5, 4});
        auto* z = n.input("z", NHWC, {kDynamic, 3, 5, 4});
        auto* s = binary(n, "add", n.constant("bias", OrderC, {4}), x, "bias");  // the broadcast input first: swapped
        auto* r = act(n, s, "relu", "relu");
        auto* m = binary(n, "mul", r, z, "mul");
        auto* w = binary(n, "sub", m, n.constant("hw", Order{Axis::H, Axis::W}, {3, 5}), "sub_hw");
        n.output(binary(n, "div", w, n.constant("two", OrderC, {1}, 2.f, 2.5f), "div"));
        check_rule(n, "fuse_elementwise", true);
        CHECK(n.g.operators().size() == 1);
        const Operator* f = only(n, "FusedElementwise");
        CHECK(steps(f) == 5);
        CHECK(f->attr<std::vector<std::string>>("bcast") == std::vector<std::string>{"", "C", "", "H,W"});
    }
    {  // these stay: b's axes not adjacent in y (H, C), a broadcasting under sub, div by a tensor
        Net n;
        auto* x = n.input("x", NHWC, {kDynamic, 3, 5, 4});
        auto* hc = binary(n, "add", x, n.constant("hc", Order{Axis::H, Axis::C}, {3, 4}), "hc");
        auto* r = act(n, hc, "relu", "relu");
        auto* s = binary(n, "sub", n.constant("c", OrderC, {4}), r, "sub");
        auto* t = act(n, s, "tanh", "tanh");
        n.output(binary(n, "div", t, n.constant("d", NHWC, {1, 3, 5, 4}), "div"));
        check_rule(n, "fuse_elementwise", false);
    }
}

}  // namespace graft_test_passes_fusion
