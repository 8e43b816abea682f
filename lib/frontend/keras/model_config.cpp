#include "frontend/keras/model_config.hpp"

#include <algorithm>
#include <cctype>

#include "graft/error.hpp"

namespace graft::keras {

namespace {

using rapidjson::Value;

struct Ctx {
    std::string file;
    std::string keras_version;
    [[noreturn]] void fail(const std::string& msg) const { throw FormatError(file + ": model_config: " + msg); }
};

std::string str_member(const Ctx& c, const Value& v, const char* key, const std::string& what) {
    if (!v.IsObject() || !v.HasMember(key) || !v[key].IsString()) c.fail(what + " has no string '" + key + "'");
    return v[key].GetString();
}

/// [name, node, tensor(, kwargs)] as Keras 1/2 write it.
TensorRef parse_ref_list(const Ctx& c, const Value& v, const std::string& where) {
    if (!v.IsArray() || v.Size() < 3 || !v[0].IsString() || !v[1].IsInt() || !v[2].IsInt())
        c.fail(where + ": expected [layer_name, node_index, tensor_index]");
    if (v[1].GetInt() < 0 || v[2].GetInt() < 0) c.fail(where + ": negative node or tensor index");
    return {v[0].GetString(), v[1].GetInt(), v[2].GetInt()};
}

/// Keras 3 legacy nodes: {"args": [...], "kwargs": {...}} holding keras tensors with a
/// "keras_history" [name, node, tensor] at any depth of args.
void collect_history(const Ctx& c, const Value& v, std::vector<TensorRef>& out, int depth) {
    if (depth > 32) c.fail("inbound node nested too deeply");
    if (v.IsArray()) {
        for (const auto& e : v.GetArray()) collect_history(c, e, out, depth + 1);
    } else if (v.IsObject()) {
        if (v.HasMember("keras_history")) {
            out.push_back(parse_ref_list(c, v["keras_history"], "keras_history"));
            return;
        }
        if (v.HasMember("config")) collect_history(c, v["config"], out, depth + 1);
    }
}

/// Keras 2 serializes a keras tensor passed as a call keyword argument as [layer, node, tensor].
bool is_ref_list(const Value& v) {
    return v.IsArray() && v.Size() == 3 && v[0].IsString() && v[1].IsInt() && v[2].IsInt();
}

/// The keras tensors passed as call keywords 'query', 'value', 'key' (MultiHeadAttention; Keras 3
/// also stores mha(query=q, value=v) so) and 'initial_state' (one tensor or a list), in that
/// order, appended to `refs`.
void collect_kwarg_tensors(const Ctx& c, const Value& kwargs, bool keras3, std::vector<TensorRef>& refs,
                           const std::string& name) {
    if (!kwargs.IsObject()) return;
    for (const char* k : {"query", "value", "key", "initial_state"}) {
        if (!kwargs.HasMember(k) || kwargs[k].IsNull()) continue;
        const Value& v = kwargs[k];
        const std::string where = "layer '" + name + "' call argument '" + k + "'";
        if (keras3) {
            collect_history(c, v, refs, 0);
        } else if (is_ref_list(v)) {
            refs.push_back(parse_ref_list(c, v, where));
        } else if (std::string(k) == "initial_state" && v.IsArray()) {
            for (const auto& e : v.GetArray()) {
                if (!is_ref_list(e)) c.fail(where + ": an entry is not a keras tensor [layer, node, tensor]");
                refs.push_back(parse_ref_list(c, e, where));
            }
        } else {
            c.fail(where + " is not a keras tensor [layer, node, tensor]");
        }
    }
}

/// tf.keras marks a first-argument entry that is not a keras tensor (a Python constant given to
/// a TFOpLambda) as ["_CONSTANT_VALUE", -1, value(, kwargs)].
bool is_constant_entry(const Value& v) {
    return v.IsArray() && v.Size() >= 3 && v[0].IsString() && std::string(v[0].GetString()) == "_CONSTANT_VALUE";
}

void parse_node(const Ctx& c, const Value& node, const std::string& name, LayerSpec& spec) {
    std::vector<TensorRef> refs;
    const Value* kwargs = nullptr;
    if (node.IsObject()) {  // Keras 3
        if (node.HasMember("args")) collect_history(c, node["args"], refs, 0);
        if (node.HasMember("kwargs") && node["kwargs"].IsObject()) kwargs = &node["kwargs"];
        if (kwargs) collect_kwarg_tensors(c, *kwargs, true, refs, name);
    } else if (node.IsArray()) {
        // A layer that keeps its first argument's structure (tf.keras TFOpLambda) stores a
        // single tensor as the node itself: [layer, node, tensor, kwargs], not a list of those.
        const bool flat = !node.Empty() && node[0].IsString();
        const Value* first = nullptr;
        auto entry = [&](const Value& r) {
            if (!first) first = &r;
            if (!is_constant_entry(r)) refs.push_back(parse_ref_list(c, r, "layer '" + name + "' inbound node"));
        };
        if (flat) entry(node);
        else
            for (const auto& r : node.GetArray()) entry(r);
        // Keras 2 repeats the call's kwargs on every tensor of the first argument: read the first.
        if (first && first->IsArray() && first->Size() >= 4 && (*first)[3].IsObject()) kwargs = &(*first)[3];
        if (kwargs) collect_kwarg_tensors(c, *kwargs, false, refs, name);
    } else {
        c.fail("layer '" + name + "': an inbound node is neither a list nor an object");
    }
    if (refs.empty()) c.fail("layer '" + name + "': an inbound node has no input tensors");
    spec.calls.push_back(std::move(refs));
    spec.call_kwargs.push_back(kwargs);
}

/// Reads the layer's calls. A node that cannot be read leaves its reason in spec.inbound_error
/// (the layer may be of a class graft refuses anyway; the converter decides).
void parse_inbound(const Ctx& c, const Value& layer, const std::string& name, LayerSpec& spec) {
    if (!layer.HasMember("inbound_nodes")) return;
    const Value& nodes = layer["inbound_nodes"];
    try {
        if (!nodes.IsArray()) c.fail("layer '" + name + "': inbound_nodes is not a list");
        for (const auto& node : nodes.GetArray()) parse_node(c, node, name, spec);
    } catch (const FormatError& e) {
        spec.inbound_error = e.what();
        spec.calls.clear();
        spec.call_kwargs.clear();
    }
}

std::vector<TensorRef> parse_io(const Ctx& c, const Value& cfg, const char* key) {
    if (!cfg.HasMember(key)) c.fail(std::string("functional model has no '") + key + "'");
    const Value& v = cfg[key];
    std::vector<TensorRef> out;
    if (v.IsArray() && v.Size() >= 1 && v[0].IsString()) {  // Keras 3: a single [name, node, tensor]
        out.push_back(parse_ref_list(c, v, key));
    } else if (v.IsArray()) {
        for (const auto& e : v.GetArray()) out.push_back(parse_ref_list(c, e, key));
    } else {
        c.fail(std::string("'") + key + "' is not a list");
    }
    if (out.empty()) c.fail(std::string("'") + key + "' is empty");
    return out;
}

/// Batch shape from a layer config: batch_input_shape (Keras 1/2), batch_shape (Keras 3),
/// input_shape (no batch) or Keras 1's input_dim.
bool batch_shape(const Ctx& c, const Value& cfg, const std::string& name, Shape& out) {
    auto read = [&](const Value& v, bool has_batch) {
        if (!v.IsArray()) c.fail("layer '" + name + "': input shape is not a list");
        out.clear();
        if (!has_batch) out.push_back(kDynamic);
        bool first = true;
        for (const auto& d : v.GetArray()) {
            if (first && has_batch) {
                out.push_back(kDynamic);  // the batch is always free in graft
            } else if (d.IsNull()) {
                out.push_back(kDynamic);  // a free size (a sequence's length, an image's height): fixed per run
            } else if (d.IsInt64() && d.GetInt64() > 0 && d.GetInt64() < (std::int64_t{1} << 31)) {
                out.push_back(d.GetInt64());
            } else {
                c.fail("layer '" + name + "': bad input dimension");
            }
            first = false;
        }
    };
    if (cfg.HasMember("batch_input_shape") && !cfg["batch_input_shape"].IsNull()) return read(cfg["batch_input_shape"], true), true;
    if (cfg.HasMember("batch_shape") && !cfg["batch_shape"].IsNull()) return read(cfg["batch_shape"], true), true;
    if (cfg.HasMember("input_shape") && !cfg["input_shape"].IsNull()) return read(cfg["input_shape"], false), true;
    if (cfg.HasMember("input_dim") && cfg["input_dim"].IsInt64() && cfg["input_dim"].GetInt64() > 0) {
        out = {kDynamic, cfg["input_dim"].GetInt64()};
        return true;
    }
    return false;
}

/// A layer's dtype: a string (Keras 1/2, Keras 3 InputLayer) or a Keras 3 DTypePolicy object
/// {"class_name": "DTypePolicy", "config": {"name": "float32"}} (also FloatDTypePolicy).
std::string dtype_of(const Value& cfg) {
    if (!cfg.HasMember("dtype")) return "float32";
    const Value& d = cfg["dtype"];
    if (d.IsString()) return d.GetString();
    if (d.IsObject() && d.HasMember("config") && d["config"].IsObject() && d["config"].HasMember("name") &&
        d["config"]["name"].IsString())
        return d["config"]["name"].GetString();
    return "float32";
}

constexpr int kMaxNesting = 16;  // models inside models; bounds the recursion on untrusted configs

ModelSpec parse_any(const Ctx& c, const std::string& cls, const Value& config, int depth);

/// A model used as a layer: parsed into the layer's `nested` spec.
void parse_nested(const Ctx& c, LayerSpec& spec, const Value& cfg, int depth) {
    if (!is_model_class(spec.class_name)) return;
    if (depth >= kMaxNesting) c.fail("models nested more than " + std::to_string(kMaxNesting) + " deep (at '" + spec.name + "')");
    spec.nested = std::make_shared<const ModelSpec>(parse_any(c, spec.class_name, cfg, depth + 1));
}

const Value& layer_config(const Ctx& c, const Value& layer, const std::string& name) {
    if (!layer.HasMember("config") || !layer["config"].IsObject()) c.fail("layer '" + name + "' has no config object");
    return layer["config"];
}

ModelSpec parse_sequential(const Ctx& c, const Value& config, int depth) {
    const Value* layers = &config;
    if (config.IsObject()) {
        if (!config.HasMember("layers")) c.fail("Sequential config has no 'layers'");
        layers = &config["layers"];
    }
    if (!layers->IsArray() || layers->Empty()) c.fail("Sequential model has no layers");
    ModelSpec m;
    m.class_name = "Sequential";
    TensorRef prev;
    bool have_input = false;
    for (const auto& l : layers->GetArray()) {
        std::string cls = str_member(c, l, "class_name", "a layer");
        const Value& cfg = layer_config(c, l, cls);
        std::string name = str_member(c, cfg, "name", "a " + cls + " layer's config");
        if (cls == "InputLayer") {
            if (have_input) c.fail("Sequential model has a second InputLayer '" + name + "'");
            InputSpec in{name, {}, dtype_of(cfg)};
            if (!batch_shape(c, cfg, name, in.shape) && depth == 0) c.fail("InputLayer '" + name + "' has no shape");
            m.inputs.push_back(in);
            prev = {name, 0, 0};
            m.input_refs.push_back(prev);
            have_input = true;
            continue;
        }
        if (!have_input) {
            // Keras 2 names the implicit input "<first layer>_input"; Keras 1 "<snake_case class>_input_1".
            InputSpec in{c.keras_version.rfind("1.", 0) == 0 ? snake_case(cls) + "_input_1" : name + "_input", {}, dtype_of(cfg)};
            if (!batch_shape(c, cfg, name, in.shape) && depth == 0)  // a nested model takes its caller's shape
                c.fail("the first layer '" + name + "' of the Sequential model has no input shape (batch_input_shape)");
            m.inputs.push_back(in);
            prev = {in.name, 0, 0};
            m.input_refs.push_back(prev);
            have_input = true;
        }
        LayerSpec spec{name, cls, &cfg, {{prev}}, {nullptr}, nullptr};
        if (l.HasMember("module") && l["module"].IsString()) spec.module = l["module"].GetString();
        parse_nested(c, spec, cfg, depth);
        m.layers.push_back(std::move(spec));
        prev = {name, 0, 0};
    }
    if (m.layers.empty()) c.fail("Sequential model has no layers besides its input");
    m.outputs.push_back(prev);
    return m;
}

ModelSpec parse_functional(const Ctx& c, const std::string& cls, const Value& config, int depth) {
    if (!config.IsObject() || !config.HasMember("layers") || !config["layers"].IsArray())
        c.fail(cls + " config has no 'layers' list");
    ModelSpec m;
    m.class_name = cls;
    std::vector<InputSpec> all_inputs;
    for (const auto& l : config["layers"].GetArray()) {
        std::string lcls = str_member(c, l, "class_name", "a layer");
        const Value& cfg = layer_config(c, l, lcls);
        std::string name = l.HasMember("name") && l["name"].IsString() ? l["name"].GetString() : str_member(c, cfg, "name", "a layer config");
        if (lcls == "InputLayer") {
            InputSpec in{name, {}, dtype_of(cfg)};
            if (!batch_shape(c, cfg, name, in.shape) && depth == 0) c.fail("InputLayer '" + name + "' has no shape");
            all_inputs.push_back(in);
            continue;
        }
        m.layers.push_back(LayerSpec{name, lcls, &cfg, {}, {}, nullptr});
        LayerSpec& spec = m.layers.back();
        if (l.HasMember("module") && l["module"].IsString()) spec.module = l["module"].GetString();
        parse_inbound(c, l, name, spec);
        parse_nested(c, spec, cfg, depth);
        if (spec.calls.empty() && spec.inbound_error.empty())
            spec.inbound_error = c.file + ": model_config: layer '" + name + "' is never called (no inbound nodes)";
    }
    m.input_refs = parse_io(c, config, "input_layers");
    m.outputs = parse_io(c, config, "output_layers");
    // Keras counts a nested model's internal node (its input to its output) as node 0 when it
    // has its own input, so its calls are referenced from 1; tell by references past the calls.
    for (auto& l : m.layers) {
        if (!l.nested) continue;
        int max_node = -1;
        auto see = [&](const TensorRef& r) { if (r.layer == l.name) max_node = std::max(max_node, r.node); };
        for (const auto& other : m.layers)
            for (const auto& call : other.calls)
                for (const auto& r : call) see(r);
        for (const auto& r : m.outputs) see(r);
        if (max_node == static_cast<int>(l.calls.size())) l.node_offset = 1;
    }
    for (const auto& r : m.input_refs) {
        bool found = false;
        for (const auto& in : all_inputs)
            if (in.name == r.layer) m.inputs.push_back(in), found = true;
        if (!found) c.fail("model input '" + r.layer + "' is not an InputLayer of the model");
    }
    return m;
}

ModelSpec parse_any(const Ctx& c, const std::string& cls, const Value& config, int depth) {
    if (cls == "Sequential") return parse_sequential(c, config, depth);
    return parse_functional(c, cls, config, depth);
}

}  // namespace

bool is_model_class(const std::string& cls) { return cls == "Sequential" || cls == "Model" || cls == "Functional"; }

std::string snake_case(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        unsigned char ch = static_cast<unsigned char>(s[i]);
        if (std::isupper(ch)) {
            bool boundary = i > 0 && (std::islower(static_cast<unsigned char>(s[i - 1])) ||
                                      (i + 1 < s.size() && std::islower(static_cast<unsigned char>(s[i + 1]))));
            if (boundary && !out.empty() && out.back() != '_') out += '_';
            out += static_cast<char>(std::tolower(ch));
        } else {
            out += static_cast<char>(ch);
        }
    }
    return out;
}

ModelSpec parse_model_config(const rapidjson::Value& mc, const std::string& file, const std::string& keras_version) {
    Ctx c{file, keras_version};
    std::string cls = str_member(c, mc, "class_name", "the model config");
    if (!mc.HasMember("config")) c.fail("no 'config'");
    if (is_model_class(cls)) return parse_any(c, cls, mc["config"], 0);
    throw UnsupportedError(file + ": the top-level model is a '" + cls + "', expected Sequential, Model or Functional");
}

}  // namespace graft::keras
