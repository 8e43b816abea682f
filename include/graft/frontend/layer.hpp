// graft/frontend/layer.hpp - what a converter handler sees of one framework layer.
//
// A converter handler is registered for (frontend, layer class). The frontend calls it once per
// use of the layer with a LayerContext: the layer's config, its weights, the IR values that feed
// it. The handler adds IR operators and sets the layer's outputs. Header-only: a plugin's
// handler is compiled against this file alone.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "graft/error.hpp"
#include "graft/ir/graph.hpp"
#include "graft/registry.hpp"

namespace graft {

/// An IR variable as the framework sees it: `logical` names the framework's positional
/// dimensions (Keras' (batch, h, w, c) is NHWC), which may differ from the variable's memory
/// order when the optimizer or an op chose another layout.
struct Value {
    Variable* var = nullptr;
    Order logical;
    /// Keras' mask of this tensor (Embedding mask_zero, Masking): a float 0/1 variable over the
    /// first two logical axes (batch, time), or null. A handler that reads an input with a mask
    /// must call LayerContext::consume_masks(), or the converter refuses the layer.
    Variable* mask = nullptr;
};

/// A weight array read from the model file, in the framework's layout.
struct WeightArray {
    std::string name;  ///< as stored, e.g. "dense_1/kernel:0"
    Shape shape;
    std::shared_ptr<const std::vector<float>> data;
};

/// Typed, checked access to a layer's JSON config. Every error names the layer.
class Config {
public:
    Config(const rapidjson::Value* v, std::string where) : v_(v), where_(std::move(where)) {}

    const rapidjson::Value& raw() const { return *v_; }
    const std::string& where() const noexcept { return where_; }

    bool has(const char* key) const { return v_ && v_->IsObject() && v_->HasMember(key) && !(*v_)[key].IsNull(); }

    /// The first of several spellings that is present (Keras 1 vs 2 names), or "" if none.
    std::string first_of(std::initializer_list<const char*> keys) const {
        for (auto* k : keys)
            if (has(k)) return k;
        return {};
    }

    std::int64_t get_int(const char* key) const {
        const auto& m = member(key);
        if (m.IsInt64()) return m.GetInt64();
        if (m.IsDouble() && m.GetDouble() == static_cast<double>(static_cast<std::int64_t>(m.GetDouble())))
            return static_cast<std::int64_t>(m.GetDouble());
        fail(std::string("config '") + key + "' should be an integer");
    }
    std::int64_t get_int(const char* key, std::int64_t fallback) const { return has(key) ? get_int(key) : fallback; }

    double get_float(const char* key) const {
        const auto& m = member(key);
        if (!m.IsNumber()) fail(std::string("config '") + key + "' should be a number");
        return m.GetDouble();
    }
    double get_float(const char* key, double fallback) const { return has(key) ? get_float(key) : fallback; }

    bool get_bool(const char* key) const {
        const auto& m = member(key);
        if (!m.IsBool()) fail(std::string("config '") + key + "' should be true or false");
        return m.GetBool();
    }
    bool get_bool(const char* key, bool fallback) const { return has(key) ? get_bool(key) : fallback; }

    std::string get_string(const char* key) const {
        const auto& m = member(key);
        if (!m.IsString()) fail(std::string("config '") + key + "' should be a string");
        return std::string(m.GetString(), m.GetStringLength());
    }
    std::string get_string(const char* key, const std::string& fallback) const { return has(key) ? get_string(key) : fallback; }

    /// An integer or a list of integers (Keras accepts both for kernel_size, strides, ...).
    std::vector<std::int64_t> get_ints(const char* key) const {
        const auto& m = member(key);
        std::vector<std::int64_t> out;
        if (m.IsArray()) {
            for (const auto& e : m.GetArray()) {
                if (e.IsInt64()) out.push_back(e.GetInt64());
                else if (e.IsNull()) out.push_back(kDynamic);
                else fail(std::string("config '") + key + "' should hold integers");
            }
        } else if (m.IsInt64()) {
            out.push_back(m.GetInt64());
        } else {
            fail(std::string("config '") + key + "' should be an integer or a list of integers");
        }
        return out;
    }
    /// Like get_ints, repeated to `n` entries when a single integer was given.
    std::vector<std::int64_t> get_ints(const char* key, std::size_t n) const {
        auto v = get_ints(key);
        if (v.size() == 1 && n > 1) v.assign(n, v[0]);
        if (v.size() != n)
            fail(std::string("config '") + key + "' has " + std::to_string(v.size()) + " entries, expected " + std::to_string(n));
        return v;
    }

    Config get(const char* key) const { return Config(&member(key), where_); }

    [[noreturn]] void fail(const std::string& msg) const { throw FormatError(where_ + ": " + msg); }

private:
    const rapidjson::Value& member(const char* key) const {
        if (!has(key)) fail(std::string("config has no '") + key + "'");
        return (*v_)[key];
    }
    const rapidjson::Value* v_;
    std::string where_;
};

class LayerContext {
public:
    virtual ~LayerContext() = default;

    virtual const std::string& frontend() const = 0;
    virtual const std::string& file() const = 0;
    virtual const std::string& layer_name() const = 0;
    virtual const std::string& class_name() const = 0;
    /// The framework version that saved the model ("2.3.1"), "" if unknown.
    virtual const std::string& framework_version() const = 0;
    /// The backend that saved the model ("tensorflow", "theano"), "" if the file does not say
    /// (Keras 1 files never do). Theano stores convolution kernels flipped.
    virtual const std::string& framework_backend() const {
        static const std::string none;
        return none;
    }
    virtual const Config& config() const = 0;

    virtual std::size_t num_inputs() const = 0;
    virtual const Value& input(std::size_t i) const = 0;
    virtual void set_outputs(std::vector<Value> outputs) = 0;

    /// The layer's weights in the framework's order (Keras: trainable, then non-trainable).
    virtual std::size_t num_weights() const = 0;
    virtual const WeightArray& weight(std::size_t i) const = 0;

    virtual Graph& graph() = 0;
    virtual const Registry& registry() const = 0;

    /// The keyword arguments of this call of the layer as the file stores them (Keras 2: the
    /// dict after [layer, node, tensor] in an inbound node; Keras 3: the node's "kwargs"), or null.
    /// Keras tensors passed as 'value'/'key' are already among the inputs (after the positional ones).
    virtual const rapidjson::Value* call_kwargs() const { return nullptr; }

    /// Declares that the handler honours the Keras masks of its inputs (Value::mask); without it
    /// a masked input makes the converter raise UnsupportedError for this layer.
    void consume_masks() noexcept { masks_consumed_ = true; }
    bool masks_consumed() const noexcept { return masks_consumed_; }
    /// A boolean call argument (e.g. use_causal_mask), `fallback` if absent or null.
    bool call_flag(const char* key, bool fallback) const {
        const rapidjson::Value* k = call_kwargs();
        if (!k || !k->IsObject() || !k->HasMember(key) || (*k)[key].IsNull()) return fallback;
        if (!(*k)[key].IsBool()) fail_format(std::string("call argument '") + key + "' should be true or false");
        return (*k)[key].GetBool();
    }

    // ---- helpers -------------------------------------------------------------------------

    /// "model.h5: layer 'dense_1' (Dense)"
    std::string where() const { return file() + ": layer '" + layer_name() + "' (" + class_name() + ")"; }
    [[noreturn]] void fail_unsupported(const std::string& msg) const { throw UnsupportedError(where() + ": " + msg); }
    [[noreturn]] void fail_format(const std::string& msg) const { throw FormatError(where() + ": " + msg); }
    [[noreturn]] void fail_shape(const std::string& msg) const { throw ShapeError(where() + ": " + msg); }

    /// Checks the number of inputs this call of the layer has.
    void expect_inputs(std::size_t lo, std::size_t hi) const {
        if (num_inputs() < lo || num_inputs() > hi)
            fail_format("has " + std::to_string(num_inputs()) + " inputs, expected " +
                        (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)));
    }
    void expect_weights(std::size_t n) const {
        if (num_weights() != n)
            fail_format("has " + std::to_string(num_weights()) + " weight arrays in the file, expected " + std::to_string(n) +
                        weight_list());
    }

    /// The weight whose name ends in `suffix` ("kernel" matches "dense_1/kernel:0" and Keras 1's
    /// "dense_1_W:0" is found with suffix "W"). FormatError listing what there is otherwise.
    const WeightArray& weight_named(const std::string& suffix) const {
        for (std::size_t i = 0; i < num_weights(); ++i) {
            std::string n = weight(i).name;
            if (n.size() > 2 && n.compare(n.size() - 2, 2, ":0") == 0) n.resize(n.size() - 2);
            if (n == suffix) return weight(i);
            if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
                char sep = n[n.size() - suffix.size() - 1];
                if (sep == '/' || sep == '_') return weight(i);
            }
        }
        fail_format("has no weight named '" + suffix + "'" + weight_list());
    }

    /// A weight as a constant, after checking its shape against what the config implies.
    ConstantVariable* constant(const WeightArray& w, const Order& order, const Shape& expected) {
        if (w.shape != expected)
            fail_shape("weight '" + w.name + "' has shape " + shape_str(w.shape) + ", expected " + shape_str(expected) +
                       " from the layer's config");
        return graph().add_constant(graph().unique_name(w.name), order, w.shape, w.data);
    }
    /// A constant made by the handler (e.g. a rearranged kernel).
    ConstantVariable* constant(const std::string& name, const Order& order, const Shape& shape, std::vector<float> data) {
        return graph().add_constant(graph().unique_name(name), order, shape,
                                    std::make_shared<const std::vector<float>>(std::move(data)));
    }

    /// Adds an operator (through its schema) named after this layer; returns it.
    Operator* op(const std::string& type, NamedVars inputs, Attributes attrs = {}, const std::string& suffix = "") {
        auto name = graph().unique_name(suffix.empty() ? layer_name() : layer_name() + "/" + suffix);
        try {
            Operator* o = add_op(graph(), registry(), type, name, std::move(inputs), std::move(attrs));
            o->set_layer(layer_name());
            return o;
        } catch (const UnsupportedError& e) {
            throw UnsupportedError(where() + ": " + e.what());
        } catch (const ShapeError& e) {
            throw ShapeError(where() + ": " + e.what());
        } catch (const GraphError& e) {
            throw GraphError(where() + ": " + e.what());
        }
    }

    /// `v` with its logical axes renamed to `logical` (same sizes, positions unchanged). Costs
    /// nothing when the names already agree; otherwise a Reshape the memory plan aliases.
    Value relabel(const Value& v, const Order& logical) {
        if (v.logical == logical) return v;
        if (v.logical.ndim() != logical.ndim())
            fail_shape("input has " + std::to_string(v.logical.ndim()) + " dimensions (" + v.logical.str() + "), expected " +
                       std::to_string(logical.ndim()) + " (" + logical.str() + ")");
        Attributes a;
        a.set("in_order", v.logical);
        a.set("out_order", logical);
        a.set("shape", v.var->shape_in(v.logical));
        auto* o = op("Reshape", {{"x", v.var}}, std::move(a), "relabel");
        return Value{o->output("y"), logical};
    }

private:
    bool masks_consumed_ = false;
    std::string weight_list() const {
        std::string s = " (the file has:";
        for (std::size_t i = 0; i < num_weights(); ++i) s += " '" + weight(i).name + "' " + shape_str(weight(i).shape);
        return num_weights() ? s + ")" : " (the file has none)";
    }
};

}  // namespace graft
