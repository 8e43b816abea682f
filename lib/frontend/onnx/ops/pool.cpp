// MaxPool, AveragePool (1-D to 3-D, explicit pads, ceil_mode) and GlobalAveragePool /
// GlobalMaxPool as graft's Pool2D / Pool3D (a 1-D pool runs as 2-D with a height of 1) and
// GlobalPool.
#include <algorithm>

#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

void pool(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const bool max = ctx.node().op_type() == "MaxPool";
    if (!max) expect_one_output(ctx);
    const auto& c = ctx.config();
    const Value x0 = ctx.input(0);
    const std::size_t rank = x0.logical.ndim();
    if (rank < 3 || rank > 5) ctx.fail_unsupported("a rank-" + std::to_string(rank) + " input (graft pools 1-D to 3-D)");
    const std::size_t nd = rank - 2;
    // Each at most kMaxElements (get_sizes): the products below stay inside int64.
    std::vector<i64> k = c.get_sizes("kernel_shape", nd);
    std::vector<i64> s = c.has("strides") ? c.get_sizes("strides", nd) : std::vector<i64>(nd, 1);
    std::vector<i64> pads = c.has("pads") ? c.get_sizes("pads", 2 * nd, 0) : std::vector<i64>(2 * nd, 0);
    const std::string auto_pad = c.get_string("auto_pad", "NOTSET");
    std::vector<i64> dil = c.has("dilations") ? c.get_sizes("dilations", nd) : std::vector<i64>(nd, 1);
    const bool dilated = std::any_of(dil.begin(), dil.end(), [](i64 d) { return d != 1; });
    if (dilated && !max) ctx.fail_unsupported("dilated average pooling");
    const i64 storage_order = max ? c.get_int("storage_order", 0) : 0;  // of the Indices output
    if (storage_order != 0 && storage_order != 1) ctx.fail_format("storage_order " + std::to_string(storage_order) + " (expected 0 or 1)");
    const bool include_pad = !max && c.get_int("count_include_pad", 0) != 0;
    Value x = ctx.relabel(x0, positional_order(rank));
    Shape xs = logical_shape(x);
    for (std::size_t i = 2; i < rank; ++i)
        if (xs[i] == kDynamic) ctx.fail_unsupported("a dynamic spatial size");
    std::string padding = "explicit";
    if (auto_pad == "VALID") padding = "valid", pads.assign(2 * nd, 0);
    else if (auto_pad == "SAME_UPPER") padding = "same";
    else if (auto_pad == "SAME_LOWER") {
        for (std::size_t i = 0; i < nd; ++i) {
            const i64 span = (k[i] - 1) * dil[i] + 1;
        const i64 out = (xs[i + 2] + s[i] - 1) / s[i], total = std::max<i64>((out - 1) * s[i] + span - xs[i + 2], 0);
            pads[i] = total - total / 2, pads[i + nd] = total / 2;
        }
    } else if (auto_pad != "NOTSET") ctx.fail_format("auto_pad '" + auto_pad + "'");
    const bool ceil_mode = c.get_int("ceil_mode", 0) != 0;
    if (include_pad && padding != "valid") {
        // Averages count the pads: pad with zeros first, then pool without padding.
        if (padding == "same") ctx.fail_unsupported("count_include_pad with auto_pad SAME_UPPER");
        if (ceil_mode) ctx.fail_unsupported("count_include_pad with ceil_mode");
        std::vector<i64> begin(rank, 0), end(rank, 0);
        for (std::size_t i = 0; i < nd; ++i) begin[i + 2] = pads[i], end[i + 2] = pads[i + nd];
        x = pad_or_crop(ctx, x, begin, end);
        padding = "valid";
    }
    // 1-D: as 2-D over [N, C, 1, W].
    const bool one_d = nd == 1;
    if (one_d) {
        Shape s4{xs[0], xs[1], 1, xs[2]};
        x = reshape(ctx, x, s4, "as2d");
        k.insert(k.begin(), 1), s.insert(s.begin(), 1), dil.insert(dil.begin(), 1);
        pads = {0, pads[0], 0, pads[1]};
    }
    Attributes a;
    a.set("kind", std::string(max ? "max" : "avg"));
    a.set("pool_size", k);
    a.set("strides", s);
    a.set("padding", padding);
    if (padding == "explicit") {
        a.set("pads", pads);
        a.set("ceil_mode", ceil_mode);
    }
    if (dilated) a.set("dilations", dil);
    auto as_1d = [&](Value v, const std::string& suffix) {
        if (!one_d) return v;
        const Shape vs = logical_shape(v);
        return reshape(ctx, v, {vs[0], vs[1], vs[3]}, suffix);
    };
    Attributes argmax_attrs = a;
    const Value y = as_1d(emit(ctx, nd == 3 ? ops::kPool3D : ops::kPool2D, {{"x", x.var}}, std::move(a), x.logical), "as1d");
    ctx.set_output(0, y.var, y.logical);
    if (ctx.wants_output(1)) {  // Indices: where each maximum is, as a flat index into X (a 1-D pool has H = 1)
        argmax_attrs.set("column_major", storage_order == 1);
        const Value i = emit(ctx, ops::kPoolArgMax, {{"x", x.var}}, std::move(argmax_attrs), x.logical, "indices");
        const Value i1 = as_1d(i, "indices_as1d");
        ctx.set_output(1, i1.var, i1.logical, true);
    }
}

void global_pool(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const Value x = ctx.input(0);
    const std::size_t rank = x.logical.ndim();
    if (rank < 3) ctx.fail_unsupported("a rank-" + std::to_string(rank) + " input");
    if (x.logical[0] != Axis::N) ctx.fail_unsupported("an input whose first dimension is not the batch");
    std::vector<Axis> axes(x.logical.axes().begin() + 2, x.logical.axes().end());
    Attributes a;
    a.set("kind", std::string(ctx.node().op_type() == "GlobalMaxPool" ? "max" : "avg"));
    a.set("axes", Order(axes));
    const Value r = emit(ctx, ops::kGlobalPool, {{"x", x.var}}, std::move(a), Order{x.logical[0], x.logical[1]});
    Shape out = logical_shape(r);
    out.resize(rank, 1);  // ONNX keeps the pooled dimensions, of size 1
    ctx.set_outputs({reshape(ctx, r, out, "keepdims")});
}

}  // namespace

void register_pool(Registry& r) {
    add(r, "MaxPool", pool);
    add(r, "AveragePool", pool);
    add(r, "GlobalAveragePool", global_pool);
    add(r, "GlobalMaxPool", global_pool);
}

}  // namespace graft::onnx
