// Core Keras layers: Dense, Activation, inference no-ops (Dropout, noise), Flatten, Reshape,
// Permute; and the activation helpers every family uses.
#include "frontend/keras/layers/layers.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

std::string activation_name(const LayerContext& ctx, const std::string& k) {
    if (k == "hard_sigmoid") return ctx.framework_version().rfind("3", 0) == 0 ? "hard_sigmoid_keras3" : "hard_sigmoid";
    if (k == "silu") return "swish";
    static const char* same[] = {"linear", "relu", "sigmoid", "tanh", "softmax", "softplus", "softsign", "elu",
                                 "selu", "swish", "gelu", "exponential", "relu6", "leaky_relu"};
    for (auto* s : same)
        if (k == s) return k;
    ctx.fail_unsupported("activation '" + k + "' is not supported");
}

Value apply_activation(LayerContext& ctx, const Value& v, const std::string& keras_name) {
    const std::string fn = activation_name(ctx, keras_name);
    if (fn == "linear") return v;
    Attributes a;
    if (fn == "softmax") {
        a.set("axis", v.logical.back());
        return Value{ctx.op(ops::kSoftmax, {{"x", v.var}}, std::move(a), "softmax")->output("y"), v.logical};
    }
    if (fn == "relu6") {
        a.set("activation", "relu_general");
        a.set("max_value", 6.0);
    } else if (fn == "leaky_relu") {
        a.set("activation", "leaky_relu");
        a.set("alpha", 0.2);  // keras.activations.leaky_relu default negative_slope
    } else {
        a.set("activation", fn);
    }
    return Value{ctx.op(ops::kActivation, {{"x", v.var}}, std::move(a), fn)->output("y"), v.logical};
}

Order positional_order(std::size_t rank) {
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

Axis keras_axis(const LayerContext& ctx, const Value& v, std::int64_t axis) {
    const auto rank = static_cast<std::int64_t>(v.logical.ndim());
    const std::int64_t i = axis < 0 ? axis + rank : axis;
    if (i <= 0 || i >= rank)
        ctx.fail_format("axis " + std::to_string(axis) + " is out of range for an input of rank " + std::to_string(rank) +
                        " (the batch axis cannot be used)");
    return v.logical[static_cast<std::size_t>(i)];
}

bool channels_first(const LayerContext& ctx) {
    const auto& c = ctx.config();
    if (c.has("data_format")) {
        auto f = c.get_string("data_format");
        if (f != "channels_first" && f != "channels_last") ctx.fail_format("data_format '" + f + "'");
        return f == "channels_first";
    }
    return c.get_string("dim_ordering", "tf") == "th";
}

namespace {

void dense(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const auto& c = ctx.config();
    const std::string units_key = c.first_of({"units", "output_dim"});
    if (units_key.empty()) c.fail("config has no 'units'");
    const std::int64_t units = c.get_size(units_key.c_str());
    const bool use_bias = c.get_bool("use_bias", c.get_bool("bias", true));
    ctx.expect_weights(use_bias ? 2 : 1);
    const Value& x = ctx.input(0);
    const std::int64_t k = x.var->size(x.logical.back());
    NamedVars ins{{"x", x.var}, {"w", ctx.constant(ctx.weight(0), OrderCN, {k, units})}};
    if (use_bias) ins.emplace_back("b", ctx.constant(ctx.weight(1), OrderC, {units}));
    Attributes a;
    a.set("axis", x.logical.back());
    Value y{ctx.op(ops::kLinear, std::move(ins), std::move(a))->output("y"), x.logical};
    ctx.set_outputs({apply_activation(ctx, y, c.get_string("activation", "linear"))});
}

void activation(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    ctx.set_outputs({apply_activation(ctx, ctx.input(0), ctx.config().get_string("activation"))});
}

void identity(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Value& x = ctx.input(0);
    set_output(ctx, ctx.op(ops::kIdentity, {{"x", x.var}})->output("y"), x.logical);
}

Value reshape(LayerContext& ctx, const Value& x, const Order& in_order, Shape target) {
    const Order out = positional_order(target.size());
    Attributes a;
    a.set("in_order", in_order);
    a.set("out_order", out);
    a.set("shape", std::move(target));
    return Value{ctx.op(ops::kReshape, {{"x", x.var}}, std::move(a))->output("y"), out};
}

void flatten(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Value& x = ctx.input(0);
    Order in = x.logical;
    if (channels_first(ctx) && in.ndim() >= 3) {  // Keras moves channels last before flattening
        std::vector<Axis> axes{in[0]};
        for (std::size_t i = 2; i < in.ndim(); ++i) axes.push_back(in[i]);
        axes.push_back(in[1]);
        in = Order(axes);
    }
    std::int64_t n = 1;
    for (std::size_t i = 1; i < in.ndim(); ++i) {
        if (x.var->size(in[i]) == kDynamic)
            ctx.fail_unsupported("flattening input " + x.var->describe() + ", whose size along " + in[i].name() +
                                 " is free (a model input saved with None there): give the model a fixed input shape");
        n *= x.var->size(in[i]);
    }
    ctx.set_outputs({reshape(ctx, x, in, {kDynamic, n})});
}

void reshape_layer(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Value& x = ctx.input(0);
    auto target = ctx.config().get_ints("target_shape");
    std::int64_t have = 1, known = 1;
    for (std::size_t i = 1; i < x.logical.ndim(); ++i) {
        if (x.var->size(x.logical[i]) == kDynamic)
            ctx.fail_unsupported("reshaping input " + x.var->describe() + ", whose size along " + x.logical[i].name() +
                                 " is free (a model input saved with None there): give the model a fixed input shape");
        have *= x.var->size(x.logical[i]);
    }
    int free = 0;
    for (auto d : target) {
        if (d == -1 || d == kDynamic) ++free;
        else if (d <= 0) ctx.fail_format("target_shape " + shape_str(target) + " has a bad dimension");
        else known = checked::product(ctx.where(), "config 'target_shape'", {known, d});
    }
    if (free > 1) ctx.fail_format("target_shape " + shape_str(target) + " has more than one -1");
    for (auto& d : target)
        if (d == -1 || d == kDynamic) {
            if (known == 0 || have % known) ctx.fail_shape("cannot reshape " + std::to_string(have) + " values to " + shape_str(target));
            d = have / known;
        }
    Shape shape{kDynamic};
    shape.insert(shape.end(), target.begin(), target.end());
    if (numel(Shape(shape.begin() + 1, shape.end())) != have)
        ctx.fail_shape("cannot reshape " + x.var->describe() + " (" + std::to_string(have) + " values per sample) to " + shape_str(target));
    ctx.set_outputs({reshape(ctx, x, x.logical, shape)});
}

void permute(LayerContext& ctx) {
    ctx.expect_inputs(1, 1);
    const Value& x = ctx.input(0);
    auto dims = ctx.config().get_ints("dims");
    if (dims.size() + 1 != x.logical.ndim()) ctx.fail_format("dims " + shape_str(dims) + " do not fit an input of rank " + std::to_string(x.logical.ndim()));
    std::vector<Axis> out{x.logical[0]};
    std::vector<bool> used(x.logical.ndim(), false);
    for (auto d : dims) {
        if (d < 1 || d >= static_cast<std::int64_t>(x.logical.ndim()) || used[static_cast<std::size_t>(d)])
            ctx.fail_format("dims " + shape_str(dims) + " is not a permutation of 1.." + std::to_string(x.logical.ndim() - 1));
        used[static_cast<std::size_t>(d)] = true;
        out.push_back(x.logical[static_cast<std::size_t>(d)]);
    }
    Attributes a;
    a.set("order", Order(out));
    set_output(ctx, ctx.op(ops::kTranspose, {{"x", x.var}}, std::move(a))->output("y"), Order(out));
}

}  // namespace

void register_core(Registry& r) {
    r.add_converter("keras", "Dense", dense);
    r.add_converter("keras", "Activation", activation);
    for (const char* noop : {"Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise",
                             "GaussianDropout", "AlphaDropout", "ActivityRegularization"})
        r.add_converter("keras", noop, identity);
    r.add_converter("keras", "Flatten", flatten);
    r.add_converter("keras", "Reshape", reshape_layer);
    r.add_converter("keras", "Permute", permute);
}

}  // namespace graft::keras
