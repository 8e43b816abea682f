// The native backend's fused inverted-residual block (ops/conv/block.hpp): which chains the
// rewrite takes and which it leaves, and that the fused kernel gives exactly the values of the
// three ops run one by one (the same kernels in the same order; the ops themselves are checked
// against references elsewhere, and the torch-exported MobileNet fixtures check the fused models
// against torch's forward in test_onnx_torch.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

#include "../integration/support.hpp"
#include "cpu/caches.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "ops/conv/block.hpp"
#include "test_passes_support.hpp"

namespace graft_test_conv_block {

using namespace graft;
using graft_test::attrs;
using graft_test::max_diff;
using graft_test::Net;
using graft_test::random_inputs;
using graft_test::run_native;
using i64 = std::int64_t;
using Ints = std::vector<i64>;

namespace {

const Order kHWCM{Axis::H, Axis::W, Axis::C, Axis("M")};

/// GRAFT_FUSE_BLOCKS for a scope.
struct FuseEnv : graft_test::ScopedEnv {
    explicit FuseEnv(const char* mode) : ScopedEnv("GRAFT_FUSE_BLOCKS", mode) {}
};

struct Block {
    Variable *x, *expanded, *depthwise, *y;
};

Attributes relu6(Attributes a) {
    a.set("activation", std::string("relu_general"));
    a.set("alpha", 0.0);
    a.set("max_value", 6.0);
    return a;
}

/// A 1x1 Conv2D named `name` (ReLU6 unless `linear`), with residual r when given.
Variable* pointwise(Net& n, const std::string& name, Variable* x, i64 cin, i64 cout, bool linear,
                    Variable* r = nullptr) {
    NamedVars in{{"x", x},
                 {"w", n.constant(name + "/w", OrderHWCN, {1, 1, cin, cout})},
                 {"b", n.constant(name + "/b", OrderC, {cout})}};
    if (r) in.emplace_back("r", r);
    Attributes a = attrs({{"strides", Ints{1, 1}}, {"dilations", Ints{1, 1}}, {"padding", std::string("valid")}});
    return n.y(n.op("Conv2D", name, std::move(in), linear ? a : relu6(a)));
}

/// A 3x3 DepthwiseConv2D, stride s, 'same' padding, ReLU6; weights w, or constants when null.
Variable* depthwise(Net& n, const std::string& name, Variable* x, i64 c, i64 s, Variable* w = nullptr) {
    if (!w) w = n.constant(name + "/w", kHWCM, {3, 3, c, 1});
    return n.y(
        n.op("DepthwiseConv2D", name, {{"x", x}, {"w", w}, {"b", n.constant(name + "/b", OrderC, {c})}},
             relu6(attrs({{"strides", Ints{s, s}}, {"dilations", Ints{1, 1}}, {"padding", std::string("same")}}))));
}

/// x [2, h, w, cin] -> 1x1 (ReLU6) -> 3x3 depthwise, stride s (ReLU6) -> 1x1 [+ x when s == 1 and
/// cin == cout]; depthwise weights a graph input instead of a constant with `dynamic_dw`.
Block block(Net& n, i64 h, i64 w, i64 cin, i64 e, i64 cout, i64 s, bool dynamic_dw = false) {
    Block b;
    b.x = n.input("x", OrderNHWC, {2, h, w, cin});
    b.expanded = pointwise(n, "expand", b.x, cin, e, false);
    b.depthwise = depthwise(n, "dw", b.expanded, e, s, dynamic_dw ? n.input("wd", kHWCM, {3, 3, e, 1}) : nullptr);
    b.y = pointwise(n, "project", b.depthwise, e, cout, true, s == 1 && cin == cout ? b.x : nullptr);
    return b;
}

/// ConvBlock ops fuse_conv_blocks makes of a copy of the graph.
std::size_t fused(const Net& n) {
    Graph g = n.g.clone();
    const auto plans = ops::fuse_conv_blocks(g);
    std::size_t count = 0;
    for (const Operator* op : g.operators()) count += op->type() == ops::kConvBlock;
    CHECK(plans.size() == count);
    return count;
}

}  // namespace

TEST_CASE("conv block: the fused kernel gives the unfused values exactly in any band height", "[fusion][conv]") {
    struct Case {
        i64 h, w, cin, e, cout, s;
    };
    for (const Case c : {Case{9, 7, 8, 24, 8, 1}, Case{10, 9, 8, 24, 12, 2}, Case{11, 6, 4, 16, 4, 1},
                         Case{1, 5, 4, 8, 4, 1}, Case{2, 3, 3, 6, 5, 2}}) {
        Net n;
        const Block b = block(n, c.h, c.w, c.cin, c.e, c.cout, c.s);
        n.output(b.y);
        const auto inputs = random_inputs(n.g, 2);
        std::vector<Tensor> want;
        {
            FuseEnv off("0");
            CHECK(fused(n) == 0);
            want = run_native(n.g, *n.reg, inputs);
        }
        for (const char* mode : {"all", "rows=1", "rows=2", "rows=3", "rows=100"}) {
            INFO("h " << c.h << " w " << c.w << " stride " << c.s << ", GRAFT_FUSE_BLOCKS=" << mode);
            FuseEnv on(mode);
            CHECK(fused(n) == 1);
            CHECK(max_diff(run_native(n.g, *n.reg, inputs), want) == 0.0);
        }
    }
}

TEST_CASE("conv block: under int8 and bf16 the fused kernel gives the unfused values exactly", "[fusion][conv]") {
    // Pointwise products of 32 channels or more run reduced (conv_precision): the project in
    // the first case, both in the second; the third has none. The rows are quantised one by
    // one, so the bands change nothing.
    struct Case {
        i64 h, w, cin, e, cout, s;
        bool reduced;
    };
    for (const graft::Precision lowp : {graft::Precision::int8, graft::Precision::bf16})
        for (const Case c : {Case{9, 7, 8, 48, 8, 1, true}, Case{10, 9, 32, 64, 40, 2, true}, Case{8, 8, 4, 16, 4, 1, false}}) {
            Net n;
            const Block b = block(n, c.h, c.w, c.cin, c.e, c.cout, c.s);
            n.output(b.y);
            const auto inputs = random_inputs(n.g, 3);
            std::vector<Tensor> want, fp32;
            {
                FuseEnv off("0");
                want = run_native(n.g, *n.reg, inputs, lowp);
                fp32 = run_native(n.g, *n.reg, inputs);
            }
            INFO(graft::precision_name(lowp) << " cin " << c.cin << " e " << c.e << " cout " << c.cout);
            if (graft::cpu::gemm::qgemm_fast(lowp)) CHECK((max_diff(want, fp32) > 0.0) == c.reduced);
            for (const char* mode : {"all", "rows=1", "rows=3"}) {
                INFO("GRAFT_FUSE_BLOCKS=" << mode);
                FuseEnv on(mode);
                CHECK(max_diff(run_native(n.g, *n.reg, inputs, lowp), want) == 0.0);
            }
        }
}

TEST_CASE("conv block: chains whose intermediates are read elsewhere or whose weights vary stay unfused",
          "[fusion][conv]") {
    FuseEnv all("all");
    SECTION("the depthwise output is also a graph output") {
        Net n;
        const Block b = block(n, 8, 8, 4, 16, 4, 1);
        n.output(b.y);
        n.output(b.depthwise);
        CHECK(fused(n) == 0);
    }
    SECTION("the expanded tensor has a second reader") {
        Net n;
        const Block b = block(n, 8, 8, 4, 16, 4, 1);
        n.output(b.y);
        n.output(n.y(n.op("Activation", "other", {{"x", b.expanded}}, attrs({{"activation", std::string("relu")}}))));
        CHECK(fused(n) == 0);
    }
    SECTION("depthwise weights that are an input") {
        Net n;
        const Block b = block(n, 8, 8, 4, 16, 4, 1, true);
        n.output(b.y);
        CHECK(fused(n) == 0);
    }
    SECTION("a plain chain is fused") {
        Net n;
        n.output(block(n, 8, 8, 4, 16, 4, 1).y);
        CHECK(fused(n) == 1);
    }
}

TEST_CASE("conv block: an op joins one chain at most (MobileNet v1's alternating layers)", "[fusion][conv]") {
    // pw -> dw -> pw -> dw/2 -> pw: the middle pointwise layer could be the project of the first
    // chain and the expand of the second; the first chain takes it, the second stays unfused.
    Net n;
    Variable* x = n.input("x", OrderNHWC, {2, 10, 9, 8});
    Variable* y = pointwise(n, "pw1", x, 8, 16, false);
    y = pointwise(n, "pw2", depthwise(n, "dw1", y, 16, 1), 16, 16, false);
    n.output(pointwise(n, "pw3", depthwise(n, "dw2", y, 16, 2), 16, 8, true));
    const auto inputs = random_inputs(n.g, 2);
    std::vector<Tensor> want;
    {
        FuseEnv off("0");
        want = run_native(n.g, *n.reg, inputs);
    }
    for (const char* mode : {"all", "rows=1"}) {
        FuseEnv on(mode);
        CHECK(fused(n) == 1);
        CHECK(max_diff(run_native(n.g, *n.reg, inputs), want) == 0.0);
    }
}

TEST_CASE("conv block: by default only chains whose expanded tensor would leave the L2 are fused", "[fusion][conv]") {
    FuseEnv auto_mode("auto");
    // 32 expanded channels: an image of side 8 is 8 KB, one of side `big` about twice the L2.
    const i64 big = static_cast<i64>(std::ceil(std::sqrt(2.0 * static_cast<double>(cpu::cache_bytes(2)) / (32 * 4))));
    Net small, large;
    small.output(block(small, 8, 8, 8, 32, 8, 1).y);
    large.output(block(large, big, big, 8, 32, 8, 1).y);
    CHECK(fused(small) == 0);
    CHECK(fused(large) == 1);
}

TEST_CASE("conv block: a stem (3x3 / 2 over 3 channels) fuses as the expand and gives the unfused values exactly",
          "[fusion][conv]") {
    // MobileNet v2's stem and first block: Conv2D 3x3 stride 2 (ReLU6) -> depthwise 3x3 -> 1x1.
    // Its patches of 27 taps run fp32 at every precision, so int8 changes the project only.
    const auto stem_chain = [](Net& n, i64 h, i64 w, i64 cin, i64 e, const std::string& padding) {
        Variable* x = n.input("x", OrderNHWC, {2, h, w, cin});
        Variable* s = n.y(n.op("Conv2D", "stem",
                               {{"x", x},
                                {"w", n.constant("stem/w", OrderHWCN, {3, 3, cin, e})},
                                {"b", n.constant("stem/b", OrderC, {e})}},
                               relu6(attrs({{"strides", Ints{2, 2}},
                                            {"dilations", Ints{1, 1}},
                                            {"padding", padding}}))));
        n.output(pointwise(n, "project", depthwise(n, "dw", s, e, 1), e, 6, true));
    };
    struct Case {
        i64 h, w;
        const char* padding;  // 'same' at stride 2 pads the bottom and right of an even image only
    };
    for (const Case c : {Case{13, 11, "same"}, Case{12, 10, "same"}, Case{9, 14, "valid"}}) {
        Net n;
        stem_chain(n, c.h, c.w, 3, 16, c.padding);
        const auto inputs = random_inputs(n.g, 4);
        for (const graft::Precision prec : {graft::Precision::fp32, graft::Precision::int8}) {
            std::vector<Tensor> want;
            {
                FuseEnv off("0");
                want = run_native(n.g, *n.reg, inputs, prec);
            }
            for (const char* mode : {"all", "rows=1", "rows=2", "rows=5"}) {
                INFO("h " << c.h << " w " << c.w << " " << c.padding << ", " << graft::precision_name(prec)
                          << ", GRAFT_FUSE_BLOCKS=" << mode);
                FuseEnv on(mode);
                CHECK(fused(n) == 1);
                CHECK(max_diff(run_native(n.g, *n.reg, inputs, prec), want) == 0.0);
            }
        }
    }
    SECTION("a spatial expand with 32 taps or more (it may run reduced alone) stays unfused") {
        FuseEnv all("all");
        Net n;
        stem_chain(n, 12, 12, 4, 16, "same");  // 3 x 3 x 4 = 36 taps
        CHECK(fused(n) == 0);
    }
}

}  // namespace graft_test_conv_block
