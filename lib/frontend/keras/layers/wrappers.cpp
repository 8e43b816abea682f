// Keras layer wrappers: Bidirectional (merge_mode concat / sum / mul / ave / None, with
// return_sequences and return_state; Keras 2 weight order: every forward weight, then every
// backward one) and TimeDistributed (any supported layer, applied to (N*T, ...)).
//
// Both call the wrapped layer's own converter handler through a synthetic LayerContext: the
// wrapped layer's config, the wrapper's weights (they live in the wrapper's group), and inputs
// made by the wrapper.
#include <rapidjson/document.h>

#include "frontend/keras/layers/layers.hpp"
#include "ops/elementwise/elementwise.hpp"

namespace graft::keras {

namespace {

/// The wrapped layer as a converter handler sees it; everything else comes from the wrapper.
class InnerContext final : public LayerContext {
public:
    InnerContext(LayerContext& outer, const rapidjson::Value& config, std::string class_name, std::string name,
                 std::vector<Value> inputs, std::vector<WeightArray> weights)
        : outer_(outer), class_name_(std::move(class_name)), name_(std::move(name)),
          config_(&config, outer.where() + ", wrapped layer (" + class_name_ + ")"), inputs_(std::move(inputs)),
          weights_(std::move(weights)) {}

    const std::string& frontend() const override { return outer_.frontend(); }
    const std::string& file() const override { return outer_.file(); }
    const std::string& layer_name() const override { return name_; }
    const std::string& class_name() const override { return class_name_; }
    const std::string& framework_version() const override { return outer_.framework_version(); }
    const std::string& framework_backend() const override { return outer_.framework_backend(); }
    const Config& config() const override { return config_; }
    std::size_t num_inputs() const override { return inputs_.size(); }
    const Value& input(std::size_t i) const override {
        if (i >= inputs_.size()) fail_format("asks for input " + std::to_string(i) + " of " + std::to_string(inputs_.size()));
        return inputs_[i];
    }
    void set_outputs(std::vector<Value> outputs) override { outputs_ = std::move(outputs); }
    std::size_t num_weights() const override { return weights_.size(); }
    const WeightArray& weight(std::size_t i) const override {
        if (i >= weights_.size()) fail_format("asks for weight " + std::to_string(i) + " of " + std::to_string(weights_.size()));
        return weights_[i];
    }
    Graph& graph() override { return outer_.graph(); }
    const Registry& registry() const override { return outer_.registry(); }

    /// Runs the wrapped layer's handler; its outputs.
    std::vector<Value> convert() {
        const ConverterFn* fn = registry().find_converter(frontend(), class_name_);
        if (!fn) outer_.fail_unsupported("no converter handler is registered for the wrapped Keras class '" + class_name_ + "'");
        (*fn)(*this);
        if (outputs_.empty()) fail_format("the converter handler produced no outputs");
        return outputs_;
    }

private:
    LayerContext& outer_;
    std::string class_name_, name_;
    Config config_;
    std::vector<Value> inputs_, outputs_;
    std::vector<WeightArray> weights_;
};

/// config.layer = {"class_name", "config"} of a wrapper.
struct Wrapped {
    std::string class_name;
    const rapidjson::Value* config;
};

Wrapped wrapped_layer(const LayerContext& ctx, const char* key = "layer") {
    const Config l = ctx.config().get(key);
    const auto& raw = l.raw();
    if (!raw.IsObject() || !raw.HasMember("class_name") || !raw["class_name"].IsString() || !raw.HasMember("config") ||
        !raw["config"].IsObject())
        ctx.fail_format(std::string("config '") + key + "' should be {\"class_name\": ..., \"config\": {...}}");
    std::string cls = raw["class_name"].GetString();
    if (cls == "Sequential" || cls == "Model" || cls == "Functional")
        ctx.fail_unsupported("wrapping a whole model (" + cls + ") is not supported");
    return {cls, &raw["config"]};
}

std::vector<WeightArray> weights_range(const LayerContext& ctx, std::size_t from, std::size_t to) {
    std::vector<WeightArray> w;
    for (std::size_t i = from; i < to; ++i) w.push_back(ctx.weight(i));
    return w;
}

Order positional(std::size_t rank) {
    switch (rank) {
        case 2: return OrderNC;
        case 3: return OrderNTC;
        case 4: return OrderNHWC;
        case 5: return OrderNDHWC;
        default: {
            std::vector<Axis> axes{Axis::N};
            for (std::size_t i = 1; i < rank; ++i) axes.emplace_back("A" + std::to_string(i));
            return Order(std::move(axes));
        }
    }
}

Value reshape(LayerContext& ctx, const Value& x, Shape shape, const std::string& suffix) {
    Attributes a;
    a.set("in_order", x.logical);
    Order out = positional(shape.size());
    a.set("out_order", out);
    a.set("shape", std::move(shape));
    return Value{ctx.op("Reshape", {{"x", x.var}}, std::move(a), suffix)->output("y"), out};
}

// ---- Bidirectional -------------------------------------------------------------------------

void bidirectional(LayerContext& ctx) {
    if (ctx.num_inputs() != 1)
        ctx.fail_unsupported("takes " + std::to_string(ctx.num_inputs()) + " inputs; initial states passed to a "
                             "Bidirectional layer are not supported");
    const auto& c = ctx.config();
    const Wrapped fw = wrapped_layer(ctx);
    std::string mode = "concat";
    if (c.raw().IsObject() && c.raw().HasMember("merge_mode")) {
        const auto& m = c.raw()["merge_mode"];
        if (m.IsNull()) mode = "none";
        else if (m.IsString()) mode = m.GetString();
        else c.fail("config 'merge_mode' should be a string or null");
    }
    if (mode != "concat" && mode != "sum" && mode != "mul" && mode != "ave" && mode != "none")
        ctx.fail_unsupported("merge_mode '" + mode + "' (Keras knows concat, sum, mul, ave and None)");

    // The backward layer: Keras 3 (and tf.keras when one was given) stores its config, already
    // with go_backwards flipped; otherwise it is the forward config with go_backwards flipped.
    rapidjson::Document fw_cfg, bw_cfg;
    fw_cfg.CopyFrom(*fw.config, fw_cfg.GetAllocator());
    std::string bw_class = fw.class_name;
    if (c.has("backward_layer")) {
        const Wrapped bw = wrapped_layer(ctx, "backward_layer");
        bw_class = bw.class_name;
        bw_cfg.CopyFrom(*bw.config, bw_cfg.GetAllocator());
    } else {
        bw_cfg.CopyFrom(*fw.config, bw_cfg.GetAllocator());
        const bool back = bw_cfg.HasMember("go_backwards") && bw_cfg["go_backwards"].IsBool() && bw_cfg["go_backwards"].GetBool();
        bw_cfg.RemoveMember("go_backwards");
        bw_cfg.AddMember("go_backwards", !back, bw_cfg.GetAllocator());
    }
    const Config fwc(&fw_cfg, ctx.where());
    const bool seqs = fwc.get_bool("return_sequences", false);
    const bool states = fwc.get_bool("return_state", false);

    const std::size_t n = ctx.num_weights();
    if (n % 2) ctx.fail_format("has " + std::to_string(n) + " weight arrays, expected an even number (forward, then backward)");
    const std::string inner_name = Config(fw.config, ctx.where()).get_string("name", "layer");
    InnerContext f(ctx, fw_cfg, fw.class_name, ctx.layer_name() + "/forward_" + inner_name, {ctx.input(0)},
                   weights_range(ctx, 0, n / 2));
    InnerContext b(ctx, bw_cfg, bw_class, ctx.layer_name() + "/backward_" + inner_name, {ctx.input(0)},
                   weights_range(ctx, n / 2, n));
    auto yf = f.convert(), yb = b.convert();
    if (yf.size() != yb.size()) ctx.fail_format("the forward and backward layers give different numbers of outputs");

    Value back = yb[0];
    if (seqs) {  // Keras reverses the backward sequence back into time order
        Attributes a;
        a.set("axis", back.logical[1]);
        back = Value{ctx.op("Reverse", {{"x", back.var}}, std::move(a), "reverse")->output("y"), back.logical};
    }
    std::vector<Value> outs;
    if (mode == "none") {
        outs = {yf[0], back};
    } else {
        back = ctx.relabel(back, yf[0].logical);
        Attributes a;
        Operator* op;
        if (mode == "concat") {
            a.set("axis", yf[0].logical.back());
            op = ctx.op("Concat", {{"x0", yf[0].var}, {"x1", back.var}}, std::move(a));
        } else {
            a.set("op", mode == "sum" ? "add" : mode == "mul" ? "mul" : "avg");
            op = ctx.op(ops::kMerge, {{"x0", yf[0].var}, {"x1", back.var}}, std::move(a));
        }
        outs = {Value{op->output("y"), yf[0].logical}};
    }
    if (states) {  // forward states, then backward states
        for (std::size_t i = 1; i < yf.size(); ++i) outs.push_back(yf[i]);
        for (std::size_t i = 1; i < yb.size(); ++i) outs.push_back(yb[i]);
    }
    ctx.set_outputs(std::move(outs));
}

// ---- TimeDistributed -----------------------------------------------------------------------

void time_distributed(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Wrapped inner = wrapped_layer(ctx);
    const Value& x = ctx.input(0);
    const std::size_t rank = x.logical.ndim();
    if (rank < 3) ctx.fail_shape("input " + x.var->describe() + " has no time axis (rank " + std::to_string(rank) + ", expected >= 3)");
    const Shape dims = x.var->shape_in(x.logical);
    const std::int64_t steps = dims[1];
    if (steps == kDynamic) ctx.fail_unsupported("a free number of timesteps");
    // (N, T, d...) -> (N*T, d...): the batch absorbs the time axis.
    Shape merged{kDynamic};
    merged.insert(merged.end(), dims.begin() + 2, dims.end());
    const Value xs = reshape(ctx, x, merged, "merge_time");

    InnerContext in(ctx, *inner.config, inner.class_name, ctx.layer_name(), {xs}, weights_range(ctx, 0, ctx.num_weights()));
    std::vector<Value> outs;
    for (const Value& y : in.convert()) {
        Shape s = y.var->shape_in(y.logical);
        Shape split{kDynamic, steps};
        split.insert(split.end(), s.begin() + 1, s.end());
        outs.push_back(reshape(ctx, y, split, "split_time"));
    }
    ctx.set_outputs(std::move(outs));
}

}  // namespace

void register_wrappers(Registry& r) {
    r.add_converter("keras", "Bidirectional", bidirectional);
    r.add_converter("keras", "TimeDistributed", time_distributed);
}

}  // namespace graft::keras
