// tools/graft/inspect.cpp - `graft inspect`: a per-layer summary of the converted model, and DOT.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "graft/backend/output_set.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "graft/optimize/passes.hpp"
#include "graft/printable.hpp"
#include "npy.hpp"

namespace graft::cli {
namespace {

/// One Keras layer: the operators converted from it.
struct LayerRow {
    std::string name;
    std::vector<std::string> types;  ///< distinct op types, in order of appearance
    std::string types_str() const { return fmt::format("{}", fmt::join(types, ", ")); }
    std::string shape;  ///< output shape of the layer's last operator
    std::int64_t params = 0;
    std::size_t ops = 0;
};

std::string layer_of(const Operator& op) { return printable(op.layer().empty() ? op.name() : op.layer()); }

/// Values of the constants `op` reads that `counted` has not seen yet (a shared weight counts once).
std::int64_t new_params(const Operator& op, std::set<const Variable*>& counted) {
    std::int64_t n = 0;
    for (const auto& [name, v] : op.inputs())
        if (v->is_constant() && counted.insert(v).second) n += v->numel();
    return n;
}

std::vector<LayerRow> summarize(const Graph& g) {
    std::vector<LayerRow> rows;
    std::map<std::string, std::size_t> index;
    std::set<const Variable*> counted;
    for (const Operator* op : g.topological_order()) {
        auto [it, fresh] = index.emplace(layer_of(*op), rows.size());
        if (fresh) rows.push_back(LayerRow{it->first, {}, {}, 0, 0});
        LayerRow& row = rows[it->second];
        if (std::find(row.types.begin(), row.types.end(), op->type()) == row.types.end())
            row.types.push_back(op->type());
        if (!op->outputs().empty()) row.shape = shape_str(op->outputs().front().second->shape());
        row.params += new_params(*op, counted);
        ++row.ops;
    }
    return rows;
}

/// 12345678 -> "12,345,678".
std::string grouped(std::int64_t n) {
    auto digits = std::to_string(n);
    for (auto i = static_cast<std::ptrdiff_t>(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(static_cast<std::size_t>(i), ",");
    return digits;
}

/// The model's inputs and outputs: name, shape, dtype.
void print_signature(const Graph& g) {
    for (std::size_t i = 0; i < g.inputs().size(); ++i)
        fmt::print("Input  {}: {} {}\n", printable(g.input_name(i)), shape_str(g.inputs()[i]->shape()), name_of(g.inputs()[i]->dtype()));
    for (std::size_t i = 0; i < g.outputs().size(); ++i)
        fmt::print("Output {}: {} {}\n", printable(g.output_name(i)), shape_str(g.outputs()[i]->shape()), name_of(g.outputs()[i]->dtype()));
}

void print_summary(const std::string& path, const Graph& g) {
    const auto rows = summarize(g);
    std::size_t w_name = 5, w_types = 5, w_shape = 12, w_params = 6, ops = 0;
    std::int64_t params = 0;
    for (const auto& r : rows) {
        w_name = std::max(w_name, r.name.size());
        w_types = std::max(w_types, r.types_str().size());
        w_shape = std::max(w_shape, r.shape.size());
        w_params = std::max(w_params, grouped(r.params).size());
        ops += r.ops;
        params += r.params;
    }
    const std::string rule(w_name + w_types + w_shape + w_params + 6, '=');
    fmt::print("Model: {}\n{}\n", path, rule);
    fmt::print("{:<{}}  {:<{}}  {:<{}}  {:>{}}\n", "Layer", w_name, "Op(s)", w_types, "Output shape", w_shape, "Params",
               w_params);
    fmt::print("{}\n", std::string(rule.size(), '-'));
    for (const auto& r : rows)
        fmt::print("{:<{}}  {:<{}}  {:<{}}  {:>{}}\n", r.name, w_name, r.types_str(), w_types, r.shape, w_shape,
                   grouped(r.params), w_params);
    fmt::print("{}\nLayers: {}   Ops: {}   Params: {}\n", rule, rows.size(), ops, grouped(params));
    print_signature(g);
}

/// A model whose graph depends on the values of some inputs: which, its inputs and declared outputs.
void print_value_inputs(const std::string& path, const onnx::InputValuesNeeded& e) {
    std::vector<std::string> names;
    for (const auto& n : e.value_inputs()) names.push_back("'" + printable(n) + "'");
    fmt::print("Model: {}\nIts graph depends on the values of input{} {}: graft run converts and compiles it once\n"
               "per distinct value given (graft::load, Model::value_inputs).\n",
               path, names.size() == 1 ? "" : "s", fmt::join(names, ", "));
    print_signature(*e.signature());
}

/// `--passes`: op count and memory plan (batch 1) before and after each rule of the pipeline.
void print_passes(const optimize::PipelineReport& r, bool free_sizes) {
    fmt::print("\nOptimizer pipeline {} ({})\n", r.pipeline,
               free_sizes ? "the model has free sizes other than the batch: memory is planned per input shape, when it runs"
                          : "memory at batch 1; arena = planned bytes, naive = one buffer per tensor");
    fmt::print("{:<8} {:<18} {:>5}  {:>13}  {:>25}  {:>25}\n", "Group", "Rule", "Fired", "Ops", "Arena bytes", "Naive bytes");
    auto span = [](std::size_t a, std::size_t b) { return fmt::format("{} -> {}", grouped(std::int64_t(a)), grouped(std::int64_t(b))); };
    for (const auto& st : r.steps) {
        if (!st.fired) {
            fmt::print("{:<8} {:<18} {:>5}\n", st.group, st.pass, 0);
            continue;
        }
        fmt::print("{:<8} {:<18} {:>5}  {:>13}  {:>25}  {:>25}\n", st.group, st.pass, st.fired, span(st.ops_before, st.ops_after),
                   span(st.arena_before, st.arena_after), span(st.naive_before, st.naive_after));
    }
    fmt::print("{:<8} {:<18} {:>5}  {:>13}  {:>25}  {:>25}\n", "total", "", "", span(r.ops_before, r.ops_after),
               span(r.arena_before, r.arena_after), span(r.naive_before, r.naive_after));
}

/// Text for a double-quoted DOT string (control characters escaped first).
std::string dot_escape(const std::string& raw) {
    const std::string s = printable(raw);
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

/// Operators are boxes, graph inputs and outputs ellipses, variables edges (order and shape);
/// constants are not drawn, each operator notes how many weight values it reads.
std::string to_dot(const Graph& g) {
    std::string dot =
        "digraph graft {\n  node [fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [fontname=\"Helvetica\", fontsize=9];\n";
    std::map<const Variable*, std::string> source;  // the node that provides a variable
    for (std::size_t i = 0; i < g.inputs().size(); ++i) {
        source[g.inputs()[i]] = fmt::format("in{}", i);
        dot += fmt::format("  in{} [shape=ellipse, label=\"{}\"];\n", i, dot_escape(g.input_name(i)));
    }
    auto edge = [&](const Variable* v, const std::string& to) {
        auto it = source.find(v);
        if (it != source.end())
            dot +=
                fmt::format("  {} -> {} [label=\"{} {}\"];\n", it->second, to, v->order().str(), shape_str(v->shape()));
    };
    std::set<const Variable*> counted;
    const auto ops = g.topological_order();
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Operator& op = *ops[i];
        const auto params = new_params(op, counted);
        dot += fmt::format("  op{} [shape=box, label=\"{}\\n{}{}\"];\n", i, dot_escape(op.type()),
                           dot_escape(op.name()), params ? "\\n" + grouped(params) + " params" : "");
        for (const auto& [name, v] : op.inputs()) edge(v, fmt::format("op{}", i));
        for (const auto& [name, v] : op.outputs()) source[v] = fmt::format("op{}", i);
    }
    for (std::size_t i = 0; i < g.outputs().size(); ++i) {
        dot += fmt::format("  out{} [shape=ellipse, style=bold, label=\"{}\"];\n", i, dot_escape(g.output_name(i)));
        edge(g.outputs()[i], fmt::format("out{}", i));
    }
    return dot + "}\n";
}

}  // namespace

/// `graft inspect --check`: every layer or option the conversion refuses, all at once.
static void check_only(const InspectOptions& o) {
    keras::Options options;
    options.weights_path = o.model.weights;
    options.hdf5 = o.model.hdf5;
    const bool is_onnx = onnx::is_onnx_path(o.model.path);
    const char* noun = is_onnx ? "node" : "layer";
    const auto r = is_onnx ? onnx::check_model(o.model.path, default_registry()) : keras::check_model(o.model.path, default_registry(), options);
    for (const auto& f : r.findings)
        fmt::print("unsupported: {} '{}' ({}): {}\n", noun, printable(f.layer), printable(f.class_name), printable(f.message));
    for (const auto& l : r.unchecked) fmt::print("not checked: {} '{}' (an input comes from a refused {})\n", noun, printable(l), noun);
    if (!r.findings.empty())
        throw UnsupportedError(fmt::format("{}: {} of {} {}s cannot be converted", o.model.path, r.findings.size(), r.layers, noun));
    fmt::print("{}: all {} {}s can be converted\n", o.model.path, r.layers, noun);
}

void inspect(const InspectOptions& o) {
    if (o.check) return check_only(o);
    Graph graph;
    try {
        graph = convert_model(o.model);
    } catch (const onnx::InputValuesNeeded& e) {
        if (o.passes || !o.dot.empty()) throw;  // there is no one graph to show
        return print_value_inputs(o.model.path, e);
    }
    graph.validate();
    optimize::PipelineReport report;
    optimize::pipeline_for(o.model.opt_level, "native").run(graph, default_registry(), &report, o.passes);
    print_summary(o.model.path, graph);
    if (o.passes) print_passes(report, has_free_sizes(graph));
    if (!o.dot.empty()) write_file_atomically(o.dot, to_dot(graph));
}

}  // namespace graft::cli
