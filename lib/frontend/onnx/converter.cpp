// ONNX model -> graft IR: the graph's nodes in file order (ONNX's checker has verified they are
// topologically sorted), each handed to the converter registered for ("onnx", domain:op_type).
// Values known while converting (initializers, Constant outputs, shape arithmetic on static
// shapes) are carried as HostTensors and become graph constants only where an op reads them.
//
// The pre-flight check is the conversion run to the end, as for Keras: every node without a
// converter and every converter's UnsupportedError is collected, nodes downstream of a refused one
// are listed as unchecked, and convert() throws one UnsupportedError naming them all. Exporter
// patterns (decomposed LayerNorm, GELU, SiLU, Hardswish) are fused back first (patterns.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "frontend/findings.hpp"
#include "frontend/onnx/model_proto.hpp"
#include "frontend/onnx/node_context.hpp"
#include "frontend/onnx/patterns.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/printable.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

std::string advice(const std::string& key, const std::string& domain) {
    const bool standard = domain.empty() || domain == kDefaultDomain;
    return std::string("no converter is registered for ONNX op '") + key + "'" +
           (standard ? "; graft does not support this op yet (the README lists the supported ops)" : "") +
           "; a plugin can register one: add_converter(\"onnx\", \"" + key + "\", ...), loaded with --plugin PATH or GRAFT_PLUGIN_PATH";
}

/// graft's dtype for an ONNX element type, if graft takes it as an input (double and float16
/// inputs are not taken).
std::optional<DType> dtype_of_onnx(int et) {
    using P = ::onnx::TensorProto;
    switch (et) {
        case P::FLOAT: return DType::float32;
        case P::INT64: return DType::int64;
        case P::INT32: return DType::int32;
        case P::INT8: return DType::int8;
        case P::UINT8: return DType::uint8;
        case P::UINT16: return DType::uint16;
        case P::BOOL: return DType::boolean;
        default: return std::nullopt;
    }
}

Attributes cast_to(DType t) {
    Attributes a;
    a.set("to", std::string(name_of(t)));
    return a;
}

/// The most elements a model input may have to be read as a value while converting (graft
/// compiles the model once per distinct value: shapes, axes and pads, not data).
constexpr std::int64_t kMaxValueInputElements = 4096;

/// Input `name`'s value, given by the caller, as the converter holds known values.
HostTensor host_value(const Tensor& t, DType dtype, const Shape& declared, const std::string& where) {
    if (t.shape() != declared)
        throw ShapeError(where + ": the value given has shape " + shape_str(t.shape()) + ", expected " + shape_str(declared));
    HostTensor h;
    h.shape = declared;
    h.kind = dtype == DType::float32 ? HostTensor::Kind::floating
             : dtype == DType::boolean ? HostTensor::Kind::boolean
                                       : HostTensor::Kind::integer;
    for (std::size_t k = 0; k < t.size(); ++k) {
        const double v = t.at_double(k);
        if (h.is_float()) {
            h.f.push_back(static_cast<float>(v));
        } else if (v == std::trunc(v) && std::fabs(v) <= 9.0e15) {  // exact in int64 (and in a double)
            h.i.push_back(static_cast<std::int64_t>(v));
        } else {
            throw DTypeError(where + ": the value given holds " + std::to_string(v) + " (element " + std::to_string(k) + "), expected " +
                             name_of(dtype) + " values");
        }
    }
    return h;
}

class Converter {
public:
    Converter(const ModelFile& file, const Registry& registry, const Options& options, Graph& g, CheckReport& report)
        : file_(file), registry_(registry), options_(options), g_(g), report_(report), batch_(g, registry) {}

    void run() {
        const auto& graph = file_.proto.graph();
        for (const auto& t : graph.initializer()) {
            if (t.name().empty()) throw FormatError(file_.path + ": an initializer has no name");
            Slot s;
            s.known = std::make_shared<const HostTensor>(read_tensor(t, file_, file_.path + ": initializer '" + t.name() + "'"));
            s.integer = s.known->kind != HostTensor::Kind::floating;
            if (!slots_.emplace(t.name(), std::move(s)).second) throw FormatError(file_.path + ": initializer '" + t.name() + "' is defined twice");
        }
        for (const auto& vi : graph.input())
            if (!slots_.count(vi.name())) add_input(vi);  // an input that is also an initializer is a constant with a default
        const FusedNodes nodes = fuse_patterns(file_, [this](const std::string& name) -> const HostTensor* {
            auto it = slots_.find(name);
            return it == slots_.end() ? nullptr : it->second.known.get();
        });
        report_.layers = nodes.nodes.size();
        for (std::size_t k = 0; k < nodes.nodes.size(); ++k) {
            const auto* node = nodes.nodes[k];
            auto fb = nodes.fallback.find(node);
            if (fb == nodes.fallback.end()) {
                convert_node(*node, static_cast<int>(k));
            } else if (!convert_node(*node, static_cast<int>(k), true)) {
                for (const auto* original : fb->second) convert_node(*original, static_cast<int>(k));
            }
        }
        if (!report_.findings.empty()) return;
        add_outputs();
    }

    /// The model's inputs (as converted) and its outputs as declared, without operators.
    Graph signature() const {
        Graph sig;
        for (const Variable* v : g_.inputs()) sig.add_input(sig.add_variable(v->name(), v->dtype(), v->order(), v->shape()));
        std::vector<std::string> names;
        for (const auto& vo : file_.proto.graph().output()) {
            const auto& tt = vo.type().tensor_type();
            const auto dtype = vo.type().has_tensor_type() ? dtype_of_onnx(tt.elem_type()) : std::nullopt;
            Shape shape;
            if (tt.has_shape())
                for (const auto& dim : tt.shape().dim()) shape.push_back(dim.has_dim_value() && dim.dim_value() > 0 ? dim.dim_value() : kDynamic);
            if (shape.size() > kMaxRank) shape.clear();
            sig.add_output(sig.add_variable(sig.unique_name(vo.name()), dtype.value_or(DType::float32), positional_order(shape.size()), shape));
            names.push_back(vo.name());
        }
        sig.set_input_names(input_names_);
        sig.set_output_names(names);
        return sig;
    }

private:
    void add_input(const ::onnx::ValueInfoProto& vi) {
        const std::string where = file_.path + ": input '" + vi.name() + "'";
        if (!vi.type().has_tensor_type()) throw UnsupportedError(where + " is not a tensor (sequences, maps and optionals are not supported)");
        const auto& tt = vi.type().tensor_type();
        const int et = tt.elem_type();
        const auto dtype = dtype_of_onnx(et);
        if (!dtype)
            throw UnsupportedError(where + " has element type " + onnx_type_name(et) +
                                   "; graft's inputs are float, int64, int32, int8, uint8, uint16 or bool");
        if (!tt.has_shape()) throw UnsupportedError(where + " has no shape; graft needs the rank and the sizes but the batch");
        Shape shape;
        for (int d = 0; d < tt.shape().dim_size(); ++d) {
            const auto& dim = tt.shape().dim(d);
            if (dim.has_dim_value() && dim.dim_value() >= 0) {  // 0 is a size too (an empty list of axes)
                shape.push_back(dim.dim_value());
            } else if (d == 0) {
                shape.push_back(kDynamic);  // the batch: any size when the model runs
            } else {
                throw UnsupportedError(where + ": dimension " + std::to_string(d) + " is " +
                                       (dim.has_dim_param() ? "symbolic ('" + dim.dim_param() + "')" : "unknown") +
                                       "; graft needs every size but the batch (the first) fixed: export with fixed sizes");
            }
        }
        check_rank(shape.size(), where);
        const Order o = positional_order(shape.size());
        Variable* v = g_.add_variable(g_.unique_name(vi.name()), *dtype, o, shape);
        g_.add_input(v);
        input_names_.push_back(vi.name());
        Slot s;
        if (*dtype != DType::float32) {  // held as exact float32 values from here on (graft/ir/dtype.hpp)
            s.integer = true;
            v = add_op(g_, registry_, ops::kCast, g_.unique_name(vi.name() + "/cast"), {{"x", v}}, cast_to(DType::float32))->output("y");
        }
        s.value = Value{v, o};
        if (auto it = options_.input_values.find(vi.name()); it != options_.input_values.end()) {
            s.known = std::make_shared<const HostTensor>(host_value(it->second, *dtype, shape, where));
        } else if (std::find(shape.begin(), shape.end(), kDynamic) == shape.end() && numel(shape) <= kMaxValueInputElements) {
            value_candidates_.insert(vi.name());
        }
        slots_.emplace(vi.name(), std::move(s));
        graph_inputs_.insert(vi.name());
    }

    void refuse(const std::string& node, const std::string& cls, const std::string& message,
                std::vector<std::string> value_inputs = {}) {
        for (const auto& n : value_inputs)
            if (std::find(report_.value_inputs.begin(), report_.value_inputs.end(), n) == report_.value_inputs.end())
                report_.value_inputs.push_back(n);
        report_.findings.push_back({node, cls, message, std::move(value_inputs)});
    }

    /// The model inputs the values `names` are computed from, when each is one graft can read as
    /// a value while converting (value_candidates_); empty otherwise.
    std::vector<std::string> value_inputs_behind(const std::vector<std::string>& names) {
        if (producers_.empty())
            for (const auto& n : file_.proto.graph().node())
                for (const auto& out : n.output()) producers_.emplace(out, &n);
        std::set<std::string> seen, found;
        std::vector<std::string> todo(names.begin(), names.end());
        while (!todo.empty()) {
            const std::string name = todo.back();
            todo.pop_back();
            if (name.empty() || !seen.insert(name).second) continue;
            if (graph_inputs_.count(name)) {
                if (!value_candidates_.count(name)) return {};  // data, or an input with a free size
                found.insert(name);
            } else if (auto it = producers_.find(name); it != producers_.end()) {
                for (const auto& in : it->second->input()) todo.push_back(in);
            }
        }
        std::vector<std::string> out;
        for (const auto& n : input_names_)
            if (found.count(n)) out.push_back(n);
        return out;
    }

    /// Converts `node`; false, changing nothing, when it is a fused node (`may_decline`) whose
    /// converter declines (NodeContext::decline).
    bool convert_node(const ::onnx::NodeProto& node, int index, bool may_decline = false) {
        const std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
        const std::string key = converter_key(node.domain(), node.op_type());
        const std::int64_t opset = may_decline ? 1 : file_.opset(node.domain(), name);
        const std::string cls = key + " (opset " + std::to_string(opset) + ")";
        bool blocked = false;
        std::vector<Slot*> ins;
        for (const auto& in : node.input()) {
            if (in.empty()) {
                ins.push_back(nullptr);
                continue;
            }
            if (poisoned_.count(in)) {
                blocked = true;
                ins.push_back(nullptr);
                continue;
            }
            auto it = slots_.find(in);
            if (it == slots_.end())
                throw FormatError(file_.path + ": node '" + name + "' reads '" + in + "', which no input, initializer or earlier node produces");
            ins.push_back(&it->second);
        }
        const ConverterFn* fn = registry_.find_converter(kFrontend, key);
        bool ok = false;
        if (!fn) {
            refuse(name, cls, advice(key, node.domain()));
        } else if (blocked) {
            report_.unchecked.push_back(name);
        } else {
            NodeContext ctx(file_, node, name, opset, std::move(ins), g_, registry_, batch_);
            try {
                try {
                    (*fn)(ctx);
                } catch (const NodeContext::Declined&) {
                    if (!may_decline) throw FormatError(ctx.where() + ": declined, but it is not a fused node");
                    return false;
                }
                auto outs = ctx.take_outputs();
                for (std::size_t k = 0; k < outs.size(); ++k) {
                    const std::string& out = node.output(static_cast<int>(k));
                    if (out.empty()) continue;
                    if (!slots_.emplace(out, std::move(outs[k])).second)
                        throw FormatError(file_.path + ": value '" + out + "' is produced twice (node '" + name + "')");
                }
                ok = true;
            } catch (const UnsupportedError& e) {
                std::string msg = e.what();
                const std::string prefix = ctx.where() + ": ";
                if (msg.compare(0, prefix.size(), prefix) == 0) msg.erase(0, prefix.size());
                refuse(name, cls, msg, value_inputs_behind(ctx.needed_values()));
            }
        }
        if (!ok)
            for (const auto& out : node.output()) poisoned_.insert(out);
        return true;
    }

    void add_outputs() {
        const auto& graph = file_.proto.graph();
        std::vector<std::string> names;
        for (const auto& vo : graph.output()) {
            auto it = slots_.find(vo.name());
            if (it == slots_.end()) throw FormatError(file_.path + ": output '" + vo.name() + "' is never produced");
            Value v = it->second.value;
            if (!v.var && it->second.known) {  // computed from constants only (Shape of a static input, Constant)
                const HostTensor& t = *it->second.known;
                const Order o = positional_order(t.shape.size());
                v = Value{g_.add_constant(g_.unique_name(vo.name() + "/value"), o, t.shape,
                                          std::make_shared<const std::vector<float>>(t.floats())),
                          o};
            }
            if (!v.var) throw FormatError(file_.path + ": output '" + vo.name() + "' has no value");
            // Outputs leave in the model's own layout (the logical order), each in a variable of its own
            // (a constant output is copied into one when the model runs: constant_fold keeps that copy).
            if (v.var->order() != v.logical || g_.is_input(v.var) || g_.is_output(v.var) || v.var->is_constant()) {
                Attributes a;
                a.set("order", v.logical);
                v.var = add_op(g_, registry_, ops::kTranspose, g_.unique_name(vo.name() + "/output"), {{"x", v.var}}, std::move(a))->output("y");
            }
            // An integer or bool output leaves as that dtype: a Cast of its exact float32 values.
            const auto dtype = vo.type().has_tensor_type() ? dtype_of_onnx(vo.type().tensor_type().elem_type()) : std::nullopt;
            if (dtype && *dtype != DType::float32 && it->second.integer)
                v.var = add_op(g_, registry_, ops::kCast, g_.unique_name(vo.name() + "/cast"), {{"x", v.var}}, cast_to(*dtype))->output("y");
            g_.add_output(v.var);
            names.push_back(vo.name());
        }
        g_.set_input_names(input_names_);
        g_.set_output_names(names);
        g_.remove_unused_variables();
        g_.validate();
    }

    const ModelFile& file_;
    const Registry& registry_;
    const Options& options_;
    Graph& g_;
    CheckReport& report_;
    DynamicBatch batch_;
    std::map<std::string, Slot> slots_;
    std::set<std::string> poisoned_;
    std::vector<std::string> input_names_;
    std::set<std::string> graph_inputs_;       // model inputs (not initializers)
    std::set<std::string> value_candidates_;   // those that can be read as values (fixed, small)
    std::map<std::string, const ::onnx::NodeProto*> producers_;  // value name -> node, filled on demand
};

CheckReport convert_collecting(const ModelFile& file, const Registry& registry, const Options& options, Graph& g,
                               std::shared_ptr<const Graph>* signature = nullptr) {
    CheckReport report;
    Converter c(file, registry, options, g, report);
    c.run();
    const bool only_values = !report.findings.empty() &&
                             std::all_of(report.findings.begin(), report.findings.end(), [](const Finding& f) { return !f.value_inputs.empty(); });
    if (signature && only_values) *signature = std::make_shared<const Graph>(c.signature());
    return report;
}

/// convert() of a file read already: the same file converts again, for other input values, in
/// InputValuesNeeded::convert.
Graph convert_file(const std::shared_ptr<const ModelFile>& file, const Registry& registry, const Options& options) {
    Graph g;
    std::shared_ptr<const Graph> signature;
    auto report = convert_collecting(*file, registry, options, g, &signature);
    if (report.findings.empty()) return g;
    if (!signature) frontend::throw_findings(file->path, report, "node");
    try {
        frontend::throw_findings(file->path, report, "node");
    } catch (const UnsupportedError& e) {
        std::string inputs;
        for (const auto& n : report.value_inputs) inputs += (inputs.empty() ? "'" : ", '") + printable(n) + "'";
        const Registry* reg = &registry;
        throw InputValuesNeeded(std::string(e.what()) + "; graft run and graft::load compile such a model once per value of " + inputs +
                                    " given when it runs (a descriptor or generated C++ needs a graph fixed when converting)",
                                report.value_inputs, std::move(signature), [file, reg](const std::map<std::string, Tensor>& values) {
                                    Options o;
                                    o.input_values = values;
                                    return convert_file(file, *reg, o);
                                });
    }
}

}  // namespace

bool is_onnx_path(const std::string& path) {
    return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

CheckReport check_model(const std::string& path, const Registry& registry, const Options& options) {
    Graph g;
    return convert_collecting(*read_model(path), registry, options, g);
}

Graph convert(const std::string& path, const Registry& registry, const Options& options) {
    return convert_file(read_model(path), registry, options);
}

}  // namespace graft::onnx
