// Upsample (nearest neighbour, integer factors along named axes, any layout) and
// ResizeBilinear (NHWC, integer factors; legacy TF 1 or half-pixel TF 2 sampling).
#include <array>

#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

/// Factor per memory axis of x.
std::vector<std::int64_t> up_factors(const Operator& op) {
    const Variable& x = in(op, "x");
    const auto axes = op.attrs().get_order("axes", op.describe());
    const auto f = op.attr<std::vector<std::int64_t>>("factors");
    if (f.size() != axes.ndim()) shape_fail(op, "factors need one entry per axis of " + axes.str());
    if (x.ndim() > 8) throw UnsupportedError(op.describe() + ": upsampling of rank " + std::to_string(x.ndim()) + " (at most 8)");
    std::vector<std::int64_t> out(x.ndim(), 1);
    for (std::size_t i = 0; i < axes.ndim(); ++i) {
        if (axes[i] == Axis::N || !x.order().has(axes[i])) shape_fail(op, "cannot upsample axis " + axes[i].name() + " of " + x.describe());
        if (f[i] < 1) shape_fail(op, "factor " + std::to_string(f[i]) + " for axis " + axes[i].name() + " must be at least 1");
        out[x.order().index(axes[i])] = f[i];
    }
    return out;
}

struct Bilinear {
    std::int64_t n, h, w, c, oh, ow;
    bool half_pixel;
};

Bilinear bilinear_geometry(const Operator& op) {
    const Variable& x = in(op, "x");
    expect_axes(op, x, OrderNHWC, "input");
    const auto f = op.attr<std::vector<std::int64_t>>("factors");
    if (f.size() != 2 || f[0] < 1 || f[1] < 1) shape_fail(op, "factors need 2 entries of at least 1");
    return {x.size(Axis::N), x.size(Axis::H), x.size(Axis::W), x.size(Axis::C), x.size(Axis::H) * f[0], x.size(Axis::W) * f[1],
            op.attr<bool>("half_pixel")};
}

}  // namespace

void register_resize(Registry& r) {
    OpSchema u;
    u.type = "Upsample";
    u.inputs = {"x"};
    u.infer = [](const Operator& op) -> Outputs {
        const Variable& x = in(op, "x");
        auto f = up_factors(op);
        Shape s = x.shape();
        for (std::size_t i = 0; i < s.size(); ++i)
            if (s[i] != kDynamic) s[i] *= f[i];
        return {{"y", {x.order(), s}}};
    };
    u.doc = "nearest-neighbour upsampling: every entry repeated `factors` times along the axes `axes`, any layout";
    r.add_op(std::move(u));
    r.add_generator<native::Backend>("Upsample", [](native::BuildContext& b) {
        const Variable& x = *b.op().input("x");
        const auto f = up_factors(b.op());
        const int rank = static_cast<int>(x.ndim());
        std::array<std::int64_t, 8> shape{}, fs{};
        for (int i = 0; i < rank; ++i) shape[i] = x.shape()[i], fs[i] = f[i];
        auto xs = b.in("x"), y = b.out("y");
        return native::make_kernel(
            [=](const native::RunContext& c) { cpu::upsample_nearest(c.at(xs), c.at(y), shape.data(), fs.data(), rank); });
    });

    OpSchema s;
    s.type = "ResizeBilinear";
    s.inputs = {"x"};
    s.infer = [](const Operator& op) -> Outputs {
        auto g = bilinear_geometry(op);
        return {{"y", {OrderNHWC, {g.n, g.oh, g.ow, g.c}}}};
    };
    s.required_order = [](const Operator&, const std::string&) { return std::optional<Order>(OrderNHWC); };
    s.doc = "bilinear upsampling of NHWC images by integer factors[2]; attr half_pixel (TF 2 sampling) or not (TF 1)";
    r.add_op(std::move(s));
    r.add_generator<native::Backend>("ResizeBilinear", [](native::BuildContext& b) {
        auto g = bilinear_geometry(b.op());
        auto x = b.in("x"), y = b.out("y");
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::resize_bilinear_nhwc(c.at(x), c.at(y), g.n, g.h, g.w, g.c, g.oh, g.ow, g.half_pixel);
        });
    });
}

}  // namespace graft::ops
