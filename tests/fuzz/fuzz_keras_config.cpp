// libFuzzer target: a Keras model config (model.to_json()) -> the Keras converter -> IR.
//
// The input is the JSON text. Weights come from an optional top-level key the converter does not
// read, "graft_fuzz_weights": {"<layer>": [["<weight name>", [d0, d1, ...]], ...], ...}; the
// target makes each one (zero-filled, 0.25) from its declared shape, so layers with weights
// convert too. The seeds (fuzz_make_seeds) are the repo's Keras fixtures in this form.
#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/keras/model_file.hpp"
#include "limits_check.hpp"
#include "fuzz_util.hpp"
#include "graft/error.hpp"

namespace {

constexpr std::int64_t kMaxSynthesized = std::int64_t{1} << 22;  // elements over all weights

/// The weights the input declares, or none if it declares them badly (the converter then says
/// what is missing).
std::map<std::string, std::vector<graft::WeightArray>> declared_weights(const std::string& text) {
    std::map<std::string, std::vector<graft::WeightArray>> out;
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseStopWhenDoneFlag>(text.c_str(), text.size());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("graft_fuzz_weights")) return out;
    const auto& w = doc["graft_fuzz_weights"];
    if (!w.IsObject()) return out;
    std::int64_t total = 0;
    for (const auto& layer : w.GetObject()) {
        if (!layer.value.IsArray()) return {};
        auto& list = out[layer.name.GetString()];
        for (const auto& entry : layer.value.GetArray()) {
            if (!entry.IsArray() || entry.Size() != 2 || !entry[0].IsString() || !entry[1].IsArray()) return {};
            graft::WeightArray a;
            a.name = entry[0].GetString();
            std::int64_t n = 1;
            for (const auto& d : entry[1].GetArray()) {
                if (!d.IsInt64() || d.GetInt64() < 0 || d.GetInt64() > kMaxSynthesized) return {};
                a.shape.push_back(d.GetInt64());
                n = a.shape.back() == 0 ? 0 : (n > kMaxSynthesized / a.shape.back() ? kMaxSynthesized + 1 : n * a.shape.back());
            }
            total += n;
            if (total > kMaxSynthesized) return {};
            a.data = std::make_shared<const std::vector<float>>(static_cast<std::size_t>(n), 0.25f);
            list.push_back(std::move(a));
        }
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const graft::keras::ModelFile file("fuzz.json", text, declared_weights(text), graft_fuzz::limits());
        const graft::Graph g = graft::keras::convert_model_file(file, graft_fuzz::registry());
        graft::check_graph_limits(g, graft_fuzz::limits(), "fuzz.json");  // as graft::load_graph does
    } catch (const graft::Error&) {
        // A typed error: what graft must give for a bad config.
    }
    return 0;
}
