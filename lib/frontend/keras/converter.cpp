// Keras model -> graft IR: a walk over layer calls in dependency order, each handed to the
// converter handler registered for ("keras", class). Nested models (a Sequential or Functional
// used as a layer, at any depth) are inlined: the walk recurses into them with their caller's
// inputs and their group's weights, resolved by layer name.
//
// The pre-flight check is the conversion itself, run to the end: every layer whose class has no
// handler (wrapped layers and nested models included) and every handler's UnsupportedError is
// collected instead of stopping at the first; layers that read the output of a refused layer
// cannot be checked (their input shape is unknown) and are listed as unchecked. convert() throws
// one UnsupportedError naming every finding.
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "frontend/findings.hpp"
#include "frontend/keras/layer_context.hpp"
#include "frontend/keras/layers/layers.hpp"
#include "frontend/keras/model_config.hpp"
#include "frontend/keras/model_file.hpp"
#include "frontend/keras/refusals.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/frontend/layer.hpp"
#include "ops/op_types.hpp"

namespace graft::keras {

namespace {

const std::string kFrontend = "keras";

using RefKey = std::tuple<std::string, int, int>;
RefKey key(const TensorRef& r) { return {r.layer, r.node, r.tensor}; }

/// Whether weight `w` (as a nested model's group lists it) belongs to layer `layer`: one of its
/// path components is the layer name ("dense_2/kernel:0", tf.keras "lstm/lstm_cell/kernel:0",
/// Keras 3 "sequential/dense/kernel", .keras "dense/vars/0"), or, for Keras 1 names without
/// '/', it starts with "<layer>_" ("dense_2_W:0").
bool belongs_to(const std::string& w, const std::string& layer) {
    if (w.find('/') == std::string::npos) return w.size() > layer.size() + 1 && w.compare(0, layer.size() + 1, layer + "_") == 0;
    std::size_t start = 0;
    for (std::size_t end; (end = w.find('/', start)) != std::string::npos; start = end + 1)
        if (w.compare(start, end - start, layer) == 0) return true;
    return false;  // the last component is the weight's own name
}

/// Where a layer's weights come from: the file's group for a top-level layer, or (inside a
/// nested model) the weights of the outermost nested model's group, picked by layer name in
/// the order the group lists them (Keras: trainable weights of every sub-layer, then the rest).
struct WeightSource {
    const ModelFile* file = nullptr;
    std::shared_ptr<const std::vector<WeightArray>> pool;

    std::vector<WeightArray> for_layer(const std::string& layer) const {
        if (!pool) return file->layer_weights(layer);
        std::vector<WeightArray> out;
        for (const auto& w : *pool)
            if (belongs_to(w.name, layer)) out.push_back(w);
        return out;
    }
    /// The source for the layers inside nested model `layer`.
    WeightSource nested(const std::string& layer) const {
        if (pool) return *this;
        return WeightSource{file, std::make_shared<const std::vector<WeightArray>>(file->layer_weights(layer))};
    }
};

class Walker {
public:
    Walker(const ModelFile& file, const Registry& registry, Graph& g, CheckReport& report)
        : file_(file), registry_(registry), g_(g), report_(report) {}

    /// Lists every layer (nested and wrapped ones included) whose class has no handler.
    void check_classes(const ModelSpec& spec, const std::string& scope) {
        for (const auto& l : spec.layers) {
            ++report_.layers;
            if (l.nested) {
                if (!l.inbound_error.empty()) throw FormatError(l.inbound_error);
                check_classes(*l.nested, scope + l.name + "/");
                continue;
            }
            if (!registry_.find_converter(kFrontend, l.class_name)) {
                refuse(scope + l.name, l.class_name, unknown_class_advice(l));
                continue;
            }
            if (!l.inbound_error.empty()) throw FormatError(l.inbound_error);
            // A wrapper (TimeDistributed, Bidirectional) names its layer in config.layer.
            const auto& cfg = *l.config;
            if (cfg.IsObject() && cfg.HasMember("layer") && cfg["layer"].IsObject() && cfg["layer"].HasMember("class_name") &&
                cfg["layer"]["class_name"].IsString()) {
                std::string inner = cfg["layer"]["class_name"].GetString();
                if (!registry_.find_converter(kFrontend, inner))
                    refuse(scope + l.name, l.class_name, "its wrapped layer: " + unknown_class_advice(inner));
            }
        }
    }

    /// Converts `spec` with `inputs` bound to its inputs. nullopt if a layer was refused (the
    /// findings are in the report).
    std::optional<std::vector<Value>> run(const ModelSpec& spec, const std::vector<Value>& inputs, const WeightSource& ws,
                                          const std::string& scope) {
        std::map<RefKey, Value> tensors;
        for (std::size_t i = 0; i < spec.input_refs.size(); ++i) tensors[key(spec.input_refs[i])] = inputs.at(i);
        std::set<std::string> poisoned;  // layers of this spec that produced nothing

        struct Pending {
            const LayerSpec* layer;
            int call;
        };
        std::vector<Pending> pending;
        for (const auto& l : spec.layers)
            for (std::size_t c = 0; c < l.calls.size(); ++c) pending.push_back({&l, static_cast<int>(c)});
        std::map<std::string, std::vector<WeightArray>> weights;
        while (!pending.empty()) {
            bool progress = false;
            for (auto it = pending.begin(); it != pending.end();) {
                const LayerSpec& layer = *it->layer;
                const auto& call = layer.calls[static_cast<std::size_t>(it->call)];
                const std::string qualified = scope + layer.name;
                bool ready = true, blocked = refused_.count(qualified) || poisoned.count(layer.name);
                for (const auto& r : call) {
                    blocked = blocked || poisoned.count(r.layer);
                    ready = ready && tensors.count(key(r));
                }
                if (blocked) {
                    if (!refused_.count(qualified) && !poisoned.count(layer.name)) report_.unchecked.push_back(qualified);
                    poisoned.insert(layer.name);
                    it = pending.erase(it);
                    progress = true;
                    continue;
                }
                if (!ready) { ++it; continue; }
                std::vector<Value> ins;
                for (const auto& r : call) ins.push_back(tensors.at(key(r)));
                std::optional<std::vector<Value>> outs;
                if (layer.nested) {
                    if (ins.size() != layer.nested->input_refs.size())
                        throw FormatError(file_.path() + ": nested model '" + qualified + "' takes " +
                                          std::to_string(layer.nested->input_refs.size()) + " inputs but is called with " +
                                          std::to_string(ins.size()));
                    outs = run(*layer.nested, ins, ws.nested(layer.name), qualified + "/");
                } else {
                    if (!weights.count(layer.name)) weights[layer.name] = ws.for_layer(layer.name);
                    outs = call_handler(layer, it->call, std::move(ins), weights[layer.name], qualified);
                }
                if (!outs) {
                    poisoned.insert(layer.name);
                } else {
                    for (std::size_t t = 0; t < outs->size(); ++t)
                        tensors[{layer.name, it->call + layer.node_offset, static_cast<int>(t)}] = (*outs)[t];
                }
                it = pending.erase(it);
                progress = true;
            }
            if (!progress) {
                const auto& p = pending.front();
                for (const auto& r : p.layer->calls[static_cast<std::size_t>(p.call)])
                    if (!tensors.count(key(r)))
                        throw FormatError(file_.path() + ": model_config: layer '" + scope + p.layer->name + "' reads output " +
                                          std::to_string(r.tensor) + " of call " + std::to_string(r.node) + " of layer '" +
                                          r.layer + "', which no layer produces");
            }
        }
        if (!poisoned.empty()) return std::nullopt;

        std::vector<Value> outputs;
        for (const auto& r : spec.outputs) {
            auto it = tensors.find(key(r));
            if (it == tensors.end())
                throw FormatError(file_.path() + ": model_config: output '" + scope + r.layer + "' (call " + std::to_string(r.node) +
                                  ", tensor " + std::to_string(r.tensor) + ") is never produced");
            outputs.push_back(it->second);
        }
        return outputs;
    }

private:
    void refuse(const std::string& layer, const std::string& cls, const std::string& message) {
        report_.findings.push_back({layer, cls, message, {}});
        refused_.insert(layer);
    }

    std::optional<std::vector<Value>> call_handler(const LayerSpec& layer, int call, std::vector<Value> ins,
                                                   const std::vector<WeightArray>& weights, const std::string& qualified) {
        bool masked = false;
        for (const auto& v : ins) masked = masked || v.mask;
        KerasLayerContext ctx(file_, layer, call, weights, std::move(ins), g_, registry_);
        try {
            (*registry_.find_converter(kFrontend, layer.class_name))(ctx);
            if (masked && !ctx.masks_consumed())
                throw UnsupportedError(ctx.where() + ": its input carries a Keras mask (from Embedding mask_zero=True or a "
                                       "Masking layer) and graft does not support masks for " + layer.class_name +
                                       " layers; mask-aware consumers are SimpleRNN, LSTM and GRU (also inside Bidirectional), "
                                       "and TimeDistributed passes masks on");
        } catch (const UnsupportedError& e) {
            std::string msg = e.what();
            const std::string prefix = ctx.where() + ": ";
            if (msg.compare(0, prefix.size(), prefix) == 0) msg.erase(0, prefix.size());
            refuse(qualified, layer.class_name, msg);
            return std::nullopt;
        }
        return ctx.take_outputs();
    }

    const ModelFile& file_;
    const Registry& registry_;
    Graph& g_;
    CheckReport& report_;
    std::set<std::string> refused_;
};

/// Converts the whole model, collecting findings; `g` holds the graph when there are none.
CheckReport convert_collecting(const ModelFile& file, const Registry& registry, Graph& g) {
    const std::string& path = file.path();
    const ModelSpec spec = parse_model_config(file.model_config(), path, file.keras_version());
    CheckReport report;
    Walker walker(file, registry, g, report);
    walker.check_classes(spec, "");

    std::vector<Value> inputs;
    std::vector<std::string> input_names;
    for (const auto& in : spec.inputs) {
        // An integer or bool input keeps its dtype (the host passes it so); a Cast to float32 at
        // entry gives every layer float32 values, exact up to 2^24 (Embedding indices among them).
        DType dtype = DType::float32;
        try {
            dtype = dtype_from_name(in.dtype);
        } catch (const FormatError&) {
            throw UnsupportedError(path + ": input '" + in.name + "' has dtype " + in.dtype +
                                   "; graft's inputs are float32, int32, int64, uint8, uint16, int8 or bool");
        }
        Order o = positional_order(in.shape.size());
        Variable* v = g.add_variable(g.unique_name(in.name), dtype, o, in.shape);
        g.add_input(v);
        input_names.push_back(in.name);
        if (dtype != DType::float32) {
            Attributes a;
            a.set("to", std::string("float32"));
            v = add_op(g, registry, ops::kCast, g.unique_name(in.name + "/cast"), {{"x", v}}, std::move(a))->output("y");
        }
        inputs.push_back(Value{v, o});
    }
    auto outputs = walker.run(spec, inputs, WeightSource{&file, nullptr}, "");
    if (!outputs || !report.findings.empty()) return report;

    // Outputs leave in Keras' own layout (the logical order).
    std::vector<std::string> output_names;
    for (std::size_t i = 0; i < spec.outputs.size(); ++i) {
        const auto& r = spec.outputs[i];
        Value v = (*outputs)[i];
        if (v.var->order() != v.logical || g.is_input(v.var) || g.is_output(v.var)) {
            Attributes a;
            a.set("order", v.logical);
            auto name = g.unique_name(r.layer + "/output");
            v.var = add_op(g, registry, ops::kTranspose, name, {{"x", v.var}}, std::move(a))->output("y");
        }
        g.add_output(v.var);
        std::string oname = r.layer;
        for (const auto& n : output_names)
            if (n == oname) oname = r.layer + "_" + std::to_string(r.node) + "_" + std::to_string(r.tensor);
        output_names.push_back(oname);
    }
    g.set_input_names(input_names);
    g.set_output_names(output_names);
    g.remove_unused_variables();
    g.validate();
    return report;
}

}  // namespace

CheckReport check_model(const std::string& path, const Registry& registry, const Options& options) {
    Graph g;
    const ModelFile file(path, options.weights_path, options.limits, options.hdf5);
    return convert_collecting(file, registry, g);
}

std::vector<Finding> check(const std::string& path, const Registry& registry, const Options& options) {
    return check_model(path, registry, options).findings;
}

Graph convert(const std::string& path, const Registry& registry, const Options& options) {
    const ModelFile file(path, options.weights_path, options.limits, options.hdf5);
    return convert_model_file(file, registry);
}

Graph convert_model_file(const ModelFile& file, const Registry& registry) {
    Graph g;
    auto report = convert_collecting(file, registry, g);
    if (!report.findings.empty()) frontend::throw_findings(file.path(), report, "layer");
    return g;
}

}  // namespace graft::keras
