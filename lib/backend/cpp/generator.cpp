// The cpp backend's driver: optimizes the graph, fixes the batch, plans memory, runs every op's
// emitter into its own function, lays out the weights and renders <name>.hpp, <name>.cpp and
// <name>.weights (or <name>_weights.cpp). The text of the Session class lives in render.cpp.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "backend/cpp/generator.hpp"
#include "graft/backend/output_set.hpp"
#include "rt/headers.hpp"
#include "graft/optimize/passes.hpp"
#include "graft/printable.hpp"

namespace graft::cpp {

namespace fs = std::filesystem;

std::string identifier(const std::string& s) {
    static const std::set<std::string> keywords = {
        "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const", "constexpr",
        "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "export", "extern", "false", "float",
        "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
        "operator", "or", "private", "protected", "public", "register", "return", "short", "signed", "sizeof", "static",
        "struct", "switch", "template", "this", "throw", "true", "try", "typedef", "typeid", "typename", "union",
        "unsigned", "using", "virtual", "void", "volatile", "while", "xor", "std", "graft_rt", "ops", "i64", "main"};
    std::string out;
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok && !out.empty() && out.back() == '_') continue;
        out += ok ? c : '_';
    }
    while (!out.empty() && out.back() == '_') out.pop_back();
    while (out.size() > 1 && out[0] == '_') out.erase(0, 1);  // no reserved leading underscores
    if (out.empty() || out == "_") out = "t";
    if (out[0] >= '0' && out[0] <= '9') out = "t" + out;
    if (out.find("__") != std::string::npos) {
        std::string squeezed;
        for (char c : out)
            if (!(c == '_' && !squeezed.empty() && squeezed.back() == '_')) squeezed += c;
        out = squeezed;
    }
    if (keywords.count(out)) out += "_";
    return out;
}

std::string Names::take(const std::string& wanted) {
    std::string base = identifier(wanted), name = base;
    for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    return name;
}

std::string dims(const Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

namespace {

/// An --input-shape value for a shape with free sizes: the batch, 16 for each other free size.
std::string example_shape(const Shape& s, std::int64_t batch) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i] != kDynamic ? s[i] : i == 0 ? batch : 16);
    return out;
}

/// CamelCase op type as snake_case: "ConvTranspose2D" -> "conv_transpose2d".
std::string snake(const std::string& type) {
    std::string out;
    for (std::size_t i = 0; i < type.size(); ++i) {
        const char c = type[i];
        const bool upper = c >= 'A' && c <= 'Z';
        if (upper && i > 0 && type[i - 1] >= 'a' && type[i - 1] <= 'z') out += '_';
        out += upper ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return out;
}

std::string attr_text(const AttrValue& v) {
    struct V {
        std::string operator()(bool b) const { return b ? "true" : "false"; }
        std::string operator()(std::int64_t i) const { return std::to_string(i); }
        std::string operator()(double d) const { return lit(d).substr(0, lit(d).size() - 1); }
        std::string operator()(const std::string& s) const { return s; }
        std::string operator()(const std::vector<std::int64_t>& l) const { return dims(l); }
        std::string operator()(const std::vector<double>& l) const {
            std::string o = "[";
            for (std::size_t i = 0; i < l.size(); ++i) o += (i ? ", " : "") + (*this)(l[i]);
            return o + "]";
        }
        std::string operator()(const std::vector<std::string>& l) const {
            // axis names (an order) read as "NHWC"; other strings as a list
            const bool axes = std::all_of(l.begin(), l.end(), [](const std::string& s) { return s.size() == 1; });
            std::string o;
            for (const auto& s : l) o += axes ? s : (o.empty() ? "" : ", ") + ("'" + s + "'");
            return axes ? o : "[" + o + "]";
        }
    };
    return std::visit(V{}, v);
}

/// What an emitter sees while it writes one op's function.
class OpContext final : public EmitContext {
public:
    OpContext(OpCode& code, Generator& gen) : code_(code), gen_(gen) {}

    const Operator& op() const override { return *code_.op; }
    Writer& body() override { return code_.body; }
    std::string input(const std::string& name) override { return param(name, false); }
    std::string output(const std::string& name) override { return param(name, true); }
    std::string constant(const std::string& name, std::vector<float> data) override {
        Arg a;
        a.param = code_.names.take(name);
        a.extra = static_cast<int>(code_.extras.size());
        a.used = true;
        code_.extras.push_back(std::move(data));
        code_.args.push_back(a);
        return a.param;
    }
    std::string scratch(std::size_t floats) override {
        Arg a;
        a.param = code_.names.take("work");
        a.scratch = true;
        a.out = true;
        a.used = true;
        a.weight_offset = code_.scratch;  // offset in the shared scratch, floats
        code_.scratch += (floats + 15) / 16 * 16;
        code_.args.push_back(a);
        return a.param;
    }
    void support(const std::string& key, const std::string& source) override { gen_.add_support(key, source, op()); }
    void use(const std::string& key) override { gen_.use_kernel(key, op()); }

private:
    std::string param(const std::string& name, bool out) {
        for (auto& a : code_.args)
            if (a.var && a.out == out && a.port == name) {
                a.used = true;
                return a.param;
            }
        throw GraphError(op().describe() + ": the cpp emitter asks for " + (out ? "output '" : "input '") + name +
                         "', which the operator does not have");
    }

    OpCode& code_;
    Generator& gen_;
};

}  // namespace

void Generator::use_kernel(const std::string& key, const Operator& op) {
    if (const auto* h = rt::find_header(key)) {
        KernelSource k = parse_kernel_header(key, h->text);
        for (const auto& need : k.needs) use_kernel(need, op);
        add_support(key, k.body, op);
        return;
    }
    throw GraphError(op.describe() + ": the cpp emitter asks for kernel header '" + key + "', which graft does not have");
}

void Generator::add_support(const std::string& key, const std::string& source, const Operator& op) {
    for (const auto& [k, s] : support_)
        if (k == key) {
            if (s != source)
                throw RegistryError(op.describe() + ": support section '" + key + "' is asked for with two different sources");
            return;
        }
    support_.emplace_back(key, source);
}

void Generator::prepare(Graph graph) {
    graph.validate();
    // The generated kernels use the native backend's layouts (pipeline_for gives cpp its passes).
    optimize::pipeline_for(options_.opt_level, "cpp").run(graph, reg_);
    if (options_.batch < 1) throw ShapeError("the batch size must be at least 1, got " + std::to_string(options_.batch));
    for (const auto& [name, shape] : options_.input_shapes) {
        bool known = false;
        for (std::size_t i = 0; i < graph.inputs().size(); ++i) known = known || graph.input_name(i) == name;
        if (!known) throw ShapeError("cpp backend: an input shape is given for '" + printable(name) + "', which is no input of the model");
    }
    for (std::size_t k = 0; k < graph.inputs().size(); ++k) {
        Variable* v = graph.inputs()[k];
        const std::string& name = graph.input_name(k);
        Shape s = v->shape();
        auto given = options_.input_shapes.find(name);
        if (given != options_.input_shapes.end()) {
            const Shape& g = given->second;
            bool ok = g.size() == s.size();
            for (std::size_t i = 0; ok && i < s.size(); ++i)
                ok = g[i] >= 1 && g[i] <= kMaxElements && (s[i] == kDynamic || g[i] == s[i]);
            if (!ok)
                throw ShapeError("cpp backend: input '" + printable(name) + "' is " + shape_str(s) + " (? is free); the shape given, " +
                                 shape_str(g) + ", does not fit it");
            s = g;
            // The batch of the generated code (kBatch) is the one given here.
            if (auto n = v->order().find(Axis::N); n && v->shape()[*n] == kDynamic) options_.batch = g[*n];
        }
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (v->order()[i] == Axis::N && given == options_.input_shapes.end()) s[i] = options_.batch;
            if (s[i] == kDynamic)
                throw ShapeError("cpp backend: input '" + printable(name) + "' has a free size along " + v->order()[i].name() + " (" +
                                 shape_str(v->shape()) + "); generated code is fixed to one shape: give it, e.g. graft convert "
                                 "--input-shape " + printable(name) + "=" + example_shape(v->shape(), options_.batch) +
                                 " (cpp::Options::input_shapes)");
        }
        v->set_type(v->order(), s);
    }
    infer_shapes(graph, reg_);
    check_dtypes(graph, reg_);
    for (const Variable* v : graph.variables()) {
        if (v->numel() < 0) throw ShapeError("cpp backend: variable " + v->describe() + " has no fixed size");
    }
    // Every op needs an emitter: name all the missing ones at once, before anything is written.
    std::set<std::string> missing;
    for (const Operator* op : graph.operators())
        if (!reg_.find_generator<Backend>(op->type())) missing.insert(op->type());
    if (!missing.empty()) {
        std::string list;
        for (const auto& t : missing) list += (list.empty() ? "" : ", ") + t;
        throw UnsupportedError("cpp backend: no C++ emitter for op type" + std::string(missing.size() > 1 ? "s " : " ") + list +
                               " (a plugin that defines an op must register one with Registry::add_generator<graft::cpp::Backend>)");
    }
    graph_ = std::move(graph);
    order_ = graph_.topological_order();
    plan_ = optimize::plan_memory(graph_, reg_);
}

void Generator::emit_ops() {
    Names fn_names;
    for (const Operator* op : order_) {
        auto code = std::make_unique<OpCode>();
        code->op = op;
        code->fn = fn_names.take(snake(op->type()) + "_" + op->name());
        for (const auto& [port, v] : op->inputs()) {
            Arg a;
            a.port = port;
            a.var = v;
            a.param = code->names.take(port);
            code->args.push_back(a);
        }
        for (const auto& [port, v] : op->outputs()) {
            Arg a;
            a.port = port;
            a.var = v;
            a.out = true;
            a.param = code->names.take(code->names.has(identifier(port)) ? "out_" + port : port);
            code->args.push_back(a);
        }
        OpContext ctx(*code, *this);
        const auto entry = reg_.find_generator<Backend>(op->type());
        try {
            (*entry.generator)(ctx);
        } catch (const Error&) {
            throw;
        } catch (const std::exception& e) {
            throw Error(op->describe() + ": the cpp emitter of " + entry.owner->name + " failed: " + e.what());
        }
        scratch_floats_ = std::max(scratch_floats_, code->scratch);
        codes_.push_back(std::move(code));
    }
}

void Generator::layout_weights() {
    auto place = [&](const std::vector<float>& data) {
        const std::size_t off = (weights_.size() + 15) / 16 * 16;  // 64-byte aligned
        weights_.resize(off + data.size(), 0.f);
        std::copy(data.begin(), data.end(), weights_.begin() + static_cast<std::ptrdiff_t>(off));
        return off;
    };
    for (auto& code : codes_)
        for (auto& a : code->args) {
            if (!a.used) continue;
            if (a.var && a.var->is_constant() && !const_offset_.count(a.var))
                const_offset_[a.var] = place(static_cast<const ConstantVariable*>(a.var)->data());
            if (a.extra >= 0) a.weight_offset = place(code->extras[static_cast<std::size_t>(a.extra)]);
        }
    for (const Variable* v : graph_.outputs())
        if (v->is_constant() && !const_offset_.count(v)) const_offset_[v] = place(static_cast<const ConstantVariable*>(v)->data());
}

std::string Generator::function_text(const OpCode& code) const {
    const Operator& op = *code.op;
    Writer w;
    w.line("// {}: {}{}", op.name(), op.type(), op.layer().empty() ? std::string(" (inserted by graft)") : " from Keras layer '" + op.layer() + "'");
    for (const auto& a : code.args) {
        if (!a.var) continue;
        w.line("//   {} {} {} {}{}", a.out ? "out" : "in ", a.port, dims(a.var->shape()), a.var->order().str(),
               a.var->is_constant() ? " (weights)" : "");
    }
    std::string attrs;
    for (const auto& [k, v] : op.attrs().all()) attrs += (attrs.empty() ? "" : ", ") + k + "=" + attr_text(v);
    if (!attrs.empty()) w.line("//   attrs: {}", attrs);
    std::string params;
    for (const auto& a : code.args) {
        if (!a.used) continue;  // e.g. weights the emitter replaced by a packed copy
        params += params.empty() ? "" : ", ";
        params += a.out ? "float* " : "const float* ";
        params += a.param;
    }
    w.line("void {}({}) {{", code.fn, params);
    w.raw(code.body.str());
    w.line("}");
    return w.str();
}

Sources generate_sources(Graph graph, const Registry& registry, const Options& options) {
    Generator gen(registry, options);
    gen.prepare(std::move(graph));
    gen.emit_ops();
    gen.layout_weights();
    return gen.render();
}

Result generate(Graph graph, const Registry& registry, const Options& options, const std::string& out_dir) {
    Sources s = generate_sources(std::move(graph), registry, options);
    // The parent directories are created; the files themselves appear as one set (a new .hpp
    // never sits beside an old .cpp), replacing a previous generated set.
    write_output_set(out_dir, s.files, {".hpp", ".cpp", ".weights"}, "the generated C++", true);
    for (const auto& [name, text] : s.files) s.info.files.push_back((fs::path(out_dir) / name).string());
    return s.info;
}

}  // namespace graft::cpp
