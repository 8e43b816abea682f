// tools/graft/convert.cpp - `graft convert`: the optimized model as a graft descriptor
// (OUT/graph.json + OUT/weights.bin, see graft/backend/descriptor.hpp), written atomically.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "graft/backend/cpp.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/frontend/keras.hpp"
#include "graft/frontend/onnx.hpp"
#include "graft/graft.hpp"
#include "graft/optimize/passes.hpp"

namespace graft::cli {

Graph convert_model(const ModelOptions& o) {
    LoadOptions options;
    options.weights_path = o.weights;
    options.hdf5 = o.hdf5;
    return load_graph(o.path, options);
}

namespace {

/// --input-shape NAME=1x50x64 arguments as shapes by name.
std::map<std::string, Shape> input_shapes(const std::vector<std::string>& args) {
    std::map<std::string, Shape> out;
    for (const auto& a : args) {
        const auto eq = a.rfind('=');
        auto bad = [&] { return Error(fmt::format("--input-shape {}: expected NAME=SIZExSIZEx... (e.g. input_1=1x50x64)", a)); };
        if (eq == std::string::npos || eq == 0 || eq + 1 == a.size()) throw bad();
        Shape s;
        std::size_t at = eq + 1;
        while (at <= a.size()) {
            const auto x = std::min(a.find('x', at), a.size());
            const std::string d = a.substr(at, x - at);
            if (d.empty() || d.size() > 10 || d.find_first_not_of("0123456789") != std::string::npos) throw bad();
            s.push_back(std::stoll(d));
            at = x + 1;
        }
        if (!out.emplace(a.substr(0, eq), s).second) throw Error(fmt::format("--input-shape names input '{}' twice", a.substr(0, eq)));
    }
    return out;
}

/// `graft convert --backend cpp`: OUT/<name>.hpp, .cpp and .weights (or _weights.cpp).
void convert_cpp(const ConvertOptions& o) {
    cpp::Options c;
    std::filesystem::path model(o.model.path);
    if (model.filename().empty()) model = model.parent_path();  // a descriptor directory given as "dir/"
    c.name = cpp::identifier(o.name.empty() ? model.stem().string() : o.name);
    c.ns = o.ns;
    c.batch = o.batch;
    c.input_shapes = input_shapes(o.input_shapes);
    c.embed_weights = o.embed_weights;
    c.opt_level = o.model.opt_level;
    c.source = model.filename().string();
    auto r = cpp::generate(convert_model(o.model), default_registry(), c, o.out);
    for (const auto& f : r.files) fmt::print("wrote {}\n", f);
    const std::string fixed = o.input_shapes.empty() ? fmt::format("batch {}", c.batch)
                                                     : fmt::format("input shape{} {}", o.input_shapes.size() > 1 ? "s" : "",
                                                                   fmt::join(o.input_shapes, " "));
    fmt::print("{} op functions, {}, {} bytes of working memory, {} bytes of weights\n", r.ops, fixed, r.arena_bytes, r.weight_bytes);
}

}  // namespace

void convert(const ConvertOptions& o) {
    if (o.backend == "cpp") return convert_cpp(o);
    if (o.backend != "graft") throw UnsupportedError("unknown backend '" + o.backend + "' (expected graft or cpp)");
    if (!o.input_shapes.empty())
        throw Error("--input-shape fixes generated C++ (--backend cpp); a descriptor keeps the model's free sizes, set per run");
    Graph graph = convert_model(o.model);
    graph.validate();
    optimize::pipeline_for(o.model.opt_level, "graft").run(graph, default_registry());
    descriptor::write(graph, default_registry(), o.out);
}

}  // namespace graft::cli
