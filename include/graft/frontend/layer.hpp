// graft/frontend/layer.hpp - what a converter handler sees of one framework layer.
//
// A converter handler is registered for (frontend, layer class). The frontend calls it once per
// use of the layer with a LayerContext: the layer's config, its weights, the IR values that feed
// it. The handler adds IR operators and sets the layer's outputs. Header-only: a plugin's
// handler is compiled against this file alone (no JSON library: Config and LayerContext reach
// what libgraft parsed through virtual functions only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

/// Typed, checked, read-only access to a layer's JSON config, to part of it (get(), at()) or to
/// the keyword arguments of a layer call. Every error names the layer.
///
/// A Config is a cheap view. The parsed JSON stays inside libgraft, which reads it for the view
/// through a Config::Source (virtual functions, like LayerContext's), so a plugin built from
/// these headers alone needs no JSON library and nothing of libgraft.
class Config {
public:
    /// What a JSON value is. `integer`: a number that fits std::int64_t; `number`: any other
    /// number. `missing`: no value (an absent member, an empty view).
    enum class Kind { missing, null, boolean, integer, number, string, list, object };

    /// One JSON value as its Source knows it; opaque here.
    struct Node;

    /// Reads the JSON values Configs view; implemented by the frontend that parsed them. Every
    /// function gets a non-null node, and the value getters only a node of their kind.
    class Source {
    public:
        virtual ~Source() = default;
        virtual Kind kind(const Node* n) const = 0;
        /// Member `key` of an object; null if there is none or `n` is not an object.
        virtual const Node* member(const Node* n, const char* key) const = 0;
        /// The number of elements of a list, 0 for any other value.
        virtual std::size_t size(const Node* n) const = 0;
        /// Element `i` (< size(n)) of a list.
        virtual const Node* element(const Node* n, std::size_t i) const = 0;
        virtual bool boolean(const Node* n) const = 0;
        virtual std::int64_t integer(const Node* n) const = 0;
        /// The value of an integer or a number.
        virtual double number(const Node* n) const = 0;
        virtual std::string text(const Node* n) const = 0;
    };

    /// A view of nothing: has() is false for every key.
    Config() = default;
    /// A view of `node` (null: nothing), read through `source`; errors start with `where`.
    Config(const Source* source, const Node* node, std::string where)
        : src_(node ? source : nullptr), node_(source ? node : nullptr), where_(std::move(where)) {}

    const std::string& where() const noexcept { return where_; }
    const Source* source() const noexcept { return src_; }
    const Node* node() const noexcept { return node_; }

    // ---- members, by key -------------------------------------------------------------------

    /// What member `key` is; Kind::missing if there is none (or this is not an object).
    Kind kind(const char* key) const { return kind_of(find(key)); }
    /// Member `key` is present and not null.
    bool has(const char* key) const {
        const Kind k = kind(key);
        return k != Kind::missing && k != Kind::null;
    }
    /// Member `key` is present and null (Python's None).
    bool is_null(const char* key) const { return kind(key) == Kind::null; }
    bool is_bool(const char* key) const { return kind(key) == Kind::boolean; }
    /// An integer or any other number.
    bool is_number(const char* key) const { return numeric(kind(key)); }
    bool is_string(const char* key) const { return kind(key) == Kind::string; }
    bool is_list(const char* key) const { return kind(key) == Kind::list; }
    bool is_object(const char* key) const { return kind(key) == Kind::object; }

    /// The first of several spellings that is present (Keras 1 vs 2 names), or "" if none.
    std::string first_of(std::initializer_list<const char*> keys) const {
        for (auto* k : keys)
            if (has(k)) return k;
        return {};
    }

    std::int64_t get_int(const char* key) const { return int_of(member(key), quoted(key)); }
    std::int64_t get_int(const char* key, std::int64_t fallback) const { return has(key) ? get_int(key) : fallback; }

    double get_float(const char* key) const { return float_of(member(key), quoted(key)); }
    double get_float(const char* key, double fallback) const { return has(key) ? get_float(key) : fallback; }

    bool get_bool(const char* key) const { return bool_of(member(key), quoted(key)); }
    bool get_bool(const char* key, bool fallback) const { return has(key) ? get_bool(key) : fallback; }

    std::string get_string(const char* key) const { return string_of(member(key), quoted(key)); }
    std::string get_string(const char* key, const std::string& fallback) const { return has(key) ? get_string(key) : fallback; }

    /// An integer or a list of integers (Keras accepts both for kernel_size, strides, ...); a
    /// null in the list is kDynamic.
    std::vector<std::int64_t> get_ints(const char* key) const {
        const Node* m = member(key);
        std::vector<std::int64_t> out;
        const Kind k = src_->kind(m);
        if (k == Kind::list) {
            for (std::size_t i = 0, n = src_->size(m); i < n; ++i) {
                const Node* e = src_->element(m, i);
                const Kind ek = src_->kind(e);
                if (ek == Kind::integer) out.push_back(src_->integer(e));
                else if (ek == Kind::null) out.push_back(kDynamic);
                else fail(quoted(key) + " should hold integers");
            }
        } else if (k == Kind::integer) {
            out.push_back(src_->integer(m));
        } else {
            fail(quoted(key) + " should be an integer or a list of integers");
        }
        return out;
    }
    /// Like get_ints, repeated to `n` entries when a single integer was given.
    std::vector<std::int64_t> get_ints(const char* key, std::size_t n) const {
        auto v = get_ints(key);
        if (v.size() == 1 && n > 1) v.assign(n, v[0]);
        if (v.size() != n)
            fail(quoted(key) + " has " + std::to_string(v.size()) + " entries, expected " + std::to_string(n));
        return v;
    }

    /// An integer that becomes a size (units, a kernel size, a stride, a repeat count): between
    /// `lo` and kMaxElements, else ShapeError naming the layer, the field and the value.
    std::int64_t get_size(const char* key, std::int64_t lo = 1) const {
        return checked::in_range(where_, quoted(key), get_int(key), lo);
    }
    std::int64_t get_size(const char* key, std::int64_t fallback, std::int64_t lo) const {
        return has(key) ? get_size(key, lo) : fallback;
    }
    /// get_ints(key, n), each entry checked like get_size.
    std::vector<std::int64_t> get_sizes(const char* key, std::size_t n, std::int64_t lo = 1) const {
        auto v = get_ints(key, n);
        for (auto x : v) checked::in_range(where_, quoted(key), x, lo);
        return v;
    }

    /// Member `key` (present, not null) as a view of its own.
    Config get(const char* key) const { return Config(src_, member(key), where_, key); }

    // ---- the viewed value itself (an object, a member from get(), a list element) ------------

    Kind kind() const { return kind_of(node_); }
    /// The number of elements if this is a list, else 0.
    std::size_t size() const { return kind() == Kind::list ? src_->size(node_) : 0; }
    /// Element `i` of this list.
    Config at(std::size_t i) const {
        if (i >= size()) fail(quoted() + " has " + std::to_string(size()) + " entries, asked for entry " + std::to_string(i));
        return Config(src_, src_->element(node_, i), where_, label_ + "[" + std::to_string(i) + "]");
    }
    std::int64_t as_int() const { return int_of(present(), quoted()); }
    double as_float() const { return float_of(present(), quoted()); }
    bool as_bool() const { return bool_of(present(), quoted()); }
    std::string as_string() const { return string_of(present(), quoted()); }

    [[noreturn]] void fail(const std::string& msg) const { throw FormatError(where_ + ": " + msg); }

private:
    Config(const Source* source, const Node* node, const std::string& where, std::string label)
        : Config(source, node, where) {
        label_ = std::move(label);
    }

    static bool numeric(Kind k) { return k == Kind::integer || k == Kind::number; }
    Kind kind_of(const Node* n) const { return n ? src_->kind(n) : Kind::missing; }
    const Node* find(const char* key) const { return node_ ? src_->member(node_, key) : nullptr; }
    /// Member `key`, which must be present and not null.
    const Node* member(const char* key) const {
        if (!has(key)) fail(std::string("config has no '") + key + "'");
        return find(key);
    }
    const Node* present() const {
        if (!node_) fail(quoted() + " is missing");
        return node_;
    }
    /// How messages name a member, or (no key) this value.
    std::string quoted(const char* key) const { return std::string("config '") + key + "'"; }
    std::string quoted() const { return label_.empty() ? std::string("config") : quoted(label_.c_str()); }

    std::int64_t int_of(const Node* n, const std::string& what) const {
        const Kind k = src_->kind(n);
        if (k == Kind::integer) return src_->integer(n);
        if (k == Kind::number) {  // 3.0 is fine; anything outside std::int64_t or with a fraction is not
            const double d = src_->number(n);
            if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
                d == static_cast<double>(static_cast<std::int64_t>(d)))
                return static_cast<std::int64_t>(d);
        }
        fail(what + " should be an integer");
    }
    double float_of(const Node* n, const std::string& what) const {
        if (!numeric(src_->kind(n))) fail(what + " should be a number");
        return src_->number(n);
    }
    bool bool_of(const Node* n, const std::string& what) const {
        if (src_->kind(n) != Kind::boolean) fail(what + " should be true or false");
        return src_->boolean(n);
    }
    std::string string_of(const Node* n, const std::string& what) const {
        if (src_->kind(n) != Kind::string) fail(what + " should be a string");
        return src_->text(n);
    }

    const Source* src_ = nullptr;
    const Node* node_ = nullptr;
    std::string where_;
    std::string label_;  // the key (or key[i]) this view was reached by, for messages
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
    /// The opset of the node's domain the model imports (ONNX); 0 for frameworks without opsets.
    virtual std::int64_t opset() const { return 0; }
    /// The layer's configuration: a Keras layer's JSON config, an ONNX node's attributes (ints
    /// and floats as numbers, lists as lists, strings as strings; tensor attributes are not in it).
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
    /// dict after [layer, node, tensor] in an inbound node; Keras 3: the node's "kwargs"); a view
    /// of nothing if there are none. Keras tensors passed as 'value'/'key' are already among the
    /// inputs (after the positional ones).
    virtual Config call_kwargs() const { return Config(nullptr, nullptr, where()); }

    /// Declares that the handler honours the Keras masks of its inputs (Value::mask); without it
    /// a masked input makes the converter raise UnsupportedError for this layer.
    void consume_masks() noexcept { masks_consumed_ = true; }
    bool masks_consumed() const noexcept { return masks_consumed_; }
    /// A boolean call argument (e.g. use_causal_mask), `fallback` if absent or null.
    bool call_flag(const char* key, bool fallback) const {
        const Config k = call_kwargs();
        if (!k.has(key)) return fallback;
        if (!k.is_bool(key)) fail_format(std::string("call argument '") + key + "' should be true or false");
        return k.get_bool(key);
    }

    // ---- helpers -------------------------------------------------------------------------

    /// "model.h5: layer 'dense_1' (Dense)"
    /// "FILE: layer 'NAME' (CLASS)" for messages, the names (from the file) made printable.
    std::string where() const { return file() + ": layer '" + printable(layer_name()) + "' (" + printable(class_name()) + ")"; }
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
    /// A weight with one value per entry of the last axis of `x` (a custom layer's
    /// `add_weight(shape=(input_shape[-1],))`): that axis and weight `suffix` as a constant along
    /// it (order C when the axis is C). ShapeError when x has fewer than 2 dimensions (`entries`
    /// names what the last one holds, e.g. "features") or no fixed size along that axis.
    std::pair<Axis, ConstantVariable*> last_axis_weight(const Value& x, const std::string& suffix,
                                                        const std::string& entries) {
        if (x.logical.ndim() < 2)
            fail_shape("input has " + std::to_string(x.logical.ndim()) + " dimensions, expected at least 2 (batch, ..., " +
                       entries + ")");
        const Axis axis = x.logical.back();
        const std::int64_t n = x.var->size(axis);
        if (n == kDynamic) fail_shape("the last dimension of the input has no fixed size");
        return {axis, constant(weight_named(suffix), axis == Axis::C ? OrderC : Order{axis}, {n})};
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
        std::vector<std::string> follow;  // each size is the input's at the same position, free or not
        for (const Axis& axis : v.logical.axes()) follow.push_back(axis.name());
        a.set("follow", std::move(follow));
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
