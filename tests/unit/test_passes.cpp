// The optimizer passes, one by one: each fires where it should (and changes the graph as
// intended), does not fire where it must not, and leaves the values unchanged: the graph runs on
// the native backend before and after the rule and the outputs agree within 1e-5.
#include <catch2/catch.hpp>

#include "test_passes_support.hpp"

namespace graft_test_passes {

using namespace graft;
using graft_test::attrs;
using graft_test::check_rule;
using graft_test::Net;

namespace {

constexpr double kTol = 1e-5;

/// A Linear; `activation`, if given, is set as already fused into its epilogue.
Operator* linear(Net& n, Variable* x, std::int64_t in, std::int64_t out, const std::string& name, bool bias = true,
                 const std::string& activation = "") {
    NamedVars ins{{"x", x}, {"w", n.constant(name + "/w", OrderCN, {in, out})}};
    if (bias) ins.emplace_back("b", n.constant(name + "/b", OrderC, {out}));
    Operator* op = n.op("Linear", name, ins, attrs({{"axis", std::string("C")}}));
    if (!activation.empty()) op->attrs().set("activation", activation);
    return op;
}

Operator* conv2d(Net& n, Variable* x, std::int64_t cin, std::int64_t cout, const std::string& name) {
    return n.op("Conv2D", name,
                {{"x", x}, {"w", n.constant(name + "/w", OrderHWCN, {3, 3, cin, cout})}, {"b", n.constant(name + "/b", OrderC, {cout})}},
                attrs({{"strides", std::vector<std::int64_t>{1, 1}}, {"dilations", std::vector<std::int64_t>{1, 1}},
                       {"padding", std::string("same")}}));
}

Operator* batchnorm(Net& n, Variable* x, const std::string& axis, std::int64_t c, const std::string& name) {
    return n.op("BatchNormalization", name,
                {{"x", x},
                 {"mean", n.constant(name + "/mean", OrderC, {c})},
                 {"var", n.constant(name + "/var", OrderC, {c}, 0.2f, 2.f)},
                 {"gamma", n.constant(name + "/gamma", OrderC, {c})},
                 {"beta", n.constant(name + "/beta", OrderC, {c})}},
                attrs({{"axis", axis}, {"epsilon", 1e-3}}));
}

Operator* act(Net& n, Variable* x, const std::string& fn, const std::string& name) {
    return n.op("Activation", name, {{"x", x}}, attrs({{"activation", fn}}));
}

Operator* transpose(Net& n, Variable* x, const Order& o, const std::string& name) {
    Attributes a;
    a.set("order", o);
    return n.op("Transpose", name, {{"x", x}}, std::move(a));
}

}  // namespace

TEST_CASE("passes: remove_noops drops Identity, linear Activation, identity Reshape and 1-input Merge", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 4});
    auto* a = n.y(linear(n, x, 4, 6, "d1"));
    auto* b = n.y(n.op("Identity", "dropout", {{"x", a}}));
    auto* c = n.y(act(n, b, "linear", "lin"));
    Attributes r;
    r.set("in_order", OrderNC);
    r.set("out_order", OrderNC);
    r.set("shape", std::vector<std::int64_t>{kDynamic, 6});
    auto* d = n.y(n.op("Reshape", "reshape", {{"x", c}}, std::move(r)));
    auto* e = n.y(n.op("Merge", "merge1", {{"x0", d}}, attrs({{"op", std::string("add")}})));
    n.output(n.y(act(n, e, "relu", "relu")));
    check_rule(n, "remove_noops", true);
    CHECK(n.g.operators().size() == 2);  // Linear, relu
    CHECK(n.count("Identity") == 0);
}

TEST_CASE("passes: remove_noops keeps a Reshape that changes the shape and a real Activation", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 6});
    Attributes r;
    r.set("in_order", OrderNC);
    r.set("out_order", OrderNTC);
    r.set("shape", std::vector<std::int64_t>{kDynamic, 2, 3});
    auto* y = n.y(n.op("Reshape", "reshape", {{"x", x}}, std::move(r)));
    n.output(n.y(act(n, y, "tanh", "tanh")));
    check_rule(n, "remove_noops", false);
    CHECK(n.g.operators().size() == 2);
}

TEST_CASE("passes: remove_noops keeps a Reshape that reads its input in another order", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNHWC, {kDynamic, 2, 3, 2});
    Attributes r;  // reads x as NCHW (a transpose first), views the bytes as NHWC of x's shape
    r.set("in_order", OrderNCHW);
    r.set("out_order", OrderNHWC);
    r.set("shape", std::vector<std::int64_t>{kDynamic, 2, 3, 2});
    n.output(n.y(n.op("Reshape", "reshape", {{"x", x}}, std::move(r))));
    check_rule(n, "remove_noops", false);
}

TEST_CASE("passes: constant_fold runs ops whose inputs are all constants", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 5});
    // w stored as NC [out, in] and transposed to CN, plus a bias made by adding two constants
    auto* wt = n.y(transpose(n, n.constant("w_nc", OrderNC, {3, 5}), OrderCN, "w_t"));
    auto* b = n.y(n.op("Merge", "b_sum", {{"x0", n.constant("b0", OrderC, {3})}, {"x1", n.constant("b1", OrderC, {3})}},
                       attrs({{"op", std::string("add")}})));
    n.output(n.y(n.op("Linear", "d", {{"x", x}, {"w", wt}, {"b", b}}, attrs({{"axis", std::string("C")}}))));
    check_rule(n, "constant_fold", true);
    CHECK(n.g.operators().size() == 1);
    CHECK(n.g.operators().front()->input("w")->is_constant());
    CHECK(n.g.operators().front()->input("b")->is_constant());
}

TEST_CASE("passes: constant_fold leaves ops with a computed input alone", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 3});
    n.output(n.y(n.op("Merge", "add", {{"x0", x}, {"x1", n.constant("k", OrderNC, {1, 3})}}, attrs({{"op", std::string("add")}}))));
    // batch 1 only would make shapes match; the op reads x, so it is never folded
    const bool fired = n.apply("constant_fold");
    CHECK_FALSE(fired);
}

TEST_CASE("passes: fold_batchnorm folds BN into the preceding Linear and Conv2D", "[passes]") {
    SECTION("Linear with bias") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 4});
        n.output(n.y(batchnorm(n, n.y(linear(n, x, 4, 6, "d")), "C", 6, "bn")));
        check_rule(n, "fold_batchnorm", true);
        CHECK(n.count("BatchNormalization") == 0);
        CHECK(n.g.operators().size() == 1);
    }
    SECTION("Linear without bias (the fold adds one)") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 4});
        n.output(n.y(batchnorm(n, n.y(linear(n, x, 4, 6, "d", false)), "C", 6, "bn")));
        check_rule(n, "fold_batchnorm", true);
        CHECK(n.g.operators().front()->has_input("b"));
    }
    SECTION("Conv2D, then relu") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 5, 5, 2});
        n.output(n.y(act(n, n.y(batchnorm(n, n.y(conv2d(n, x, 2, 3, "conv")), "C", 3, "bn")), "relu", "relu")));
        check_rule(n, "fold_batchnorm", true);
        CHECK(n.count("BatchNormalization") == 0);
    }
    SECTION("a shared weight stays untouched for its other reader") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 4});
        auto* w = n.constant("w", OrderCN, {4, 4});
        auto* d1 = n.y(n.op("Linear", "d1", {{"x", x}, {"w", w}}, attrs({{"axis", std::string("C")}})));
        auto* d2 = n.y(n.op("Linear", "d2", {{"x", x}, {"w", w}}, attrs({{"axis", std::string("C")}})));
        n.output(n.y(batchnorm(n, d1, "C", 4, "bn")));
        n.output(d2);
        check_rule(n, "fold_batchnorm", true);
    }
}

TEST_CASE("passes: fold_batchnorm does not fire where it must not", "[passes]") {
    SECTION("the conv output has another consumer, or is a graph output") {
        for (bool graph_output : {false, true}) {
            INFO("graph output " << graph_output);
            Net n;
            auto* x = n.input("x", OrderNHWC, {kDynamic, 5, 5, 2});
            auto* c = n.y(conv2d(n, x, 2, 3, "conv"));
            n.output(n.y(batchnorm(n, c, "C", 3, "bn")));
            n.output(graph_output ? c : n.y(act(n, c, "relu", "other")));
            check_rule(n, "fold_batchnorm", false);
        }
    }
    SECTION("BN over another axis than the output channels") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 5, 2});
        n.output(n.y(batchnorm(n, n.y(conv2d(n, x, 2, 3, "conv")), "H", 4, "bn")));
        check_rule(n, "fold_batchnorm", false);
    }
    SECTION("an activation between the Linear and the BN") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 4});
        n.output(n.y(batchnorm(n, n.y(linear(n, x, 4, 6, "d", true, "relu")), "C", 6, "bn")));
        check_rule(n, "fold_batchnorm", false);
    }
}

TEST_CASE("passes: fuse_activation moves an Activation into its producer's epilogue", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNHWC, {kDynamic, 5, 5, 2});
    auto* e = n.op("Activation", "elu", {{"x", n.y(conv2d(n, x, 2, 3, "conv"))}},
                   attrs({{"activation", std::string("elu")}, {"alpha", 0.7}}));
    auto* flat = n.y(n.op("GlobalPool", "gap", {{"x", n.y(e)}}, [] {
        Attributes a;
        a.set("kind", "avg");
        a.set("axes", Order{Axis::H, Axis::W});
        return a;
    }()));
    n.output(n.y(act(n, n.y(linear(n, flat, 3, 4, "d")), "sigmoid", "sig")));
    check_rule(n, "fuse_activation", true);
    CHECK(n.count("Activation") == 0);
    for (auto* op : n.g.operators())
        if (op->type() == "Conv2D") {
            CHECK(op->attr<std::string>("activation") == "elu");
            CHECK(op->attr<double>("alpha") == 0.7);
        }
}

TEST_CASE("passes: fuse_activation does not fire where it must not", "[passes]") {
    SECTION("the Linear output has another reader") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 4});
        auto* d = n.y(linear(n, x, 4, 6, "d"));
        n.output(n.y(act(n, d, "relu", "relu")));
        n.output(n.y(act(n, d, "tanh", "tanh")));
        check_rule(n, "fuse_activation", false);
    }
    SECTION("the producer takes no epilogue (Pool2D)") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 4, 2});
        Attributes a;
        a.set("kind", "max");
        a.set("pool_size", std::vector<std::int64_t>{2, 2});
        a.set("strides", std::vector<std::int64_t>{2, 2});
        a.set("padding", "valid");
        n.output(n.y(act(n, n.y(n.op("Pool2D", "pool", {{"x", x}}, std::move(a))), "relu", "relu")));
        check_rule(n, "fuse_activation", false);
    }
    SECTION("the producer already has an activation") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 4});
        n.output(n.y(act(n, n.y(linear(n, x, 4, 6, "d", true, "tanh")), "relu", "relu")));
        check_rule(n, "fuse_activation", false);
    }
}

TEST_CASE("passes: cancel_transposes composes back-to-back transposes", "[passes]") {
    const Order nwhc{Axis::N, Axis::W, Axis::H, Axis::C};
    const struct {
        const char* what;
        std::vector<Order> chain;  // transposes applied one after the other to an NHWC input
        bool fires;
        std::size_t left;  // transposes after dead_ops
    } cases[] = {
        {"a round trip cancels", {OrderNCHW, OrderNHWC}, true, 0},
        {"two transposes become one", {OrderNCHW, nwhc}, true, 1},
        {"a single transpose stays", {OrderNCHW}, false, 1},
    };
    for (const auto& c : cases) {
        INFO(c.what);
        Net n;
        Variable* v = n.input("x", OrderNHWC, {kDynamic, 3, 4, 2});
        for (std::size_t i = 0; i < c.chain.size(); ++i) v = n.y(transpose(n, v, c.chain[i], "t" + std::to_string(i + 1)));
        n.output(n.y(act(n, v, "relu", "relu")));
        check_rule(n, "cancel_transposes", c.fires);
        n.apply("dead_ops");
        CHECK(n.count("Transpose") == c.left);
    }
}

TEST_CASE("passes: cancel_transposes sees through a relabel when the positions come back", "[passes]") {
    // [N, T, C] arriving labeled NCT (an ONNX input), transposed to ONNX's [T, N, C], relabeled
    // TNC, turned to NTC for the kernel: the data never moved. With the last transpose to TCN it
    // does, and both transposes stay.
    const Order nct{Axis::N, Axis::C, Axis::T}, cnt{Axis::C, Axis::N, Axis::T}, tnc{Axis::T, Axis::N, Axis::C};
    const Order tcn{Axis::T, Axis::C, Axis::N};
    for (const bool back : {true, false}) {
        INFO((back ? "positions come back" : "they do not"));
        Net n;
        Variable* x = n.input("x", nct, {kDynamic, 5, 3});
        Variable* v = n.y(transpose(n, x, cnt, "to_cnt"));
        Attributes a;
        a.set("in_order", cnt);
        a.set("out_order", tnc);
        a.set("shape", std::vector<std::int64_t>{5, kDynamic, 3});
        a.set("follow", std::vector<std::string>{"C", "N", "T"});
        v = n.y(n.op("Reshape", "relabel", {{"x", v}}, std::move(a)));
        v = n.y(transpose(n, v, back ? OrderNTC : tcn, "to_ntc"));
        n.output(n.y(act(n, v, "relu", "relu")));
        check_rule(n, "cancel_transposes", back);
        n.apply("dead_ops");
        CHECK(n.count("Transpose") == (back ? 0u : 2u));
        CHECK(n.count("Reshape") == 1);
    }
}

TEST_CASE("passes: sink_transposes lets an order-agnostic op run in its input's layout", "[passes]") {
    SECTION("T -> BN(C) -> T^-1") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 3, 4, 2});
        auto* bn = n.y(batchnorm(n, n.y(transpose(n, x, OrderNCHW, "t1")), "C", 2, "bn"));
        n.output(n.y(act(n, n.y(transpose(n, bn, OrderNHWC, "t2")), "relu", "relu")));
        check_rule(n, "sink_transposes", true);
        CHECK(n.count("Transpose") == 0);
    }
    SECTION("not when the transposed value has another reader") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 3, 4, 2});
        auto* t1 = n.y(transpose(n, x, OrderNCHW, "t1"));
        auto* r = n.y(act(n, t1, "relu", "relu"));
        n.output(n.y(transpose(n, r, OrderNHWC, "t2")));
        n.output(n.y(act(n, t1, "tanh", "tanh")));
        check_rule(n, "sink_transposes", false);
    }
    SECTION("not through an op with a required order (Conv2D)") {
        Net n;
        auto* x = n.input("x", OrderNCHW, {kDynamic, 2, 5, 5});
        auto* c = n.y(conv2d(n, n.y(transpose(n, x, OrderNHWC, "t1")), 2, 2, "conv"));
        n.output(n.y(transpose(n, c, OrderNCHW, "t2")));
        check_rule(n, "sink_transposes", false);
    }
}

TEST_CASE("passes: cse merges identical ops and equal constants", "[passes]") {
    SECTION("fires") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 4});
        auto* w = n.constant("w", OrderCN, {4, 3});
        auto* w_copy = n.g.add_constant("w_copy", OrderCN, {4, 3}, w->shared_data());
        auto* a = n.y(n.op("Linear", "a", {{"x", x}, {"w", w}}, attrs({{"axis", std::string("C")}})));
        auto* b = n.y(n.op("Linear", "b", {{"x", x}, {"w", w_copy}}, attrs({{"axis", std::string("C")}})));
        n.output(n.y(n.op("Merge", "mul", {{"x0", a}, {"x1", b}}, attrs({{"op", std::string("mul")}}))));
        check_rule(n, "cse", true);
        CHECK(n.count("Linear") == 1);
    }
    SECTION("different attributes keep both") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 4});
        auto* a = n.y(act(n, x, "relu", "a"));
        auto* b = n.y(act(n, x, "tanh", "b"));
        n.output(n.y(n.op("Merge", "add", {{"x0", a}, {"x1", b}}, attrs({{"op", std::string("add")}}))));
        check_rule(n, "cse", false);
    }
}

TEST_CASE("passes: dead_ops removes what no output needs", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 4});
    auto* a = n.y(act(n, x, "relu", "a"));
    act(n, a, "tanh", "unused");
    n.output(a);
    check_rule(n, "dead_ops", true);
    CHECK(n.g.operators().size() == 1);
    check_rule(n, "dead_ops", false);
}

TEST_CASE("passes: pipelines per level and backend", "[passes]") {
    for (int level : {0, 1, 2})
        for (const char* backend : {"native", "graft", "cpp"}) {
            auto p = optimize::pipeline_for(level, backend);
            bool legalizes = false;
            for (const auto& g : p.groups())
                for (const auto& r : g.passes) legalizes = legalizes || r->name() == "legalize_layout";
            CHECK(legalizes);
        }
    CHECK(optimize::pipeline_for(0).groups().size() == 1);
    CHECK_THROWS_AS(optimize::pipeline_for(3), UnsupportedError);
    CHECK_THROWS_AS(optimize::pipeline_for(2, "webgl"), UnsupportedError);
    CHECK_THROWS_AS(optimize::make_pass("no_such_rule"), UnsupportedError);
}

TEST_CASE("passes: the O2 pipeline on a conv/BN/activation net: fewer ops, same values, a report", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNCHW, {kDynamic, 2, 6, 6});  // channels_first: transposes around the convs
    auto* t = n.y(transpose(n, x, OrderNHWC, "to_nhwc"));
    auto* c1 = n.y(conv2d(n, t, 2, 4, "conv1"));
    auto* b1 = n.y(batchnorm(n, n.y(transpose(n, c1, OrderNCHW, "c1_nchw")), "C", 4, "bn1"));
    auto* r1 = n.y(act(n, b1, "relu", "relu1"));
    auto* d = n.y(n.op("Identity", "dropout", {{"x", r1}}));
    auto* c2 = n.y(conv2d(n, n.y(transpose(n, d, OrderNHWC, "d_nhwc")), 4, 3, "conv2"));
    n.output(n.y(act(n, n.y(transpose(n, c2, OrderNCHW, "out")), "tanh", "tanh")));
    const auto inputs = graft_test::random_inputs(n.g, 2);
    const auto before = graft_test::run_native(n.g, *n.reg, inputs);
    optimize::PipelineReport report;
    optimize::pipeline_for(2).run(n.g, *n.reg, &report, true);
    CHECK(graft_test::max_diff(before, graft_test::run_native(n.g, *n.reg, inputs)) <= kTol);
    CHECK(report.ops_before == 10);
    CHECK(report.ops_after < report.ops_before);
    CHECK(n.count("BatchNormalization") == 0);
    CHECK(n.count("Identity") == 0);
    CHECK(report.arena_after <= report.arena_before);
    CHECK(report.naive_after < report.naive_before);
    // Running the pipeline again changes nothing (a fixpoint: descriptors round-trip).
    optimize::PipelineReport again;
    optimize::pipeline_for(2).run(n.g, *n.reg, &again);
    CHECK(again.ops_before == again.ops_after);
    for (const auto& s : again.steps) CHECK(s.fired == 0);
}

}  // namespace graft_test_passes
