// tools/graft/verify.cpp - `graft verify` and `graft run --verify`: the model must reproduce a
// reference input/output pair (from Keras' own model.predict) before it is trusted.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "commands.hpp"
#include "graft/verify.hpp"
#include "npy.hpp"

namespace fs = std::filesystem;

namespace graft::cli {
namespace {

/// NAME=FILE.npy arguments as tensors by name.
std::map<std::string, Tensor> named_files(const std::vector<std::string>& args, const char* flag) {
    std::map<std::string, Tensor> out;
    for (const auto& a : args) {
        auto eq = a.find('=');
        if (eq == std::string::npos || eq == 0) throw Error(fmt::format("{} {}: expected NAME=FILE.npy", flag, a));
        if (!out.emplace(a.substr(0, eq), read_npy(a.substr(eq + 1))).second)
            throw Error(fmt::format("{}: '{}' is given twice", flag, a.substr(0, eq)));
    }
    return out;
}

const rapidjson::Value& list(const rapidjson::Document& d, const char* key, const std::string& file) {
    if (!d.HasMember(key) || !d[key].IsArray()) throw FormatError(fmt::format("{}: no '{}' list", file, key));
    return d[key];
}

}  // namespace

VerifyReport verify_manifest(const Model& model, const std::string& manifest, double atol, double rtol) {
    std::ifstream in(manifest, std::ios::binary);
    if (!in) throw IOError(manifest + ": cannot open the reference manifest");
    std::stringstream text;
    text << in.rdbuf();
    rapidjson::Document d;
    d.Parse(text.str().c_str());
    if (d.HasParseError() || !d.IsObject())
        throw FormatError(manifest + ": not a reference manifest (JSON with 'inputs' and 'outputs' lists of {name, file})");
    const fs::path dir = fs::path(manifest).parent_path();
    auto read = [&](const char* key) {
        std::map<std::string, Tensor> out;
        for (const auto& e : list(d, key, manifest).GetArray()) {
            if (!e.IsObject() || !e.HasMember("name") || !e["name"].IsString() || !e.HasMember("file") || !e["file"].IsString())
                throw FormatError(fmt::format("{}: every '{}' entry needs a string 'name' and 'file'", manifest, key));
            out.emplace(e["name"].GetString(), read_npy((dir / e["file"].GetString()).string()));
        }
        return out;
    };
    if (atol < 0) atol = d.HasMember("atol") && d["atol"].IsNumber() ? d["atol"].GetDouble() : 1e-5;
    if (rtol < 0) rtol = d.HasMember("rtol") && d["rtol"].IsNumber() ? d["rtol"].GetDouble() : 1e-5;
    return verify(model, read("inputs"), read("outputs"), atol, rtol);
}

void verify(const VerifyOptions& o) {
    if (o.manifest.empty() == o.expect.empty())
        throw Error("give --manifest FILE, or --input NAME=FILE.npy ... with --expect NAME=FILE.npy ...");
    LoadOptions load_options;
    load_options.weights_path = o.model.weights;
    load_options.hdf5 = o.model.hdf5;
    load_options.opt_level = o.model.opt_level;
    const Model model = load(o.model.path, load_options);
    const VerifyReport r = o.manifest.empty()
                               ? graft::verify(model, named_files(o.inputs, "--input"), named_files(o.expect, "--expect"),
                                               o.atol < 0 ? 1e-5 : o.atol, o.rtol < 0 ? 1e-5 : o.rtol)
                               : verify_manifest(model, o.manifest, o.atol, o.rtol);
    fmt::print("{}\n", r.str());
    if (!r.ok) throw Error(fmt::format("{}: the model does not reproduce the reference outputs", o.model.path));
    fmt::print("verify: OK, {} output{} match\n", r.outputs.size(), r.outputs.size() == 1 ? "" : "s");
}

}  // namespace graft::cli
