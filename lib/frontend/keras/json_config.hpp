// graft::Config over RapidJSON: how the Keras frontend shows the JSON it parsed (a layer's
// config, a call's keyword arguments) to converter handlers without RapidJSON in public headers.
#pragma once

#include <string>

#include <rapidjson/document.h>

#include "graft/frontend/layer.hpp"

namespace graft::keras {

/// A Config viewing `v` (null: a view of nothing); errors start with `where`. `v` must outlive
/// the view.
Config json_config(const rapidjson::Value* v, std::string where);

/// The value a Config made by json_config views, null for a view of nothing. graft::Error if
/// `c` reads another Source.
const rapidjson::Value* json_value(const Config& c);

}  // namespace graft::keras
