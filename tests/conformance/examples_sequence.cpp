// Conformance examples: normalizations over named axes (LRN across channels too), embeddings and
// masks.
#include <algorithm>
#include <cmath>

#include "reference.hpp"

namespace conformance {

namespace {

/// ONNX LRN across C: x / (bias + alpha / size * sum of x^2 over channels c - floor((size - 1) / 2)
/// to c + ceil((size - 1) / 2), those that exist) ^ beta.
Example lrn(Order order, Shape shape, std::int64_t size, double alpha, double beta, double bias, unsigned seed) {
    Example e;
    e.op_type = "LRN";
    e.name = "across C of " + order.str() + ", size " + std::to_string(size);
    e.attrs.set("axis", Axis::C);
    e.attrs.set("size", size);
    e.attrs.set("alpha", alpha);
    e.attrs.set("beta", beta);
    e.attrs.set("bias", bias);
    e.inputs = {input("x", order, shape, seed)};
    e.reference = [=](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        const std::int64_t C = x.shape[x.order.index(Axis::C)];
        return std::vector<Expected>{like("y", x, [&](const Pos& p, std::int64_t) {
            const std::int64_t c = p.at("C");
            double sum = 0;
            Pos q = p;
            const auto lo = c - static_cast<std::int64_t>(std::floor((size - 1) / 2.0));
            const auto hi = c + static_cast<std::int64_t>(std::ceil((size - 1) / 2.0));
            for (std::int64_t k = lo; k <= hi; ++k)
                if (k >= 0 && k < C) q["C"] = k, sum += at(x, q) * at(x, q);
            return at(x, p) / std::pow(bias + alpha / static_cast<double>(size) * sum, beta);
        })};
    };
    return e;
}

}  // namespace

std::vector<Example> sequence_examples() {
    std::vector<Example> v;

    Example ln;
    ln.op_type = "LayerNorm";
    ln.name = "over C, gamma and beta";
    ln.attrs.set("axes", graft::Order{Axis::C});
    ln.attrs.set("epsilon", 1e-3);
    ln.inputs = {input("x", OrderNTC, {2, 3, 6}, 60), input("gamma", OrderC, {6}, 61, true), input("beta", OrderC, {6}, 62, true)};
    ln.reference = [](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        return std::vector<Expected>{like("y", x, [&](const Pos& p, std::int64_t) {
            double mean = 0, var = 0;
            Pos q = p;
            for (std::int64_t c = 0; c < 6; ++c) q["C"] = c, mean += at(x, q) / 6;
            for (std::int64_t c = 0; c < 6; ++c) q["C"] = c, var += (at(x, q) - mean) * (at(x, q) - mean) / 6;
            return (at(x, p) - mean) / std::sqrt(var + 1e-3) * at(in[1], p) + at(in[2], p);
        })};
    };
    v.push_back(ln);

    Example gn;
    gn.op_type = "GroupNorm";
    gn.name = "2 groups of C over H, W";
    gn.attrs.set("batch_axis", Axis::N);
    gn.attrs.set("axis", Axis::C);
    gn.attrs.set("groups", std::int64_t{2});
    gn.attrs.set("epsilon", 1e-3);
    gn.inputs = {input("x", OrderNHWC, {2, 3, 2, 4}, 63), input("gamma", OrderC, {4}, 64, true), input("beta", OrderC, {4}, 65, true)};
    gn.reference = [](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        return std::vector<Expected>{like("y", x, [&](const Pos& p, std::int64_t) {
            const std::int64_t g = p.at("C") / 2;
            double mean = 0, var = 0;
            for (int pass = 0; pass < 2; ++pass)
                for (std::int64_t h = 0; h < 3; ++h)
                    for (std::int64_t w = 0; w < 2; ++w)
                        for (std::int64_t c = g * 2; c < g * 2 + 2; ++c) {
                            const double v = at(x, Pos{{"N", p.at("N")}, {"H", h}, {"W", w}, {"C", c}});
                            if (pass == 0) mean += v / 12;
                            else var += (v - mean) * (v - mean) / 12;
                        }
            return (at(x, p) - mean) / std::sqrt(var + 1e-3) * at(in[1], p) + at(in[2], p);
        })};
    };
    v.push_back(gn);

    Example l2;
    l2.op_type = "L2Normalize";
    l2.name = "over C";
    l2.attrs.set("axes", graft::Order{Axis::C});
    l2.attrs.set("epsilon", 1e-12);
    l2.inputs = {input("x", OrderNTC, {2, 3, 5}, 66)};
    l2.reference = [](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        return std::vector<Expected>{like("y", x, [&](const Pos& p, std::int64_t) {
            double s = 0;
            Pos q = p;
            for (std::int64_t c = 0; c < 5; ++c) q["C"] = c, s += at(x, q) * at(x, q);
            return at(x, p) / std::sqrt(std::max(s, 1e-12));
        })};
    };
    v.push_back(l2);

    Example emb;
    emb.op_type = "Embedding";
    emb.name = "indices in and out of range";
    emb.attrs.set("axis", Axis::C);
    emb.inputs = {input("x", graft::OrderNT, {2, 5}, 67), input("table", graft::OrderCN, {6, 3}, 68, true)};
    emb.inputs[0].data = {0, 5, 2.7f, 3, 1, 4, 0, 6, -1, 2};  // 6 and -1 are outside the table: zeros
    emb.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{output("y", OrderNTC, {2, 5, 3}, [&](const Pos& p, std::int64_t) {
            const auto i = static_cast<std::int64_t>(at(in[0], p));  // truncated, as Keras' cast
            return i < 0 || i >= 6 ? 0.0 : in[1].data[static_cast<std::size_t>(i * 3 + p.at("C"))];
        })};
    };
    v.push_back(emb);

    Example nz;
    nz.op_type = "NonZeroMask";
    nz.name = "mask of zero indices";
    nz.inputs = {input("x", graft::OrderNT, {2, 4}, 69)};
    nz.inputs[0].data = {0, 1, 2, 0, 3, 0, 0, 4};
    nz.reference = [](const std::vector<Operand>& in) {
        return std::vector<Expected>{like("mask", in[0], [&](const Pos& p, std::int64_t) { return at(in[0], p) != 0 ? 1.0 : 0.0; })};
    };
    v.push_back(nz);

    Example mk;
    mk.op_type = "Masking";
    mk.name = "rows equal to the mask value";
    mk.attrs.set("axis", Axis::C);
    mk.attrs.set("mask_value", 0.5);
    mk.inputs = {input("x", OrderNTC, {2, 3, 2}, 70)};
    mk.inputs[0].data[2] = mk.inputs[0].data[3] = 0.5f;  // step 1 of item 0 is masked
    mk.reference = [](const std::vector<Operand>& in) {
        const Operand& x = in[0];
        auto keep = [&](const Pos& p) {
            Pos q = p;
            bool any = false;
            for (std::int64_t c = 0; c < 2; ++c) q["C"] = c, any = any || at(x, q) != 0.5;
            return any;
        };
        Expected y = like("y", x, [&](const Pos& p, std::int64_t) { return keep(p) ? at(x, p) : 0.0; });
        Expected m = output("mask", OrderNT, {2, 3}, [&](const Pos& p, std::int64_t) { return keep(p) ? 1.0 : 0.0; });
        return std::vector<Expected>{y, m};
    };
    v.push_back(mk);

    v.push_back(lrn(graft::OrderNCHW, {2, 7, 2, 3}, 3, 0.5, 0.75, 1.0, 66));
    v.push_back(lrn(OrderNHWC, {1, 2, 3, 6}, 4, 2.0, 0.5, 2.0, 67));
    return v;
}

}  // namespace conformance
