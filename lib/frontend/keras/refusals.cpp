#include "frontend/keras/refusals.hpp"

#include <set>

#include "frontend/keras/model_config.hpp"

namespace graft::keras {

namespace {

const char* const kPlugin = "load a graft plugin that registers the class (--plugin PATH or GRAFT_PLUGIN_PATH; see samples/plugin)";

std::string config_string(const LayerSpec& l, const char* key) {
    const rapidjson::Value* c = l.config;
    if (!c || !c->IsObject() || !c->HasMember(key) || !(*c)[key].IsString()) return "";
    return (*c)[key].GetString();
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool has_quantizer_option(const LayerSpec& l) {
    const rapidjson::Value* c = l.config;
    if (!c || !c->IsObject()) return false;
    for (const auto& m : c->GetObject()) {
        const std::string k = m.name.GetString();
        if (k.size() >= 9 && k.compare(k.size() - 9, 9, "quantizer") == 0) return true;
    }
    return false;
}

bool is_qkeras(const LayerSpec& l) {
    static const std::set<std::string> classes{
        "QDense", "QConv1D", "QConv2D", "QConv2DTranspose", "QDepthwiseConv2D", "QSeparableConv1D", "QSeparableConv2D",
        "QActivation", "QAdaptiveActivation", "QBatchNormalization", "QConv2DBatchnorm", "QDepthwiseConv2DBatchnorm",
        "QAveragePooling2D", "QGlobalAveragePooling2D", "QSimpleRNN", "QLSTM", "QGRU", "QBidirectional", "QInitializer"};
    return starts_with(l.module, "qkeras") || classes.count(l.class_name) || has_quantizer_option(l);
}

bool is_hgq(const LayerSpec& l) {
    static const std::set<std::string> classes{
        "HQuantize", "HDense", "HConv1D", "HConv2D", "HActivation", "HAdd", "HDenseBatchNorm", "HConv1DBatchNorm",
        "HConv2DBatchNorm", "Signature", "PReshape", "PFlatten", "PConcatenate", "PPermute", "PMaxPool1D", "PMaxPool2D",
        "PAvgPool1D", "PAvgPool2D", "PMaxPooling1D", "PMaxPooling2D", "PAveragePooling1D", "PAveragePooling2D",
        "PDropout"};
    return starts_with(l.module, "HGQ") || starts_with(l.module, "hgq") || classes.count(l.class_name);
}

}  // namespace

std::string unknown_class_advice(const std::string& cls) {
    if (cls == "Lambda")
        return "a Lambda layer holds Python code that graft cannot run; implement its computation in a graft plugin "
               "(see samples/plugin) and load it with --plugin or GRAFT_PLUGIN_PATH";
    return "no converter handler is registered for Keras class '" + cls +
           "'; if it is a custom layer, load a plugin that registers it (--plugin PATH or GRAFT_PLUGIN_PATH)";
}

std::string unknown_class_advice(const LayerSpec& l) {
    const std::string& cls = l.class_name;
    if (cls == "TFOpLambda" || cls == "SlicingOpLambda") {
        std::string fn = config_string(l, "function");
        const std::string what = cls == "SlicingOpLambda" ? "a tensor slice (x[...], function '" + fn + "')"
                                                          : "a call of the TensorFlow function tf." + fn;
        return what + " that tf.keras recorded as a layer; graft does not run TensorFlow ops: express it with Keras "
               "layers and re-save the model, or " + kPlugin;
    }
    if (cls == "TensorFlowOpLayer") {
        std::string op;
        const rapidjson::Value* c = l.config;
        if (c && c->IsObject() && c->HasMember("node_def") && (*c)["node_def"].IsObject() && (*c)["node_def"].HasMember("op") &&
            (*c)["node_def"]["op"].IsString())
            op = (*c)["node_def"]["op"].GetString();
        return "the raw TensorFlow op '" + op + "' that tf.keras recorded as a layer; graft does not run TensorFlow ops: "
               "express it with Keras layers and re-save the model, or " + kPlugin;
    }
    if (is_hgq(l) || is_qkeras(l))
        return std::string("a quantization layer (") + (is_hgq(l) ? "HGQ" : "QKeras") +
               ") whose outputs depend on fixed-point quantizers that graft does not model; export the float model "
               "(the same layers without quantizers) or " + kPlugin;
    return unknown_class_advice(cls);
}

}  // namespace graft::keras
