// Reverse: x with the entries along one axis in reverse order (Keras Bidirectional puts the
// backward layer's output sequence back in time order).
#include <cstring>

#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

Outputs infer_reverse(const Operator& op) {
    const Variable& x = in(op, "x");
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    if (!x.order().has(axis)) shape_fail(op, "input " + x.describe() + " has no axis " + axis.name());
    return {{"y", {x.order(), x.shape()}}};
}

std::unique_ptr<native::Kernel> build_reverse(native::BuildContext& b) {
    const auto sp = split_at(*b.op().input("x"), b.op().attrs().get_axis("axis"));
    const auto row = static_cast<std::size_t>(sp.inner) * sizeof(float);
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        const float* src = c.at(x);
        float* dst = c.at(y);
        for (std::int64_t o = 0; o < sp.outer; ++o)
            for (std::int64_t t = 0; t < sp.len; ++t)
                std::memcpy(dst + (o * sp.len + (sp.len - 1 - t)) * sp.inner, src + (o * sp.len + t) * sp.inner, row);
    });
}

}  // namespace

void register_reverse(Registry& r) {
    OpSchema s;
    s.type = "Reverse";
    s.inputs = {"x"};
    s.infer = infer_reverse;
    s.doc = "y = x with the entries along axis `axis` in reverse order";
    r.add_op(std::move(s));
    r.add_generator<native::Backend>("Reverse", build_reverse);
}

}  // namespace graft::ops
