// The resize family: schemas, native kernel builders and C++ emitters of Upsample and
// ResizeBilinear. Both backends run graft_rt's kernels (graft_rt/resize.hpp).
#include "ops/resize/resize.hpp"

#include "graft_rt/resize.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

using i64 = std::int64_t;

UpsampleAttrs UpsampleAttrs::parse(const Operator& op) {
    UpsampleAttrs a{op.attrs().get_order("axes", op.describe()), op.attr<std::vector<i64>>("factors")};
    if (a.factors.size() != a.axes.ndim()) shape_fail(op, "factors need one entry per axis of " + a.axes.str());
    return a;
}

std::vector<i64> UpsampleAttrs::factors_of(const Operator& op) const {
    const Variable& x = in(op, "x");
    check_rank(op, x.ndim(), graft_rt::max_rank, "upsampling");
    std::vector<i64> out(x.ndim(), 1);
    for (std::size_t i = 0; i < axes.ndim(); ++i) {
        if (axes[i] == Axis::N || !x.order().has(axes[i])) shape_fail(op, "cannot upsample axis " + axes[i].name() + " of " + x.describe());
        if (factors[i] < 1) shape_fail(op, "factor " + std::to_string(factors[i]) + " for axis " + axes[i].name() + " must be at least 1");
        out[x.order().index(axes[i])] = factors[i];
    }
    return out;
}

ResizeBilinearAttrs ResizeBilinearAttrs::parse(const Operator& op) {
    const auto f = op.attr<std::vector<i64>>("factors");
    if (f.size() != 2 || f[0] < 1 || f[1] < 1) shape_fail(op, "factors need 2 entries of at least 1");
    return {f[0], f[1], op.attr<bool>("half_pixel")};
}

ResizeBilinearAttrs::Geometry ResizeBilinearAttrs::geometry(const Operator& op) const {
    const Variable& x = in(op, "x");
    expect_axes(op, x, OrderNHWC, "input");
    const i64 h = x.size(Axis::H), w = x.size(Axis::W);
    return {x.size(Axis::N), h, w, x.size(Axis::C), h * factor_h, w * factor_w};
}

namespace {

// ---- Upsample ----------------------------------------------------------------------------------

Outputs infer_upsample(const Operator& op) {
    const Variable& x = in(op, "x");
    const auto f = UpsampleAttrs::parse(op).factors_of(op);
    Shape s = x.shape();
    for (std::size_t i = 0; i < s.size(); ++i)
        if (s[i] != kDynamic) s[i] *= f[i];
    return {{"y", {x.order(), s}}};
}

std::unique_ptr<native::Kernel> build_upsample(native::BuildContext& b) {
    const Variable& x = in(b.op(), "x");
    const auto f = UpsampleAttrs::parse(b.op()).factors_of(b.op());
    const int rank = static_cast<int>(x.ndim());
    const auto shape = fixed_array<graft_rt::max_rank>(x.shape()), fs = fixed_array<graft_rt::max_rank>(f);
    auto xs = b.in("x"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { graft_rt::upsample_nearest(c.at(xs), c.at(y), shape.data(), fs.data(), rank); });
}

void emit_upsample(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = in(op, "x");
    const auto f = UpsampleAttrs::parse(op).factors_of(op);
    cpp::use(ctx, "resize");
    ctx.constant_list("in_shape", x.shape(), x.order().str());
    ctx.constant_list("factors", f);
    ctx.line("graft_rt::upsample_nearest({}, {}, in_shape, factors, {});", ctx.input("x"), ctx.output("y"), x.ndim());
}

// ---- ResizeBilinear ----------------------------------------------------------------------------

Outputs infer_bilinear(const Operator& op) {
    const auto g = ResizeBilinearAttrs::parse(op).geometry(op);
    return {{"y", {OrderNHWC, {g.n, g.oh, g.ow, g.c}}}};
}

std::unique_ptr<native::Kernel> build_bilinear(native::BuildContext& b) {
    const auto a = ResizeBilinearAttrs::parse(b.op());
    const auto g = a.geometry(b.op());
    const bool half_pixel = a.half_pixel;
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::resize_bilinear_nhwc(c.at(x), c.at(y), g.n, g.h, g.w, g.c, g.oh, g.ow, half_pixel);
    });
}

void emit_bilinear(cpp::EmitContext& ctx) {
    const auto a = ResizeBilinearAttrs::parse(ctx.op());
    const auto g = a.geometry(ctx.op());
    cpp::use(ctx, "resize");
    ctx.constant_i64("N", g.n);
    ctx.constant_i64("H", g.h);
    ctx.constant_i64("W", g.w);
    ctx.constant_i64("C", g.c);
    ctx.constant_i64("OH", g.oh);
    ctx.constant_i64("OW", g.ow);
    ctx.line("graft_rt::resize_bilinear_nhwc({}, {}, N, H, W, C, OH, OW, /*half_pixel=*/{});", ctx.input("x"), ctx.output("y"),
             a.half_pixel);
}

}  // namespace

void register_resize(Registry& r) {
    OpDef(kUpsample, {"x"}, infer_upsample,
          "nearest-neighbour upsampling: every entry repeated `factors` times along the axes `axes`, any layout")
        .add(r, build_upsample, emit_upsample);
    OpDef(kResizeBilinear, {"x"}, infer_bilinear,
          "bilinear upsampling of NHWC images by integer factors[2]; attr half_pixel (TF 2 sampling) or not (TF 1)")
        .x_order(OrderNHWC)
        .add(r, build_bilinear, emit_bilinear);
}

}  // namespace graft::ops
