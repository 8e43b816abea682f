// BatchNormalization at inference: y = (x - mean) / sqrt(var + eps) * gamma + beta along one
// axis. The native generator folds it into one scale and shift per channel when it is built.
#include <cmath>

#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

Outputs infer_bn(const Operator& op) {
    const Variable& x = in(op, "x");
    auto axis = op.attrs().get_axis("axis", op.describe());
    if (!x.order().has(axis)) shape_fail(op, "input " + x.describe() + " has no axis " + axis.name());
    const auto c = x.size(axis);
    for (const char* n : {"mean", "var", "gamma", "beta"}) {
        auto* v = op.input_or_null(n);
        if (v && (v->order() != OrderC || v->shape()[0] != c))
            shape_fail(op, std::string(n) + " " + v->describe() + " should be C [" + std::to_string(c) + "] like axis " +
                               axis.name() + " of the input");
    }
    op.attr<double>("epsilon");
    return {{"y", {x.order(), x.shape()}}};
}

std::unique_ptr<native::Kernel> build_bn(native::BuildContext& b) {
    const Operator& op = b.op();
    auto sp = split_at(*op.input("x"), op.attrs().get_axis("axis"));
    auto constant = [&](const char* n) -> const std::vector<float>* {
        auto* v = op.input_or_null(n);
        if (!v) return nullptr;
        if (!v->is_constant()) throw UnsupportedError(op.describe() + ": '" + n + "' must be a constant");
        return &static_cast<const ConstantVariable*>(v)->data();
    };
    const auto* mean = constant("mean");
    const auto* var = constant("var");
    const auto* gamma = constant("gamma");
    const auto* beta = constant("beta");
    const double eps = op.attr<double>("epsilon");
    auto scale = std::make_shared<std::vector<float>>(sp.len);
    auto shift = std::make_shared<std::vector<float>>(sp.len);
    for (std::int64_t i = 0; i < sp.len; ++i) {
        double s = (gamma ? (*gamma)[i] : 1.0) / std::sqrt(static_cast<double>((*var)[i]) + eps);
        (*scale)[i] = static_cast<float>(s);
        (*shift)[i] = static_cast<float>((beta ? (*beta)[i] : 0.0) - (*mean)[i] * s);
    }
    const float* sc = b.keep(scale);
    const float* sh = b.keep(shift);
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::channel_affine(c.at(x), sc, sh, c.at(y), sp.outer, sp.len, sp.inner);
    });
}

}  // namespace

void register_batch_norm(Registry& r) {
    OpSchema s;
    s.type = "BatchNormalization";
    s.inputs = {"x", "mean", "var", "gamma?", "beta?"};
    s.infer = infer_bn;
    s.inplace = true;
    s.doc = "inference batch normalization along axis `axis`; attr epsilon; gamma/beta optional (scale/center off)";
    r.add_op(std::move(s));
    r.add_generator<native::Backend>("BatchNormalization", build_bn);
}

}  // namespace graft::ops
