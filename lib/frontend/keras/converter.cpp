// Keras model -> graft IR: pre-flight check, then a walk over layer calls in dependency order,
// each handed to the converter handler registered for ("keras", class).
#include <map>
#include <tuple>

#include "frontend/keras/model_config.hpp"
#include "frontend/keras/model_file.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/frontend/layer.hpp"

namespace graft::keras {

namespace {

const std::string kFrontend = "keras";

bool is_model_class(const std::string& cls) { return cls == "Sequential" || cls == "Model" || cls == "Functional"; }

std::string advice(const std::string& cls) {
    if (cls == "Lambda")
        return "a Lambda layer holds Python code that graft cannot run; implement its computation in a graft plugin "
               "(see samples/plugin) and load it with --plugin or GRAFT_PLUGIN_PATH";
    if (is_model_class(cls)) return "nested models (a model used as a layer) are not supported yet";
    return "no converter handler is registered for Keras class '" + cls +
           "'; if it is a custom layer, load a plugin that registers it (--plugin PATH or GRAFT_PLUGIN_PATH)";
}

/// The logical order graft gives a Keras tensor of this rank (batch first, channels last).
Order default_order(std::size_t rank) {
    switch (rank) {
        case 1: return Order{Axis::N};
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

using RefKey = std::tuple<std::string, int, int>;
RefKey key(const TensorRef& r) { return {r.layer, r.node, r.tensor}; }

class KerasLayerContext final : public LayerContext {
public:
    KerasLayerContext(const ModelFile& file, const LayerSpec& spec, const std::vector<WeightArray>& weights,
                      std::vector<Value> inputs, Graph& g, const Registry& reg)
        : file_(file), spec_(spec), weights_(weights), inputs_(std::move(inputs)), graph_(g), registry_(reg),
          config_(spec.config, file.path() + ": layer '" + spec.name + "' (" + spec.class_name + ")") {}

    const std::string& frontend() const override { return kFrontend; }
    const std::string& file() const override { return file_.path(); }
    const std::string& layer_name() const override { return spec_.name; }
    const std::string& class_name() const override { return spec_.class_name; }
    const std::string& framework_version() const override { return file_.keras_version(); }
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
    Graph& graph() override { return graph_; }
    const Registry& registry() const override { return registry_; }

    std::vector<Value>& outputs() { return outputs_; }

private:
    const ModelFile& file_;
    const LayerSpec& spec_;
    const std::vector<WeightArray>& weights_;
    std::vector<Value> inputs_, outputs_;
    Graph& graph_;
    const Registry& registry_;
    Config config_;
};

std::vector<Finding> check_spec(const ModelSpec& spec, const Registry& registry) {
    std::vector<Finding> out;
    for (const auto& l : spec.layers)
        if (is_model_class(l.class_name) || !registry.find_converter(kFrontend, l.class_name))
            out.push_back({l.name, l.class_name, advice(l.class_name)});
    return out;
}

[[noreturn]] void throw_findings(const std::string& path, const std::vector<Finding>& f) {
    std::string msg = path + ": " + std::to_string(f.size()) + (f.size() == 1 ? " layer" : " layers") + " cannot be converted:";
    for (std::size_t i = 0; i < f.size(); ++i)
        msg += (i ? "; " : " ") + std::string("'") + f[i].layer + "' (" + f[i].class_name + "): " + f[i].message;
    throw UnsupportedError(msg);
}

}  // namespace

std::vector<Finding> check(const std::string& path, const Registry& registry, const Options& options) {
    ModelFile file(path, options.weights_path);
    return check_spec(parse_model_config(file.model_config(), path, file.keras_version()), registry);
}

Graph convert(const std::string& path, const Registry& registry, const Options& options) {
    ModelFile file(path, options.weights_path);
    const ModelSpec spec = parse_model_config(file.model_config(), path, file.keras_version());
    if (auto findings = check_spec(spec, registry); !findings.empty()) throw_findings(path, findings);

    Graph g;
    std::map<RefKey, Value> tensors;
    std::vector<std::string> input_names;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
        const auto& in = spec.inputs[i];
        if (in.dtype != "float32")
            throw UnsupportedError(path + ": input '" + in.name + "' has dtype " + in.dtype + ", graft runs float32 inputs");
        Order o = default_order(in.shape.size());
        Variable* v = g.add_variable(g.unique_name(in.name), DType::float32, o, in.shape);
        g.add_input(v);
        input_names.push_back(in.name);
        tensors[key(spec.input_refs[i])] = Value{v, o};
    }

    // Convert every call of every layer once its inputs exist (any DAG, shared layers included).
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
            const auto& call = it->layer->calls[static_cast<std::size_t>(it->call)];
            bool ready = true;
            for (const auto& r : call) ready = ready && tensors.count(key(r));
            if (!ready) { ++it; continue; }
            std::vector<Value> ins;
            for (const auto& r : call) ins.push_back(tensors.at(key(r)));
            const auto& name = it->layer->name;
            if (!weights.count(name)) weights[name] = file.layer_weights(name);
            KerasLayerContext ctx(file, *it->layer, weights[name], std::move(ins), g, registry);
            (*registry.find_converter(kFrontend, it->layer->class_name))(ctx);
            if (ctx.outputs().empty()) ctx.fail_format("the converter handler produced no outputs");
            for (std::size_t t = 0; t < ctx.outputs().size(); ++t)
                tensors[{name, it->call, static_cast<int>(t)}] = ctx.outputs()[t];
            it = pending.erase(it);
            progress = true;
        }
        if (!progress) {
            const auto& p = pending.front();
            for (const auto& r : p.layer->calls[static_cast<std::size_t>(p.call)])
                if (!tensors.count(key(r)))
                    throw FormatError(path + ": model_config: layer '" + p.layer->name + "' reads output " + std::to_string(r.tensor) +
                                      " of call " + std::to_string(r.node) + " of layer '" + r.layer + "', which no layer produces");
        }
    }

    // Outputs leave in Keras' own layout (the logical order).
    std::vector<std::string> output_names;
    for (const auto& r : spec.outputs) {
        auto it = tensors.find(key(r));
        if (it == tensors.end())
            throw FormatError(path + ": model_config: output '" + r.layer + "' (call " + std::to_string(r.node) + ", tensor " +
                              std::to_string(r.tensor) + ") is never produced");
        Value v = it->second;
        if (v.var->order() != v.logical || g.is_input(v.var)) {
            Attributes a;
            a.set("order", v.logical);
            auto name = g.unique_name(r.layer + "/output");
            v.var = add_op(g, registry, "Transpose", name, {{"x", v.var}}, std::move(a))->output("y");
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
    return g;
}

}  // namespace graft::keras
