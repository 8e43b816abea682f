// tools/graft/commands.hpp - the subcommands of the graft tool and what they are given.
#pragma once

#include <string>
#include <vector>

#include "graft/hdf5_containment.hpp"
#include "graft/ir/graph.hpp"
#include "graft/verify.hpp"

namespace graft::cli {

/// Options every subcommand shares: which model, with which plugins.
struct ModelOptions {
    std::string path;
    std::string weights;  ///< for a model.to_json() file: the save_weights() .h5
    std::string config;   ///< --config: the model.to_json() file (instead of MODEL)
    std::vector<std::string> plugins;
    int opt_level = 2;  ///< -O0, -O1, -O2 (graft::optimize::pipeline_for)
    Hdf5Containment hdf5;  ///< --hdf5-in-process, --hdf5-timeout (graft/hdf5_containment.hpp)
    std::string precision = "fp32";  ///< --precision (run, bench): LoadOptions::precision
    std::int64_t batch_slice = 0;    ///< --batch-slice (run, bench): LoadOptions::batch_slice
    bool no_huge_pages = false;      ///< --no-huge-pages (run, bench): LoadOptions::huge_pages = false
};

/// --precision as LoadOptions::precision (the CLI accepts only the names parse_precision knows).
inline Precision precision_of(const ModelOptions& o) { return parse_precision(o.precision).value_or(Precision::fp32); }

/// On stderr, when int8 or bf16 was asked for and the CPU runs fp32 instead.
void note_precision(const ModelOptions& o, const Model& model);

struct RunOptions {
    ModelOptions model;
    std::vector<std::string> inputs;  ///< NAME=FILE.npy, or FILE.npy for the next input in model order
    std::string output_dir;
    std::string output;
    bool print = false;
    std::string verify;  ///< reference manifest the model must reproduce before it runs
};

struct InspectOptions {
    ModelOptions model;
    std::string dot;
    bool check = false;  ///< pre-flight check only: list every unsupported layer or option
    bool passes = false;  ///< print op counts and memory plan before and after each optimizer pass
};

struct BenchOptions {
    ModelOptions model;
    std::vector<std::string> inputs;  ///< NAME=FILE.npy or FILE.npy; none: random inputs of batch `batch`
    int batch = 1;
    int threads = 1;
    int iters = 100;
    int warmup = 5;
    bool json = false;
    int profile = 0;    ///< after timing: --iters more runs timed per operator, the `profile` slowest printed
    std::string check;  ///< reference .npy for the first output
    double atol = 1e-4, rtol = 1e-4;
};

struct VerifyOptions {
    ModelOptions model;
    std::string manifest;             ///< {"inputs": [{name, file}], "outputs": [...], "atol", "rtol"}
    std::vector<std::string> inputs;  ///< NAME=FILE.npy
    std::vector<std::string> expect;  ///< NAME=FILE.npy
    double atol = -1, rtol = -1;      ///< < 0: the manifest's, else 1e-5
};

struct ConvertOptions {
    ModelOptions model;
    std::string out;
    std::string backend = "graft";  ///< graft (descriptor) or cpp (generated C++, graft/backend/cpp.hpp)
    std::string name;               ///< cpp: base name of the files (default: the model file's stem)
    std::string ns;                 ///< cpp: namespace (default: the name)
    int batch = 1;                  ///< cpp: batch size the code is generated for
    std::vector<std::string> input_shapes;  ///< cpp: NAME=1x50x64, an input's whole shape
    bool embed_weights = false;     ///< cpp: weights as a constant array in <name>_weights.cpp
};

struct PluginsOptions {
    std::vector<std::string> paths;    ///< plugin files or directories to list
    std::vector<std::string> plugins;  ///< --plugin, same meaning
};

/// Loads GRAFT_PLUGIN_PATH's plugins, then each --plugin file (or directory of *.so), into the
/// default registry.
void load_plugins(const std::vector<std::string>& paths);

/// `graft plugins`: loads the given plugins (and GRAFT_PLUGIN_PATH's) into a fresh registry and
/// prints what each registers.
void list_plugins(const PluginsOptions& options);

/// The model converted to IR by the Keras frontend with the default registry (or read from a
/// descriptor directory), not optimized yet.
Graph convert_model(const ModelOptions& options);

void run(const RunOptions& options);
void inspect(const InspectOptions& options);
void convert(const ConvertOptions& options);
void bench(const BenchOptions& options);
void verify(const VerifyOptions& options);

/// Checks `model` against a reference manifest (paths relative to it); atol/rtol < 0: the manifest's.
VerifyReport verify_manifest(const Model& model, const std::string& manifest, double atol = -1, double rtol = -1);

}  // namespace graft::cli
