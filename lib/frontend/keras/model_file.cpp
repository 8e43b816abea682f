#include "frontend/keras/model_file.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include <rapidjson/error/en.h>

#include "frontend/keras/keras_zip.hpp"
#include "frontend/keras/model_config.hpp"
#include "graft/error.hpp"
#include "graft/printable.hpp"
#include "json_depth.hpp"

namespace graft::keras {

namespace {

void parse_json(rapidjson::Document& doc, const std::string& text, const std::string& where, const Limits& limits) {
    check_json_depth(text, where, limits.max_json_depth);
    doc.Parse(text.c_str(), text.size());
    if (doc.HasParseError())
        throw FormatError(where + " is not valid JSON: " + rapidjson::GetParseError_En(doc.GetParseError()) + " at offset " +
                          std::to_string(doc.GetErrorOffset()));
    if (!doc.IsObject() || !doc.HasMember("class_name") || !doc["class_name"].IsString() || !doc.HasMember("config"))
        throw FormatError(where + " is not a Keras model config: expected an object with 'class_name' and 'config'");
}

std::string join_path(const std::string& root, const std::string& name) {
    return root == "/" ? "/" + name : root + "/" + name;
}

/// Keras 3's naming.to_snake_case, which names a layer's group in model.weights.h5.
std::string keras3_snake_case(const std::string& name) {
    static const std::regex non_word("[^A-Za-z0-9_]+"), camel("(.)([A-Z][a-z]+)"), lower_upper("([a-z])([A-Z])");
    std::string s = std::regex_replace(name, non_word, "");
    s = std::regex_replace(s, camel, "$1_$2");
    s = std::regex_replace(s, lower_upper, "$1_$2");
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

const rapidjson::Value* member(const rapidjson::Value& v, const char* key) {
    return v.IsObject() && v.HasMember(key) ? &v[key] : nullptr;
}

/// The weights' declared sizes, summed before any is decoded: each at most
/// limits.max_tensor_elements, all together at most limits.max_total_weight_bytes (as float32).
class WeightBudget {
public:
    WeightBudget(const Limits& limits, std::string file) : limits_(limits), file_(std::move(file)) {}

    void take(const std::vector<std::int64_t>& shape, const std::string& dataset) {
        const std::string where = file_ + ": " + printable(dataset);
        const auto n = checked::static_elements(where, "declared shape", shape, limits_.max_tensor_elements);
        bytes_ += static_cast<std::uint64_t>(n) * sizeof(float);
        if (bytes_ > limits_.max_total_weight_bytes)
            throw FormatError(where + ": the weights declared up to here take " + std::to_string(bytes_) +
                              " bytes, more than the limit of " +
                              checked::limit_str(static_cast<std::int64_t>(limits_.max_total_weight_bytes)) +
                              " (LoadOptions::limits.max_total_weight_bytes); refused before decoding");
    }

private:
    const Limits& limits_;
    std::string file_;
    std::uint64_t bytes_ = 0;
};

/// Collects a .keras layer's variables: its own (<path>/vars/0, 1, ...), then its sub-layers'
/// in the order legacy .h5 files list them (Bidirectional: forward, then backward; a nested
/// model: its layers in config order). Names are "<layer name>/<path below the layer>".
class ArchiveWalker {
public:
    /// Keras 3 releases that joined weight paths with os.path.join wrote, on Windows, one
    /// root-level group per layer named with backslashes ("layers\\lstm\\cell", its "vars" below
    /// it) instead of nested groups: those are read as if nested ("/layers/lstm/cell").
    ArchiveWalker(const h5::File& f, const std::string& file, const Limits& limits)
        : f_(f), file_(file), limits_(limits), budget_(limits, file) {
        for (const auto& child : f_.children("/")) {
            if (child.find('\\') == std::string::npos || !f_.has_group("/" + child)) continue;
            std::string nested = "/" + child;
            std::replace(nested.begin(), nested.end(), '\\', '/');
            flat_[nested] = "/" + child;
        }
        // tf.keras 2.13 and 2.14 kept a model's layers under "_layer_checkpoint_dependencies", not
        // "layers" (named the same way below it, as Keras 3's own loader assumes).
        const std::string old_root = "/_layer_checkpoint_dependencies";
        bool old = f_.has_group(old_root);
        for (const auto& entry : flat_) old = old || entry.first.rfind(old_root + "/", 0) == 0;
        checkpoint_dependencies_ = old && !f_.has_group("/layers") && !flat_.count("/layers");
    }

    void collect(const std::string& path, const std::string& name, const rapidjson::Value* layer, std::vector<WeightArray>& out,
                 int depth) {
        if (depth > 32) throw FormatError(file_ + ": model.weights.h5: layers nested too deeply at " + path);
        if (!f_.has_group(stored(path))) return;
        for (int i = 0;; ++i) {
            const std::string ds = path + "/vars/" + std::to_string(i);
            const std::string at = stored(path) + "/vars/" + std::to_string(i);
            if (!f_.has_dataset(at)) break;
            budget_.take(f_.dataset_shape(at), ds);  // before decoding it
            auto arr = f_.read_floats(at, limits_.max_tensor_elements, true);
            out.push_back(WeightArray{name + ds.substr(base_.size()), arr.shape,
                                      std::make_shared<const std::vector<float>>(std::move(arr.data))});
        }
        const std::string cls = layer && member(*layer, "class_name") && (*layer)["class_name"].IsString() ? (*layer)["class_name"].GetString() : "";
        const rapidjson::Value* cfg = layer ? member(*layer, "config") : nullptr;
        if (is_model_class(cls) && cfg) {
            const rapidjson::Value* layers = cfg->IsArray() ? cfg : member(*cfg, "layers");
            if (layers && layers->IsArray()) walk_layers(path + "/layers", *layers, out, depth + 1);
            return;
        }
        if (cls == "Bidirectional" && cfg) {
            collect(path + "/forward_layer", name, member(*cfg, "layer"), out, depth + 1);
            collect(path + "/backward_layer", name, member(*cfg, "backward_layer") ? member(*cfg, "backward_layer") : member(*cfg, "layer"), out,
                    depth + 1);
            return;
        }
        for (const auto& child : children(path)) {  // cell, layer, ... in name order
            if (child == "vars" || !f_.has_group(stored(path + "/" + child))) continue;
            const rapidjson::Value* sub = cfg && child == "layer" ? member(*cfg, "layer") : nullptr;
            collect(path + "/" + child, name, sub, out, depth + 1);
        }
    }

    /// The layers of a model config at `path` (layers/<snake_case class>[_N]).
    void walk_layers(const std::string& path, const rapidjson::Value& layers, std::vector<WeightArray>& out, int depth) {
        std::map<std::string, int> used;
        for (const auto& l : layers.GetArray()) {
            if (!member(l, "class_name") || !l["class_name"].IsString()) continue;
            std::string group = keras3_snake_case(l["class_name"].GetString());
            auto it = used.find(group);
            if (it == used.end()) used[group] = 0;
            else group += "_" + std::to_string(++it->second);
            std::string name;
            if (member(l, "name") && l["name"].IsString()) name = l["name"].GetString();
            else if (member(l, "config") && member(l["config"], "name") && l["config"]["name"].IsString()) name = l["config"]["name"].GetString();
            if (name.empty()) continue;
            if (depth == 0) {
                base_ = path + "/" + group;
                std::vector<WeightArray> w;
                collect(base_, name, &l, w, depth);
                by_layer[name] = std::move(w);
            } else {  // inside a nested model: named after the sub-layer, in its parent's list
                const std::string saved = base_;
                base_ = path + "/" + group;
                collect(base_, name, &l, out, depth);
                base_ = saved;
            }
        }
    }

    std::map<std::string, std::vector<WeightArray>> by_layer;

private:
    /// Where the group read as `path` is stored (see the constructor).
    std::string stored(std::string path) const {
        if (checkpoint_dependencies_) {  // every "layers" component
            const std::string from = "/layers", to = "/_layer_checkpoint_dependencies";
            for (std::size_t at = 0; (at = path.find(from, at)) != std::string::npos;) {
                const std::size_t end = at + from.size();
                if (end != path.size() && path[end] != '/') { at = end; continue; }
                path.replace(at, from.size(), to);
                at += to.size();
            }
        }
        auto it = flat_.find(path);
        return it == flat_.end() ? path : it->second;
    }
    /// The sub-groups of `path`, nested or backslash-named, in name order.
    std::vector<std::string> children(const std::string& path) const {
        std::vector<std::string> out;
        if (f_.has_group(stored(path))) out = f_.children(stored(path));
        for (const auto& [nested, actual] : flat_)
            if (nested.size() > path.size() + 1 && nested.compare(0, path.size() + 1, path + "/") == 0 &&
                nested.find('/', path.size() + 1) == std::string::npos)
                out.push_back(nested.substr(path.size() + 1));
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

    const h5::File& f_;
    std::string file_, base_;
    std::map<std::string, std::string> flat_;  // nested path -> backslash-named root group
    bool checkpoint_dependencies_ = false;
    const Limits& limits_;
    WeightBudget budget_;
};

}  // namespace

ModelFile::~ModelFile() = default;

void ModelFile::open_keras_archive(const std::string& path) {
    KerasArchive a = read_keras_archive(path);
    try {
        weights_ = std::make_unique<h5::File>(h5::File::open(a.weights_path, box_));
    } catch (const FormatError& e) {
        std::remove(a.weights_path.c_str());
        throw FormatError(path + ": model.weights.h5 (extracted to " + a.weights_path + "): " + e.what());
    } catch (...) {
        std::remove(a.weights_path.c_str());
        throw;
    }
    std::remove(a.weights_path.c_str());  // HDF5 keeps the open file; nothing is left behind
    keras_archive_ = true;
    weights_file_ = path + ": model.weights.h5";
    parse_json(doc_, a.config, path + ": config.json", limits_);
    if (!a.metadata.empty()) {
        rapidjson::Document meta;
        check_json_depth(a.metadata, path + ": metadata.json", limits_.max_json_depth);
        meta.Parse(a.metadata.c_str(), a.metadata.size());
        if (!meta.HasParseError() && meta.IsObject() && meta.HasMember("keras_version") && meta["keras_version"].IsString())
            keras_version_ = meta["keras_version"].GetString();
    }
    if (keras_version_.empty()) keras_version_ = "3";  // only Keras 3 writes .keras archives
    const rapidjson::Value& cfg = doc_["config"];
    const rapidjson::Value* layers = cfg.IsArray() ? &cfg : member(cfg, "layers");
    if (!layers || !layers->IsArray()) throw FormatError(path + ": config.json: the model config has no 'layers' list");
    ArchiveWalker walker(*weights_, weights_file_, limits_);
    std::vector<WeightArray> unused;
    walker.walk_layers("/layers", *layers, unused, 0);
    archive_weights_ = std::move(walker.by_layer);
    for (const auto& [name, w] : archive_weights_) layer_names_.push_back(name);
}

ModelFile::ModelFile(const std::string& path, const std::string& weights_path, const Limits& limits, const Hdf5Containment& box)
    : limits_(limits), path_(path), box_(box) {
    if (weights_path.empty() && is_zip_file(path)) {
        open_keras_archive(path);
        return;
    }
    if (weights_path.empty()) {
        weights_ = std::make_unique<h5::File>(h5::File::open(path, box_));
        weights_file_ = path;
        auto config = weights_->string_attribute("/", "model_config");
        if (!config)
            throw FormatError(path + ": no 'model_config' attribute at the root, expected a full Keras model saved with "
                                     "model.save() (for a save_weights() file, pass the model.to_json() config as well)");
        parse_json(doc_, *config, path + ": attribute 'model_config'", limits_);
        keras_version_ = weights_->string_attribute("/", "keras_version").value_or("");
        backend_ = weights_->string_attribute("/", "backend").value_or("");
        weights_root_ = weights_->has_group("/model_weights") ? "/model_weights" : "/";
    } else {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw IOError(path + ": cannot open the model config");
        std::ostringstream text;
        text << in.rdbuf();
        parse_json(doc_, text.str(), path, limits_);
        if (doc_.HasMember("keras_version") && doc_["keras_version"].IsString()) keras_version_ = doc_["keras_version"].GetString();
        if (doc_.HasMember("backend") && doc_["backend"].IsString()) backend_ = doc_["backend"].GetString();
        weights_ = std::make_unique<h5::File>(h5::File::open(weights_path, box_));
        weights_file_ = weights_path;
        weights_root_ = weights_->has_group("/model_weights") ? "/model_weights" : "/";
        if (keras_version_.empty()) keras_version_ = weights_->string_attribute(weights_root_, "keras_version").value_or("");
        if (backend_.empty()) backend_ = weights_->string_attribute(weights_root_, "backend").value_or("");
    }
    auto names = weights_->string_list_attribute(weights_root_, "layer_names");
    if (!names) throw FormatError(weights_file_ + ": " + weights_root_ + ": no 'layer_names' attribute, expected the list of layers with weights");
    layer_names_ = std::move(*names);
    check_declared_weights();
}

ModelFile::ModelFile(const std::string& path, const std::string& config_json,
                     std::map<std::string, std::vector<WeightArray>> weights, const Limits& limits)
    : limits_(limits), path_(path), weights_file_(path + ": weights"), keras_archive_(true),
      archive_weights_(std::move(weights)) {
    parse_json(doc_, config_json, path, limits_);
    if (doc_.HasMember("keras_version") && doc_["keras_version"].IsString()) keras_version_ = doc_["keras_version"].GetString();
    if (doc_.HasMember("backend") && doc_["backend"].IsString()) backend_ = doc_["backend"].GetString();
    WeightBudget budget(limits_, weights_file_);
    for (const auto& [name, ws] : archive_weights_) {
        layer_names_.push_back(name);
        for (const auto& w : ws) {
            budget.take(w.shape, name + "/" + w.name);
            const auto n = checked::static_elements(weights_file_ + ": " + printable(name + "/" + w.name), "shape", w.shape,
                                                    limits_.max_tensor_elements);
            if (!w.data || static_cast<std::int64_t>(w.data->size()) != n)
                throw FormatError(weights_file_ + ": " + printable(name + "/" + w.name) + ": the values do not match the shape");
        }
    }
}

void ModelFile::check_declared_weights() const {
    WeightBudget budget(limits_, weights_file_);
    for (const auto& layer : layer_names_) {
        const std::string group = join_path(weights_root_, layer);
        if (!weights_->has_group(group)) continue;  // layer_weights() says so if the layer is used
        for (const auto& n : weights_->string_list_attribute(group, "weight_names").value_or(std::vector<std::string>{})) {
            const std::string ds = join_path(group, n);
            if (weights_->has_dataset(ds)) budget.take(weights_->dataset_shape(ds), ds);
        }
    }
}

bool ModelFile::has_layer(const std::string& layer) const {
    return std::find(layer_names_.begin(), layer_names_.end(), layer) != layer_names_.end();
}

std::vector<WeightArray> ModelFile::layer_weights(const std::string& layer) const {
    if (keras_archive_) {
        auto it = archive_weights_.find(layer);
        return it == archive_weights_.end() ? std::vector<WeightArray>{} : it->second;
    }
    if (!has_layer(layer)) return {};
    const std::string group = join_path(weights_root_, layer);
    if (!weights_->has_group(group))
        throw FormatError(weights_file_ + ": layer '" + layer + "' is listed in layer_names but has no group " + group);
    auto names = weights_->string_list_attribute(group, "weight_names").value_or(std::vector<std::string>{});
    std::vector<WeightArray> out;
    for (const auto& n : names) {
        const std::string ds = join_path(group, n);
        if (!weights_->has_dataset(ds))
            throw FormatError(weights_file_ + ": layer '" + layer + "': weight '" + n + "' is listed in weight_names but " + ds +
                              " does not exist");
        auto arr = weights_->read_floats(ds, limits_.max_tensor_elements, true);  // integers: e.g. Normalization's count
        out.push_back(WeightArray{n, arr.shape, std::make_shared<const std::vector<float>>(std::move(arr.data))});
    }
    return out;
}

}  // namespace graft::keras
