// fuzz_make_seeds SOURCE_DIR OUT_DIR: the seed corpora of the fuzz targets, made from the repo's
// fixtures into OUT_DIR/<target>/ (run by CTest before the smoke runs, and by hand before a long
// run; docs/security.md):
//   keras_config  each tests/fixtures/keras model's config with its weights' names and shapes
//                 (the form fuzz_keras_config.cpp reads)
//   descriptor    the same models as graft descriptors (graph.json, separator, weights.bin)
//   onnx          tests/fixtures/onnx/**/*.onnx
//   npy           tests/fixtures/**/*.npy, and one file of each dtype graft reads
//   h5_reply      reply streams for each request (fuzz_h5_reply.cpp's form)
// The fixtures are trusted: HDF5 is read in process here. Seeds over kMaxSeed bytes are left out.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <xtensor/xarray.hpp>
#include <xtensor/xnpy.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/keras/h5_box_wire.hpp"
#include "frontend/keras/model_file.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/graft.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t kMaxSeed = 256 * 1024;

void put(const fs::path& file, const std::string& bytes) {
    if (bytes.size() > kMaxSeed) return;
    std::ofstream out(file, std::ios::binary);
    out << bytes;
    if (!out) throw std::runtime_error("cannot write " + file.string());
}

std::string slurp(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// The top-level layer names of a model config (Sequential's list or a model's "layers").
std::vector<std::string> layer_names(const rapidjson::Value& model) {
    std::vector<std::string> out;
    const auto& cfg = model["config"];
    const rapidjson::Value* layers = cfg.IsArray() ? &cfg : (cfg.IsObject() && cfg.HasMember("layers") ? &cfg["layers"] : nullptr);
    if (!layers || !layers->IsArray()) return out;
    for (const auto& l : layers->GetArray()) {
        if (l.IsObject() && l.HasMember("config") && l["config"].IsObject() && l["config"].HasMember("name") &&
            l["config"]["name"].IsString())
            out.push_back(l["config"]["name"].GetString());
        else if (l.IsObject() && l.HasMember("name") && l["name"].IsString())
            out.push_back(l["name"].GetString());
    }
    return out;
}

std::string keras_seed(const graft::keras::ModelFile& file) {
    rapidjson::Document doc;
    doc.CopyFrom(file.model_config(), doc.GetAllocator());
    auto& a = doc.GetAllocator();
    if (!file.keras_version().empty() && !doc.HasMember("keras_version"))
        doc.AddMember("keras_version", rapidjson::Value(file.keras_version().c_str(), a), a);
    rapidjson::Value weights(rapidjson::kObjectType);
    for (const auto& name : layer_names(file.model_config())) {
        const auto ws = file.layer_weights(name);
        if (ws.empty()) continue;
        rapidjson::Value list(rapidjson::kArrayType);
        for (const auto& w : ws) {
            rapidjson::Value entry(rapidjson::kArrayType), shape(rapidjson::kArrayType);
            for (auto d : w.shape) shape.PushBack(static_cast<std::int64_t>(d), a);
            entry.PushBack(rapidjson::Value(w.name.c_str(), a), a).PushBack(shape, a);
            list.PushBack(entry, a);
        }
        weights.AddMember(rapidjson::Value(name.c_str(), a), list, a);
    }
    doc.AddMember("graft_fuzz_weights", weights, a);
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    doc.Accept(w);
    return sb.GetString();
}

std::string descriptor_seed(const std::string& model, const fs::path& scratch, const graft::Registry& reg) {
    graft::LoadOptions o;
    o.registry = &reg;
    o.hdf5.enabled = false;
    const graft::Model m = graft::load(model, o);
    fs::remove_all(scratch);
    graft::descriptor::write(m.graph(), reg, scratch.string());
    return slurp(scratch / "graph.json") + "\n--graft-fuzz-weights.bin--\n" + slurp(scratch / "weights.bin");
}

void h5_reply_seeds(const fs::path& out) {
    using graft::h5::wire::Writer;
    auto ok = [](Writer& w, std::uint8_t pick) {
        w.put(pick);
        w.put(std::uint8_t{0});
    };
    Writer bools, strings, floats, failure;
    ok(bools, 0);  // has_group
    bools.put(std::uint8_t{1});
    ok(bools, 1);  // has_dataset
    bools.put(std::uint8_t{0});
    ok(strings, 2);  // children
    strings.put(std::uint32_t{2});
    strings.put_string("dense_1");
    strings.put_string("dense_2");
    ok(strings, 4);  // string_attribute
    strings.put(std::uint8_t{1});
    strings.put_string("{\"class_name\": \"Sequential\", \"config\": []}");
    ok(strings, 5);  // string_list_attribute
    strings.put(std::uint8_t{1});
    strings.put(std::uint32_t{1});
    strings.put_string("dense_1/kernel:0");
    ok(floats, 7);  // dataset_shape
    floats.put(std::uint32_t{2});
    floats.put(std::int64_t{2});
    floats.put(std::int64_t{3});
    ok(floats, 6 + 8 * 4);  // read_floats, up to 15 elements
    floats.put(std::uint32_t{2});
    floats.put(std::int64_t{2});
    floats.put(std::int64_t{3});
    floats.put(std::uint64_t{6});
    for (int i = 0; i < 6; ++i) floats.put(0.5f * static_cast<float>(i));
    failure.put(std::uint8_t{3});
    failure.put(std::uint8_t{1});  // format_error
    failure.put_string("model.h5: /model_weights: not a group");
    int i = 0;
    for (const auto* w : {&bools, &strings, &floats, &failure}) put(out / ("reply_" + std::to_string(i++)), w->bytes);
}

void npy_seeds(const fs::path& src, const fs::path& out) {
    int n = 0;
    for (const auto& e : fs::recursive_directory_iterator(src / "tests/fixtures")) {
        if (e.is_regular_file() && e.path().extension() == ".npy" && e.file_size() <= 16384 && n < 200) {
            const auto rel = fs::relative(e.path(), src / "tests/fixtures").string();
            std::string name = rel;
            std::replace(name.begin(), name.end(), '/', '_');
            fs::copy_file(e.path(), out / name, fs::copy_options::overwrite_existing);
            ++n;
        }
    }
    put(out / "f8.npy", xt::dump_npy(xt::xarray<double>{{1.5, -2.0}, {0.0, 3.25}}));
    put(out / "i8.npy", xt::dump_npy(xt::xarray<std::int64_t>{1, -2, 3}));
    put(out / "i4.npy", xt::dump_npy(xt::xarray<std::int32_t>{{7, 8}, {9, 10}}));
    put(out / "u2.npy", xt::dump_npy(xt::xarray<std::uint16_t>{1, 65535}));
    put(out / "u1.npy", xt::dump_npy(xt::xarray<std::uint8_t>{0, 255}));
    put(out / "i1.npy", xt::dump_npy(xt::xarray<std::int8_t>{-128, 127}));
    put(out / "b1.npy", xt::dump_npy(xt::xarray<bool>{true, false}));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: fuzz_make_seeds SOURCE_DIR OUT_DIR\n";
        return 2;
    }
    const fs::path src = argv[1], out = argv[2];
    for (const char* t : {"keras_config", "descriptor", "onnx", "npy", "h5_reply"}) {
        fs::remove_all(out / t);
        fs::create_directories(out / t);
    }
    const auto reg = graft::make_builtin_registry();
    int keras = 0, descriptors = 0, onnx = 0, skipped = 0;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(src / "tests/fixtures/keras"))
        if (e.is_directory()) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) {
        const fs::path model = fs::exists(d / "model.h5") ? d / "model.h5" : d / "model.keras";
        if (!fs::exists(model)) continue;
        const std::string name = d.filename().string();
        try {
            graft::Hdf5Containment in_process;
            in_process.enabled = false;
            const graft::keras::ModelFile file(model.string(), "", graft::Limits{}, in_process);
            put(out / "keras_config" / (name + ".json"), keras_seed(file));
            ++keras;
            put(out / "descriptor" / name, descriptor_seed(model.string(), out / "descriptor.tmp", *reg));
            ++descriptors;
        } catch (const std::exception& e) {
            ++skipped;  // e.g. a fixture that needs a plugin
        }
    }
    fs::remove_all(out / "descriptor.tmp");
    for (const auto& e : fs::recursive_directory_iterator(src / "tests/fixtures/onnx"))
        if (e.is_regular_file() && e.path().extension() == ".onnx" && e.file_size() <= kMaxSeed) {
            fs::copy_file(e.path(), out / "onnx" / e.path().filename(), fs::copy_options::overwrite_existing);
            ++onnx;
        }
    npy_seeds(src, out / "npy");
    h5_reply_seeds(out / "h5_reply");
    std::cout << "seeds in " << out.string() << ": " << keras << " keras_config, " << descriptors << " descriptor, " << onnx
              << " onnx (" << skipped << " Keras fixtures skipped)\n";
    return keras && descriptors && onnx ? 0 : 1;
}
