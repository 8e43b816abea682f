// Rule fuse_residual: Add(conv(x), r) becomes conv(x, r = r) (a Linear's too), with the
// activation after the Add then fused too; values before and after agree on the native backend within 1e-5, the rule
// fires on ResNet-style blocks and not where the conv's plain output is still needed.
#include <catch2/catch.hpp>

#include "test_passes_support.hpp"

namespace graft_test_passes_residual {

using namespace graft;
using graft_test::Net;

namespace {

constexpr double kTol = 1e-5;

Attributes conv_attrs() {
    Attributes a;
    a.set("strides", std::vector<std::int64_t>{1, 1});
    a.set("dilations", std::vector<std::int64_t>{1, 1});
    a.set("padding", "same");
    return a;
}

Operator* conv(Net& n, Variable* x, std::int64_t cin, std::int64_t cout, const std::string& name, Variable* w = nullptr) {
    if (!w) w = n.constant(name + "/w", OrderHWCN, {3, 3, cin, cout});
    return n.op("Conv2D", name, {{"x", x}, {"w", w}, {"b", n.constant(name + "/b", OrderC, {cout})}}, conv_attrs());
}

Operator* merge(Net& n, const std::string& kind, std::vector<Variable*> xs, const std::string& name) {
    NamedVars ins;
    for (std::size_t i = 0; i < xs.size(); ++i) ins.emplace_back("x" + std::to_string(i), xs[i]);
    Attributes a;
    a.set("op", kind);
    return n.op("Merge", name, ins, std::move(a));
}

Operator* relu(Net& n, Variable* x, const std::string& name) {
    Attributes a;
    a.set("activation", "relu");
    return n.op("Activation", name, {{"x", x}}, std::move(a));
}

/// Applies `rules` in order; returns how many fired; outputs must not change.
int apply_checked(Net& net, std::initializer_list<const char*> rules) {
    const auto inputs = graft_test::random_inputs(net.g, 2);
    const auto before = graft_test::run_native(net.g, *net.reg, inputs);
    int fired = 0;
    for (const char* r : rules) fired += net.apply(r) ? 1 : 0;
    const auto after = graft_test::run_native(net.g, *net.reg, inputs);
    CHECK(graft_test::max_diff(before, after) <= kTol);
    return fired;
}

const Operator* find(const Net& n, const std::string& name) {
    for (auto* op : n.g.operators())
        if (op->name() == name) return op;
    return nullptr;
}

}  // namespace

TEST_CASE("passes: fuse_residual moves a ResNet block's Add and ReLU into the conv", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNHWC, {kDynamic, 6, 5, 4});
    auto* h = n.y(relu(n, n.y(conv(n, x, 4, 4, "c1")), "relu1"));
    auto* c2 = n.y(conv(n, h, 4, 4, "c2"));
    n.output(n.y(relu(n, n.y(merge(n, "add", {x, c2}, "add")), "relu2")));
    CHECK(apply_checked(n, {"fuse_residual", "fuse_activation"}) == 2);
    CHECK(n.count("Merge") == 0);
    CHECK(n.count("Activation") == 0);
    const Operator* c = find(n, "c2");
    REQUIRE(c);
    CHECK(c->input_or_null("r") == x);
    CHECK(c->attr<std::string>("activation") == "relu");
    CHECK(find(n, "c1")->input_or_null("r") == nullptr);
}

TEST_CASE("passes: fuse_residual with the conv first, two convs, and computed weights", "[passes]") {
    SECTION("Add(conv, shortcut) and Add(shortcut, conv) both fuse") {
        for (bool conv_first : {true, false}) {
            Net n;
            auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 4, 3});
            auto* c = n.y(conv(n, x, 3, 3, "c"));
            n.output(n.y(merge(n, "add", conv_first ? std::vector<Variable*>{c, x} : std::vector<Variable*>{x, c}, "add")));
            CHECK(apply_checked(n, {"fuse_residual"}) == 1);
            CHECK(n.count("Merge") == 0);
        }
    }
    SECTION("a projection shortcut: one conv takes the other's output as residual") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 5, 5, 2});
        auto* a = n.y(conv(n, x, 2, 6, "main"));
        auto* b = n.y(conv(n, x, 2, 6, "proj"));
        n.output(n.y(relu(n, n.y(merge(n, "add", {a, b}, "add")), "relu")));
        CHECK(apply_checked(n, {"fuse_residual", "fuse_activation"}) == 2);
        CHECK(n.count("Merge") == 0);
        CHECK(n.count("Conv2D") == 2);
    }
    SECTION("computed weights (the non-prepacked kernel path)") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 3, 2});
        auto* w = n.y(relu(n, n.constant("w0", OrderHWCN, {3, 3, 2, 2}), "w"));
        auto* c = n.y(conv(n, x, 2, 2, "c", w));
        n.output(n.y(relu(n, n.y(merge(n, "add", {c, x}, "add")), "relu")));
        CHECK(apply_checked(n, {"fuse_residual", "fuse_activation"}) == 2);
        CHECK(find(n, "c")->input_or_null("r") == x);
    }
}

TEST_CASE("passes: fuse_residual moves a transformer's residual Add into the Linear before it", "[passes]") {
    // x [N, T, C] -> Linear (the feed-forward's second layer) -> Add(x) -> ReLU; and one row, NC.
    for (bool rows : {true, false}) {
        INFO((rows ? "NTC" : "NC"));
        Net n;
        auto* x = rows ? n.input("x", OrderNTC, {kDynamic, 5, 6}) : n.input("x", OrderNC, {kDynamic, 6});
        Attributes a;
        a.set("axis", "C");
        auto* d = n.op("Linear", "ff2", {{"x", x}, {"w", n.constant("w", OrderCN, {6, 6})}, {"b", n.constant("b", OrderC, {6})}},
                       std::move(a));
        n.output(n.y(relu(n, n.y(merge(n, "add", {x, n.y(d)}, "add")), "relu")));
        CHECK(apply_checked(n, {"fuse_residual", "fuse_activation"}) == 2);
        CHECK(n.count("Merge") == 0);
        CHECK(find(n, "ff2")->input_or_null("r") == x);
        CHECK(find(n, "ff2")->attr<std::string>("activation") == "relu");
    }
}

TEST_CASE("passes: fuse_residual does not fire where it must not", "[passes]") {
    SECTION("the conv output has another reader") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 4, 3});
        auto* c = n.y(conv(n, x, 3, 3, "c"));
        n.output(n.y(merge(n, "add", {c, x}, "add")));
        n.output(n.y(relu(n, c, "other")));
        CHECK(apply_checked(n, {"fuse_residual"}) == 0);
    }
    SECTION("the conv output is a graph output") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 4, 3});
        auto* c = n.y(conv(n, x, 3, 3, "c"));
        n.output(c);
        n.output(n.y(merge(n, "add", {c, x}, "add")));
        CHECK(apply_checked(n, {"fuse_residual"}) == 0);
    }
    SECTION("the conv already has an activation (the add would come after it)") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 4, 3});
        auto* c = conv(n, x, 3, 3, "c");
        c->attrs().set("activation", "relu");
        n.output(n.y(merge(n, "add", {n.y(c), x}, "add")));
        CHECK(apply_checked(n, {"fuse_residual"}) == 0);
    }
    SECTION("not an add, or more than two inputs") {
        for (const char* kind : {"mul", "sub", "max", "avg"}) {
            Net n;
            auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 4, 3});
            n.output(n.y(merge(n, kind, {n.y(conv(n, x, 3, 3, "c")), x}, "m")));
            CHECK(apply_checked(n, {"fuse_residual"}) == 0);
        }
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 4, 3});
        n.output(n.y(merge(n, "add", {n.y(conv(n, x, 3, 3, "c")), x, x}, "add3")));
        CHECK(apply_checked(n, {"fuse_residual"}) == 0);
    }
    SECTION("BN after a conv with a residual is not folded into it") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 4, 4, 3});
        auto* s = n.y(merge(n, "add", {n.y(conv(n, x, 3, 3, "c")), x}, "add"));
        n.output(n.y(n.op("BatchNormalization", "bn",
                          {{"x", s},
                           {"mean", n.constant("bn/mean", OrderC, {3})},
                           {"var", n.constant("bn/var", OrderC, {3}, 0.2f, 2.f)}},
                          [] {
                              Attributes a;
                              a.set("axis", "C");
                              a.set("epsilon", 1e-3);
                              return a;
                          }())));
        CHECK(apply_checked(n, {"fuse_residual", "fold_batchnorm"}) == 1);
        CHECK(n.count("BatchNormalization") == 1);
    }
}

TEST_CASE("passes: the O2 pipeline turns a ResNet basic block into two convs", "[passes]") {
    Net n;
    auto* x = n.input("x", OrderNHWC, {kDynamic, 6, 6, 4});
    auto* h = n.y(relu(n, n.y(conv(n, x, 4, 4, "c1")), "relu1"));
    auto* s = n.y(merge(n, "add", {n.y(conv(n, h, 4, 4, "c2")), x}, "add"));
    n.output(n.y(relu(n, s, "relu2")));
    const auto inputs = graft_test::random_inputs(n.g, 3);
    const auto before = graft_test::run_native(n.g, *n.reg, inputs);
    optimize::pipeline_for(2).run(n.g, *n.reg);
    CHECK(graft_test::max_diff(before, graft_test::run_native(n.g, *n.reg, inputs)) <= kTol);
    CHECK(n.g.operators().size() == 2);
}

}  // namespace graft_test_passes_residual
