// graft/registry.hpp - op schemas, converters and generators, keyed by name.
//
// A Registry is an object: tests make their own, a host may keep several, and a plugin
// registers into the one it is given. Registering a key that is taken is an error that names
// who holds it. Everything here is inline so a plugin builds from the headers alone.
//
// Words (docs/architecture.md): a *converter* turns one framework layer or node into IR
// operators; a *generator* is what a backend registers for an op type: the native backend's
// generators are *kernel builders* (graft/backend/native_kernel.hpp), the cpp backend's are
// *emitters* (graft/backend/cpp_emit.hpp). Backends are keys, not fields: a backend is a tag type
//
//     struct MyBackend { static constexpr const char* name = "mine"; using Generator = ...; };
//
// and `add_generator<MyBackend>(op_type, g)` files `g` under ("mine", op_type). A new backend
// (the browser runtime, or a plugin's own) changes neither this class's layout nor the plugin ABI.
#pragma once

#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graft/error.hpp"
#include "graft/ir/graph.hpp"

namespace graft {

class LayerContext;

/// The type of a value an operator produces.
struct TensorType {
    Order order;
    Shape shape;
    DType dtype = DType::float32;
};

/// An elementwise op written as a FusedElementwise program of its own: what the rule
/// fuse_elementwise merges into one op. The program is FusedElementwise's attributes (bcast,
/// steps, args, fns, params: lib/ops/fused/fused.hpp) over `inputs`, x0 first.
struct ElementwiseProgram {
    struct Input {
        /// The value the program reads; null: a new 1-D constant in order C holding `data`, named
        /// after `name` (a value computed from constants, e.g. BatchNormalization's scale).
        Variable* var = nullptr;
        std::shared_ptr<const std::vector<float>> data;
        std::string name;
    };
    std::vector<Input> inputs;
    Attributes attrs;
};

/// What an operator type means. `infer` and `required_order` see the operator with its inputs
/// bound and its attributes set.
struct OpSchema {
    std::string type;
    /// Input names in their usual order; a name ending in '?' is optional. Ignored when variadic.
    std::vector<std::string> inputs;
    /// Inputs named x0, x1, ... (at least `min_inputs`).
    bool variadic = false;
    std::size_t min_inputs = 1;
    /// The outputs and their types, computed from inputs and attributes. Throws ShapeError.
    std::function<std::vector<std::pair<std::string, TensorType>>(const Operator&)> infer;
    /// The order an input must be in, if the operator needs one (nullopt: any order).
    std::function<std::optional<Order>(const Operator&, const std::string& input)> required_order;
    /// Output "y" may be written over input "x" (elementwise ops).
    bool inplace = false;
    /// Output "y" is input "x" reinterpreted, same bytes (reshape).
    bool alias = false;
    /// The op applies attributes activation/alpha/max_value/threshold to its output "y" (a fused
    /// epilogue, see ops::act_params); the optimizer folds a following Activation into it.
    bool activation_epilogue = false;

    // ---- traits the optimizer reads instead of op-type names ------------------------------
    /// For these attributes the op computes y = x (remove_noops drops it). Null: never.
    std::function<bool(const Operator&)> is_noop;
    /// y = x . w (+ b) with w's last axis the output channel and b in order C (Linear, Conv1D,
    /// Conv2D): a per-channel scale and shift right after it fold into w and b (fold_batchnorm).
    bool folds_channel_scale = false;
    /// The op as a fused elementwise program (fuse_elementwise), or nullopt when these attributes
    /// and inputs do not fuse; a graft::Error thrown counts as nullopt. Null: the op never fuses.
    std::function<std::optional<ElementwiseProgram>(const Operator&)> elementwise_program;
    /// Inputs that may hold integer or bool values (graft/ir/dtype.hpp: stored as exact float32
    /// values): Cast's x, Embedding's indices, ... Every other input must be float32 (check_dtypes).
    std::set<std::string> integer_inputs;

    std::string doc;
};

/// An OpSchema::infer for ops whose one output "y" has the order and shape of their input "x"
/// (elementwise ops).
inline std::vector<std::pair<std::string, TensorType>> infer_like_x(const Operator& op) {
    const Variable& x = *op.input("x");
    return {{"y", {x.order(), x.shape()}}};
}

using ConverterFn = std::function<void(LayerContext&)>;

/// Who registered a handler; a plugin's entry keeps its shared library loaded.
struct HandlerOwner {
    std::string name = "graft";
    std::shared_ptr<const void> keepalive;
};

/// A plugin loaded into a registry (graft::load_plugin in graft/plugin.hpp adds these).
struct PluginRecord {
    std::string name;
    std::string version;
    std::string graft_version;  ///< the graft version the plugin was built against
    std::string file;           ///< the shared object, as loaded
    std::shared_ptr<const void> keepalive;  ///< the loaded library; handlers' owners share it
};

template <class H>
class HandlerTable {
public:
    struct Entry {
        // The owner is declared first so that it is destroyed last: the handler's code may live
        // in the plugin library the owner keeps loaded.
        HandlerOwner owner;
        H handler;
    };

    void add(const std::string& what, const std::string& key, H handler, const HandlerOwner& owner) {
        auto it = entries_.find(key);
        if (it != entries_.end())
            throw RegistryError(what + " '" + key + "' is already registered by " + it->second.owner.name +
                                (owner.name.empty() ? "" : " (refused for " + owner.name + ")"));
        entries_.emplace(key, Entry{owner, std::move(handler)});
    }
    /// Removes every entry whose owner keeps `keepalive` alive (undoes a failed plugin).
    void remove_owned_by(const std::shared_ptr<const void>& keepalive) {
        for (auto it = entries_.begin(); it != entries_.end();)
            it = it->second.owner.keepalive == keepalive ? entries_.erase(it) : std::next(it);
    }
    const Entry* find(const std::string& key) const {
        auto it = entries_.find(key);
        return it == entries_.end() ? nullptr : &it->second;
    }
    const std::map<std::string, Entry>& entries() const noexcept { return entries_; }

private:
    std::map<std::string, Entry> entries_;
};

/// Computes an operator whose inputs are all constants, now (the optimizer's constant folding asks
/// it). libgraft's built-in registry has one that runs the native backend's kernels.
class ConstantEvaluator {
public:
    virtual ~ConstantEvaluator() = default;
    /// The op's outputs, in the op's output order, as float32 values in each output's order.
    /// Throws graft::Error when the op cannot be evaluated.
    virtual std::vector<std::vector<float>> evaluate(const Operator& op, const class Registry& reg) const = 0;
};

/// A generator with its type erased (the registry stores every backend's alike).
using ErasedGenerator = std::shared_ptr<const void>;

/// What Registry::find_generator answers: the generator and who registered it, or nothing.
template <class G>
struct GeneratorRef {
    const G* generator = nullptr;
    const HandlerOwner* owner = nullptr;
    explicit operator bool() const noexcept { return generator != nullptr; }
};

class Registry {
public:
    Registry() = default;
    Registry(const Registry&) = delete;
    Registry& operator=(const Registry&) = delete;

    // ---- op schemas ----------------------------------------------------------------------
    void add_op(OpSchema s) {
        if (s.type.empty() || !s.infer) throw RegistryError("an op schema needs a type and an infer function");
        auto key = s.type;
        ops_.add("op type", key, std::move(s), owner_);
    }
    const OpSchema* find_op(const std::string& type) const {
        auto* e = ops_.find(type);
        return e ? &e->handler : nullptr;
    }
    const OpSchema& op(const std::string& type) const {
        if (auto* s = find_op(type)) return *s;
        throw UnsupportedError("unknown op type '" + type + "': no schema is registered for it (is the plugin that defines it loaded? use --plugin or GRAFT_PLUGIN_PATH)");
    }
    const HandlerTable<OpSchema>& ops() const noexcept { return ops_; }

    // ---- converter handlers, keyed by (frontend, layer class) ---------------------------
    void add_converter(const std::string& frontend, const std::string& layer_class, ConverterFn fn) {
        converters_.add("converter", frontend + ":" + layer_class, std::move(fn), owner_);
    }
    const ConverterFn* find_converter(const std::string& frontend, const std::string& layer_class) const {
        auto* e = converters_.find(frontend + ":" + layer_class);
        return e ? &e->handler : nullptr;
    }
    const HandlerTable<ConverterFn>& converters() const noexcept { return converters_; }

    // ---- generators, keyed by (backend name, op type) ------------------------------------
    /// Files generator `g` of backend `B` (a tag type with `name` and `Generator`) for `op_type`.
    template <class B>
    void add_generator(const std::string& op_type, typename B::Generator g) {
        auto erased = std::make_shared<const typename B::Generator>(std::move(g));
        generators_[B::name].add(std::string(B::name) + " generator", op_type, std::move(erased), owner_);
    }
    /// The generator of backend `B` for `op_type`, with its owner; empty if there is none.
    template <class B>
    GeneratorRef<typename B::Generator> find_generator(const std::string& op_type) const {
        auto t = generators_.find(B::name);
        if (t == generators_.end()) return {};
        const auto* e = t->second.find(op_type);
        if (!e) return {};
        return {static_cast<const typename B::Generator*>(e->handler.get()), &e->owner};
    }
    /// Whether backend `backend` has a generator for `op_type` (no need to know its type).
    bool has_generator(const std::string& backend, const std::string& op_type) const {
        auto t = generators_.find(backend);
        return t != generators_.end() && t->second.find(op_type) != nullptr;
    }
    /// Every backend's generators, by backend name (the handlers type-erased: for listing).
    const std::map<std::string, HandlerTable<ErasedGenerator>>& generators() const noexcept { return generators_; }

    // ---- constant folding ----------------------------------------------------------------
    /// What evaluates constant operators (null: the optimizer folds none).
    const ConstantEvaluator* evaluator() const noexcept { return evaluator_.get(); }
    void set_evaluator(std::shared_ptr<const ConstantEvaluator> e) { evaluator_ = std::move(e); }

    // ---- plugins -------------------------------------------------------------------------
    /// The plugins loaded into this registry, in load order.
    const std::vector<PluginRecord>& plugins() const noexcept { return plugins_; }
    const PluginRecord* find_plugin(const std::string& name) const {
        for (const auto& p : plugins_)
            if (p.name == name) return &p;
        return nullptr;
    }
    void add_plugin(PluginRecord p) { plugins_.push_back(std::move(p)); }
    /// Removes every op schema and handler registered under `keepalive` (a plugin whose
    /// registration failed part-way leaves nothing behind).
    void remove_owned_by(const std::shared_ptr<const void>& keepalive) {
        if (!keepalive) return;
        ops_.remove_owned_by(keepalive);
        converters_.remove_owned_by(keepalive);
        for (auto& [backend, table] : generators_) table.remove_owned_by(keepalive);
    }

    // ---- ownership -----------------------------------------------------------------------
    /// While alive, everything registered is recorded as owned by `owner` (a plugin).
    class OwnerScope {
    public:
        OwnerScope(Registry& r, HandlerOwner owner) : r_(r), saved_(std::move(r.owner_)) { r_.owner_ = std::move(owner); }
        ~OwnerScope() { r_.owner_ = std::move(saved_); }
        OwnerScope(const OwnerScope&) = delete;
        OwnerScope& operator=(const OwnerScope&) = delete;

    private:
        Registry& r_;
        HandlerOwner saved_;
    };

private:
    std::vector<PluginRecord> plugins_;  // first: destroyed after every handler below
    HandlerOwner owner_;
    HandlerTable<OpSchema> ops_;
    HandlerTable<ConverterFn> converters_;
    std::map<std::string, HandlerTable<ErasedGenerator>> generators_;
    std::shared_ptr<const ConstantEvaluator> evaluator_;
};

// ---- building operators through their schema ----------------------------------------------

/// Adds operator `type` to `g`: runs the schema's inference and creates its output variables
/// (named "<name>:<output>" or "<name>" for a single output "y"). Returns the new operator.
inline Operator* add_op(Graph& g, const Registry& reg, const std::string& type, const std::string& name,
                        NamedVars inputs, Attributes attrs = {}) {
    const OpSchema& s = reg.op(type);
    Operator probe(type, name, inputs, attrs);
    auto types = s.infer(probe);
    NamedVars outs;
    for (auto& [oname, t] : types)  // before any variable: the message names the op, not a variable
        if (!checked::fits(t.shape)) checked::static_elements(probe.describe(), "output '" + oname + "'", t.shape);
    for (auto& [oname, t] : types) {
        auto vname = g.unique_name(types.size() == 1 && oname == "y" ? name : name + ":" + oname);
        outs.emplace_back(oname, g.add_variable(vname, t.dtype, t.order, t.shape));
    }
    return g.add_op(type, name, std::move(inputs), std::move(outs), std::move(attrs));
}

/// Re-runs every schema's inference in topological order and updates the output variables;
/// used when the batch size is fixed for compilation and after rewrites. ShapeError on conflict.
inline void infer_shapes(Graph& g, const Registry& reg) {
    for (Operator* op : g.topological_order()) {
        auto types = reg.op(op->type()).infer(*op);
        for (auto& [oname, t] : types) {
            Variable* v = op->output_or_null(oname);
            if (!v) throw GraphError(op->describe() + ": inference yields output '" + oname + "' the operator does not have");
            v->set_type(t.order, t.shape);
            v->set_dtype(t.dtype);
        }
    }
}

/// Every input of every operator that holds integer or bool values is one its schema takes so
/// (OpSchema::integer_inputs); UnsupportedError naming the op, its layer, the input and its dtype,
/// and the ops that take such values, otherwise.
inline void check_dtypes(const Graph& g, const Registry& reg) {
    for (const Operator* op : g.topological_order()) {
        const OpSchema& s = reg.op(op->type());
        for (const auto& [port, v] : op->inputs()) {
            if (v->dtype() == DType::float32 || s.integer_inputs.count(port)) continue;
            std::string takers;
            for (const auto& [type, e] : reg.ops().entries())
                for (const auto& p : e.handler.integer_inputs) takers += (takers.empty() ? "" : ", ") + type + "'s " + p;
            throw UnsupportedError(op->describe() + (op->layer().empty() ? "" : " (from layer '" + op->layer() + "')") +
                                   ": input '" + port + "' " + v->describe() + " holds " + name_of(v->dtype()) +
                                   " values; this input takes float32 (integer and bool values go only to " + takers + ")");
        }
    }
}

}  // namespace graft
