// Conformance examples: transposes, reshapes, concatenation, padding, reversal, depth to space and
// back, pooling.
#include <algorithm>
#include <cmath>

#include "reference.hpp"

namespace conformance {

namespace {

/// TF/Keras output size and leading pad of one pooled dimension.
std::pair<std::int64_t, std::int64_t> span(std::int64_t in, std::int64_t k, std::int64_t s, bool same) {
    if (!same) return {(in - k) / s + 1, 0};
    const std::int64_t out = (in + s - 1) / s;
    return {out, std::max<std::int64_t>((out - 1) * s + k - in, 0) / 2};
}

/// Max or average pooling over the named spatial axes of x (average over the taps in range), tap t
/// of a window at t * dil[i] (dil empty: 1).
Example pool(const std::string& type, Order order, Shape shape, std::vector<Axis> spatial, std::vector<std::int64_t> k,
             std::vector<std::int64_t> s, bool same, bool max, std::vector<std::int64_t> dil = {}) {
    Example e;
    e.op_type = type;
    e.name = std::string(max ? "max" : "avg") + (same ? " same" : " valid") + (dil.empty() ? "" : " dilated");
    if (!dil.empty()) e.attrs.set("dilations", dil);
    else dil.assign(k.size(), 1);
    e.attrs.set("kind", max ? "max" : "avg");
    e.attrs.set("pool_size", k);
    e.attrs.set("strides", s);
    e.attrs.set("padding", same ? "same" : "valid");
    e.inputs = {input("x", order, shape, 30)};
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        Shape out_shape = x.shape;
        std::vector<std::int64_t> pad(spatial.size());
        for (std::size_t i = 0; i < spatial.size(); ++i) {
            const std::size_t a = x.order.index(spatial[i]);
            std::tie(out_shape[a], pad[i]) = span(x.shape[a], (k[i] - 1) * dil[i] + 1, s[i], same);
        }
        return std::vector<Expected>{output("y", x.order, out_shape, [&](const Pos& p, std::int64_t) {
            double acc = max ? -INFINITY : 0;
            int taps = 0;
            std::vector<std::int64_t> t(spatial.size(), 0);
            for (;;) {
                Pos q = p;
                bool inside = true;
                for (std::size_t i = 0; i < spatial.size(); ++i) {
                    const std::int64_t v = p.at(spatial[i].name()) * s[i] - pad[i] + t[i] * dil[i];
                    inside = inside && v >= 0 && v < x.shape[x.order.index(spatial[i])];
                    q[spatial[i].name()] = v;
                }
                if (inside) acc = max ? std::max(acc, at(x, q)) : acc + at(x, q), ++taps;
                std::size_t i = spatial.size();
                while (i-- > 0 && ++t[i] == k[i]) t[i] = 0;
                if (i == static_cast<std::size_t>(-1)) break;
            }
            return taps == 0 ? 0 : max ? acc : acc / taps;
        })};
    };
    return e;
}

/// PoolArgMax over NHWC x [2, 5, 6, 3], 3x2 windows, strides 2, explicit pads (1, 0 / 1, 1): the
/// first maximum of each window in window order, as the flat index into x read as N, C, H, W
/// (column_major: N, C, W, H).
Example pool_argmax(bool column_major) {
    Example e;
    e.op_type = "PoolArgMax";
    e.name = column_major ? "column major" : "row major";
    e.attrs.set("kind", "max");
    e.attrs.set("pool_size", std::vector<std::int64_t>{3, 2});
    e.attrs.set("strides", std::vector<std::int64_t>{2, 2});
    e.attrs.set("padding", "explicit");
    e.attrs.set("pads", std::vector<std::int64_t>{1, 1, 0, 1});  // top, left, bottom, right
    e.attrs.set("ceil_mode", false);
    e.attrs.set("column_major", column_major);
    e.inputs = {input("x", graft::OrderNHWC, {2, 5, 6, 3}, 31)};
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        const std::int64_t H = 5, W = 6, C = 3;
        // out = floor((in + pads - k) / s) + 1: H (5 + 1 - 3) / 2 + 1 = 2, W (6 + 2 - 2) / 2 + 1 = 4
        return std::vector<Expected>{output("y", graft::OrderNHWC, {2, 2, 4, 3}, [&](const Pos& p, std::int64_t) {
            double best = -INFINITY;
            std::int64_t where = -1;
            for (std::int64_t kh = 0; kh < 3; ++kh)
                for (std::int64_t kw = 0; kw < 2; ++kw) {
                    const std::int64_t h = p.at("H") * 2 - 1 + kh, w = p.at("W") * 2 - 1 + kw;
                    if (h < 0 || h >= H || w < 0 || w >= W) continue;
                    Pos q = p;
                    q["H"] = h, q["W"] = w;
                    if (where >= 0 && !(at(x, q) > best)) continue;
                    best = at(x, q);
                    where = (p.at("N") * C + p.at("C")) * H * W + (column_major ? w * H + h : h * W + w);
                }
            return static_cast<double>(where);
        })};
    };
    return e;
}

/// DepthToSpace / SpaceToDepth of x [order, shape] with blocks of b along `axes` (ONNX's
/// definition, for any number of axes: the block's index along axes[0] is the most significant).
Example block(const std::string& type, Order order, Shape shape, std::vector<Axis> axes, std::int64_t b, bool crd, unsigned seed) {
    Example e;
    e.op_type = type;
    e.name = std::string(crd ? "CRD" : "DCR") + ", blocks of " + std::to_string(b) + " along " + Order(axes).str();
    e.attrs.set("axis", Axis::C);
    e.attrs.set("axes", Order(axes));
    e.attrs.set("block", b);
    e.attrs.set("mode", crd ? "CRD" : "DCR");
    e.inputs = {input("x", order, shape, seed)};
    const bool d2s = type == "DepthToSpace";
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        std::int64_t blocks = 1;
        Shape out = x.shape;
        for (const auto& a : axes) {
            auto& n = out[x.order.index(a)];
            n = d2s ? n * b : n / b;
            blocks *= b;
        }
        auto& c_out = out[x.order.index(Axis::C)];
        c_out = d2s ? c_out / blocks : c_out * blocks;
        const std::int64_t C = d2s ? c_out : x.shape[x.order.index(Axis::C)];  // channels within a block
        return std::vector<Expected>{output("y", x.order, out, [&](const Pos& p, std::int64_t) {
            Pos q = p;
            std::int64_t lin = 0, c = p.at("C");
            if (d2s) {
                for (const auto& a : axes) lin = lin * b + p.at(a.name()) % b, q[a.name()] = p.at(a.name()) / b;
                q["C"] = crd ? c * blocks + lin : lin * C + c;
            } else {
                lin = crd ? c % blocks : c / C;
                q["C"] = crd ? c / blocks : c % C;
                for (std::size_t j = axes.size(); j-- > 0;) q[axes[j].name()] = p.at(axes[j].name()) * b + lin % b, lin /= b;
            }
            return at(x, q);
        })};
    };
    return e;
}

}  // namespace

std::vector<Example> shape_examples() {
    std::vector<Example> v;
    const Order nhwc = OrderNHWC;

    Example tr;
    tr.op_type = "Transpose";
    tr.name = "NHWC to NCHW";
    tr.attrs.set("order", graft::OrderNCHW);
    tr.inputs = {input("x", nhwc, {2, 3, 4, 5}, 31)};
    tr.reference = [](const std::vector<Operand>& in) {
        const Shape shape = reorder_shape(in[0].shape, in[0].order, graft::OrderNCHW);
        return std::vector<Expected>{laid_out("y", in[0], graft::OrderNCHW, graft::OrderNCHW, shape)};
    };
    v.push_back(tr);

    Example rs;
    rs.op_type = "Reshape";
    rs.name = "flatten NHWC to NC";
    rs.attrs.set("in_order", nhwc);
    rs.attrs.set("out_order", graft::OrderNC);
    rs.attrs.set("shape", std::vector<std::int64_t>{graft::kDynamic, 24});
    rs.inputs = {input("x", nhwc, {2, 2, 3, 4}, 32)};
    rs.reference = [](const std::vector<Operand>& in) {  // row-major in NHWC, whatever x's memory order
        return std::vector<Expected>{laid_out("y", in[0], graft::OrderNHWC, graft::OrderNC, {2, 24})};
    };
    v.push_back(rs);

    Example cc;
    cc.op_type = "Concat";
    cc.name = "along C";
    cc.attrs.set("axis", Axis::C);
    cc.inputs = {input("x0", OrderNTC, {2, 3, 2}, 33), input("x1", OrderNTC, {2, 3, 4}, 34)};
    cc.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{output("y", OrderNTC, {2, 3, 6}, [&](const Pos& p, std::int64_t) {
            Pos q = p;
            const bool first = p.at("C") < 2;
            if (!first) q["C"] -= 2;
            return at(in[first ? 0 : 1], q);
        })};
    };
    v.push_back(cc);

    Example pad;
    pad.op_type = "Pad";
    pad.name = "pad H, crop W";
    pad.attrs.set("axes", graft::Order{Axis::H, Axis::W});
    pad.attrs.set("begin", std::vector<std::int64_t>{1, -1});
    pad.attrs.set("end", std::vector<std::int64_t>{2, 0});
    pad.inputs = {input("x", nhwc, {2, 3, 4, 2}, 35)};
    pad.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{output("y", OrderNHWC, {2, 6, 3, 2}, [&](const Pos& p, std::int64_t) {
            Pos q = p;
            q["H"] -= 1, q["W"] += 1;
            const bool inside = q["H"] >= 0 && q["H"] < 3;
            return inside ? at(in[0], q) : 0.0;
        })};
    };
    v.push_back(pad);

    // The other modes: a constant other than zero, the edge entry, a reflection (numpy's "reflect",
    // here by stepping back and forth, wider than the axis so it wraps twice).
    for (const std::string mode : {"constant", "edge", "reflect"}) {
        Example m;
        m.op_type = "Pad";
        m.name = mode + (mode == "constant" ? " 1.5" : "") + ": pad H and W, crop C";
        m.attrs.set("axes", graft::Order{Axis::H, Axis::W, Axis::C});
        m.attrs.set("begin", std::vector<std::int64_t>{2, 7, 0});
        m.attrs.set("end", std::vector<std::int64_t>{1, 3, -1});
        m.attrs.set("mode", mode);
        if (mode == "constant") m.attrs.set("value", 1.5f);
        m.inputs = {input("x", nhwc, {2, 3, 4, 3}, 37)};
        m.reference = [mode](const std::vector<Operand>& in) {
            auto source = [&](std::int64_t i, std::int64_t n, bool& inside) {
                inside = i >= 0 && i < n;
                if (mode == "edge") return std::min(std::max<std::int64_t>(i, 0), n - 1);
                while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
                return i;
            };
            return std::vector<Expected>{output("y", OrderNHWC, {2, 6, 14, 2}, [&](const Pos& p, std::int64_t) {
                Pos q = p;
                bool in_h = true, in_w = true;
                q["H"] = source(p.at("H") - 2, 3, in_h);
                q["W"] = source(p.at("W") - 7, 4, in_w);
                if (mode == "constant" && !(in_h && in_w)) return 1.5;
                return at(in[0], q);
            })};
        };
        v.push_back(m);
    }

    Example rev;
    rev.op_type = "Reverse";
    rev.name = "along T";
    rev.attrs.set("axis", Axis::T);
    rev.inputs = {input("x", OrderNTC, {2, 5, 3}, 36)};
    rev.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("y", in[0], [&](const Pos& p, std::int64_t) {
            Pos q = p;
            q["T"] = 4 - p.at("T");
            return at(in[0], q);
        })};
    };
    v.push_back(rev);

    for (bool max : {true, false}) {
        v.push_back(pool("Pool2D", nhwc, {2, 5, 6, 3}, {Axis::H, Axis::W}, {3, 2}, {2, 2}, true, max));
        v.push_back(pool("Pool2D", nhwc, {1, 5, 5, 2}, {Axis::H, Axis::W}, {2, 2}, {1, 2}, false, max));
        v.push_back(pool("Pool3D", graft::OrderNDHWC, {1, 4, 3, 5, 2}, {Axis::D, Axis::H, Axis::W}, {2, 2, 3}, {2, 1, 2}, true, max));
        v.push_back(pool("Pool2D", nhwc, {1, 7, 6, 3}, {Axis::H, Axis::W}, {3, 2}, {1, 2}, true, max, {2, 3}));
        v.push_back(pool("Pool3D", graft::OrderNDHWC, {1, 5, 4, 4, 2}, {Axis::D, Axis::H, Axis::W}, {2, 2, 2}, {1, 1, 2}, false, max, {2, 1, 2}));
    }

    for (bool column_major : {false, true}) v.push_back(pool_argmax(column_major));

    for (bool max : {true, false}) {
        Example gp;
        gp.op_type = "GlobalPool";
        gp.name = max ? "max over H, W" : "mean over H, W";
        gp.attrs.set("kind", max ? "max" : "avg");
        gp.attrs.set("axes", graft::Order{Axis::H, Axis::W});
        gp.inputs = {input("x", nhwc, {2, 3, 4, 5}, 39)};
        gp.reference = [max](const std::vector<Operand>& in) {
            return std::vector<Expected>{output("y", OrderNC, {2, 5}, [&](const Pos& p, std::int64_t) {
                double acc = max ? -INFINITY : 0;
                for (std::int64_t h = 0; h < 3; ++h)
                    for (std::int64_t w = 0; w < 4; ++w) {
                        Pos q = p;
                        q["H"] = h, q["W"] = w;
                        acc = max ? std::max(acc, at(in[0], q)) : acc + at(in[0], q);
                    }
                return max ? acc : acc / 12;
            })};
        };
        v.push_back(gp);
    }

    const std::vector<Axis> hw{Axis::H, Axis::W};
    v.push_back(block("DepthToSpace", graft::OrderNCHW, {2, 8, 2, 3}, hw, 2, false, 41));
    v.push_back(block("DepthToSpace", nhwc, {1, 2, 3, 12}, hw, 2, true, 42));
    v.push_back(block("DepthToSpace", graft::OrderNDHWC, {1, 2, 1, 3, 16}, {Axis::D, Axis::H, Axis::W}, 2, false, 43));
    v.push_back(block("SpaceToDepth", graft::OrderNCHW, {2, 2, 4, 6}, hw, 2, false, 44));
    v.push_back(block("SpaceToDepth", nhwc, {1, 3, 6, 2}, hw, 3, true, 45));
    return v;
}

}  // namespace conformance
