// Layout and shape ops: Transpose (to another order of the same axes), Reshape (reinterpret
// the elements of x, laid out in `in_order`, as `out_order` with `shape`) and Concat.
#include <cstring>

#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

Outputs infer_transpose(const Operator& op) {
    const Variable& x = in(op, "x");
    auto order = op.attrs().get_order("order", op.describe());
    if (!x.order().same_axes(order)) shape_fail(op, "cannot transpose " + x.describe() + " to order " + order.str());
    return {{"y", {order, x.shape_in(order)}}};
}

std::unique_ptr<native::Kernel> build_transpose(native::BuildContext& b) {
    const Variable& x = *b.op().input("x");
    auto perm = x.order().permutation_to(b.op().attrs().get_order("order"));
    const int rank = static_cast<int>(perm.size());
    if (rank > 8) throw UnsupportedError(b.op().describe() + ": transpose of rank " + std::to_string(rank) + " (at most 8)");
    std::array<std::int64_t, 8> shape{};
    std::array<int, 8> p{};
    for (int i = 0; i < rank; ++i) shape[i] = x.shape()[i], p[i] = perm[i];
    auto xs = b.in("x"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { cpu::transpose(c.at(xs), c.at(y), shape.data(), p.data(), rank); });
}

/// Output shape of a Reshape: `shape` may hold one kDynamic entry (the batch), solved from
/// the element count of x.
Outputs infer_reshape(const Operator& op) {
    const Variable& x = in(op, "x");
    auto in_order = op.attrs().get_order("in_order", op.describe());
    auto out_order = op.attrs().get_order("out_order", op.describe());
    auto shape = op.attr<std::vector<std::int64_t>>("shape");
    if (!x.order().same_axes(in_order)) shape_fail(op, "input " + x.describe() + " does not have the axes of " + in_order.str());
    if (shape.size() != out_order.ndim()) shape_fail(op, "shape " + shape_str(shape) + " does not fit order " + out_order.str());
    std::int64_t known = 1;
    int dynamic = 0;
    for (auto d : shape) {
        if (d == kDynamic) ++dynamic;
        else if (d < 0) shape_fail(op, "bad target shape " + shape_str(shape));
        else known *= d;
    }
    if (dynamic > 1) shape_fail(op, "target shape " + shape_str(shape) + " has more than one free dimension");
    const std::int64_t total = x.numel();
    if (total == kDynamic) {
        if (!dynamic) shape_fail(op, "a dynamic input " + x.describe() + " needs a free dimension in the target shape");
        // the free dimension follows the batch; the rest must divide one way or the other (the
        // batch may absorb a dimension, (N, T, C) -> (N*T, C), or give one back, TimeDistributed)
        std::int64_t fixed = 1;
        for (auto d : x.shape())
            if (d != kDynamic) fixed *= d;
        if (known == 0 || (fixed % known != 0 && known % fixed != 0))
            shape_fail(op, "cannot reshape " + x.describe() + " to " + shape_str(shape) + ": element counts differ");
    } else if (dynamic) {
        if (known == 0 || total % known != 0)
            shape_fail(op, "cannot reshape " + x.describe() + " to " + shape_str(shape) + ": element counts differ");
        for (auto& d : shape)
            if (d == kDynamic) d = total / known;
    } else if (known != total) {
        shape_fail(op, "cannot reshape " + x.describe() + " (" + std::to_string(total) + " elements) to " + shape_str(shape));
    }
    return {{"y", {out_order, shape}}};
}

std::unique_ptr<native::Kernel> build_copy(native::BuildContext& b) {
    auto bytes = static_cast<std::size_t>(b.op().input("x")->numel()) * sizeof(float);
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        if (c.at(x) != c.at(y)) std::memcpy(c.at(y), c.at(x), bytes);
    });
}

Outputs infer_concat(const Operator& op) {
    const auto& ins = op.inputs();
    if (ins.empty()) shape_fail(op, "needs at least one input");
    auto axis = op.attrs().get_axis("axis", op.describe());
    const Variable& x0 = *ins[0].second;
    if (!x0.order().has(axis)) shape_fail(op, "input " + x0.describe() + " has no axis " + axis.name());
    Shape out = x0.shape();
    const auto ai = x0.order().index(axis);
    out[ai] = 0;
    for (auto& [n, v] : ins) {
        if (!v->order().same_axes(x0.order())) shape_fail(op, "input '" + n + "' " + v->describe() + " has other axes than " + x0.describe());
        auto s = v->shape_in(x0.order());
        for (std::size_t i = 0; i < s.size(); ++i)
            if (i != ai && s[i] != x0.shape()[i] && s[i] != kDynamic && x0.shape()[i] != kDynamic)
                shape_fail(op, "input '" + n + "' " + v->describe() + " differs from " + x0.describe() + " outside axis " + axis.name());
        out[ai] += s[ai];
    }
    return {{"y", {x0.order(), out}}};
}

std::unique_ptr<native::Kernel> build_concat(native::BuildContext& b) {
    const Operator& op = b.op();
    auto axis = op.attrs().get_axis("axis");
    std::vector<native::Slot> xs;
    std::vector<std::int64_t> lens;
    Split3 sp{};
    for (auto& [n, v] : op.inputs()) {
        xs.push_back(b.slot(v));
        sp = split_at(*v, axis);
        lens.push_back(sp.len);
    }
    constexpr std::size_t kMax = 64;
    if (xs.size() > kMax) throw UnsupportedError(op.describe() + ": more than 64 concatenated inputs");
    auto y = b.out("y");
    // The memory plan may have placed every input in its slice of y (concat elimination): then
    // there is nothing to copy.
    bool in_place = sp.outer == 1;
    std::size_t at = y.offset;
    for (std::size_t i = 0; i < xs.size() && in_place; ++i) {
        in_place = !xs[i].constant && !y.constant && xs[i].offset == at;
        at += static_cast<std::size_t>(lens[i] * sp.inner) * sizeof(float);
    }
    if (in_place) return native::make_kernel([](const native::RunContext&) {});
    return native::make_kernel([=](const native::RunContext& c) {
        const float* ptrs[kMax];
        for (std::size_t i = 0; i < xs.size(); ++i) ptrs[i] = c.at(xs[i]);
        cpu::concat(ptrs, lens.data(), static_cast<int>(xs.size()), c.at(y), sp.outer, sp.inner);
    });
}

}  // namespace

void register_shape(Registry& r) {
    OpSchema t;
    t.type = "Transpose";
    t.inputs = {"x"};
    t.infer = infer_transpose;
    t.doc = "y = x laid out in order `order` (same axes)";
    r.add_op(std::move(t));
    r.add_generator<native::Backend>("Transpose", build_transpose);

    OpSchema s;
    s.type = "Reshape";
    s.inputs = {"x"};
    s.infer = infer_reshape;
    s.required_order = [](const Operator& op, const std::string&) {
        return std::optional<Order>(op.attrs().get_order("in_order", op.describe()));
    };
    s.alias = true;
    s.doc = "x's elements, read in order `in_order`, viewed as `out_order` with `shape` (one free dimension)";
    r.add_op(std::move(s));
    r.add_generator<native::Backend>("Reshape", build_copy);

    OpSchema c;
    c.type = "Concat";
    c.variadic = true;
    c.infer = infer_concat;
    c.required_order = [](const Operator& op, const std::string&) { return std::optional<Order>(op.inputs().at(0).second->order()); };
    c.doc = "concatenation of x0, x1, ... along axis `axis`";
    r.add_op(std::move(c));
    r.add_generator<native::Backend>("Concat", build_concat);
}

}  // namespace graft::ops
