// Conformance examples: Cast, Gather, Where and OneHot (values of other dtypes, held as exact floats).
#include <cmath>

#include "reference.hpp"

namespace conformance {

namespace {

/// Cast x to `to`, reference from the definition: truncation toward zero, then the value wrapped
/// into the dtype's range (C++'s conversion to an integer of that width); bool: x != 0.
Example cast(const std::string& to, double lo, double bits) {
    Example e;
    e.op_type = "Cast";
    e.name = "to " + to;
    e.attrs.set("to", to);
    e.inputs = {input("x", graft::OrderNHWC, {2, 3, 2, 4}, 401, false, -300.f, 300.f)};
    e.inputs[0].data[0] = 0.f, e.inputs[0].data[1] = -0.5f, e.inputs[0].data[2] = 255.9f, e.inputs[0].data[3] = 127.5f;
    e.inputs[0].data[4] = -128.7f, e.inputs[0].data[5] = 256.f, e.inputs[0].data[6] = -1.f;
    e.reference = [=](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) {
            const double v = at(in[0], p);
            if (to == "float32") return v;
            if (to == "bool") return v != 0 ? 1.0 : 0.0;
            const double t = std::trunc(v);
            if (bits == 0) return t;  // int64: every value here fits
            const double span = std::pow(2.0, bits);
            double r = std::fmod(t - lo, span);
            if (r < 0) r += span;
            return r + lo;
        })};
    };
    return e;
}

}  // namespace

std::vector<Example> integer_examples() {
    std::vector<Example> v;
    v.push_back(cast("float32", 0, 0));
    v.push_back(cast("int64", 0, 0));
    v.push_back(cast("int32", -2147483648.0, 32));
    v.push_back(cast("uint8", 0, 8));
    v.push_back(cast("uint16", 0, 16));
    v.push_back(cast("int8", -128, 8));
    v.push_back(cast("bool", 0, 0));

    // Gather along H of x [N, H, W, C] with indices [N2, T] (their own axes): negative indices count
    // from the end, out-of-range ones give zeros, fractional ones are truncated.
    for (const Axis& axis : {Axis::H, Axis::C}) {
        Example g;
        g.op_type = "Gather";
        g.name = "along " + axis.name() + ", negative and out-of-range indices";
        g.attrs.set("axis", axis);
        const Order io{Axis("I0"), Axis("I1")};
        g.inputs = {input("x", graft::OrderNHWC, {2, 4, 3, 5}, 402), input("indices", io, {2, 3}, 403, true)};
        g.inputs[1].data = {0, 3, -1, 2.6f, -4, 7};  // 7 is out of range along H (4) and C (5)
        const std::int64_t len = axis == Axis::H ? 4 : 5;
        Order out_order = axis == Axis::H ? Order{Axis::N, Axis("I0"), Axis("I1"), Axis::W, Axis::C}
                                          : Order{Axis::N, Axis::H, Axis::W, Axis("I0"), Axis("I1")};
        Shape out_shape = axis == Axis::H ? Shape{2, 2, 3, 3, 5} : Shape{2, 4, 3, 2, 3};
        g.reference = [=](const std::vector<Operand>& in) {
            return std::vector<Expected>{output("y", out_order, out_shape, [&](const Pos& p, std::int64_t) {
                const double raw = at(in[1], p);
                const double k = raw < 0 ? raw + static_cast<double>(len) : std::trunc(raw);  // negative ones are integers
                if (k < 0 || k >= static_cast<double>(len)) return 0.0;
                Pos q = p;
                q[axis.name()] = static_cast<std::int64_t>(k);
                return at(in[0], q);
            })};
        };
        v.push_back(g);
    }

    Example w;
    w.op_type = "Where";
    w.name = "c != 0 ? a : b, huge values kept";
    w.inputs = {input("c", graft::OrderNTC, {2, 3, 4}, 404), input("a", graft::OrderNTC, {2, 3, 4}, 405),
                input("b", graft::OrderNTC, {2, 3, 4}, 406)};
    for (std::size_t i = 0; i < w.inputs[0].data.size(); ++i) w.inputs[0].data[i] = (i % 3 == 0) ? 0.f : (i % 3 == 1 ? 1.f : -2.f);
    w.inputs[2].data[0] = -3e38f;  // a masked_fill value where c == 0 (element 0): never multiplied
    w.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[1], [&](const Pos& p, std::int64_t) { return at(in[0], p) != 0 ? at(in[1], p) : at(in[2], p); })};
    };
    v.push_back(w);

    // OneHot of indices [N, T] into a new last axis D of depth 5: negative indices count from the
    // end, out-of-range and NaN ones give rows of off, fractional ones are truncated; the values
    // (off, on) a model input or a constant, and depth also fed as an input (the same value).
    for (bool runtime : {false, true}) {
        Example h;
        h.op_type = "OneHot";
        h.name = std::string("depth 5, negative and out-of-range indices, values ") + (runtime ? "an input, depth fed" : "a constant");
        const Axis d("D");
        const std::int64_t depth = 5;
        h.attrs.set("axis", d);
        h.attrs.set("depth", depth);
        h.inputs = {input("indices", graft::OrderNTC, {2, 3, 2}, 407), Operand{"values", graft::OrderC, {2}, !runtime, {-0.5f, 3.f}}};
        h.inputs[0].data = {0, 4, -1, -5, 5, -6, 2.7f, -2.5f, 1, 3, std::nanf(""), 2};
        if (runtime) h.inputs.push_back(Operand{"depth", graft::OrderC, {1}, true, {5.f}});
        h.reference = [=](const std::vector<Operand>& in) {
            const Operand& idx = find(in, "indices");
            const Operand& val = find(in, "values");
            return std::vector<Expected>{output("y", Order{Axis::N, Axis::T, Axis::C, d}, {2, 3, 2, depth}, [&](const Pos& p, std::int64_t) {
                double k = std::trunc(at(idx, p));
                if (k < 0) k += static_cast<double>(depth);
                return k == static_cast<double>(p.at("D")) ? static_cast<double>(val.data[1]) : static_cast<double>(val.data[0]);
            })};
        };
        v.push_back(h);
    }
    return v;
}

}  // namespace conformance
