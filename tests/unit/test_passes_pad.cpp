// Pass fold_pad: a zero Pad of spatial axes read by one forward convolution becomes the
// convolution's explicit pads (torch's padded stride-2 layers, Keras' ZeroPadding2D + 'valid').
// check_rule runs the graph on the native backend before and after (the Pad kernel and the
// 'valid' convolution are each tested against references elsewhere; the torch-exported
// MobileNet and ResNet fixtures check the folded result against torch's forward).
#include <catch2/catch.hpp>

#include <algorithm>

#include "test_passes_support.hpp"

namespace graft_test_passes_pad {

using namespace graft;
using graft_test::attrs;
using graft_test::check_rule;
using graft_test::Net;
using i64 = std::int64_t;
using Ints = std::vector<i64>;

namespace {

Variable* pad(Net& n, Variable* x, const Order& axes, Ints begin, Ints end, const std::string& mode = "constant",
              double value = 0.0) {
    Attributes a = attrs({{"begin", begin}, {"end", end}, {"mode", mode}, {"value", value}});
    a.set("axes", axes);
    return n.y(n.op("Pad", "pad", {{"x", x}}, std::move(a)));
}

Operator* conv(Net& n, const std::string& type, Variable* x, const Order& w_order, Shape w, Ints strides,
               const std::string& padding) {
    const Ints dil(strides.size(), 1);
    return n.op(type, "conv", {{"x", x}, {"w", n.constant("conv/w", w_order, std::move(w))}, {"b", n.constant("conv/b", OrderC, {8})}},
                attrs({{"strides", strides}, {"dilations", dil}, {"padding", padding}}));
}

const Order kHW{Axis::H, Axis::W};
const Order kHWCM{Axis::H, Axis::W, Axis::C, Axis("M")};
const Order kTCN{Axis::T, Axis::C, Axis::N};

/// The convolution of a test graph (the only op that is neither Pad nor Transpose).
const Operator& conv_of(const Net& n) {
    const auto ops = n.g.operators();
    const auto it = std::find_if(ops.begin(), ops.end(), [](const Operator* o) { return o->type() != "Pad" && o->type() != "Transpose"; });
    REQUIRE(it != ops.end());
    return **it;
}

Ints pads_of(const Net& n) { return conv_of(n).attr_or<Ints>("pads", {}); }
std::string padding_of(const Net& n) { return conv_of(n).attr<std::string>("padding"); }

}  // namespace

TEST_CASE("passes: fold_pad moves a zero Pad into the convolution that reads it", "[passes]") {
    SECTION("torch's stride-2 depthwise layer: one on each side, then 'valid'") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 9, 9, 8});
        n.output(n.y(conv(n, "DepthwiseConv2D", pad(n, x, kHW, {1, 1}, {1, 1}), kHWCM, {3, 3, 8, 1}, {2, 2}, "valid")));
        check_rule(n, "fold_pad", true);
        CHECK(n.count("Pad") == 0);
        CHECK(padding_of(n) == "explicit");
        CHECK(pads_of(n) == Ints{1, 1, 1, 1});
    }
    SECTION("uneven pads added to a 'same' convolution's own") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 8, 7, 3});
        // 'same' over the padded 10 x 10 with stride 2 pads 0 before and 1 after in H, 0 / 1 in W.
        n.output(n.y(conv(n, "Conv2D", pad(n, x, kHW, {0, 2}, {2, 1}), OrderHWCN, {3, 3, 3, 8}, {2, 2}, "same")));
        check_rule(n, "fold_pad", true);
        CHECK(n.count("Pad") == 0);
        CHECK(pads_of(n) == Ints{0, 2, 3, 2});
    }
    SECTION("through the Transpose into the convolution's layout") {
        Net n;
        auto* x = n.input("x", OrderNCHW, {kDynamic, 3, 11, 11});
        Attributes to;
        to.set("order", OrderNHWC);
        auto* t = n.y(n.op("Transpose", "t", {{"x", pad(n, x, kHW, {3, 3}, {3, 3})}}, std::move(to)));
        n.output(n.y(conv(n, "Conv2D", t, OrderHWCN, {7, 7, 3, 8}, {2, 2}, "valid")));
        check_rule(n, "fold_pad", true);
        CHECK(n.count("Pad") == 0);
        CHECK(n.count("Transpose") == 1);
        CHECK(pads_of(n) == Ints{3, 3, 3, 3});
    }
    SECTION("a 1-D convolution over T, a pad of size 0 on C too") {
        Net n;
        auto* x = n.input("x", OrderNTC, {kDynamic, 10, 4});
        n.output(n.y(conv(n, "Conv1D", pad(n, x, Order{Axis::T, Axis::C}, {2, 0}, {1, 0}), kTCN, {3, 4, 8}, {1}, "valid")));
        check_rule(n, "fold_pad", true);
        CHECK(pads_of(n) == Ints{2, 1});
    }
}

TEST_CASE("passes: fold_pad does not fire where the padding is not the convolution's", "[passes]") {
    auto dw = [](Net& n, Variable* x) {
        return n.y(conv(n, "DepthwiseConv2D", x, kHWCM, {3, 3, 8, 1}, {1, 1}, "valid"));
    };
    SECTION("reflect, edge, or a value other than zero") {
        for (const auto& [mode, value] : {std::pair<std::string, double>{"reflect", 0.0}, {"edge", 0.0}, {"constant", 0.5}}) {
            Net n;
            auto* x = n.input("x", OrderNHWC, {kDynamic, 6, 6, 8});
            n.output(dw(n, pad(n, x, kHW, {1, 1}, {1, 1}, mode, value)));
            INFO(mode << " " << value);
            check_rule(n, "fold_pad", false);
        }
    }
    SECTION("a pad of the channels, or a crop") {
        for (bool channels : {true, false}) {
            Net n;
            auto* x = n.input("x", OrderNHWC, {kDynamic, 6, 6, channels ? 7 : 8});
            auto* p = channels ? pad(n, x, Order{Axis::C}, {1}, {0}) : pad(n, x, kHW, {-1, 1}, {1, 1});
            n.output(dw(n, p));
            check_rule(n, "fold_pad", false);
        }
    }
    SECTION("the padded tensor read by someone else too") {
        Net n;
        auto* x = n.input("x", OrderNHWC, {kDynamic, 6, 6, 8});
        auto* p = pad(n, x, kHW, {1, 1}, {1, 1});
        n.output(dw(n, p));
        n.output(p);
        check_rule(n, "fold_pad", false);
    }
    SECTION("a causal 1-D convolution") {
        Net n;
        auto* x = n.input("x", OrderNTC, {kDynamic, 10, 4});
        n.output(n.y(conv(n, "Conv1D", pad(n, x, Order{Axis::T}, {1}, {1}), kTCN, {3, 4, 8}, {1}, "causal")));
        check_rule(n, "fold_pad", false);
    }
}

}  // namespace graft_test_passes_pad
