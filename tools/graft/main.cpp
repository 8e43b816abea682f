// tools/graft/main.cpp - the graft command-line tool: argument parsing, dispatch, error reporting.
//
// Every failure ends as one line on stderr, "graft: error: <message>", and a non-zero exit:
// 1 when the work failed, 2 when the command line is wrong.
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "graft/graft.hpp"
#include "graft/printable.hpp"

namespace graft::cli {

namespace {

/// The message on one line: line breaks become "; " (or a space after a colon), indentation goes.
std::string one_line(const std::string& message) {
    std::string line;
    bool at_break = false;
    for (char c : message) {
        if (c == '\n' || c == '\r') {
            at_break = !line.empty();
        } else if (!(at_break && (c == ' ' || c == '\t'))) {
            if (at_break) line += line.back() == ':' ? " " : "; ";
            at_break = false;
            line += c;
        }
    }
    return line;
}

int report_error(const std::string& message) {
    fmt::print(stderr, "graft: error: {}\n", printable(one_line(message)));  // names from files escaped
    return 1;
}

void add_model_options(CLI::App& cmd, ModelOptions& o) {
    auto* model = cmd.add_option("MODEL", o.path, "Keras model file (.h5 or .keras), an ONNX model (.onnx), a graft descriptor directory, or a model.to_json() file with --weights");
    cmd.add_option("--config", o.config, "model.to_json() file (with --weights), instead of MODEL")->excludes(model);
    cmd.add_option("--weights", o.weights, "weights .h5 (from save_weights()) for a model.to_json() file");
    cmd.add_option("--plugin", o.plugins, "plugin shared object (or directory of them) to load (repeatable); GRAFT_PLUGIN_PATH lists more")
        ->allow_extra_args(false);
    cmd.add_option("-O", o.opt_level, "optimization level: -O0 layout only, -O1 safe folds, -O2 everything (default)")
        ->check(CLI::Range(0, 2));
    cmd.add_flag_callback("--hdf5-in-process", [&o] { o.hdf5.enabled = false; },
                          "read HDF5 (.h5, .keras) in this process, for trusted files; by default a sandboxed helper reads it");
    cmd.add_option("--hdf5-timeout", o.hdf5.timeout_seconds, "seconds the sandboxed HDF5 reader may take per read (default 120)")
        ->check(CLI::PositiveNumber);
}

/// --precision, --batch-slice and --no-huge-pages, for the commands that run the model.
void add_run_options(CLI::App& cmd, ModelOptions& o) {
    cmd.add_option("--precision", o.precision,
                   "fp32 (default, exact to float rounding), int8 (Dense/MatMul and RNN weights quantised per column, "
                   "inputs per row; needs AVX2) or bf16 (the same weights and inputs rounded to bfloat16, float sums; "
                   "needs AVX-512 BF16); falls back to fp32 on a CPU without the instructions")
        ->check(CLI::IsMember({"fp32", "int8", "bf16"}));
    cmd.add_option("--batch-slice", o.batch_slice,
                   "run a batch N samples at a time where the graph keeps samples apart (the results do not change); "
                   "0 (default): where graft's cost model says it is faster; -1: always whole")
        ->check(CLI::Range(std::int64_t{-1}, std::numeric_limits<std::int64_t>::max()));
    cmd.add_flag("--no-huge-pages", o.no_huge_pages,
                 "keep prepacked weights on ordinary pages, each block an allocation of its own (default: in "
                 "chunks Linux is asked to back with transparent huge pages, up to 2 MB more resident memory)");
}

}  // namespace

void note_precision(const ModelOptions& o, const Model& model) {
    const Precision asked = precision_of(o);
    if (asked != Precision::fp32 && model.precision() != asked)
        fmt::print(stderr, "graft: note: --precision {} needs {}, which this CPU (or GRAFT_ISA) does not give; running fp32\n",
                   precision_name(asked), asked == Precision::int8 ? "AVX2" : "AVX-512 BF16");
}

namespace {

/// MODEL or --config FILE (which needs --weights).
void resolve_model(ModelOptions& o) {
    if (!o.config.empty()) {
        if (o.weights.empty()) throw Error("--config " + o.config + " needs --weights FILE.h5 (the save_weights() file)");
        o.path = o.config;
    }
    if (o.path.empty()) throw Error("no model given: MODEL, or --config FILE.json --weights FILE.h5");
}

/// The subcommands and what each runs when it is the one given.
using Commands = std::vector<std::pair<CLI::App*, std::function<void()>>>;

/// Subcommand `name` taking a model (add_model_options); when given, the model is resolved and its
/// plugins loaded before command(options) runs.
template <class Options>
CLI::App* model_command(CLI::App& app, Commands& commands, const char* name, const char* help, Options& options,
                        void (*command)(const Options&)) {
    CLI::App* cmd = app.add_subcommand(name, help);
    add_model_options(*cmd, options.model);
    commands.emplace_back(cmd, [&options, command, name] {
        resolve_model(options.model);
        load_plugins(options.model.plugins);
        try {
            command(options);
        } catch (const std::bad_alloc&) {  // say what ran out, not just "std::bad_alloc"
            throw Error(fmt::format("out of memory in 'graft {}' on {}: the model (or its inputs) needs more memory than "
                                    "this process may use; raise the memory limit or use a smaller batch",
                                    name, options.model.path));
        }
    });
    return cmd;
}

}  // namespace
}  // namespace graft::cli

int main(int argc, char** argv) {
    namespace cli = graft::cli;
    CLI::App app{"graft: runs Keras models on a native CPU backend", "graft"};
    app.set_version_flag("--version", std::string("graft ") + graft::version_string());
    app.require_subcommand(1);
    cli::Commands commands;

    cli::RunOptions run;
    auto* run_cmd = cli::model_command(app, commands, "run", "run a model on .npy inputs", run, cli::run);
    run_cmd
        ->add_option("--input", run.inputs, "NAME=FILE.npy, or FILE.npy for the next input in model order (repeatable)")
        ->allow_extra_args(false);
    cli::add_run_options(*run_cmd, run.model);
    auto* out_dir = run_cmd->add_option("--output-dir", run.output_dir, "write DIR/<output name>.npy per model output");
    run_cmd->add_option("--output", run.output, "write the output of a single-output model to FILE.npy")
        ->excludes(out_dir);
    run_cmd->add_flag("--print", run.print, "print the outputs (shape, values, top classes)");
    run_cmd->add_option("--verify", run.verify, "reference manifest.json the model must reproduce first (see graft verify)");

    cli::InspectOptions inspect;
    auto* inspect_cmd =
        cli::model_command(app, commands, "inspect", "print a per-layer summary of the converted model", inspect, cli::inspect);
    inspect_cmd->add_option("--dot", inspect.dot, "also write the IR graph as Graphviz DOT to FILE");
    inspect_cmd->add_flag("--passes", inspect.passes, "show op count and memory plan before and after each optimizer pass");
    inspect_cmd->add_flag("--check", inspect.check, "pre-flight check: list every unsupported layer or option, exit 1 if any");

    cli::VerifyOptions verify;
    auto* verify_cmd = cli::model_command(app, commands, "verify",
                                          "check that the model reproduces reference outputs (e.g. Keras' own)", verify, cli::verify);
    verify_cmd->add_option("--manifest", verify.manifest, "manifest.json: {\"inputs\": [{name, file}], \"outputs\": [...], \"atol\", \"rtol\"}");
    verify_cmd->add_option("--input", verify.inputs, "NAME=FILE.npy (repeatable)")->allow_extra_args(false);
    verify_cmd->add_option("--expect", verify.expect, "NAME=FILE.npy, the expected output (repeatable)")->allow_extra_args(false);
    verify_cmd->add_option("--atol", verify.atol, "absolute tolerance (default: the manifest's, else 1e-5)");
    verify_cmd->add_option("--rtol", verify.rtol, "relative tolerance (default: the manifest's, else 1e-5)");

    cli::ConvertOptions convert;
    auto* convert_cmd = cli::model_command(
        app, commands, "convert",
        "write the optimized model as a graft descriptor (OUT/graph.json, OUT/weights.bin) or, with --backend cpp, as standalone C++",
        convert, cli::convert);
    convert_cmd->add_option("-o,--output", convert.out, "directory to write (a descriptor is replaced if it is one already)")->required();
    convert_cmd->add_option("--backend", convert.backend, "graft: a descriptor (default); cpp: standalone C++ (OUT/<name>.hpp, .cpp, .weights)")
        ->check(CLI::IsMember({"graft", "cpp"}));
    convert_cmd->add_option("--name", convert.name, "cpp: base name of the files (default: the model file's name)");
    convert_cmd->add_option("--namespace", convert.ns, "cpp: C++ namespace of the generated code (default: the name)");
    convert_cmd->add_option("--batch", convert.batch, "cpp: batch size the code is generated for (default 1)")->check(CLI::Range(1, 1 << 20));
    convert_cmd->add_option("--input-shape", convert.input_shapes,
                            "cpp: NAME=1x50x64, the whole shape an input's code is fixed to (needed for free sizes other than the batch; repeatable)")
        ->allow_extra_args(false);
    convert_cmd->add_flag("--embed-weights", convert.embed_weights, "cpp: weights as a constant array in OUT/<name>_weights.cpp");

    cli::BenchOptions bench;
    auto* bench_cmd = cli::model_command(app, commands, "bench", "time Session::run in-process (median, min, load time, peak RSS)",
                                         bench, cli::bench);
    auto* bench_in = bench_cmd->add_option("--input", bench.inputs, "NAME=FILE.npy or FILE.npy (repeatable)")->allow_extra_args(false);
    bench_cmd->add_option("--batch", bench.batch, "batch of random inputs when no --input is given (default 1)")->excludes(bench_in);
    bench_cmd->add_option("--threads", bench.threads, "intra-op threads (default 1; 0: one per core)");
    bench_cmd->add_option("--iters", bench.iters, "timed runs (default 100)");
    bench_cmd->add_option("--warmup", bench.warmup, "untimed runs first (default 5, and up to 0.5 s)");
    bench_cmd->add_option("--check", bench.check, "reference .npy for the first output (fails beyond --atol/--rtol)");
    bench_cmd->add_option("--atol", bench.atol, "absolute tolerance of --check (default 1e-4)");
    bench_cmd->add_option("--rtol", bench.rtol, "relative tolerance of --check (default 1e-4)");
    bench_cmd->add_flag("--json", bench.json, "print one JSON line");
    bench_cmd->add_option("--profile", bench.profile,
                          "then time --iters more runs per operator and print the N slowest operators and the time per op type "
                          "(with --json: a \"profile\" array of all operators)")
        ->check(CLI::NonNegativeNumber);
    cli::add_run_options(*bench_cmd, bench.model);

    cli::PluginsOptions plugins;
    auto* plugins_cmd = app.add_subcommand("plugins", "list what plugins register (PATH..., --plugin, GRAFT_PLUGIN_PATH)");
    plugins_cmd->add_option("PATH", plugins.paths, "plugin .so files or directories of them");
    plugins_cmd->add_option("--plugin", plugins.plugins, "plugin shared object to load (repeatable)")->allow_extra_args(false);
    commands.emplace_back(plugins_cmd, [&plugins] { cli::list_plugins(plugins); });

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        cli::report_error(fmt::format("{} (see 'graft --help')", e.what()));
        return 2;
    }

    try {
        for (const auto& [cmd, command] : commands)
            if (cmd->parsed()) command();
        return 0;
    } catch (const std::bad_alloc&) {
        return cli::report_error("out of memory (while reading the command line, loading plugins or writing the result)");
    } catch (const std::exception& e) {
        return cli::report_error(e.what());
    } catch (...) {
        return cli::report_error("unexpected failure");
    }
}
