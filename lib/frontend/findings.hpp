// What every frontend does with its pre-flight check's findings.
#pragma once

#include <string>

#include "graft/frontend/check.hpp"

namespace graft::frontend {

/// Throws one UnsupportedError naming every finding of `r` ("model.h5: 2 layers cannot be
/// converted: ..."); `noun` is what the frontend converts ("layer", "node").
[[noreturn]] void throw_findings(const std::string& path, const CheckReport& r, const std::string& noun);

}  // namespace graft::frontend
