// GridSample (the resize family's sampling at arbitrary points): x [N, C, H, W] sampled at grid
// [N, Ho, Wo, C=2] (normalized (x, y) per output pixel) into y [N, C, Ho, Wo]. Attributes mode
// (bilinear | nearest | bicubic), padding_mode (zeros | border | reflection), align_corners.
// Both backends run graft_rt::grid_sample (graft_rt/grid_sample.hpp).
#include "graft_rt/grid_sample.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"
#include "ops/resize/resize.hpp"

namespace graft::ops {

namespace {

using i64 = std::int64_t;

graft_rt::GridSampleParams params_of(const Operator& op) {
    return {enum_attr(op, "mode", graft_rt::GridMode::bilinear, graft_rt::grid_mode_name, 3),
            enum_attr(op, "padding_mode", graft_rt::GridPadding::zeros, graft_rt::grid_padding_name, 3),
            op.attr_or<bool>("align_corners", false)};
}

/// N, C, H, W of x and Ho, Wo of the grid, checked against each other.
struct GridDims {
    i64 n, c, h, w, ho, wo;
};

GridDims dims_of(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& g = in(op, "grid");
    expect_axes(op, x, OrderNCHW, "input x");
    expect_axes(op, g, OrderNHWC, "grid");
    if (g.size(Axis::C) != 2) shape_fail(op, "grid " + g.describe() + " should hold 2 coordinates (x, y) along C");
    if (g.size(Axis::N) != x.size(Axis::N))
        shape_fail(op, "grid " + g.describe() + " and input " + x.describe() + " differ in their batch");
    return {x.size(Axis::N), x.size(Axis::C), x.size(Axis::H), x.size(Axis::W), g.size(Axis::H), g.size(Axis::W)};
}

Outputs infer_grid_sample(const Operator& op) {
    params_of(op);  // an unknown mode fails here, at conversion
    const GridDims d = dims_of(op);
    return {{"y", {OrderNCHW, {d.n, d.c, d.ho, d.wo}}}};
}

std::unique_ptr<native::Kernel> build_grid_sample(native::BuildContext& b) {
    const auto p = params_of(b.op());
    const GridDims d = dims_of(b.op());
    const auto x = b.in("x"), g = b.in("grid"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::grid_sample(c.at(x), c.at(g), c.at(y), d.n, d.c, d.h, d.w, d.ho, d.wo, p);
    });
}

void emit_grid_sample(cpp::EmitContext& ctx) {
    const auto p = params_of(ctx.op());
    const GridDims d = dims_of(ctx.op());
    cpp::use(ctx, "grid_sample");
    ctx.line("constexpr graft_rt::GridSampleParams params = {{graft_rt::GridMode::{}, graft_rt::GridPadding::{}, {}}};",
             graft_rt::grid_mode_name(p.mode), graft_rt::grid_padding_name(p.padding), p.align_corners);
    ctx.line("graft_rt::grid_sample({}, {}, {}, {}, {}, {}, {}, {}, {}, params);", ctx.input("x"), ctx.input("grid"), ctx.output("y"), d.n,
             d.c, d.h, d.w, d.ho, d.wo);
}

}  // namespace

void register_grid_sample(Registry& r) {
    OpDef(kGridSample, {"x", "grid"}, infer_grid_sample,
          "samples x [N, C, H, W] at grid [N, Ho, Wo, C=2] (normalized x, y) into y [N, C, Ho, Wo]: mode bilinear | nearest | "
          "bicubic, padding_mode zeros | border | reflection, align_corners (ONNX GridSample, torch grid_sample)")
        .required_order([](const Operator&, const std::string& input) -> std::optional<Order> {
            return input == "x" ? OrderNCHW : OrderNHWC;
        })
        .add(r, build_grid_sample, emit_grid_sample);
}

}  // namespace graft::ops
