// A host application embedding graft: load a Keras model (with plugins, if it needs custom
// layers), run it on a .npy input, print the predictions and compare them with reference outputs.
//
//   graft_consumer MODEL INPUT.npy EXPECTED.npy [--plugin PLUGIN.so]...
//
// Exit status: 0 if every output value is within 1e-5 + 1e-5 * |expected| of the reference
// (numpy.allclose with atol = rtol = 1e-5), 1 if not, 2 on an error (a graft::Error, a bad .npy).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <graft/graft.hpp>
#include <xtensor/xnpy.hpp>

namespace {

graft::Tensor read_npy(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw graft::IOError("cannot open " + path);
    auto a = xt::load_npy<float>(in);  // float32 '<f4' files only
    return graft::Tensor(graft::Shape(a.shape().begin(), a.shape().end()), std::vector<float>(a.begin(), a.end()));
}

int run(const std::vector<std::string>& args) {
    std::vector<std::string> files, plugins;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--plugin" && i + 1 < args.size())
            plugins.push_back(args[++i]);
        else
            files.push_back(args[i]);
    }
    if (files.size() != 3) {
        std::cerr << "usage: graft_consumer MODEL INPUT.npy EXPECTED.npy [--plugin PLUGIN.so]...\n";
        return 2;
    }
    std::cout << "graft " << graft::version_string() << " (plugin ABI " << GRAFT_PLUGIN_ABI_VERSION << ")\n";

    // A registry of our own: the built-ins plus our plugins. It must outlive the model.
    std::unique_ptr<graft::Registry> registry = graft::make_builtin_registry();
    for (const auto& p : plugins) {
        graft::PluginRecord r = graft::load_plugin(p, *registry);
        std::cout << "plugin " << r.name << " " << r.version << " (built against graft " << r.graft_version << ")\n";
    }
    graft::LoadOptions options;
    options.registry = registry.get();
    graft::Model model = graft::load(files[0], options);
    if (model.num_inputs() != 1 || model.num_outputs() != 1) {
        std::cerr << "graft_consumer: this sample runs models with one input and one output\n";
        return 2;
    }

    const graft::Tensor input = read_npy(files[1]), expected = read_npy(files[2]);
    const std::vector<graft::Tensor> out = model.run(std::vector<graft::Tensor>{input});
    const graft::Tensor& y = out.at(0);

    // The predictions, one row per sample.
    const std::size_t cols = y.shape().empty() ? 1 : static_cast<std::size_t>(y.shape().back());
    std::cout << model.output_name(0) << " " << graft::shape_str(y.shape()) << ":\n";
    for (std::size_t i = 0; i < y.size(); ++i) std::printf("%s%9.6f%s", i % cols ? " " : "  ", y.data()[i], (i + 1) % cols ? "" : "\n");
    std::fflush(stdout);

    if (y.shape() != expected.shape()) {
        std::cout << "MISMATCH: output shape " << graft::shape_str(y.shape()) << ", expected "
                  << graft::shape_str(expected.shape()) << "\n";
        return 1;
    }
    std::size_t off = 0;
    double max_err = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        const double got = y.data()[i], want = expected.data()[i], err = std::fabs(got - want);
        if (!(err <= 1e-5 + 1e-5 * std::fabs(want))) ++off;  // NaN never matches
        if (err > max_err || std::isnan(err)) max_err = err;
    }
    std::cout << (off ? "MISMATCH: " : "OK: ") << off << " of " << y.size() << " values off, max abs err " << max_err << "\n";
    return off ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const graft::Error& e) {  // graft's errors name the file, layer and what was expected
        std::cerr << "graft_consumer: " << e.kind() << " error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {  // e.g. xtensor's .npy reader
        std::cerr << "graft_consumer: " << e.what() << "\n";
        return 2;
    }
}
