// Keras layer wrappers: Bidirectional (merge_mode concat / sum / mul / ave / None, with
// return_sequences, return_state and initial states; Keras 2 weight order: every forward weight, then every
// backward one) and TimeDistributed (any supported layer, applied to (N*T, ...)).
//
// Keras masks (embedding.cpp): Bidirectional hands the mask to both directions (the backward one
// runs go_backwards, which reverses the mask with the sequence) and, as tf.keras 2 and Keras 3
// do, forces each direction's zero_output_for_mask to its return_sequences, so masked steps of a
// returned sequence are zeros in both directions before the merge; the output sequence keeps
// the mask. TimeDistributed gives its inner layer no mask (Keras would hand it a (batch*time,)
// mask, meaningless to graft's mask consumers, which are refused there) and passes the input
// mask on to its output, as Keras does when the inner layer computes no mask of its own.
//
// Both call the wrapped layer's own converter handler with a KerasLayerContext of its own (the
// converter's, layer_context.hpp): the wrapped layer's config, the wrapper's weights (they live in
// the wrapper's group), and inputs made by the wrapper.
#include <algorithm>

#include "frontend/keras/json_config.hpp"
#include "frontend/keras/layer_context.hpp"
#include "frontend/keras/layers/layers.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

/// config.layer = {"class_name", "config"} of a wrapper.
struct Wrapped {
    std::string class_name;
    Config config;
};

Wrapped wrapped_layer(const LayerContext& ctx, const char* key = "layer") {
    const Config l = ctx.config().get(key);
    if (!l.is_string("class_name") || !l.is_object("config"))
        ctx.fail_format(std::string("config '") + key + "' should be {\"class_name\": ..., \"config\": {...}}");
    std::string cls = l.get_string("class_name");
    if (cls == "Sequential" || cls == "Model" || cls == "Functional")
        ctx.fail_unsupported("wrapping a whole model (" + cls + ") is not supported");
    return {cls, l.get("config")};
}

/// Runs the handler of `inner`, the layer `outer` wraps, named `name` and called with `inputs`
/// and `weights`; its outputs.
std::vector<Value> convert_wrapped(LayerContext& outer, const Wrapped& inner, std::string name, std::vector<Value> inputs,
                                   std::vector<WeightArray> weights) {
    bool masked = false;
    for (const auto& v : inputs) masked = masked || v.mask;
    KerasLayerContext ctx(outer, std::move(name), inner.class_name, inner.config, std::move(weights), std::move(inputs));
    const ConverterFn* fn = ctx.registry().find_converter(ctx.frontend(), inner.class_name);
    if (!fn) outer.fail_unsupported("no converter handler is registered for the wrapped Keras class '" + inner.class_name + "'");
    (*fn)(ctx);
    if (masked && !ctx.masks_consumed())
        outer.fail_unsupported("its input carries a Keras mask and graft does not support masks for the wrapped " +
                               inner.class_name + " layer; mask-aware layers are SimpleRNN, LSTM and GRU");
    return ctx.take_outputs();
}

/// Sets (or replaces) the boolean member `key` of the object `doc`.
void set_bool(rapidjson::Document& doc, const char* key, bool value) {
    if (!doc.IsObject()) return;  // wrapped_layer checked that the config is an object
    doc.RemoveMember(key);
    rapidjson::Value name(key, doc.GetAllocator());
    doc.AddMember(name, rapidjson::Value(value), doc.GetAllocator());
}

std::vector<WeightArray> weights_range(const LayerContext& ctx, std::size_t from, std::size_t to) {
    std::vector<WeightArray> w;
    for (std::size_t i = from; i < to; ++i) w.push_back(ctx.weight(i));
    return w;
}

/// x viewed as `shape`; entries named in `follow` take the size of that axis of x or, as
/// like:AXIS, of `like` (TimeDistributed's free sizes).
Value reshape(LayerContext& ctx, const Value& x, Shape shape, const std::string& suffix, std::vector<std::string> follow = {},
              Variable* like = nullptr) {
    Attributes a;
    a.set("in_order", x.logical);
    Order out = positional_order(shape.size());
    a.set("out_order", out);
    a.set("shape", std::move(shape));
    NamedVars ins{{"x", x.var}};
    if (std::any_of(follow.begin(), follow.end(), [](const std::string& f) { return !f.empty(); })) a.set("follow", std::move(follow));
    if (like) ins.emplace_back("like", like);
    return Value{ctx.op(ops::kReshape, std::move(ins), std::move(a), suffix)->output("y"), out};
}

// ---- Bidirectional -------------------------------------------------------------------------

void bidirectional(LayerContext& ctx) {
    // The sequence, then the initial states: the forward layer's, then the backward layer's (Keras
    // splits initial_state in halves).
    if (ctx.num_inputs() % 2 == 0)
        ctx.fail_format("takes the sequence and as many forward as backward initial states, but is called with " +
                        std::to_string(ctx.num_inputs()) + " inputs");
    const std::size_t half = (ctx.num_inputs() - 1) / 2;
    std::vector<Value> fw_in{ctx.input(0)}, bw_in{ctx.input(0)};
    for (std::size_t i = 0; i < half; ++i) {
        fw_in.push_back(ctx.input(1 + i));
        bw_in.push_back(ctx.input(1 + half + i));
    }
    const auto& c = ctx.config();
    Wrapped fw = wrapped_layer(ctx);
    std::string mode = "concat";
    if (c.is_null("merge_mode")) mode = "none";
    else if (c.is_string("merge_mode")) mode = c.get_string("merge_mode");
    else if (c.has("merge_mode")) c.fail("config 'merge_mode' should be a string or null");
    if (mode != "concat" && mode != "sum" && mode != "mul" && mode != "ave" && mode != "none")
        ctx.fail_unsupported("merge_mode '" + mode + "' (Keras knows concat, sum, mul, ave and None)");

    // The backward layer: Keras 3 (and tf.keras when one was given) stores its config, already
    // with go_backwards flipped; otherwise it is the forward config with go_backwards flipped.
    Wrapped bw;
    rapidjson::Document flipped;  // owns bw.config when it is made here
    if (c.has("backward_layer")) {
        bw = wrapped_layer(ctx, "backward_layer");
    } else {
        flipped.CopyFrom(*json_value(fw.config), flipped.GetAllocator());
        const bool back = fw.config.is_bool("go_backwards") && fw.config.get_bool("go_backwards");
        set_bool(flipped, "go_backwards", !back);
        bw = {fw.class_name, json_config(&flipped, ctx.where())};
    }
    const Config fwc(fw.config.source(), fw.config.node(), ctx.where());
    const bool seqs = fwc.get_bool("return_sequences", false);
    const bool states = fwc.get_bool("return_state", false);

    // A masked sequence: Keras sets zero_output_for_mask = return_sequences on both directions.
    Variable* const mask = ctx.input(0).mask;
    rapidjson::Document fw_doc, bw_doc;  // own the forced configs
    if (mask) {
        ctx.consume_masks();
        fw_doc.CopyFrom(*json_value(fw.config), fw_doc.GetAllocator());
        set_bool(fw_doc, "zero_output_for_mask", seqs);
        fw.config = json_config(&fw_doc, ctx.where());
        bw_doc.CopyFrom(*json_value(bw.config), bw_doc.GetAllocator());
        set_bool(bw_doc, "zero_output_for_mask", Config(bw.config.source(), bw.config.node(), ctx.where()).get_bool("return_sequences", false));
        bw.config = json_config(&bw_doc, ctx.where());
    }

    const std::size_t n = ctx.num_weights();
    if (n % 2) ctx.fail_format("has " + std::to_string(n) + " weight arrays, expected an even number (forward, then backward)");
    const std::string inner_name = fwc.get_string("name", "layer");
    auto yf = convert_wrapped(ctx, fw, ctx.layer_name() + "/forward_" + inner_name, std::move(fw_in), weights_range(ctx, 0, n / 2));
    auto yb = convert_wrapped(ctx, bw, ctx.layer_name() + "/backward_" + inner_name, std::move(bw_in), weights_range(ctx, n / 2, n));
    if (yf.size() != yb.size()) ctx.fail_format("the forward and backward layers give different numbers of outputs");

    Value back = yb[0];
    if (seqs) {  // Keras reverses the backward sequence back into time order
        Attributes a;
        a.set("axis", back.logical[1]);
        back = Value{ctx.op(ops::kReverse, {{"x", back.var}}, std::move(a), "reverse")->output("y"), back.logical};
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
            op = ctx.op(ops::kConcat, {{"x0", yf[0].var}, {"x1", back.var}}, std::move(a));
        } else {
            a.set("op", mode == "sum" ? "add" : mode == "mul" ? "mul" : "avg");
            op = ctx.op(ops::kMerge, {{"x0", yf[0].var}, {"x1", back.var}}, std::move(a));
        }
        outs = {Value{op->output("y"), yf[0].logical}};
    }
    if (seqs)  // Keras passes the mask on with the sequence (to both outputs with merge_mode None)
        for (auto& o : outs) o.mask = mask;
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
    // (N, T, d...) -> (N*T, d...): the batch absorbs the time axis; free sizes among d... stay
    // the input's.
    Shape merged{kDynamic};
    std::vector<std::string> merged_follow{""};
    for (std::size_t k = 2; k < dims.size(); ++k) {
        merged.push_back(dims[k]);
        merged_follow.push_back(dims[k] == kDynamic ? x.logical[k].name() : "");
    }
    const Value xs = reshape(ctx, x, merged, "merge_time", merged_follow);
    if (x.mask) {
        // Keras would call a mask-taking inner layer with the mask flattened to (batch*time,).
        for (const char* cls : {"SimpleRNN", "LSTM", "GRU", "Bidirectional", "TimeDistributed", "ConvLSTM1D", "ConvLSTM2D",
                                "ConvLSTM3D", "Attention", "AdditiveAttention", "MultiHeadAttention"})
            if (inner.class_name == cls)
                ctx.fail_unsupported("its input carries a Keras mask, which Keras would hand to the wrapped " + inner.class_name +
                                     " flattened to (batch*time,); graft does not model that");
        ctx.consume_masks();
    }

    std::vector<Value> outs;
    for (const Value& y : convert_wrapped(ctx, inner, ctx.layer_name(), {xs}, weights_range(ctx, 0, ctx.num_weights()))) {
        if (y.mask)
            ctx.fail_unsupported("the wrapped " + inner.class_name + " computes a Keras mask of its own over (batch*time, ...); "
                                 "graft propagates masks over (batch, time) only");
        Shape s = y.var->shape_in(y.logical);
        Shape split{kDynamic, steps};
        std::vector<std::string> split_follow{"", steps == kDynamic ? "like:" + x.logical[1].name() : ""};
        for (std::size_t k = 1; k < s.size(); ++k) {
            split.push_back(s[k]);
            split_follow.push_back(s[k] == kDynamic ? y.logical[k].name() : "");
        }
        // A free number of steps is the input's: the view reads it from x.
        Value out = reshape(ctx, y, split, "split_time", split_follow, steps == kDynamic ? x.var : nullptr);
        out.mask = x.mask;  // the inner layer computes none: Keras passes the input mask on
        outs.push_back(out);
    }
    ctx.set_outputs(std::move(outs));
}

}  // namespace

void register_wrappers(Registry& r) {
    r.add_converter("keras", "Bidirectional", bidirectional);
    r.add_converter("keras", "TimeDistributed", time_distributed);
}

}  // namespace graft::keras
