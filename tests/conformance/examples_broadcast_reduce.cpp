// Conformance examples: Binary (numpy broadcasting over named axes), Expand, Reduce, ArgMax,
// ArgMin, Hardmax and Det.
// References read every input at a named-axis position, an axis the input lacks or has once read
// at index 0.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference.hpp"

namespace conformance {

namespace {

using graft::Axis;
using graft::OrderC;
using graft::OrderNHWC;
using graft::OrderNTC;

/// Operand o at position p, broadcasting: axes o lacks or has once read at index 0.
double bat(const Operand& o, const Pos& p) {
    Pos q;
    for (std::size_t i = 0; i < o.order.ndim(); ++i) {
        const auto it = p.find(o.order[i].name());
        q[o.order[i].name()] = o.shape[i] == 1 || it == p.end() ? 0 : it->second;
    }
    return at(o, q);
}

double binary_ref(const std::string& op, bool fmod, double a, double b) {
    if (op == "add") return a + b;
    if (op == "sub") return a - b;
    if (op == "mul") return a * b;
    if (op == "div") return a / b;
    if (op == "pow") return std::pow(a, b);
    if (op == "max") return std::max(a, b);
    if (op == "min") return std::min(a, b);
    if (op == "mod") {
        const double r = a - b * std::trunc(a / b);  // C's fmod: the dividend's sign
        return fmod || r == 0 || (r < 0) == (b < 0) ? r : r + b;
    }
    if (op == "equal") return a == b;
    if (op == "less") return a < b;
    if (op == "greater") return a > b;
    if (op == "less_equal") return a <= b;
    if (op == "greater_equal") return a >= b;
    if (op == "and") return a != 0 && b != 0;
    if (op == "or") return a != 0 || b != 0;
    if (op == "xor") return (a != 0) != (b != 0);
    throw std::runtime_error("no reference for binary op " + op);
}

/// Binary `op` of a and b into y of `order` and `shape`.
Example binary(const std::string& name, const std::string& op, Operand a, Operand b, const graft::Order& order, Shape shape,
               bool fmod = false) {
    Example e;
    e.op_type = "Binary";
    e.name = op + (fmod ? " (fmod)" : "") + ": " + name;
    e.attrs.set("op", op);
    e.attrs.set("order", order);
    if (fmod) e.attrs.set("fmod", true);
    a.port = "a", b.port = "b";
    e.inputs = {std::move(a), std::move(b)};
    e.reference = [=](const std::vector<Operand>& in) {
        Expected y{"y", order, shape, std::vector<double>(static_cast<std::size_t>(count(shape)))};
        each(order, shape, [&](const Pos& p, std::int64_t k) {
            y.data[static_cast<std::size_t>(k)] = binary_ref(op, fmod, bat(find(in, "a"), p), bat(find(in, "b"), p));
        });
        return std::vector<Expected>{y};
    };
    return e;
}

/// Expand of x to `shape` in `order`; with `like`, its size along `like_axis` for each kDynamic entry.
Example expand(const std::string& name, Operand x, const graft::Order& order, Shape shape, std::vector<Operand> like = {},
               const Axis& like_axis = Axis::N) {
    Example e;
    e.op_type = "Expand";
    e.name = name;
    e.attrs.set("order", order);
    e.attrs.set("shape", shape);
    x.port = "x";
    e.inputs = {std::move(x)};
    if (!like.empty()) {
        e.attrs.set("like_axis", like_axis);
        like[0].port = "like";
        for (auto& d : shape)
            if (d == graft::kDynamic) d = like[0].shape[like[0].order.index(like_axis)];
        e.inputs.push_back(std::move(like[0]));
    }
    e.reference = [=](const std::vector<Operand>& in) {
        Expected y{"y", order, shape, std::vector<double>(static_cast<std::size_t>(count(shape)))};
        each(order, shape, [&](const Pos& p, std::int64_t k) { y.data[static_cast<std::size_t>(k)] = bat(find(in, "x"), p); });
        return std::vector<Expected>{y};
    };
    return e;
}

Operand constant(const std::string& port, graft::Order order, Shape shape, std::vector<float> data) {
    return Operand{port, std::move(order), std::move(shape), true, std::move(data)};
}

/// x's order and shape without `axes` (keepdims: with them, of size 1).
std::pair<graft::Order, Shape> reduced_type(const Operand& x, const std::vector<Axis>& axes, bool keepdims) {
    std::vector<Axis> order;
    Shape shape;
    for (std::size_t i = 0; i < x.order.ndim(); ++i) {
        const bool r = std::find(axes.begin(), axes.end(), x.order[i]) != axes.end();
        if (r && !keepdims) continue;
        order.push_back(x.order[i]);
        shape.push_back(r ? 1 : x.shape[i]);
    }
    return {graft::Order(std::move(order)), std::move(shape)};
}

/// Every entry of x at the position p of y (the reduced axes walked), in x's order.
std::vector<double> group(const Operand& x, const std::vector<Axis>& axes, const Pos& p) {
    std::vector<double> out;
    each(x.order, x.shape, [&](const Pos& q, std::int64_t k) {
        for (const auto& [axis, i] : q)
            if (std::find(axes.begin(), axes.end(), Axis(axis)) == axes.end() && p.at(axis) != i) return;
        out.push_back(x.data[static_cast<std::size_t>(k)]);
    });
    return out;
}

double reduce_ref(const std::string& kind, const std::vector<double>& v) {
    double s = 0;
    if (kind == "max") return *std::max_element(v.begin(), v.end());
    if (kind == "min") return *std::min_element(v.begin(), v.end());
    if (kind == "prod") {
        s = 1;
        for (double x : v) s *= x;
        return s;
    }
    for (double x : v) {
        if (kind == "l1") s += std::fabs(x);
        else if (kind == "l2" || kind == "sum_square") s += x * x;
        else if (kind == "log_sum_exp") s += std::exp(x);
        else s += x;
    }
    if (kind == "mean") return s / static_cast<double>(v.size());
    if (kind == "l2") return std::sqrt(s);
    if (kind == "log_sum" || kind == "log_sum_exp") return std::log(s);
    return s;
}

Example reduce(const std::string& kind, std::vector<Axis> axes, bool keepdims, Operand x) {
    Example e;
    e.op_type = "Reduce";
    std::string names;
    for (const auto& a : axes) names += (names.empty() ? "" : ",") + a.name();
    e.name = kind + " over " + (names.empty() ? "nothing" : names) + " of " + x.order.str() + (keepdims ? ", keepdims" : "");
    e.attrs.set("kind", kind);
    std::vector<std::string> axis_names;
    for (const auto& a : axes) axis_names.push_back(a.name());
    e.attrs.set("axes", axis_names);
    e.attrs.set("keepdims", keepdims);
    x.port = "x";
    e.inputs = {std::move(x)};
    e.reference = [=](const std::vector<Operand>& in) {
        const auto [order, shape] = reduced_type(in[0], axes, keepdims);
        Expected y{"y", order, shape, std::vector<double>(static_cast<std::size_t>(count(shape)))};
        each(order, shape, [&, &o = order](const Pos& p, std::int64_t k) {
            Pos full = p;
            for (const auto& a : in[0].order.axes())
                if (!o.has(a)) full[a.name()] = 0;
            y.data[static_cast<std::size_t>(k)] = reduce_ref(kind, group(in[0], axes, full));
        });
        return std::vector<Expected>{y};
    };
    return e;
}

Example arg(const std::string& type, Axis axis, bool keepdims, bool last, Operand x) {
    Example e;
    e.op_type = type;
    e.name = "along " + axis.name() + " of " + x.order.str() + (keepdims ? ", keepdims" : "") + (last ? ", last index" : "");
    e.attrs.set("axis", axis);
    if (keepdims) e.attrs.set("keepdims", true);
    if (last) e.attrs.set("select_last_index", true);
    x.port = "x";
    e.inputs = {std::move(x)};
    e.reference = [=](const std::vector<Operand>& in) {
        const auto [order, shape] = reduced_type(in[0], {axis}, keepdims);
        Expected y{"y", order, shape, std::vector<double>(static_cast<std::size_t>(count(shape)))};
        each(order, shape, [&](const Pos& p, std::int64_t k) {
            Pos q = p;
            const std::int64_t len = in[0].shape[in[0].order.index(axis)];
            std::int64_t best = 0;
            for (std::int64_t j = 0; j < len; ++j) {
                q[axis.name()] = j;
                Pos b = q;
                b[axis.name()] = best;
                const double v = at(in[0], q), w = at(in[0], b);
                if (type == "ArgMax" ? (v > w || (last && v == w)) : (v < w || (last && v == w))) best = j;
            }
            y.data[static_cast<std::size_t>(k)] = static_cast<double>(best);
        });
        return std::vector<Expected>{y};
    };
    return e;
}

/// Hardmax along `axis`: ONNX's one-hot of the first largest entry, x's shape.
Example hardmax(Axis axis, Operand x) {
    Example e;
    e.op_type = "Hardmax";
    e.name = "along " + axis.name() + " of " + x.order.str();
    e.attrs.set("axis", axis);
    x.port = "x";
    e.inputs = {std::move(x)};
    e.reference = [=](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) {
            Pos q = p;
            double best = -INFINITY;
            std::int64_t at_best = -1;
            for (std::int64_t j = 0; j < in[0].shape[in[0].order.index(axis)]; ++j) {
                q[axis.name()] = j;
                if (at(in[0], q) > best) best = at(in[0], q), at_best = j;
            }
            return p.at(axis.name()) == at_best ? 1.0 : 0.0;
        })};
    };
    return e;
}

/// The determinant by cofactor expansion along the first row (the definition, not elimination).
double cofactor_det(const std::vector<std::vector<double>>& a) {
    const std::size_t m = a.size();
    if (m == 0) return 1;
    double d = 0;
    for (std::size_t j = 0; j < m; ++j) {
        std::vector<std::vector<double>> minor;
        for (std::size_t r = 1; r < m; ++r) {
            minor.emplace_back();
            for (std::size_t c = 0; c < m; ++c)
                if (c != j) minor.back().push_back(a[r][c]);
        }
        d += (j % 2 ? -1 : 1) * a[0][j] * cofactor_det(minor);
    }
    return d;
}

/// Det of the matrices of x over `rows` x `cols`.
Example det(Axis rows, Axis cols, Operand x) {
    Example e;
    e.op_type = "Det";
    e.name = "over " + rows.name() + " x " + cols.name() + " of " + x.order.str();
    e.attrs.set("axes", std::vector<std::string>{rows.name(), cols.name()});
    x.port = "x";
    e.inputs = {std::move(x)};
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand& xi = in[0];
        std::vector<Axis> kept;
        graft::Shape shape;
        for (std::size_t i = 0; i < xi.order.ndim(); ++i)
            if (xi.order[i] != rows && xi.order[i] != cols) kept.push_back(xi.order[i]), shape.push_back(xi.shape[i]);
        const std::int64_t m = xi.shape[xi.order.index(rows)];
        return std::vector<Expected>{output("y", graft::Order(kept), shape, [&](const Pos& p, std::int64_t) {
            std::vector<std::vector<double>> a(static_cast<std::size_t>(m), std::vector<double>(static_cast<std::size_t>(m)));
            Pos q = p;
            for (std::int64_t r = 0; r < m; ++r)
                for (std::int64_t c = 0; c < m; ++c) {
                    q[rows.name()] = r, q[cols.name()] = c;
                    a[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] = at(xi, q);
                }
            return cofactor_det(a);
        })};
    };
    return e;
}

}  // namespace

std::vector<Example> broadcast_examples() {
    std::vector<Example> v;
    const graft::Order NHC{Axis::N, Axis::H, Axis::C}, NWC{Axis::N, Axis::W, Axis::C}, NHWC = OrderNHWC;
    v.push_back(binary("equal shapes", "add", input("", OrderNTC, {2, 3, 4}, 30), input("", OrderNTC, {2, 3, 4}, 31), OrderNTC, {2, 3, 4}));
    v.push_back(binary("equal shapes into another order", "min", input("", OrderNTC, {2, 3, 4}, 32), input("", OrderNTC, {2, 3, 4}, 33),
                       graft::Order{Axis::N, Axis::C, Axis::T}, {2, 4, 3}));
    v.push_back(binary("a constant b in another order", "sub", input("", OrderNTC, {2, 3, 4}, 34),
                       input("", graft::Order{Axis::C, Axis::T, Axis::N}, {4, 3, 2}, 35, true), OrderNTC, {2, 3, 4}));
    v.push_back(binary("b over C (a bias)", "mul", input("", NHWC, {2, 3, 2, 4}, 36), input("", OrderC, {4}, 37, true), NHWC, {2, 3, 2, 4}));
    v.push_back(binary("b with an axis of size 1", "sub", input("", OrderNTC, {2, 3, 4}, 38), input("", OrderNTC, {2, 1, 4}, 39), OrderNTC,
                       {2, 3, 4}));
    v.push_back(binary("both broadcast (an outer product)", "max", input("", NHC, {2, 3, 1}, 40), input("", NWC, {2, 4, 5}, 41), NHWC,
                       {2, 3, 4, 5}));
    v.push_back(binary("a one value", "div", constant("", OrderC, {1}, {1.5f}), input("", OrderNTC, {2, 3, 4}, 42, false, 0.5f, 2.f),
                       OrderNTC, {2, 3, 4}));
    v.push_back(binary("b one value", "add", input("", OrderNTC, {2, 3, 4}, 43), constant("", OrderC, {1}, {-0.25f}), OrderNTC, {2, 3, 4}));
    v.push_back(binary("b lacks T", "pow", input("", OrderNTC, {2, 3, 4}, 44, false, 0.1f, 3.f),
                       input("", graft::Order{Axis::N, Axis::C}, {2, 4}, 45), OrderNTC, {2, 3, 4}));
    v.push_back(binary("b lacks N and H", "div", input("", NHWC, {2, 3, 2, 4}, 46),
                       input("", graft::Order{Axis::W, Axis::C}, {2, 4}, 47, true, 0.5f, 2.f), NHWC, {2, 3, 2, 4}));
    for (bool fmod : {false, true})
        v.push_back(binary("divisors of both signs", "mod", input("", OrderNTC, {2, 3, 4}, 48, false, -5.f, 5.f),
                           constant("", OrderC, {4}, {1.5f, -0.7f, 2.3f, -1.9f}), OrderNTC, {2, 3, 4}, fmod));
    // Comparisons and logic (1 / 0): small integers so that equal values occur, b broadcast over T.
    for (const char* op : {"equal", "less", "greater", "less_equal", "greater_equal", "and", "or", "xor"}) {
        Operand a = input("", OrderNTC, {2, 3, 4}, 56), b = input("", OrderNC, {2, 4}, 57);
        for (auto* o : {&a, &b})
            for (auto& x : o->data) x = std::round(x);  // -2 .. 2
        v.push_back(binary("integers, b lacks T", op, a, b, OrderNTC, {2, 3, 4}));
    }
    v.push_back(expand("an axis of size 1", input("", OrderNTC, {2, 1, 4}, 49), OrderNTC, {2, 3, 4}));
    v.push_back(expand("x lacks axes, y in another order", input("", OrderC, {4}, 50), graft::Order{Axis::T, Axis::N, Axis::C}, {3, 2, 4}));
    v.push_back(expand("one value", input("", OrderC, {1}, 55), OrderNC, {2, 3}));
    v.push_back(expand("a constant to the batch size of like", input("", graft::Order{Axis::T, Axis::C}, {1, 4}, 51, true), OrderNTC,
                       {graft::kDynamic, 3, 4}, {input("", OrderNC, {2, 5}, 52)}, Axis::N));
    v.push_back(expand("the size of like along another axis", input("", OrderNC, {2, 1}, 53), OrderNTC, {2, graft::kDynamic, 3},
                       {input("", OrderNC, {2, 4}, 54)}, Axis::C));
    return v;
}

std::vector<Example> reduce_examples() {
    std::vector<Example> v;
    const auto x = [](unsigned seed, float lo = -2.f, float hi = 2.f) { return input("x", OrderNHWC, {2, 3, 2, 5}, seed, false, lo, hi); };
    v.push_back(reduce("sum", {Axis::C}, false, x(50)));
    v.push_back(reduce("mean", {Axis::H, Axis::W}, true, x(51)));
    v.push_back(reduce("mean", {Axis::H, Axis::W}, false, x(52)));
    v.push_back(reduce("max", {Axis::T}, false, input("x", OrderNTC, {2, 5, 3}, 53)));
    v.push_back(reduce("min", {Axis::N, Axis::C}, false, x(54)));
    v.push_back(reduce("prod", {Axis::W, Axis::H}, false, x(55, 0.5f, 1.5f)));
    v.push_back(reduce("l1", {Axis::C, Axis::H}, false, x(56)));
    v.push_back(reduce("l2", {Axis::C, Axis::H}, true, x(57)));
    v.push_back(reduce("sum_square", {Axis::W}, false, x(58)));
    v.push_back(reduce("log_sum", {Axis::T}, false, input("x", OrderNTC, {2, 5, 3}, 59, false, 0.1f, 2.f)));
    v.push_back(reduce("log_sum_exp", {Axis::C}, false, x(60, -20.f, 20.f)));
    v.push_back(reduce("log_sum_exp", {Axis::H, Axis::C}, true, x(61)));
    v.push_back(reduce("sum", {Axis::N, Axis::H, Axis::W, Axis::C}, true, x(62)));
    v.push_back(reduce("sum", {}, false, x(63)));
    v.push_back(reduce("max", {Axis::T, Axis::C}, false, input("x", graft::Order{Axis::T, Axis::C}, {4, 3}, 67)));  // to one value

    // ties (values in {-1, 0, 1}) tell the first index from the last
    Operand ties = input("x", OrderNTC, {2, 6, 3}, 64, false, -1.5f, 1.5f);
    for (auto& f : ties.data) f = std::round(f);
    v.push_back(arg("ArgMax", Axis::C, false, false, x(65)));
    v.push_back(arg("ArgMax", Axis::T, true, false, ties));
    v.push_back(arg("ArgMax", Axis::T, false, true, ties));
    v.push_back(arg("ArgMin", Axis::H, false, false, x(66)));
    v.push_back(arg("ArgMin", Axis::T, false, false, ties));
    v.push_back(arg("ArgMin", Axis::T, true, true, ties));
    v.push_back(hardmax(Axis::C, x(68)));
    v.push_back(hardmax(Axis::H, x(69)));
    v.push_back(hardmax(Axis::T, ties));
    v.push_back(det(Axis::H, Axis::W, input("x", graft::Order{Axis::N, Axis::H, Axis::W}, {3, 3, 3}, 70)));
    v.push_back(det(Axis::W, Axis::H, input("x", graft::Order{Axis::W, Axis::N, Axis::C, Axis::H}, {4, 2, 2, 4}, 71)));  // transposed
    Operand singular = input("x", graft::Order{Axis::N, Axis::H, Axis::W}, {2, 3, 3}, 72);
    for (std::size_t c = 0; c < 3; ++c) singular.data[6 + c] = 2 * singular.data[c];  // matrix 0: row 2 = 2 x row 0
    v.push_back(det(Axis::H, Axis::W, singular));
    return v;
}

}  // namespace conformance
