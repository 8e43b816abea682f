#include "frontend/keras/model_file.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <rapidjson/error/en.h>

#include "graft/error.hpp"

namespace graft::keras {

namespace {

void parse_json(rapidjson::Document& doc, const std::string& text, const std::string& where) {
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

}  // namespace

ModelFile::ModelFile(const std::string& path, const std::string& weights_path) : path_(path) {
    if (weights_path.empty()) {
        weights_ = std::make_unique<h5::File>(h5::File::open(path));
        weights_file_ = path;
        auto config = weights_->string_attribute("/", "model_config");
        if (!config)
            throw FormatError(path + ": no 'model_config' attribute at the root, expected a full Keras model saved with "
                                     "model.save() (for a save_weights() file, pass the model.to_json() config as well)");
        parse_json(doc_, *config, path + ": attribute 'model_config'");
        keras_version_ = weights_->string_attribute("/", "keras_version").value_or("");
        backend_ = weights_->string_attribute("/", "backend").value_or("");
        weights_root_ = weights_->has_group("/model_weights") ? "/model_weights" : "/";
    } else {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw IOError(path + ": cannot open the model config");
        std::ostringstream text;
        text << in.rdbuf();
        parse_json(doc_, text.str(), path);
        if (doc_.HasMember("keras_version") && doc_["keras_version"].IsString()) keras_version_ = doc_["keras_version"].GetString();
        if (doc_.HasMember("backend") && doc_["backend"].IsString()) backend_ = doc_["backend"].GetString();
        weights_ = std::make_unique<h5::File>(h5::File::open(weights_path));
        weights_file_ = weights_path;
        weights_root_ = weights_->has_group("/model_weights") ? "/model_weights" : "/";
        if (keras_version_.empty()) keras_version_ = weights_->string_attribute(weights_root_, "keras_version").value_or("");
        if (backend_.empty()) backend_ = weights_->string_attribute(weights_root_, "backend").value_or("");
    }
    auto names = weights_->string_list_attribute(weights_root_, "layer_names");
    if (!names) throw FormatError(weights_file_ + ": " + weights_root_ + ": no 'layer_names' attribute, expected the list of layers with weights");
    layer_names_ = std::move(*names);
}

bool ModelFile::has_layer(const std::string& layer) const {
    return std::find(layer_names_.begin(), layer_names_.end(), layer) != layer_names_.end();
}

std::vector<WeightArray> ModelFile::layer_weights(const std::string& layer) const {
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
        auto arr = weights_->read_floats(ds);
        out.push_back(WeightArray{n, arr.shape, std::make_shared<const std::vector<float>>(std::move(arr.data))});
    }
    return out;
}

}  // namespace graft::keras
