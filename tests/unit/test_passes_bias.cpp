// Pass fold_bias_add: Binary(add / sub, P(x), per-channel constant) becomes P's bias (ONNX
// exporters' MatMul + Add and bias-less Conv + Add). check_rule runs the graph on the native
// backend before and after and requires the outputs to agree within 1e-5.
#include <catch2/catch.hpp>

#include "test_passes_support.hpp"

namespace graft_test_passes_bias {

using namespace graft;
using graft_test::attrs;
using graft_test::check_rule;
using graft_test::Net;

namespace {

Variable* binary(Net& n, const std::string& op, Variable* a, Variable* b, const Order& order, const std::string& name) {
    Attributes at;
    at.set("op", op);
    at.set("order", order);
    return n.y(n.op("Binary", name, {{"a", a}, {"b", b}}, at));
}

Variable* linear(Net& n, Variable* x, std::int64_t in, std::int64_t out, bool bias) {
    NamedVars ins{{"x", x}, {"w", n.constant("fc/w", OrderCN, {in, out})}};
    if (bias) ins.emplace_back("b", n.constant("fc/b", OrderC, {out}));
    return n.y(n.op("Linear", "fc", ins, attrs({{"axis", std::string("C")}})));
}

Variable* conv2d(Net& n, Variable* x, std::int64_t cin, std::int64_t cout) {
    return n.y(n.op("Conv2D", "conv", {{"x", x}, {"w", n.constant("conv/w", OrderHWCN, {3, 3, cin, cout})}},
                    attrs({{"strides", std::vector<std::int64_t>{1, 1}}, {"dilations", std::vector<std::int64_t>{1, 1}},
                           {"padding", std::string("same")}})));
}

const Order NTC{Axis::N, Axis::T, Axis::C};

}  // namespace

TEST_CASE("passes: fold_bias_add moves a per-channel Add into the Linear or Conv before it", "[passes]") {
    SECTION("MatMul + Add on a 3-D input (PyTorch's Linear), then the activation fuses too") {
        Net n;
        auto* x = n.input("x", NTC, {kDynamic, 3, 4});
        auto* y = binary(n, "add", linear(n, x, 4, 6, false), n.constant("bias", OrderC, {6}), NTC, "add");
        n.output(n.y(n.op("Activation", "gelu", {{"x", y}}, attrs({{"activation", std::string("gelu")}}))));
        check_rule(n, "fold_bias_add", true);
        CHECK(n.count("Binary") == 0);
        CHECK(n.apply("fuse_activation"));
        CHECK(n.g.operators().size() == 1);
    }
    SECTION("the constant first, on top of an existing bias, as [1, 1, C]") {
        Net n;
        auto* x = n.input("x", NTC, {kDynamic, 3, 4});
        n.output(binary(n, "add", n.constant("bias", NTC, {1, 1, 6}), linear(n, x, 4, 6, true), NTC, "add"));
        check_rule(n, "fold_bias_add", true);
        CHECK(n.g.operators().size() == 1);
    }
    SECTION("the sum in another memory order than the Linear's output (attention after a transpose)") {
        // A Transpose takes the Binary's place: its output, read by a Pad and a graph output,
        // keeps its layout.
        Net n;
        auto* x = n.input("x", NTC, {kDynamic, 3, 4});
        const Order TNC{Axis::T, Axis::N, Axis::C};
        auto* y = binary(n, "add", n.constant("bias", OrderC, {6}), linear(n, x, 4, 6, false), TNC, "add");
        Attributes crop;
        crop.set("axes", Order{Axis::C});
        crop.set("begin", std::vector<std::int64_t>{-1});
        crop.set("end", std::vector<std::int64_t>{-2});
        n.output(n.y(n.op("Pad", "slice", {{"x", y}}, crop)));
        n.output(y);
        check_rule(n, "fold_bias_add", true);
        CHECK(n.count("Binary") == 0);
        CHECK(n.count("Transpose") == 1);
        CHECK(y->order() == TNC);
    }
    SECTION("Sub of a scalar after a bias-less Conv2D") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 5, 5, 2});
        n.output(binary(n, "sub", conv2d(n, x, 2, 3), n.constant("k", OrderC, {1}), OrderNHWC, "sub"));
        check_rule(n, "fold_bias_add", true);
        CHECK(n.count("Binary") == 0);
    }
}

TEST_CASE("passes: fold_bias_add does not fire where it must not", "[passes]") {
    SECTION("a constant that varies along another axis") {
        Net n;
        auto* x = n.input("x", NTC, {kDynamic, 3, 4});
        n.output(binary(n, "add", linear(n, x, 4, 6, false), n.constant("c", Order{Axis::T, Axis::C}, {3, 6}), NTC, "add"));
        check_rule(n, "fold_bias_add", false);
    }
    SECTION("constant minus the output, and an output read twice") {
        for (bool twice : {false, true}) {
            Net n;
            auto* x = n.input("x", OrderNC, {kDynamic, 4});
            auto* fc = linear(n, x, 4, 6, false);
            auto* c = n.constant("c", OrderC, {6});
            n.output(twice ? binary(n, "add", fc, c, OrderNC, "add") : binary(n, "sub", c, fc, OrderNC, "sub"));
            if (twice) n.output(fc);
            check_rule(n, "fold_bias_add", false);
        }
    }
    SECTION("Mul is not a bias") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 4});
        n.output(binary(n, "mul", linear(n, x, 4, 6, false), n.constant("c", OrderC, {6}), OrderNC, "mul"));
        check_rule(n, "fold_bias_add", false);
    }
}

}  // namespace graft_test_passes_bias
