// Elementwise ops: Activation, Softmax (along an axis), Merge (add/sub/mul/avg/max/min of n
// same-shaped inputs), BiasAdd (a 1-D vector added along an axis) and Identity (inference
// no-ops such as Dropout). All accept any order.
#include <cstring>

#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

Outputs same_as_x(const Operator& op) {
    const Variable& x = in(op, "x");
    return {{"y", {x.order(), x.shape()}}};
}

cpu::Merge merge_kind(const Operator& op) {
    static const std::pair<const char*, cpu::Merge> kinds[] = {
        {"add", cpu::Merge::add}, {"sub", cpu::Merge::sub}, {"mul", cpu::Merge::mul},
        {"avg", cpu::Merge::avg}, {"max", cpu::Merge::max}, {"min", cpu::Merge::min}};
    auto k = op.attr<std::string>("op");
    for (auto& [n, m] : kinds)
        if (k == n) return m;
    throw UnsupportedError(op.describe() + ": merge '" + k + "' (expected add, sub, mul, avg, max or min)");
}

Outputs infer_merge(const Operator& op) {
    const auto& ins = op.inputs();
    if (ins.empty()) shape_fail(op, "needs at least one input");
    if (merge_kind(op) == cpu::Merge::sub && ins.size() != 2)
        shape_fail(op, "subtract needs exactly 2 inputs, got " + std::to_string(ins.size()));
    const Variable& x0 = *ins[0].second;
    for (auto& [n, v] : ins) {
        if (!v->order().same_axes(x0.order()) || v->shape_in(x0.order()) != x0.shape()) {
            bool dyn_ok = v->order().same_axes(x0.order());
            if (dyn_ok) {  // a dynamic batch on one side only is fine
                auto s = v->shape_in(x0.order());
                for (std::size_t i = 0; i < s.size(); ++i)
                    if (s[i] != x0.shape()[i] && s[i] != kDynamic && x0.shape()[i] != kDynamic) dyn_ok = false;
            }
            if (!dyn_ok)
                shape_fail(op, "input '" + n + "' " + v->describe() + " does not match input '" + ins[0].first + "' " +
                                   x0.describe() + " (merges need equal shapes)");
        }
    }
    return {{"y", {x0.order(), x0.shape()}}};
}

// BiasAdd: y = x + b[i] along one axis (Keras' per-feature bias; TF's BiasAdd). Merge stays a
// same-shape op; broadcasting one 1-D vector along a named axis is this op's whole job.
Outputs infer_bias_add(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& b = in(op, "b");
    auto axis = op.attrs().get_axis("axis", op.describe());
    if (!x.order().has(axis)) shape_fail(op, "input " + x.describe() + " has no axis " + axis.name());
    const auto len = x.size(axis);
    if (len == kDynamic) shape_fail(op, "axis " + axis.name() + " of " + x.describe() + " has no fixed size");
    if (b.ndim() != 1 || b.shape()[0] != len)
        shape_fail(op, "bias " + b.describe() + " should be 1-D [" + std::to_string(len) + "] like axis " + axis.name() +
                           " of the input");
    return same_as_x(op);
}

std::unique_ptr<native::Kernel> build_bias_add(native::BuildContext& b) {
    const Operator& op = b.op();
    auto sp = split_at(*op.input("x"), op.attrs().get_axis("axis"));
    auto x = b.in("x"), bias = b.in("b"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::channel_affine(c.at(x), nullptr, c.at(bias), c.at(y), sp.outer, sp.len, sp.inner);  // x * 1 + b
    });
}

std::unique_ptr<native::Kernel> build_merge(native::BuildContext& b) {
    const Operator& op = b.op();
    auto kind = merge_kind(op);
    std::vector<native::Slot> xs;
    for (auto& [n, v] : op.inputs()) xs.push_back(b.slot(v));
    auto y = b.out("y");
    auto size = op.output("y")->numel();
    // Pointers are gathered per run into a small fixed array: no allocation in run().
    constexpr std::size_t kMax = 64;
    if (xs.size() > kMax) throw UnsupportedError(op.describe() + ": more than 64 merge inputs");
    return native::make_kernel([=](const native::RunContext& c) {
        const float* ptrs[kMax];
        for (std::size_t i = 0; i < xs.size(); ++i) ptrs[i] = c.at(xs[i]);
        cpu::merge(kind, ptrs, static_cast<int>(xs.size()), c.at(y), size);
    });
}

}  // namespace

void register_elementwise(Registry& r) {
    OpSchema a;
    a.type = "Activation";
    a.inputs = {"x"};
    a.infer = [](const Operator& op) {
        act_params(op, op.attr<std::string>("activation"));
        return same_as_x(op);
    };
    a.inplace = true;
    a.doc = "y = f(x) elementwise; attrs activation (name), alpha, max_value, threshold";
    r.add_op(std::move(a));
    r.add_generator<native::Backend>("Activation", [](native::BuildContext& b) {
        auto p = act_params(b.op(), b.op().attr<std::string>("activation"));
        auto n = b.op().input("x")->numel();
        auto x = b.in("x"), y = b.out("y");
        return native::make_kernel([=](const native::RunContext& c) { cpu::activate(c.at(x), c.at(y), n, p); });
    });

    OpSchema s;
    s.type = "Softmax";
    s.inputs = {"x"};
    s.infer = [](const Operator& op) {
        auto axis = op.attrs().get_axis("axis", op.describe());
        if (!in(op, "x").order().has(axis)) shape_fail(op, "input " + in(op, "x").describe() + " has no axis " + axis.name());
        return same_as_x(op);
    };
    s.inplace = true;
    s.doc = "softmax along axis `axis`";
    r.add_op(std::move(s));
    r.add_generator<native::Backend>("Softmax", [](native::BuildContext& b) {
        auto sp = split_at(*b.op().input("x"), b.op().attrs().get_axis("axis"));
        auto x = b.in("x"), y = b.out("y");
        return native::make_kernel(
            [=](const native::RunContext& c) { cpu::softmax(c.at(x), c.at(y), sp.outer, sp.len, sp.inner); });
    });

    OpSchema m;
    m.type = "Merge";
    m.variadic = true;
    m.min_inputs = 1;
    m.infer = infer_merge;
    m.required_order = [](const Operator& op, const std::string&) { return std::optional<Order>(op.inputs().at(0).second->order()); };
    m.inplace = true;
    m.doc = "elementwise add|sub|mul|avg|max|min (attr op) of inputs x0, x1, ... of one shape";
    r.add_op(std::move(m));
    r.add_generator<native::Backend>("Merge", build_merge);

    OpSchema ba;
    ba.type = "BiasAdd";
    ba.inputs = {"x", "b"};
    ba.infer = infer_bias_add;
    ba.inplace = true;
    ba.doc = "y = x + b along axis `axis` (b: 1-D, one value per index of that axis); any order";
    r.add_op(std::move(ba));
    r.add_generator<native::Backend>("BiasAdd", build_bias_add);

    OpSchema id;
    id.type = "Identity";
    id.inputs = {"x"};
    id.infer = same_as_x;
    id.alias = true;
    id.doc = "y = x (inference no-ops: Dropout, noise layers); removed by the optimizer";
    r.add_op(std::move(id));
    r.add_generator<native::Backend>("Identity", [](native::BuildContext& b) {
        auto bytes = static_cast<std::size_t>(b.op().input("x")->numel()) * sizeof(float);
        auto x = b.in("x"), y = b.out("y");
        return native::make_kernel([=](const native::RunContext& c) {
            if (c.at(x) != c.at(y)) std::memcpy(c.at(y), c.at(x), bytes);
        });
    });
}

}  // namespace graft::ops
