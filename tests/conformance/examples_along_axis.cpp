// Conformance examples: TopK and CumSum (ops along one axis of x, in any memory order of x).
// References read x at named-axis positions: TopK sorts each row's (value, index) pairs by
// definition (the larger, or smaller, value first; equal values by the lower index), CumSum adds
// the row up in double.
#include <algorithm>
#include <numeric>

#include "reference.hpp"

namespace conformance {

namespace {

/// TopK of x along `axis`, k entries, largest or smallest; `k_input`: also feed k as the op's
/// optional input k (a constant holding the same k).
Example topk(Axis axis, std::int64_t k, bool largest, Operand x, bool k_input = false) {
    Example e;
    e.op_type = "TopK";
    e.name = std::string(largest ? "largest " : "smallest ") + std::to_string(k) + " along " + axis.name() + " of " + x.order.str() +
             (k_input ? ", k also an input" : "");
    e.attrs.set("axis", axis);
    e.attrs.set("k", k);
    e.attrs.set("largest", largest);
    x.port = "x";
    e.inputs = {std::move(x)};
    if (k_input) e.inputs.push_back(Operand{"k", graft::OrderC, {1}, true, {static_cast<float>(k)}});
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand& xi = find(in, "x");
        Shape shape = xi.shape;
        const std::size_t ai = xi.order.index(axis);
        const std::int64_t len = shape[ai];
        shape[ai] = k;
        // The chosen index of row position p at rank j.
        auto chosen = [&](const Pos& p) {
            std::vector<std::int64_t> idx(static_cast<std::size_t>(len));
            std::iota(idx.begin(), idx.end(), 0);
            Pos q = p;
            auto value = [&](std::int64_t i) {
                q[axis.name()] = i;
                return at(xi, q);
            };
            std::stable_sort(idx.begin(), idx.end(), [&](std::int64_t a, std::int64_t b) {
                const double va = value(a), vb = value(b);
                return largest ? va > vb : va < vb;  // stable: equal values keep the lower index first
            });
            return idx[static_cast<std::size_t>(p.at(axis.name()))];
        };
        auto values = output("values", xi.order, shape, [&](const Pos& p, std::int64_t) {
            Pos q = p;
            q[axis.name()] = chosen(p);
            return at(xi, q);
        });
        auto indices = output("indices", xi.order, shape, [&](const Pos& p, std::int64_t) { return static_cast<double>(chosen(p)); });
        return std::vector<Expected>{values, indices};
    };
    return e;
}

/// CumSum of x along `axis`.
Example cumsum(Axis axis, bool exclusive, bool reverse, Operand x) {
    Example e;
    e.op_type = "CumSum";
    e.name = "along " + axis.name() + (exclusive ? ", exclusive" : "") + (reverse ? ", reverse" : "") + " of " + x.order.str();
    e.attrs.set("axis", axis);
    e.attrs.set("exclusive", exclusive);
    e.attrs.set("reverse", reverse);
    x.port = "x";
    e.inputs = {std::move(x)};
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand& xi = in[0];
        const std::int64_t len = xi.shape[xi.order.index(axis)];
        return std::vector<Expected>{like("y", xi, [&](const Pos& p, std::int64_t) {
            const std::int64_t j = p.at(axis.name());
            double s = 0;
            Pos q = p;
            for (std::int64_t t = 0; t < len; ++t) {
                const bool in_sum = reverse ? (exclusive ? t > j : t >= j) : (exclusive ? t < j : t <= j);
                if (!in_sum) continue;
                q[axis.name()] = t;
                s += at(xi, q);
            }
            return s;
        })};
    };
    return e;
}

}  // namespace

std::vector<Example> along_axis_examples() {
    Seeds seed(500, 7);
    std::vector<Example> v;
    auto x = [&](Order o, Shape s) { return input("x", std::move(o), std::move(s), seed()); };
    v.push_back(topk(Axis::W, 3, true, x(OrderNHWC, {2, 3, 5, 4})));
    v.push_back(topk(Axis::C, 2, false, x(OrderNHWC, {2, 3, 5, 4})));
    v.push_back(topk(Axis::T, 6, true, x(OrderNTC, {2, 6, 3})));  // k = the whole axis: a sort
    v.push_back(topk(Axis::C, 1, true, x(OrderNC, {3, 7}), true));
    // Ties: values on a coarse grid, so that rows repeat values; the lower index comes first.
    Operand ties = x(OrderNTC, {2, 8, 3});
    for (auto& f : ties.data) f = std::round(f);
    v.push_back(topk(Axis::T, 5, true, ties));
    v.push_back(topk(Axis::T, 5, false, ties));
    v.push_back(cumsum(Axis::H, false, false, x(OrderNHWC, {2, 4, 3, 2})));
    v.push_back(cumsum(Axis::H, true, false, x(OrderNHWC, {2, 4, 3, 2})));
    v.push_back(cumsum(Axis::W, false, true, x(OrderNHWC, {2, 4, 3, 2})));
    v.push_back(cumsum(Axis::C, true, true, x(OrderNTC, {2, 3, 5})));
    return v;
}

}  // namespace conformance
