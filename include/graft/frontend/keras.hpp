// graft/frontend/keras.hpp - the Keras frontend: .h5 / .keras model files to graft IR.
#pragma once

#include <string>
#include <vector>

#include "graft/export.hpp"
#include "graft/frontend/check.hpp"
#include "graft/hdf5_containment.hpp"
#include "graft/ir/graph.hpp"
#include "graft/limits.hpp"
#include "graft/registry.hpp"

namespace graft::keras {

struct Options {
    /// For a model.to_json() file: the save_weights() .h5 that goes with it.
    std::string weights_path;
    /// What the file may ask for (graft/limits.hpp).
    Limits limits;
    /// How the HDF5 part is read: out of process in a sandbox by default (graft/hdf5_containment.hpp).
    Hdf5Containment hdf5;
};

using Finding = graft::Finding;
using CheckReport = graft::CheckReport;

/// The pre-flight check: runs the whole conversion, collecting every layer whose class has no
/// converter handler (wrapped layers and nested models included) and every UnsupportedError a
/// handler raises (an unsupported option, e.g. stateful=True), instead of stopping at the first.
/// Throws FormatError/ShapeError/IOError when the file itself is broken.
GRAFT_API CheckReport check_model(const std::string& path, const Registry& registry, const Options& options = {});

/// check_model(...).findings.
GRAFT_API std::vector<Finding> check(const std::string& path, const Registry& registry, const Options& options = {});

/// Reads a Keras model (.h5 full model, .keras zip, or a model.to_json() file with
/// Options::weights_path) and converts it to an IR graph. Runs the same check and throws one
/// UnsupportedError listing every finding.
GRAFT_API Graph convert(const std::string& path, const Registry& registry, const Options& options = {});

}  // namespace graft::keras
