// tools/graft/run.cpp - `graft run`: bind .npy inputs, run the model, write or print the outputs.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <numeric>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "graft/backend/output_set.hpp"
#include "graft/graft.hpp"
#include "npy.hpp"

namespace fs = std::filesystem;

namespace graft::cli {
namespace {

constexpr std::size_t kPrintValues = 20;  // values printed per row
constexpr std::size_t kPrintRows = 10;    // rows printed per output
constexpr std::size_t kTopClasses = 3;

std::string input_names(const Model& m) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < m.num_inputs(); ++i) names.push_back(m.input_name(i));
    return fmt::format("{}", fmt::join(names, ", "));
}

/// The .npy file for each model input, in model order, from the --input arguments.
std::vector<std::string> bind_files(const Model& m, const std::vector<std::string>& args) {
    std::vector<std::string> files(m.num_inputs());
    std::size_t positional = 0, named = 0;
    for (const auto& arg : args) {
        auto eq = arg.find('=');
        if (eq == std::string::npos || fs::exists(arg)) {
            if (positional >= files.size())
                throw Error(fmt::format("too many inputs: the model takes {} ({})", files.size(), input_names(m)));
            files[positional++] = arg;
            continue;
        }
        auto name = arg.substr(0, eq);
        std::size_t i = 0;
        while (i < files.size() && m.input_name(i) != name) ++i;
        if (i == files.size())
            throw Error(fmt::format("the model has no input '{}' (inputs: {})", name, input_names(m)));
        if (!files[i].empty()) throw Error(fmt::format("input '{}' is given twice", name));
        files[i] = arg.substr(eq + 1);
        ++named;
    }
    if (named && positional) throw Error("give every --input as NAME=FILE.npy or every one as FILE.npy, not a mix");
    for (std::size_t i = 0; i < files.size(); ++i)
        if (files[i].empty())
            throw Error(fmt::format("no --input for model input '{}' of shape {}", m.input_name(i),
                                    shape_str(m.input_shape(i))));
    return files;
}

void check_shape(const std::string& name, const std::string& file, const Shape& got, const Shape& want) {
    bool ok = got.size() == want.size();
    for (std::size_t i = 0; ok && i < got.size(); ++i) ok = want[i] == kDynamic || want[i] == got[i];
    if (!ok)
        throw ShapeError(
            fmt::format("input '{}' from {} has shape {}, expected {}", name, file, shape_str(got), shape_str(want)));
}

/// The file name for an output; the name comes from the model file, so it must not be a path.
std::string output_file_name(const std::string& name) {
    if (name.empty() || name == "." || name == ".." || name.find_first_of("/\\") != std::string::npos)
        throw Error(fmt::format("model output name '{}' cannot be used as a file name; use --output", name));
    return name + ".npy";
}

void write_outputs(const Model& m, const std::vector<Tensor>& outputs, const RunOptions& o) {
    if (!o.output.empty()) {
        write_file_atomically(o.output, npy_bytes(outputs.front()));
        return;
    }
    // The .npy files appear as one set, replacing a previous run's (graft/backend/output_set.hpp).
    std::vector<OutputFile> files;
    for (std::size_t i = 0; i < outputs.size(); ++i) files.emplace_back(output_file_name(m.output_name(i)), npy_bytes(outputs[i]));
    write_output_set(o.output_dir, files, {".npy"}, "the outputs", true);
}

/// Shape, the first values of each row (a row is one batch item) and, for a 2-D output, the top classes.
void print_output(const std::string& name, const Tensor& t) {
    fmt::print("{} {}\n", name, shape_str(t.shape()));
    const std::size_t rows = t.shape().empty() ? 1 : static_cast<std::size_t>(t.shape().front());
    const std::size_t width = rows ? t.size() / rows : 0;
    std::vector<float> values(t.size());  // any dtype, printed as numbers
    for (std::size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(t.at_double(k));
    for (std::size_t r = 0; r < std::min(rows, kPrintRows); ++r) {
        const float* row = values.data() + r * width;
        const std::size_t shown = std::min(width, kPrintValues);
        fmt::print("  [{}] {:.6g}{}\n", r, fmt::join(row, row + shown, " "), shown < width ? " ..." : "");
        if (t.shape().size() != 2 || width < 2) continue;
        std::vector<std::size_t> order(width);
        std::iota(order.begin(), order.end(), std::size_t{0});
        const std::size_t k = std::min(width, kTopClasses);
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                          [&](std::size_t a, std::size_t b) { return row[a] > row[b]; });
        std::vector<std::string> top;
        for (std::size_t j = 0; j < k; ++j) top.push_back(fmt::format("{} ({:.4f})", order[j], row[order[j]]));
        fmt::print("      top-{}: {}\n", k, fmt::join(top, ", "));
    }
    if (rows > kPrintRows) fmt::print("  ... {} more rows\n", rows - kPrintRows);
}

}  // namespace

void run(const RunOptions& o) {
    if (o.output.empty() && o.output_dir.empty() && !o.print)
        throw Error("nothing to do: give --output-dir DIR, --output FILE.npy or --print");
    LoadOptions load_options;
    load_options.weights_path = o.model.weights;
    load_options.hdf5 = o.model.hdf5;
    load_options.opt_level = o.model.opt_level;
    load_options.precision = precision_of(o.model);
    load_options.batch_slice = o.model.batch_slice;
    load_options.huge_pages = !o.model.no_huge_pages;
    const Model model = load(o.model.path, load_options);
    note_precision(o.model, model);
    if (!o.verify.empty()) {  // the model must reproduce its reference pair before it is used
        const VerifyReport r = verify_manifest(model, o.verify);
        if (!r.ok) throw Error(fmt::format("{}: fails its check against {}: {}", o.model.path, o.verify, r.str()));
    }
    if (!o.output.empty() && model.num_outputs() != 1)
        throw Error(fmt::format("--output needs a single-output model, but {} has {} outputs; use --output-dir",
                                o.model.path, model.num_outputs()));

    const auto files = bind_files(model, o.inputs);
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < files.size(); ++i) {
        inputs.push_back(read_npy(files[i]));
        check_shape(model.input_name(i), files[i], inputs.back().shape(), model.input_shape(i));
    }
    std::vector<Tensor> outputs;
    try {
        outputs = model.run(inputs);
    } catch (const DTypeError& e) {  // name the file the refused values came from
        const std::string msg = e.what();
        for (std::size_t i = 0; i < files.size(); ++i)
            if (msg.rfind("input '" + model.input_name(i) + "'", 0) == 0) throw DTypeError(files[i] + ": " + msg);
        throw;
    }
    if (!o.output.empty() || !o.output_dir.empty()) write_outputs(model, outputs, o);
    if (o.print)
        for (std::size_t i = 0; i < outputs.size(); ++i) print_output(model.output_name(i), outputs[i]);
}

}  // namespace graft::cli
