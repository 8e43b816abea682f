// tools/graft/convert.cpp - `graft convert`: the optimized model as a graft descriptor
// (OUT/graph.json + OUT/weights.bin, see graft/backend/descriptor.hpp), written atomically.
#include <filesystem>
#include <string>

#include <fmt/format.h>

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

/// `graft convert --backend cpp`: OUT/<name>.hpp, .cpp and .weights (or _weights.cpp).
void convert_cpp(const ConvertOptions& o) {
    cpp::Options c;
    std::filesystem::path model(o.model.path);
    if (model.filename().empty()) model = model.parent_path();  // a descriptor directory given as "dir/"
    c.name = cpp::identifier(o.name.empty() ? model.stem().string() : o.name);
    c.ns = o.ns;
    c.batch = o.batch;
    c.embed_weights = o.embed_weights;
    c.opt_level = o.model.opt_level;
    c.source = model.filename().string();
    auto r = cpp::generate(convert_model(o.model), default_registry(), c, o.out);
    for (const auto& f : r.files) fmt::print("wrote {}\n", f);
    fmt::print("{} op functions, batch {}, {} bytes of working memory, {} bytes of weights\n", r.ops, c.batch, r.arena_bytes,
               r.weight_bytes);
}

}  // namespace

void convert(const ConvertOptions& o) {
    if (o.backend == "cpp") return convert_cpp(o);
    if (o.backend != "graft") throw UnsupportedError("unknown backend '" + o.backend + "' (expected graft or cpp)");
    Graph graph = convert_model(o.model);
    graph.validate();
    optimize::pipeline_for(o.model.opt_level, "graft").run(graph, default_registry());
    descriptor::write(graph, default_registry(), o.out);
}

}  // namespace graft::cli
