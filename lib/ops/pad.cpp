// Pad: zero padding and cropping along named axes (any layout). attrs axes (order), begin and end
// (one per axis; a negative amount crops). y's size along an axis is begin + size + end.
#include <array>

#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

struct PadGeometry {
    std::vector<std::int64_t> in, out, begin;  // memory order of x
};

PadGeometry pad_geometry(const Operator& op) {
    const Variable& x = in(op, "x");
    const auto axes = op.attrs().get_order("axes", op.describe());
    const auto begin = op.attr<std::vector<std::int64_t>>("begin"), end = op.attr<std::vector<std::int64_t>>("end");
    if (begin.size() != axes.ndim() || end.size() != axes.ndim())
        shape_fail(op, "begin and end need one entry per axis of " + axes.str());
    if (x.ndim() > 8) throw UnsupportedError(op.describe() + ": padding of rank " + std::to_string(x.ndim()) + " (at most 8)");
    PadGeometry g;
    g.in = x.shape();
    g.out = x.shape();
    g.begin.assign(x.ndim(), 0);
    for (std::size_t i = 0; i < axes.ndim(); ++i) {
        if (axes[i] == Axis::N || !x.order().has(axes[i])) shape_fail(op, "cannot pad axis " + axes[i].name() + " of " + x.describe());
        const std::size_t k = x.order().index(axes[i]);
        const std::int64_t out = x.shape()[k] + begin[i] + end[i];
        if (x.shape()[k] == kDynamic || out < 1)
            shape_fail(op, "padding " + std::to_string(begin[i]) + "/" + std::to_string(end[i]) + " of axis " + axes[i].name() +
                               " of " + x.describe() + " leaves " + std::to_string(out) + " entries");
        g.out[k] = out;
        g.begin[k] = begin[i];
    }
    return g;
}

}  // namespace

void register_pad(Registry& r) {
    OpSchema s;
    s.type = "Pad";
    s.inputs = {"x"};
    s.infer = [](const Operator& op) -> Outputs { return {{"y", {in(op, "x").order(), pad_geometry(op).out}}}; };
    s.doc = "zero padding (begin/end > 0) or cropping (< 0) along the axes `axes`, any layout";
    r.add_op(std::move(s));
    r.add_generator<native::Backend>("Pad", [](native::BuildContext& b) {
        const auto g = pad_geometry(b.op());
        const int rank = static_cast<int>(g.in.size());
        std::array<std::int64_t, 8> in{}, out{}, begin{};
        for (int i = 0; i < rank; ++i) in[i] = g.in[i], out[i] = g.out[i], begin[i] = g.begin[i];
        auto x = b.in("x"), y = b.out("y");
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::pad_nd(c.at(x), c.at(y), in.data(), out.data(), begin.data(), rank);
        });
    });
}

}  // namespace graft::ops
